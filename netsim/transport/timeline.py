"""One round's timeline, vectorized (numpy): the fast path of the round engine.

From the system's durations it computes, for every participant, when its model arrived, when
its compute ended, when it held the uplink, whether it was dropped (and why), and the round's
end: the same numbers, bit for bit, as the per-device SimPy processes of
``netsim.transport.reference`` on the same durations, and (``Timeline.trace``) the same trace events in
the same order.

- Downlink: streams one after another; stream ``k`` ends at ``t0 + d_0 + ... + d_k`` (added
  left to right, as the clock does). A device has its model when its last stream ends.
- Compute starts at the model's arrival (``pipelined``; a device on no stream starts at once)
  or when the whole downlink is done (``barrier``).
- Uplink: one FIFO queue (``netsim.transport.fifo``) in order of readiness: compute end (``pipelined``)
  or the moment everyone computed (``barrier``); a device with nothing to send is done. A cell
  may have several receivers (``receivers``): each a queue of its own, in the same order, whose
  grants share its resource blocks (``netsim.transport.block_queue``).
  Equal readiness is broken the way SimPy breaks it (``netsim.transport.round_events``).
- Deadline ``D`` (from the round start): a device still computing at ``D`` is dropped there;
  a device whose upload would end after ``D`` is dropped when it reaches the head of the queue
  and frees the uplink at once; if anyone was dropped the round lasts at least until ``D``.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass
from functools import partial
from itertools import chain, repeat
from typing import Callable

import numpy as np

from contract import RoundOutcome, RoundPlan
from netsim.transport.block_queue import Receivers, block_fifo
from netsim.transport.hold import hold_until
from netsim.transport.durations import TIMING_MODES, RoundDurations, TimedSystem
from netsim.transport.fifo import fifo_with_deadline
from netsim.transport.round_events import compute_end_ranks, trace_order
from netsim.transport.trace import TraceEvent

ARRIVED, DROPPED_COMPUTING, DROPPED_UPLINK = 0, 1, 2


@dataclass(frozen=True, eq=False)
class Timeline:
    """Times of one round (absolute, on the clock); per-participant arrays follow
    ``plan.participants``.

    ``received``: compute start (model arrived; barrier: downlink done). ``compute_end``: when
    the compute would end; ``computed``: when it ended, or the deadline that cut it. ``ready``:
    when it queued for the uplink (barrier: when every participant had computed).
    ``uplink_start``/``uplink_end``: its turn on the uplink (equal when it sent nothing).
    ``done``: when its part of the round ended. ``queue``: participant indices in uplink order;
    ``sent``: per queue position, whether the upload went through. ``status``: ``ARRIVED``,
    ``DROPPED_COMPUTING`` or ``DROPPED_UPLINK``.
    """

    start: float
    end: float
    mode: str
    deadline_at: float | None
    stream_start: np.ndarray
    stream_end: np.ndarray
    received: np.ndarray
    compute_end: np.ndarray
    computed: np.ndarray
    ready: np.ndarray
    uplink_start: np.ndarray
    uplink_end: np.ndarray
    done: np.ndarray
    status: np.ndarray
    queue: np.ndarray
    sent: np.ndarray
    listening: "Listening"

    @property
    def downlink_end(self) -> float:
        return float(self.stream_end[-1]) if self.stream_end.size else self.start

    @property
    def cut(self) -> np.ndarray:
        """Participants dropped while computing."""
        return self.status == DROPPED_COMPUTING

    def arrived(self, plan: RoundPlan) -> tuple[int, ...]:
        """The devices whose update arrived, in device order."""
        return tuple(sorted(d for d, s in zip(plan.participants, self.status.tolist()) if s == ARRIVED))

    def outcome(self, plan: RoundPlan) -> RoundOutcome:
        """Who received (everyone: a normalized system has no outage), computed, arrived, and
        who was dropped (all by the deadline), in device order."""
        status = self.status.tolist()
        participants = plan.participants
        return RoundOutcome(
            received=tuple(sorted(participants)),
            computed=tuple(sorted(d for d, s in zip(participants, status) if s != DROPPED_COMPUTING)),
            arrived=self.arrived(plan),
            dropped={d: "deadline" for d, s in zip(participants, status) if s != ARRIVED},
        )

    def trace(self, plan: RoundPlan, server_round: int) -> list[TraceEvent]:
        """The reference processes' trace of this round, in their order."""
        devices = np.fromiter(plan.participants, dtype=np.int64, count=len(plan.participants))
        cut = np.flatnonzero(self.cut)
        late = self.queue[~self.sent]
        up = self.queue[self.sent]
        k = len(plan.streams)
        kinds = chain(repeat("downlink", k), repeat("compute", devices.size), repeat("dropped", cut.size + late.size),
                      repeat("uplink", up.size))
        entities = chain(range(k), devices.tolist(), devices[cut].tolist(), devices[late].tolist(), devices[up].tolist())
        starts = np.concatenate((self.stream_start, self.received, self.computed[cut], self.uplink_start[late],
                                 self.uplink_start[up]))
        ends = np.concatenate((self.stream_end, self.computed, self.computed[cut], self.uplink_start[late],
                               self.uplink_end[up]))
        uplink_bits = plan.uplink_bits
        bits = chain((s.bits for s in plan.streams), repeat(0.0, devices.size + cut.size + late.size),
                     map(uplink_bits.get, devices[up].tolist(), repeat(0.0)))
        reasons = chain(repeat("", k + devices.size), repeat("deadline", cut.size + late.size), repeat("", up.size))
        order = trace_order(self).tolist()
        collecting = gc.isenabled()
        gc.disable()  # tens of thousands of acyclic tuples: the cycle collector would only rescan them
        try:
            events = list(map(_new_event, zip(repeat(server_round), kinds, entities, starts.tolist(), ends.tolist(), bits,
                                              repeat(0.0), reasons)))
            return [events[i] for i in order]
        finally:
            if collecting:
                gc.enable()


