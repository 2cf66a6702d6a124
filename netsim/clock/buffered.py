"""Buffered asynchronous aggregation on the clock: FedBuff (Nguyen et al. 2022, Algorithm 1:
the server aggregates every K updates that arrive) and FedAsync (Xie et al. 2019: K = 1), the
orchestrator beside the synchronous round loop of ``netsim.clock.engine``.

The transport lives for the whole run (``netsim.transport.media``), its media and every duration and
energy the links' (``netsim.transport.media.Links``, from ``Network.transfer_links``: one code for
every system, no test of its kind): on a normalized system a downlink
and an uplink medium (``Tdma``: one transfer at a time, FIFO; ``Unshared``: no contention); on a
cell, as in its synchronous rounds (``netsim.transport.physical_round``), the downlink sends one stream at a
time and each uplink receiver (``PhysicalLinks.uplink_queue``: each sector of the site, or the
site) has its resource blocks (``ResourceBlocks``), each upload holding its grant's
(``PhysicalLinks.grant_prbs``) while it sends: grants that fit together send together; under
``uplink_access`` ``fdma`` or ``pf`` each receiver (every receiver, under ``ul_interference=clock``)
has one shared uplink for the run (``BufferedRun.shared_uplink``, ``netsim.transport.shared_uplink``), its
rates those of the current version's draw, every upload a transmission on it (on a moving cell
the version's links, drawn at its start, read in steps from it as a synchronous round's:
``_VersionSteps``). Each
dispatch is one SimPy process, the device lifecycle of the synchronous rounds
(``netsim.transport.lifecycle``: receive, compute, upload, the same step functions): it receives the
stream, computes and uploads, reading the channel and its state at each step. The server keeps
``concurrency`` devices training: whenever devices are idle it dispatches the current model
version to them, all together as one stream (a broadcast when they are all of them); when more
are idle than places are free, it chooses (``Buffered.idle_choice``: uniformly at random, as
FedBuff's and FLSim's servers sample idle clients, from its own generator; or in the order they
became idle). A device trains each version at most once: one that reported (or missed its
model) waits for the next version. Every arrival is handed to the learner (its local update
from the version it was dispatched, ``contract.Update``, numbered: the buffer holds updates,
not devices, so a device may be in it twice); one staler than ``max_staleness`` is dropped
(``stale``); at the K-th arrival of the buffer the learner aggregates it and the version moves
on. With K = N and full concurrency this is the synchronous pipelined round: one broadcast of
each version to every device, the aggregation when the last update arrived.

On a cell the links are those of the current fading draw (``netsim.radio.physical_links.PhysicalLinks``; one
block-fading draw per model version, as a synchronous round has one per round; on a moving cell
the channel of the instant each step starts, ``netsim.dynamics.motion``, or with a shared uplink
the version's links in steps from its start): a stream at its
weakest listener's rate (who hears it: that draw's), each upload at the device's own on its
grant (its receiver and grant: the draw's when it asks, its rate the draw's when the grant
starts), the energies on the trace; a device in downlink outage misses the version (dropped
``downlink-outage``), one in uplink outage computed but cannot upload (``uplink-outage``).
On a cell in time (``netsim.dynamics.rounds.Dynamics``) every step reads the device's state
when it happens: a device out of coverage, switched off or flat is not dispatched to (passed
over with that reason, looked at again when it may be back), and one that switches off or runs
flat while it waits for its stream or its grant, receives, computes or uploads is cut at that
instant, as in a synchronous round (``netsim.transport.lifecycle.timed_step``: its energy spent until
then, a battery never below empty), and loses its update (dropped with that reason); one out of
coverage or in uplink outage when its upload starts or its grant comes sends nothing. The
batteries are drained as each energy is spent. Every dispatch ends in an update that arrived,
a drop with a reason, or is in flight when the run ends. When nobody is left training and
nobody passed over may come back, a partial buffer is aggregated, and with none the run ends
(``stalled``). One record per aggregation (``RoundRecord``:
its ``server_round`` is the version it made, ``updates`` the messages it aggregated); a trace
event's ``round`` is the version the interval it happened in made, a ``downlink`` event's
``entity`` the version it sent.

Waiting on a cell is charged as the synchronous rounds charge it (``physical_round.idle_events``,
TR 38.840's waiting power ``PhysicalNetwork.idle_power_w``; nothing when it is 0): at each
aggregation, every device's time in the interval (while it is switched on and not flat) less
its receiving and sending airtime clipped to the interval (a transfer that straddles an aggregation is busy time in both, each its own
part), compute time counting as waiting; one ``idle`` event per device and interval, its energy
in the interval's record. A transfer's receiving or sending is counted from the moment it starts,
so the waiting of an interval is known when it ends.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
import simpy

from contract import Dispatch, RoundOutcome, Update
from netsim.radio import energy
from netsim.clock.engine import RoundRecord, RunOptions
from netsim.transport.lifecycle import DOWNLINK_OUTAGE, UNAVAILABLE, Device, Presence, compute, receive, send_stream, upload, wait
from netsim.clock.recorder import Recorder
from netsim.transport.trace import TraceEvent
from netsim.transport.shared_uplink import SHARED_ACCESS, SharedUplink
from netsim.transport.media import ACCESS, ResourceBlocks

STALE = "stale"


class _VersionSteps:
    """A moving cell's shared uplink under a buffered run: the steps of the current version's
    links (``BufferedRun.links``, drawn at the version's start and read in steps from it, as a
    synchronous round's links from the round's start; ``netsim.transport.shared_uplink``, "In
    steps"), which ``BufferedRun.aggregate`` replaces by the next version's."""

    def __init__(self, run: "BufferedRun"):
        self.run = run

    def step_at(self, t_s: float) -> int:
        return self.run.links.step_at(t_s)

    def next_step_s(self, t_s: float) -> float:
        return self.run.links.next_step_s(t_s)

    def share_lost(self, device: int, t_s: float) -> bool:
        return self.run.links.share_lost(device, t_s)

    def __getitem__(self, device: int) -> int:
        """``device``'s receiver under ``ul_interference=clock``: its serving sector on the current version's links."""
        return int(self.run.links.uplink_queue[device])
IDLE_CHOICES = ("random", "fifo")


@dataclass(frozen=True)
class Buffered:
    """The orchestrator's settings: aggregate every ``buffer_k`` arrivals; at most
    ``concurrency`` devices training at once (None: every device); the access schemes of the
    downlink and the uplink (``netsim.transport.media.ACCESS``); how the idle devices to dispatch to
    are chosen when more are idle than places are free (``random``: uniformly, as FedBuff's
    and FLSim's servers sample idle clients; ``fifo``: in the order they became idle); updates
    more than ``max_staleness`` versions old are dropped (reason ``stale``, as FLSim's
    ``max_staleness``; None: none is)."""

    buffer_k: int
    concurrency: int | None = None
    downlink_access: str = "tdma"
    uplink_access: str = "tdma"
    idle_choice: str = "random"
    max_staleness: int | None = None

    def check(self, num_devices: int) -> None:
        """ValueError unless ``1 <= K <= concurrency <= num_devices`` and the schemes and choice are known."""
        concurrency = num_devices if self.concurrency is None else self.concurrency
        if not 1 <= concurrency <= num_devices:
            raise ValueError(f"concurrency must be in 1..{num_devices} (the devices), got {concurrency}")
        if not 1 <= self.buffer_k <= concurrency:
            raise ValueError(f"buffer K must be in 1..{concurrency} (the concurrency: more arrivals never come at once), got {self.buffer_k}")
        for access in (self.downlink_access, self.uplink_access):
            if access not in ACCESS:
                raise ValueError(f"unknown access scheme {access!r}; choose from {', '.join(ACCESS)}")
        if self.idle_choice not in IDLE_CHOICES:
            raise ValueError(f"unknown idle choice {self.idle_choice!r}; choose from {', '.join(IDLE_CHOICES)}")
        if self.max_staleness is not None and self.max_staleness < 0:
            raise ValueError(f"max staleness must be >= 0, got {self.max_staleness}")


class _Interval:
    """What happened since the last aggregation: bits, streams, energy, who got, computed, was dropped."""

    def __init__(self, start: float):
        self.start = start
        self.downlink_bits = 0.0
        self.uplink_bits = 0.0
        self.streams = 0
        self.energy_j: dict[int, float] = {}
        self.received: set[int] = set()
        self.computed: set[int] = set()
        self.dropped: dict[int, str] = {}


class BufferedRun:
    """One run of the orchestrator: its state and its processes (plain generator functions)."""

    def __init__(self, env, learner, network, settings: Buffered, rng, options: RunOptions, versions: int, idle_rng=None):
        self.env, self.learner, self.network, self.settings = env, learner, network, settings
        self.rng, self.options, self.versions, self.idle_rng = rng, options, versions, idle_rng
        self.num_devices = int(learner.num_devices)
        self.model_bits = float(learner.model_bits)
        if not self.model_bits > 0 or self.model_bits == float("inf"):
            raise ValueError(f"the learner's model_bits must be a finite number > 0, got {learner.model_bits!r}")
        settings.check(self.num_devices)
        self.concurrency = self.num_devices if settings.concurrency is None else settings.concurrency
        if settings.idle_choice == "random" and self.concurrency < self.num_devices and idle_rng is None:
            raise ValueError("a random choice of idle devices needs its generator (idle_rng: contract.seeds.idle_seed)")
        self.dynamics = getattr(network, "dynamics", None)  # netsim.dynamics.rounds.Dynamics (None: none)
        self.moving = self.dynamics is not None and self.dynamics.motion is not None
        if network.deadline is not None:
            raise ValueError("a deadline bounds a synchronous round; buffered aggregation has none (leave --deadline out)")
        self.version = 0
        self.trace: list[TraceEvent] = []
        self.links_s = 0.0
        self.links = links = self._draw_links()
        self.shared_access = links.uplink_access in SHARED_ACCESS  # one SharedUplink per receiver for the run
        # a moving cell's shared uplink: one links per version, read in steps from its start (as a synchronous round's)
        self.version_links = self.shared_access and self.moving
        if (settings.downlink_access, settings.uplink_access) != (links.downlink_access,
                                                                  "tdma" if self.shared_access else links.uplink_access):
            raise ValueError("on a cell the media are the cell's (one stream at a time, each receiver's resource blocks): "
                             "leave the access schemes tdma")
        self.downlink = links.downlink_medium(env)
        self.half_duplex = getattr(network, "duplex", "full") == "half"  # streams and uploads take turns on one medium
        self.receivers: dict[int, object] = {}  # each uplink receiver's medium, made when first asked
        self.records_energy = network.records_energy  # energy on the records and receptions on the trace
        self.waiting_w = getattr(network, "idle_power_w", 0.0)  # 0 (or no state model): waiting is not charged
        self.busy: dict[int, list] = {d: [] for d in range(self.num_devices)}  # (start, end) of transfers not charged past
        self.offered = [-1] * self.num_devices  # the last version dispatched to each device
        self.idle = deque(range(self.num_devices))
        self.skipped: dict[int, str] = {}  # idle devices passed over for their state, and why (until dispatched)
        self.wake_s = float("inf")  # when the server looks again at the devices it passed over
        self.flat_s: dict[int, float] = {}  # when each flat device ran out
        self.training = 0
        self.buffer: list[Update] = []
        self.updates = 0  # the updates that arrived so far (each its sequence number)
        self.shared = BufferedShared(self)
        self.interval = _Interval(0.0)
        self.recorder = Recorder.of(env, versions, options)  # the records, the evaluations, the budget
        self.finished = env.event()
        self.stalled = False  # nobody could train any more (outages, empty batteries): the run ended early

    def _draw_links(self):
        """The links of now (``netsim.transport.media.Links``, ``Network.transfer_links``): a cell's
        fading draw (a moving cell: its channel at ``env.now``), a normalized system's links with
        the settings' access schemes."""
        access = (self.settings.downlink_access, self.settings.uplink_access)
        links = self.network.transfer_links(self.model_bits, self.options.channel_rng, self.env.now, access)
        if links.uplink_access == "fdma":  # the narrowest share a queue gives: its devices, at most the concurrency
            queues = np.asarray(links.uplink_queue).tolist()
            concurrency = self.num_devices if self.settings.concurrency is None else self.settings.concurrency
            links.fdma_sharing = {q: min(queues.count(q), concurrency) for q in set(queues)}
        return links

    def links_now(self):
        """The links a step starting now reads: on a moving cell with a TDMA uplink the channel at
        ``env.now`` (position, serving sector, interference, fading of that instant); otherwise the
        current version's draw (one per version, as a synchronous round has one per round; on a
        moving cell with a shared uplink read in steps from the version's start)."""
        if self.moving and not self.version_links and self.links_s != self.env.now:
            self.links, self.links_s = self._draw_links(), self.env.now
        return self.links

    @classmethod
    def start(cls, learner, network, settings: Buffered, versions: int, rng, options: RunOptions = RunOptions(), idle_rng=None):
        """A run of this orchestrator (``cls``: ``BufferedRun`` or one built on it that changes when to
        aggregate) on a clock of its own, for ``drive``; ValueError for fewer than one version or a scheduler."""
        if versions < 1:
            raise ValueError(f"versions must be >= 1, got {versions}")
        if options.scheduler is not None:
            raise ValueError("a scheduler chooses a round's participants; buffered aggregation dispatches to idle devices")
        return cls(simpy.Environment(), learner, network, settings, rng, options, versions, idle_rng)

    # --- the device's state ------------------------------------------------------------
    def absent(self, devices) -> dict[int, str]:
        """Of ``devices``, those that cannot take a step now, with why (``Dynamics.absent``)."""
        if self.dynamics is None:
            return {}
        return self.dynamics.absent(self.env.now, devices)

    def spend(self, device: int, joules: float) -> None:
        """``device`` spent ``joules`` now: in the interval's energy and drained from its battery."""
        self.interval.energy_j[device] = self.interval.energy_j.get(device, 0.0) + joules
        self.drain(device, joules)

    def drain(self, device: int, joules: float) -> None:
        """Take ``joules`` from ``device``'s battery (if it has one); note when it ran flat."""
        if self.dynamics is not None and self.dynamics.batteries is not None and joules:
            if self.dynamics.batteries.drain({device: joules}):
                self.flat_s[device] = self.env.now

    def drop(self, device: int, why: str) -> None:
        """The server drops ``device``'s dispatch now (``why``: absent when its stream starts, in
        downlink outage, its update too stale): idle again."""
        now = self.env.now
        self.trace.append(TraceEvent(self.version + 1, "dropped", device, now, now, 0.0, 0.0, why))
        self.interval.dropped[device] = why
        self.release(device)

    # --- the server ------------------------------------------------------------------
    def dispatch_idle(self) -> None:
        """Send the current version to idle devices that have not trained from it and can take
        part now, up to the concurrency, as one stream: all of them if they fit, else chosen
        (``Buffered.idle_choice``). A device passed over for its state (out of coverage, switched
        off, empty battery: ``Dynamics.absent``) is dropped with that reason once until it is
        dispatched again, and the server looks again when it may be back (``Dynamics.back_s``)."""
        free = self.concurrency - self.training
        eligible = [d for d in self.idle if self.offered[d] < self.version] if free > 0 else []
        if not eligible:
            return
        absent = self.absent(eligible)
        now = self.env.now
        for device, why in sorted(absent.items()):
            if self.skipped.get(device) != why:
                self.skipped[device] = why
                self.trace.append(TraceEvent(self.version + 1, "dropped", device, now, now, 0.0, 0.0, why))
                self.interval.dropped[device] = why
        ready = [d for d in eligible if d not in absent]
        if len(ready) < free and absent:
            self.wake(min(self.dynamics.back_s(d, now, why) for d, why in absent.items()))
        if not ready:
            return
        chosen = self.choose(ready, free)
        for device in chosen:
            self.idle.remove(device)
            self.skipped.pop(device, None)
            self.offered[device] = self.version
            self.learner.dispatch(Dispatch(device, self.version, self.model_bits))
        self.training += len(chosen)
        draws = self.network.compute.sample(self.rng, len(chosen))
        self.env.process(self.send(tuple(chosen), dict(zip(chosen, draws.tolist())), self.version))

    def choose(self, ready: list[int], free: int) -> list[int]:
        """``free`` of the ``ready`` devices (all when they fit), in device order: one stream,
        its compute draws in device order, as a round draws its participants'."""
        if len(ready) <= free:
            return sorted(ready)
        if self.settings.idle_choice == "fifo":
            return sorted(ready[:free])
        picked = self.idle_rng.choice(len(ready), size=free, replace=False)
        return sorted(ready[i] for i in picked)

    def wake(self, at_s: float) -> None:
        """Look at the idle devices again at ``at_s`` (the soonest one passed over may be back)."""
        if at_s < self.wake_s:
            self.wake_s = at_s
            self.env.process(self._wake(at_s))

    def _wake(self, at_s: float):
        yield self.env.timeout(at_s - self.env.now)
        if self.wake_s == at_s:
            self.wake_s = float("inf")
        self.dispatch_idle()
        self.keep_going()

    def send(self, devices: tuple[int, ...], draws: dict, version: int):
        """One stream of ``version`` to ``devices`` on the downlink, timed by the channel at its
        start, heard by those present then. Each device's life (``device_process``) starts at the
        dispatch, its state read from then on (``Presence``: its switching off, its battery);
        one that switched off before the stream starts has left then; at the stream's start the
        server drops those absent then (their state's reason, ``Dynamics.absent``) and, at its
        end, those in downlink outage (``downlink-outage``); the others receive it
        (``netsim.transport.lifecycle.receive``: cut where they switch off or run flat). The stream is
        the lifecycle's one stream step (``netsim.transport.lifecycle.send_stream``, as a synchronous
        round's), on the run's downlink medium, heard as ``VersionStream`` says."""
        env = self.env
        dynamics = self.dynamics
        presence = BufferedPresence.start(env, devices, dynamics.availability if dynamics is not None else None,
                                          dynamics.batteries if dynamics is not None else None)
        presence.run = self
        started = {device: env.event() for device in devices}
        for device in devices:
            env.process(self.device_process(Life(self.shared, device, presence), version, draws[device], started[device]))
        yield from send_stream(env, self.links_now, devices, self.model_bits, self.trace, VersionStream(self, version, presence, started),
                               self.downlink)

    def on_air(self, device: int, start: float, end: float) -> None:
        """``device`` receives or sends from ``start`` to ``end`` (busy, not waiting): said at the
        transfer's start, and again with its end when it is cut."""
        if not self.waiting_w:
            return
        segments = self.busy[device]
        for i, (begin, _) in enumerate(segments):
            if begin == start:
                segments[i] = (start, end)
                return
        segments.append((start, end))

    def receiver(self, links, device: int) -> ResourceBlocks | SharedUplink:
        """The medium of ``device``'s uplink receiver on ``links`` (its resource blocks, TDMA; FDMA
        or PF, its ``shared_uplink``, one for every receiver under ``ul_interference=clock``): one
        per receiver for the run; on a half-duplex system the downlink's."""
        queue = int(links.uplink_queue[device])
        if self.shared_access:
            key = "every" if links.clock_interference else queue
            if key not in self.receivers:
                self.receivers[key] = self.shared_uplink(links)
            return self.receivers[key]
        if queue not in self.receivers:
            self.receivers[queue] = self.downlink if self.half_duplex else links.uplink_medium(self.env)
        return self.receivers[queue]

    def shared_uplink(self, links) -> SharedUplink:
        """FDMA or PF: a receiver's shared uplink for the run (``netsim.transport.shared_uplink.SharedUplink``,
        as a synchronous round's ``PhysicalLinks.shared_uplink``, or ``clock_uplink`` serving every
        receiver), its rates, powers and PF grants read from the links of the instant
        (``self.links``: the current version's block-fading draw; ``aggregate`` moves every
        transmission onto the next draw's rates, ``SharedUplink.rechannel``)."""
        clock = links.clock_interference
        allocate = (lambda devices, *at: self.links.share_allocator()(devices, *at)) if links.share_allocator() else None
        return SharedUplink(self.env, lambda devices, sharing, *at: (self.links.clock_share_bps if clock else self.links.uplink_share_bps)(devices, sharing, *at),
                          lambda devices, sharing, *at: self.links.uplink_share_w(devices, sharing, *at), links.band_prbs,
                          _VersionSteps(self) if self.version_links else None, allocate,
                          receivers=(_VersionSteps(self) if self.version_links else links.uplink_queue) if clock else None)

    def charge_waiting(self, interval: _Interval, end: float) -> None:
        """Every device's waiting from ``interval.start`` to ``end`` (the aggregation): the time
        it was switched on and not flat in it (``Dynamics.on_s``; until it ran flat) less its
        transfers clipped to it, at the waiting power (``energy.idle_energy_j``), as ``idle``
        events of the version the interval made, drained from the batteries, never more than
        a battery has left (waiting empties it, and it waits no more). Waiting is settled at
        the aggregations: a device that waiting alone empties is found flat then."""
        if not self.waiting_w:
            return
        start = interval.start
        availability = self.dynamics.availability if self.dynamics is not None else None
        on_at_start = availability.available(start) if availability is not None else None
        for device, segments in self.busy.items():
            powered = min(end, self.flat_s.get(device, end))  # a flat device waits no more
            busy_s = sum(max(min(stop, powered) - max(begin, start), 0.0) for begin, stop in segments)
            on_s = (self.dynamics.on_s(device, start, powered, on_at_start[device]) if on_at_start is not None
                    else max(powered - start, 0.0))  # nor does one switched off
            joules = energy.idle_energy_j(self.waiting_w, on_s, busy_s)
            if self.dynamics is not None and self.dynamics.batteries is not None:  # waiting stops when the battery is empty
                joules = min(joules, max(float(self.dynamics.batteries.remaining_j[device]), 0.0))
            interval.energy_j[device] = interval.energy_j.get(device, 0.0) + joules
            self.drain(device, joules)
            self.trace.append(TraceEvent(self.version, "idle", device, start, end, 0.0, joules))
            self.busy[device] = [(begin, stop) for begin, stop in segments if stop > end]

    def release(self, device: int) -> None:
        """``device`` is idle again (it could not report); fill the free places."""
        self.training -= 1
        self.idle.append(device)
        self.dispatch_idle()
        self.keep_going()

    def keep_going(self) -> None:
        """Nobody training (the others missed the current version) and nobody the server waits
        for (a device passed over that may come back, ``wake``): aggregate what the buffer holds;
        with nothing in it, the run has stalled."""
        if self.training == 0 and self.buffer and self.wake_s == float("inf"):
            self.aggregate()
            self.dispatch_idle()
        if self.training == 0 and self.wake_s == float("inf") and not self.finished.triggered:
            self.stalled = True
            self.finished.succeed()

    def arrive(self, update: Update) -> None:
        """An update arrived: too stale, dropped (``stale``); else the learner's local update,
        into the buffer; the K-th aggregates. Once the run has ended (its last version, or its
        budget), an update that arrives at the same instant stays in flight."""
        if self.finished.triggered or self.recorder.stopped:
            return
        self.updates += 1
        limit = self.settings.max_staleness
        if limit is not None and update.staleness(self.version) > limit:
            self.drop(update.device, STALE)
            return
        self.learner.local_update(update)
        self.buffer.append(update)
        if len(self.buffer) >= self.settings.buffer_k:
            self.aggregate()
        self.training -= 1
        self.idle.append(update.device)
        self.dispatch_idle()
        self.keep_going()

    def aggregate(self) -> None:
        updates, self.buffer = tuple(self.buffer), []
        self.learner.aggregate(self.version, updates)
        self.version += 1
        evaluation = self.recorder.evaluation(self.learner, self.version)
        interval, self.interval = self.interval, _Interval(self.env.now)
        self.charge_waiting(interval, self.env.now)
        arrived = tuple(sorted(u.device for u in updates))
        outcome = RoundOutcome(tuple(sorted(interval.received)), tuple(sorted(interval.computed)), arrived, dict(interval.dropped))
        record = RoundRecord(self.version, interval.start, self.env.now, interval.downlink_bits, interval.uplink_bits,
                             interval.streams, arrived, None, evaluation, outcome,
                             dict(interval.energy_j) if self.records_energy else None, updates)
        self.recorder.keep(record)
        if not self.moving or self.version_links:  # the next version's draw (a moving cell's TDMA reads each step's instant)
            shared = list({id(u): u for u in self.receivers.values() if isinstance(u, SharedUplink)}.values())
            for uplink in shared:  # the uploads on the air so far at the old draw's rates
                uplink.settle()
            self.links = links = self._draw_links()
            for uplink in shared:  # from now the new draw's; one in outage on it is cut here
                uplink.rechannel(lambda device: not links.can_upload(device, True))
        if self.version >= self.versions and not self.finished.triggered:
            self.finished.succeed()

    # --- a device ----------------------------------------------------------------------
    def device_process(self, me: "Life", version: int, draw: float, started):
        """One dispatch of ``version`` to a device, from the dispatch to its update or its drop:
        the lifecycle's steps (``netsim.transport.lifecycle``: the same receive, compute and upload as a
        synchronous round's), each reading the channel (``links_now``) and the device's state
        when it happens. A device that switches off or runs flat in a step is cut at that
        instant, its energy prorated, and dropped with that reason; it is idle again then."""
        device = me.device
        if (yield from wait(me, started)):  # it switched off before its stream started
            me.leave(UNAVAILABLE)
            self.release(device)
            return
        if started.value is None:  # absent at the stream's start or in downlink outage: the server dropped it
            return
        if not (yield from receive(me, started)):
            self.release(device)
            return
        self.interval.received.add(device)
        links = self.links_now()
        if not (yield from compute(me, links.compute_s(device, draw, 1.0), links.compute_j(device, 1.0))):
            self.release(device)
            return
        self.interval.computed.add(device)
        if not (yield from upload(me, self.model_bits)):
            self.release(device)
            return
        self.interval.uplink_bits += self.model_bits
        self.arrive(Update(device, version, self.model_bits, self.env.now, self.updates))


class VersionStream:
    """A buffered run's side of the lifecycle's stream step (``netsim.transport.lifecycle.send_stream``)
    for one dispatch of ``version``: at the stream's start it sends to the devices of the dispatch
    still on (one that switched off has left: its own process drops it) and present
    (``BufferedRun.absent``: those absent are dropped then, their state's reason), tells each
    device's process its airtime and bits (None: it does not get it) and counts a listener in
    downlink outage as on the air (it listens in vain); at its end the interval counts the
    stream and its bits, and a listener in downlink outage is dropped (``downlink-outage``: its
    model lost, idle again). Its events are in the version the interval makes, its entity the
    version sent; the devices time their own reception (``receive``)."""

    hands_over = False

    def __init__(self, run: "BufferedRun", version: int, presence: Presence, started: dict):
        self.run, self.entity, self.presence, self.started_at = run, version, presence, started
        self.waiting: list[int] = []
        self.absent: dict[int, str] = {}

    def round(self) -> int:
        return self.run.version + 1

    def listeners(self, devices) -> list[int]:
        env = self.run.env
        self.waiting = [d for d in devices if not self.presence.left(env, d)]  # (one that left is dropped by its own process)
        self.absent = self.run.absent(self.waiting)
        return [d for d in self.waiting if d not in self.absent]

    def started(self, airtime: float, listeners, getting) -> None:
        run, now = self.run, self.run.env.now
        getting, listening = set(getting), set(listeners)
        for device in self.waiting:
            self.started_at[device].succeed((airtime, run.model_bits) if device in getting else None)
            if device in listening and device not in getting:
                run.on_air(device, now, now + airtime)  # it listens, in vain
        for device, why in sorted(self.absent.items()):  # gone when the stream starts: its model is lost now
            run.drop(device, why)

    def ended(self, sent_bits: float) -> None:
        self.run.interval.streams += 1
        self.run.interval.downlink_bits += sent_bits

    def drops(self, device: int) -> bool:
        return True

    def missed(self, device: int) -> None:
        self.run.interval.dropped[device] = DOWNLINK_OUTAGE  # (a release may aggregate: the interval is then the next one's)
        self.run.release(device)

    def got(self, device: int) -> bool:
        return False


class BufferedShared:
    """What the lifecycle's steps ask of a buffered run (``netsim.transport.lifecycle.SharedRound``'s
    questions): the links of the instant (``BufferedRun.links_now``), each device's uplink
    receiver on them, no barrier and no deadline."""

    barrier = None
    deadline = None

    def __init__(self, run: BufferedRun):
        self.run = run
        self.uplink = Receivers(run)

    @property
    def env(self) -> simpy.Environment:
        return self.run.env

    @property
    def links(self):
        return self.run.links_now()


class Receivers:
    """Device -> its uplink receiver's medium on the links of the instant (``BufferedRun.receiver``)."""

    def __init__(self, run: BufferedRun):
        self.run = run

    def __getitem__(self, device: int):
        return self.run.receiver(self.run.links_now(), device)


@dataclass
class BufferedPresence(Presence):
    """The devices of one dispatch (``netsim.transport.lifecycle.Presence``: when each switches off after
    the dispatch, their batteries) in a buffered run: what a step spends goes into the run's
    interval and its battery (``BufferedRun.spend``); out of coverage now is out of reach."""

    run: object = None

    def spend(self, device: int, joules: float) -> None:
        self.run.spend(device, joules)

    def unreachable(self, env: simpy.Environment, device: int) -> str | None:
        return self.run.absent((device,)).get(device)


@dataclass(frozen=True)
class Life(Device):
    """A device of a buffered run in the lifecycle's steps: its events on the run's trace, in
    the version the interval they end in makes (a reception only where the network records
    energy), its drops in the interval's outcome, its time on the air kept for the waiting."""

    def event(self, kind: str, start: float, bits: float = 0.0, joules: float = 0.0, why: str = "") -> None:
        run = self.presence.run
        if kind == "receive" and not run.records_energy:
            return
        run.trace.append(TraceEvent(run.version + 1, kind, self.device, start, self.env.now, bits, joules, why))
        if kind == "dropped":
            run.interval.dropped[self.device] = why

    def on_air(self, start: float, end: float) -> None:
        self.presence.run.on_air(self.device, start, end)


def run_buffered(learner, network, settings: Buffered, versions: int, rng, options: RunOptions = RunOptions(),
                 trace: list | None = None, idle_rng: np.random.Generator | None = None):
    """Run ``learner`` (a ``contract.BufferedLearner``) on ``network`` until ``versions``
    aggregations (or ``options.budget``); returns the records (version 0: the initial model's
    evaluation, then one per aggregation) and the trace (appended to ``trace`` when given, so a
    run stopped by an exception keeps what happened). ``rng`` draws the compute times;
    ``idle_rng`` the random choice of idle devices (``contract.seeds.idle_seed``: its own stream,
    so the choice shifts no other draw)."""
    return drive(BufferedRun.start(learner, network, settings, versions, rng, options, idle_rng), trace)


def drive(run: BufferedRun, trace: list | None = None):
    """Run ``run`` (a ``BufferedRun`` or an orchestrator built on it) to its end: (records, trace)."""
    env, learner, recorder = run.env, run.learner, run.recorder
    if trace is not None:
        trace.extend(run.trace)
        run.trace = trace
    recorder.keep(RoundRecord(0, 0.0, 0.0, 0.0, 0.0, 0, (), None, recorder.evaluation(learner, 0), None, None))
    if run.dynamics is not None:  # the moving channel's handovers, logged as they happen
        run.dynamics.measure(env, run.trace, lambda: run.version + 1)
    run.dispatch_idle()
    run.keep_going()
    records = recorder.run(run.finished)
    if run.stalled and recorder.budget.stopped is None:
        recorder.budget.stopped = "stalled"
    return records, run.trace


class NetworkOnly:
    """A ``contract.BufferedLearner`` that trains nothing: the network alone under buffered
    aggregation (arrival rates, staleness), as ``netsim.clock.engine.simulate_rounds`` times rounds."""

    def __init__(self, num_devices: int, model_bits: float):
        self.num_devices, self.model_bits = num_devices, model_bits

    def dispatch(self, message: Dispatch) -> None:
        pass

    def local_update(self, update: Update) -> None:
        pass

    def aggregate(self, version: int, updates) -> None:
        pass

    def evaluate(self, version: int) -> None:
        return None
