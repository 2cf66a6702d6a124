"""The SimPy processes of one round and the one round loop of the project.

Per round the loop asks the learner for its plan, simulates the downlink streams (one after
another on the shared downlink), every participant's compute and its upload (one at a time
on the shared uplink, or on an FDMA share of it), then tells the learner who received, who
computed and who arrived, so it trains and aggregates (zero simulated time), and records the
round. The clock moves only by the network and the compute model; every duration, reception
and energy comes from the round's links (``netsim.links``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import simpy

from netsim.fdma import FdmaUplink
from netsim.links import DEADLINE, DOWNLINK_OUTAGE, UPLINK_OUTAGE, round_links
from netsim.plan import Learner, RoundOutcome, RoundPlan
from netsim.trace import TraceEvent

ENERGY_KINDS = ("receive", "compute", "uplink", "dropped")


@dataclass(frozen=True)
class RoundRecord:
    """What happened in one round: its span on the clock, traffic, arrivals, evaluation."""

    server_round: int
    start: float
    end: float
    downlink_bits: float
    uplink_bits: float
    num_streams: int
    arrived: tuple[int, ...]
    plan: RoundPlan | None
    evaluation: Any = None
    outcome: RoundOutcome | None = None
    energy_j: Any = None  # device -> joules spent this round (physical networks), else None

    @property
    def duration(self) -> float:
        return self.end - self.start


def downlink_process(env, plan: RoundPlan, links, received, trace, server_round):
    """Send the streams one after another; a device has its model when its last stream ends.

    A listener in downlink outage gets nothing (its ``received`` event never fires); the stream
    runs at the rate of its weakest listener that can receive.
    """
    last_stream = {device: index for index, stream in enumerate(plan.streams) for device in stream.devices}
    for index, stream in enumerate(plan.streams):
        start = env.now
        airtime = links.stream_s(stream.devices, stream.bits)
        yield env.timeout(airtime)
        getting = [d for d in stream.devices if links.receives(d)]
        trace.append(TraceEvent(server_round, "downlink", index, start, env.now, stream.bits if getting else 0.0))
        for device in stream.devices:
            if device not in received:
                continue
            if not links.receives(device):
                if last_stream[device] == index:
                    trace.append(TraceEvent(server_round, "dropped", device, env.now, env.now, 0.0, 0.0, DOWNLINK_OUTAGE))
                continue
            if links.physical:
                trace.append(TraceEvent(server_round, "receive", device, start, env.now, stream.bits, links.receive_j(device, airtime)))
            if last_stream[device] == index:
                received[device].succeed()


def device_process(env, device, received, compute_s, compute_j, computed, barrier, uplink, links, uplink_bits, deadline, trace, server_round):
    """Wait for the model, compute, (barrier mode: wait for everyone), upload.

    Returns True when the update arrived; a device still computing at the deadline, or whose
    upload would end after it, is dropped and sends nothing; a device in uplink outage computes
    but cannot upload. On FDMA, an upload still running at the deadline is cut there.
    """
    yield received
    start = env.now
    computing = env.timeout(compute_s)
    if deadline:
        yield computing | deadline.event
    else:
        yield computing
    done = 1.0 if compute_s == 0 else (env.now - start) / compute_s
    trace.append(TraceEvent(server_round, "compute", device, start, env.now, 0.0, compute_j * done))
    if env.now < start + compute_s:  # the deadline came first
        computed.succeed(False)
        trace.append(TraceEvent(server_round, "dropped", device, env.now, env.now, 0.0, 0.0, DEADLINE))
        return False
    computed.succeed(True)
    if barrier is not None:
        yield barrier
    if not links.can_upload(device):
        trace.append(TraceEvent(server_round, "dropped", device, env.now, env.now, 0.0, 0.0, UPLINK_OUTAGE))
        return False
    if uplink_bits == 0:
        return True
    if links.uplink_access == "fdma":
        return (yield from _fdma_upload(env, device, uplink, links, uplink_bits, deadline, trace, server_round))
    uplink_s = links.uplink_s(device, uplink_bits)
    if uplink_s == 0:
        return True
    with uplink.request() as slot:
        yield slot
        if deadline and env.now + uplink_s > deadline.at:
            trace.append(TraceEvent(server_round, "dropped", device, env.now, env.now, 0.0, 0.0, DEADLINE))
            return False
        start = env.now
        yield env.timeout(uplink_s)
        trace.append(TraceEvent(server_round, "uplink", device, start, env.now, uplink_bits, links.transmit_j(device, uplink_s)))
    return True


def _fdma_upload(env, device, uplink: FdmaUplink, links, bits, deadline, trace, server_round):
    start = env.now
    sent = uplink.transmit(device, bits)
    if deadline:
        yield sent | deadline.event
    else:
        yield sent
    if not sent.processed:  # the deadline came first: the upload is cut, its airtime spent
        got = uplink.abort(device)
        trace.append(TraceEvent(server_round, "dropped", device, start, env.now, got, links.transmit_j(device, env.now - start), DEADLINE))
        return False
    trace.append(TraceEvent(server_round, "uplink", device, start, env.now, bits, links.transmit_j(device, env.now - start)))
    return True


@dataclass(frozen=True)
class _Deadline:
    at: float
    event: simpy.Event


def round_process(env, plan: RoundPlan, system, model_bits: float, rng: np.random.Generator, trace, server_round, channel_rng=None):
    """One round; returns its ``RoundOutcome`` (who received, computed, arrived, was dropped)
    and, on a physical network, each participant's energy in the round (else None).

    Compute times are drawn up front in participant order, so barrier and pipelined runs of
    the same seed see the same draws (common random numbers); a physical network then draws
    the round's fading from ``channel_rng``, so the compute draws do not depend on it.
    """
    participants = plan.participants
    draws = system.compute.sample(rng, len(participants))
    links = round_links(system, model_bits, channel_rng)
    first_event = len(trace)
    deadline = None
    if system.deadline is not None:
        deadline = _Deadline(env.now + system.deadline, env.timeout(system.deadline))
    listening = {device for stream in plan.streams for device in stream.devices}
    received = {device: env.event() for device in participants if device in listening}
    downlink = env.process(downlink_process(env, plan, links, received, trace, server_round))
    computed = {device: env.event() for device in participants}
    barrier = env.all_of(list(computed.values())) if system.mode == "barrier" else None
    if links.uplink_access == "fdma":
        uplink = FdmaUplink(env, links.uplink_share_bps)
    else:
        uplink = simpy.Resource(env, capacity=1)
    missed = {device for device in received if not links.receives(device)}
    processes = {}
    for device, draw in zip(participants, draws):
        if device in missed:  # it never gets its model: no compute, no upload
            computed[device].succeed(False)
            continue
        if barrier is not None:
            start_signal = downlink
        else:  # a device that receives nothing this round starts at once
            start_signal = received[device] if device in received else env.timeout(0)
        bits = plan.uplink_bits.get(device, 0.0)
        scale = plan.compute_scale.get(device, 1.0)
        processes[device] = env.process(device_process(
            env, device, start_signal, links.compute_s(device, draw, scale), links.compute_j(device, scale), computed[device],
            barrier, uplink, links, bits, deadline, trace, server_round,
        ))
    yield downlink
    yield env.all_of(list(processes.values()))
    arrived = tuple(sorted(d for d, process in processes.items() if process.value))
    if deadline and len(arrived) < len(participants) and env.now < deadline.at:
        yield deadline.event
    events = trace[first_event:]
    outcome = RoundOutcome(
        received=tuple(sorted(d for d in participants if d not in missed)),
        computed=tuple(sorted(d for d in participants if computed[d].value)),
        arrived=arrived,
        dropped={e.entity: e.reason for e in events if e.kind == "dropped"},
    )
    energy_j = None
    if links.physical:
        energy_j = {d: 0.0 for d in participants}
        for e in events:
            if e.kind in ENERGY_KINDS:
                energy_j[e.entity] += e.energy_j
    return outcome, energy_j


def _record(server_round, start, end, plan, outcome=None, energy_j=None, evaluation=None, downlink_bits=None) -> RoundRecord:
    arrived = outcome.arrived if outcome else ()
    return RoundRecord(
        server_round=server_round,
        start=start,
        end=end,
        downlink_bits=(plan.downlink_bits if downlink_bits is None else downlink_bits) if plan else 0.0,
        uplink_bits=float(sum(plan.uplink_bits.get(d, 0.0) for d in arrived)) if plan else 0.0,
        num_streams=len(plan.streams) if plan else 0,
        arrived=arrived,
        plan=plan,
        evaluation=evaluation,
        outcome=outcome,
        energy_j=energy_j,
    )


def _sent_downlink_bits(trace, first_event: int) -> float:
    """Bits of the streams actually sent (a stream none of whose listeners could receive is not)."""
    return float(sum(e.bits for e in trace[first_event:] if e.kind == "downlink"))


def cosimulation_process(env, learner: Learner, system, rounds: int, rng, trace, on_round, evaluate_round, channel_rng=None):
    """The one round loop. Round 0 is the set-up phase (or, without one, the initial model).

    Before training, a learner with ``round_outcome`` is told who received its model, who
    computed and who arrived (a device in downlink outage still needs its model).
    """
    for server_round in range(rounds + 1):
        plan = learner.plan_round(server_round)
        start = env.now
        outcome, energy_j, sent_bits = None, None, None
        if plan is not None:
            first_event = len(trace)
            outcome, energy_j = yield env.process(round_process(env, plan, system, learner.model_bits, rng, trace, server_round, channel_rng))
            sent_bits = _sent_downlink_bits(trace, first_event)
            tell = getattr(learner, "round_outcome", None)
            if tell is not None:
                tell(server_round, outcome)
            learner.local_update(server_round, outcome.arrived)
            learner.aggregate(server_round, outcome.arrived)
        elif server_round > 0:
            raise ValueError(f"learner gave no plan for round {server_round}")
        evaluation = learner.evaluate(server_round) if evaluate_round(server_round) else None
        on_round(_record(server_round, start, env.now, plan, outcome, energy_j, evaluation, sent_bits))


def run_cosimulation(
    learner: Learner,
    system,
    rounds: int,
    rng: np.random.Generator,
    on_round: Callable[[RoundRecord], None] | None = None,
    evaluate_every: int = 1,
    channel_rng: np.random.Generator | None = None,
) -> tuple[list[RoundRecord], list[TraceEvent]]:
    """Run ``rounds`` rounds (after round 0) of ``learner`` on ``system`` (a ``NetworkSystem``
    or a ``PhysicalNetwork``, whose fading comes from ``channel_rng``); returns records and trace.

    The learner is evaluated after round 0, every ``evaluate_every`` rounds and after the last.
    """
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    env = simpy.Environment()
    records: list[RoundRecord] = []
    trace: list[TraceEvent] = []

    def keep(record: RoundRecord) -> None:
        records.append(record)
        if on_round is not None:
            on_round(record)

    def evaluate_round(server_round: int) -> bool:
        return server_round % evaluate_every == 0 or server_round == rounds

    env.process(cosimulation_process(env, learner, system, rounds, rng, trace, keep, evaluate_round, channel_rng))
    env.run()
    return records, trace


def simulate_rounds(
    plans: Iterable[RoundPlan | None],
    system,
    model_bits: float,
    rng: np.random.Generator,
    channel_rng: np.random.Generator | None = None,
) -> tuple[list[RoundRecord], list[TraceEvent]]:
    """Time a sequence of plans with no learner: the network alone (round-time studies)."""
    env = simpy.Environment()
    records: list[RoundRecord] = []
    trace: list[TraceEvent] = []

    def rounds_process():
        for server_round, plan in enumerate(plans):
            start = env.now
            outcome, energy_j, sent_bits = None, None, None
            if plan is not None:
                first_event = len(trace)
                outcome, energy_j = yield env.process(round_process(env, plan, system, model_bits, rng, trace, server_round, channel_rng))
                sent_bits = _sent_downlink_bits(trace, first_event)
            records.append(_record(server_round, start, env.now, plan, outcome, energy_j, downlink_bits=sent_bits))

    env.process(rounds_process())
    env.run()
    return records, trace


def retime_plans(plans: Sequence[RoundPlan | None], system, model_bits: float, rng, channel_rng=None) -> list[float]:
    """Cumulative end time of each recorded round on another network, without retraining.

    Valid when the learning does not depend on the network: full participation, no deadline,
    no outage (a physical network to re-time on must have its outage threshold off).
    """
    if system.deadline is not None:
        raise ValueError("re-timing needs a system without deadline (arrivals would change the learning)")
    if getattr(getattr(system, "system", None), "outage_snr_db", None) is not None:
        raise ValueError("re-timing needs a network without outages (missed rounds would change the learning)")
    records, _ = simulate_rounds(plans, system, model_bits, rng, channel_rng)
    return [record.end for record in records]