_new_event = partial(tuple.__new__, TraceEvent)


@dataclass(frozen=True, eq=False)
class Listening:
    """Per participant: the index of its last stream (-1: none) and its place in that stream."""

    last_stream: np.ndarray
    position: np.ndarray
    stream_sizes: np.ndarray


def listening(plan: RoundPlan) -> Listening:
    """Who listens to which stream. ValueError if a device takes part twice or a stream lists a
    device twice (the reference would trigger its arrival twice)."""
    n = len(plan.participants)
    ids = np.fromiter(plan.participants, dtype=np.int64, count=n)
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    if np.any(sorted_ids[1:] == sorted_ids[:-1]):
        raise ValueError("a device takes part twice in one round")
    sizes = np.fromiter((len(s.devices) for s in plan.streams), dtype=np.int64, count=len(plan.streams))
    members = np.fromiter(chain.from_iterable(s.devices for s in plan.streams), dtype=np.int64, count=int(sizes.sum()))
    stream_of = np.repeat(np.arange(sizes.size), sizes)
    position = np.arange(members.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    by_stream = np.lexsort((members, stream_of))
    if np.any((np.diff(stream_of[by_stream]) == 0) & (np.diff(members[by_stream]) == 0)):
        raise ValueError("a stream lists a device twice")
    last_stream = np.full(n, -1, dtype=np.int64)
    last_position = np.zeros(n, dtype=np.int64)
    if n and members.size:
        place = np.minimum(np.searchsorted(sorted_ids, members), n - 1)
        taking_part = sorted_ids[place] == members
        who = order[place[taking_part]]
        stream, where = stream_of[taking_part], position[taking_part]
        by_device = np.lexsort((stream, who))  # the last stream of each device wins
        who, stream, where = who[by_device], stream[by_device], where[by_device]
        last = np.ones(who.size, dtype=bool)
        last[:-1] = who[1:] != who[:-1]
        last_stream[who[last]] = stream[last]
        last_position[who[last]] = where[last]
    return Listening(last_stream, last_position, sizes)


def round_process(env, plan: RoundPlan, system: TimedSystem, model_bits: float, rng: np.random.Generator, trace, server_round):
    """One round from its vectorized timeline (the SimPy process ``netsim.clock.engine`` runs); returns
    its outcome (arrivals in device order), no energy and the plan's downlink bits.

    Appends the round's trace (``trace`` None: none), then holds the clock until the round's
    end. Same outcome, end and trace as ``netsim.transport.reference.round_process_reference``.
    """
    durations = system.round_durations(plan, model_bits, rng)
    timeline = round_timeline(plan, durations, env.now, system.mode, system.deadline)
    if trace is not None:
        trace.extend(timeline.trace(plan, server_round))
    yield from hold_until(env, timeline.end)
    return timeline.outcome(plan), None, None


def round_timeline(plan: RoundPlan, durations: RoundDurations, start: float, mode: str, deadline_s: float | None,
                   receivers: Receivers | None = None) -> Timeline:
    """The timeline of one round that starts at ``start`` on the clock. ``receivers``: a cell's
    uplink receivers, each a queue of its own in the common order of readiness whose grants share
    its resource blocks (``netsim.transport.block_queue``); None: one FIFO for all, one upload at a time
    (``Timeline.trace`` orders the events of that one queue only)."""
    if mode not in TIMING_MODES:
        raise ValueError(f"unknown timing mode {mode!r}; choose from {', '.join(TIMING_MODES)}")
    durations.check(plan)
    heard = listening(plan)
    t0 = start
    n = len(plan.participants)
    ends = np.cumsum(np.concatenate(([t0], durations.stream_s)))
    stream_start, stream_end = ends[:-1], ends[1:]
    downlink_end = ends[-1]
    if mode == "barrier":
        received = np.full(n, downlink_end)
    else:  # the end of its last stream; a device on no stream (-1) starts at once
        received = ends[heard.last_stream + 1]
    compute_end = received + durations.compute_s
    deadline_at = None if deadline_s is None else t0 + deadline_s
    if deadline_at is None:
        computed = compute_end
    else:  # resumed by whichever comes first, compute end or deadline (at once if already past)
        computed = np.where(deadline_at <= received, received, np.minimum(compute_end, deadline_at))
    cut = computed < compute_end
    ready = np.full(n, computed.max() if n else t0) if mode == "barrier" else computed
    uplink_s = durations.uplink_s
    queued = np.flatnonzero(~cut & (uplink_s > 0))
    tie_ranks = partial(compute_end_ranks, t0, mode, deadline_at, heard, stream_end, received, compute_end, computed)
    queue = queued[_readiness_order(computed, queued, tie_ranks)]
    if receivers is None:
        q_start, q_end, sent = fifo_with_deadline(ready[queue], uplink_s[queue], deadline_at)
    else:
        q_start, q_end, sent = np.empty(queue.size), np.empty(queue.size), np.empty(queue.size, dtype=bool)
        queue_of = receivers.queue[queue]
        for q in np.unique(queue_of):
            mine = queue_of == q
            at = queue[mine]
            q_start[mine], q_end[mine], sent[mine] = block_fifo(ready[at], uplink_s[at], receivers.prbs[at], receivers.capacity,
                                                                deadline_at)
    uplink_start = ready.copy()
    uplink_end = ready.copy()
    uplink_start[queue], uplink_end[queue] = q_start, q_end
    status = np.where(cut, DROPPED_COMPUTING, ARRIVED).astype(np.int8)
    status[queue[~sent]] = DROPPED_UPLINK
    done = np.where(cut, computed, uplink_end)
    end = max(downlink_end, done.max()) if n else downlink_end
    if deadline_at is not None and np.any(status != ARRIVED) and end < deadline_at:
        end = deadline_at
    return Timeline(
        start=t0, end=float(end), mode=mode, deadline_at=deadline_at,
        stream_start=stream_start, stream_end=stream_end, received=received, compute_end=compute_end,
        computed=computed, ready=ready, uplink_start=uplink_start, uplink_end=uplink_end, done=done,
        status=status, queue=queue, sent=sent, listening=heard,
    )


def _readiness_order(computed: np.ndarray, queued: np.ndarray, tie_ranks: Callable[[], np.ndarray]) -> np.ndarray:
    """Positions in ``queued`` sorted by the moment each device asked for the uplink: its compute
    end ``computed``, equal ones in SimPy's order (barrier: the order they reached the barrier),
    from ``tie_ranks()`` (``netsim.transport.round_events.compute_end_ranks``, only computed on a tie)."""
    ready_at = computed[queued]
    by_time = np.argsort(ready_at, kind="stable")
    if not np.any(np.diff(ready_at[by_time]) == 0):
        return by_time
    ranks = tie_ranks()
    return np.argsort(ranks[queued], kind="stable")
