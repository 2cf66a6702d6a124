"""Buffered asynchronous aggregation on the clock: FedBuff (Nguyen et al. 2022, Algorithm 1:
the server aggregates every K updates that arrive) and FedAsync (Xie et al. 2019: K = 1), the
orchestrator beside the synchronous round loop of ``netsim.engine``.

The transport lives for the whole run (``netsim.transport``): on a normalized system a downlink
and an uplink medium (``Tdma``: one transfer at a time, FIFO; ``Unshared``: no contention); on a
cell, as in its synchronous rounds (``netsim.physical_round``), the downlink sends one stream at a
time and each uplink receiver (``PhysicalLinks.uplink_queue``: each sector of the site, or the
site) has its resource blocks (``ResourceBlocks``), each upload holding its grant's
(``PhysicalLinks.grant_prbs``) while it sends: grants that fit together send together. One SimPy
process per device waits for its model, computes and uploads, again and again. The server keeps
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

On a cell the links are those of the current fading draw (``netsim.links.PhysicalLinks``; one
block-fading draw per model version, as a synchronous round has one per round; on a moving cell
the channel of the instant each step starts, ``netsim.dynamics.motion``): a stream at its
weakest listener's rate (who hears it: that draw's), each upload at the device's own on its
grant (its receiver and grant: the draw's when it asks, its rate the draw's when the grant
starts), the energies on the trace; a device in downlink outage misses the version (dropped
``downlink-outage``), one in uplink outage computed but cannot upload (``uplink-outage``).
On a cell in time (``netsim.dynamics.rounds.Dynamics``) every step reads the device's state
when it happens: a device out of coverage, switched off or flat is not dispatched to (passed
over with that reason, looked at again when it may be back), and one that switches off or runs
flat while it receives, computes or uploads loses its update (dropped with that reason); the
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
from netsim import energy
from netsim.budget import Budget
from netsim.device_round import UPLINK_OUTAGE
from netsim.engine import RoundRecord, RunOptions
from netsim.links import DOWNLINK_OUTAGE, PhysicalLinks
from netsim.trace import TraceEvent
from netsim.transport import ACCESS, NormalizedLinks, ResourceBlocks, Tdma

STALE = "stale"
IDLE_CHOICES = ("random", "fifo")


@dataclass(frozen=True)
class Buffered:
    """The orchestrator's settings: aggregate every ``buffer_k`` arrivals; at most
    ``concurrency`` devices training at once (None: every device); the access schemes of the
    downlink and the uplink (``netsim.transport.ACCESS``); how the idle devices to dispatch to
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
        self.cell = options.channel_rng is not None
        self.dynamics = getattr(network, "dynamics", None) if self.cell else None  # netsim.dynamics.rounds.Dynamics
        self.moving = self.dynamics is not None and self.dynamics.motion is not None
        if self.cell:
            if network.system.uplink_access != "tdma":
                raise ValueError("buffered aggregation on a cell takes uplink_access=tdma (an FDMA share changes with every upload)")
            if (settings.downlink_access, settings.uplink_access) != ("tdma", "tdma"):
                raise ValueError("on a cell the media are the cell's (one stream at a time, each receiver's resource blocks): "
                                 "leave the access schemes tdma")
            self.downlink = Tdma(env)
            self.receivers: dict[int, ResourceBlocks] = {}  # each uplink receiver's blocks, made when first asked
            self.waiting_w = network.idle_power_w  # 0: waiting is not charged (no state model)
            self.busy: dict[int, list] = {d: [] for d in range(self.num_devices)}  # (start, end) of transfers not charged past
        else:
            self.downlink = ACCESS[settings.downlink_access](env)
            # a half-duplex normalized system: streams and uploads take turns on one medium
            self.uplink = self.downlink if getattr(network, "duplex", "full") == "half" else ACCESS[settings.uplink_access](env)
        if network.deadline is not None:
            raise ValueError("a deadline bounds a synchronous round; buffered aggregation has none (leave --deadline out)")
        self.version = 0
        self.trace: list[TraceEvent] = []
        self.links_s = 0.0
        self.links = self._draw_links()
        self.offered = [-1] * self.num_devices  # the last version dispatched to each device
        self.idle = deque(range(self.num_devices))
        self.skipped: dict[int, str] = {}  # idle devices passed over for their state, and why (until dispatched)
        self.wake_s = float("inf")  # when the server looks again at the devices it passed over
        self.flat_s: dict[int, float] = {}  # when each flat device ran out
        self.training = 0
        self.buffer: list[Update] = []
        self.updates = 0  # the updates that arrived so far (each its sequence number)
        self.inbox = [simpy.Store(env) for _ in range(self.num_devices)]
        self.interval = _Interval(0.0)
        self.records: list[RoundRecord] = []
        self.finished = env.event()
        self.stop = env.event()
        self.stalled = False  # nobody could train any more (outages, empty batteries): the run ended early

    def _draw_links(self):
        """The links of now: a cell's fading draw (a moving cell: its channel at ``env.now``)."""
        if self.cell:
            return PhysicalLinks.draw(self.network, self.options.channel_rng, self.env.now)
        if not (hasattr(self.network, "downlink_time") and hasattr(self.network, "uplink_time")):
            raise ValueError("buffered aggregation needs a system that times a payload (downlink_time, uplink_time)")
        return NormalizedLinks(self.network, self.model_bits)

    def links_now(self):
        """The links a step starting now reads: on a moving cell the channel at ``env.now``
        (position, serving sector, interference, fading of that instant); otherwise the current
        version's draw (one block-fading draw per version, as a synchronous round has one per round)."""
        if self.moving and self.links_s != self.env.now:
            self.links, self.links_s = self._draw_links(), self.env.now
        return self.links

    # --- the device's state ------------------------------------------------------------
    def absent(self, devices) -> dict[int, str]:
        """Of ``devices``, those that cannot take a step now, with why (``Dynamics.absent``)."""
        if self.dynamics is None:
            return {}
        return self.dynamics.absent(self.env.now, devices)

    def lost(self, device: int, start: float) -> str | None:
        """Why ``device`` could not finish the step it began at ``start`` (``Dynamics.present_throughout``)."""
        if self.dynamics is None:
            return None
        return self.dynamics.present_throughout(device, start, self.env.now)

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
        """``device``'s dispatch ends without an update (its model or its update lost, ``why``): idle again."""
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
        start, heard by those present then; each device that gets it, and stays present to its
        end, starts (the others are dropped: ``downlink-outage``, or their state's reason)."""
        listen: dict = {}

        def timing(links):
            absent = self.absent(devices)
            listeners = [d for d in devices if d not in absent]
            airtime = links.stream_s(listeners, self.model_bits, self.env.now) if listeners else 0.0  # (in segments: who loses it mid-way)
            listen.update(listeners=listeners, getting=[d for d in listeners if links.receives(d)])
            for device, why in sorted(absent.items()):  # gone when the stream starts: its model is lost now
                self.drop(device, why)
            return airtime

        if self.cell:
            start, links = yield from self.carry(self.downlink, 1, timing, devices)
        else:
            links = self.links
            start = yield self.downlink.transmit(timing(links))
        interval, now = self.interval, self.env.now
        getting, listeners = listen["getting"], listen["listeners"]
        interval.streams += 1
        if getting:
            interval.downlink_bits += self.model_bits
        self.trace.append(TraceEvent(self.version + 1, "downlink", version, start, now, self.model_bits if getting else 0.0))
        for device in listeners:  # (a release may aggregate: self.interval is then the next one's)
            if device not in getting:
                self.drop(device, DOWNLINK_OUTAGE)
                continue
            if self.cell:
                joules = links.receive_j(device, now - start)
                self.spend(device, joules)
                self.trace.append(TraceEvent(self.version + 1, "receive", device, start, now, self.model_bits, joules))
            why = self.lost(device, start)
            if why is not None:
                self.drop(device, why)
                continue
            self.interval.received.add(device)
            self.inbox[device].put((version, draws[device]))

    def carry(self, medium: ResourceBlocks, prbs: int, timing, devices):
        """A transfer on a cell, in the asking process: ``prbs`` of ``medium``'s blocks held for
        the airtime ``timing(links)`` gives from the links at the grant's start (the channel of
        that instant); ``devices`` receive or send on it (busy, not waiting) from its start.
        Returns (its start, those links)."""
        env = self.env
        with medium.request(prbs) as grant:
            yield grant
            start = env.now
            links = self.links_now()
            airtime = timing(links)
            if self.waiting_w and airtime > 0:
                for device in devices:
                    self.busy[device].append((start, start + airtime))
            yield env.timeout(airtime)
        return start, links

    def receiver(self, links, device: int) -> ResourceBlocks:
        """The resource blocks of ``device``'s uplink receiver on ``links``: one per receiver for the run."""
        queue = int(links.uplink_queue[device])
        if queue not in self.receivers:
            self.receivers[queue] = ResourceBlocks(self.env, links.band_prbs)
        return self.receivers[queue]

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
        if self.finished.triggered or self.stop.triggered:
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
        evaluation = self.learner.evaluate(self.version) if self.evaluates(self.version) else None
        interval, self.interval = self.interval, _Interval(self.env.now)
        if self.cell:
            self.charge_waiting(interval, self.env.now)
        arrived = tuple(sorted(u.device for u in updates))
        outcome = RoundOutcome(tuple(sorted(interval.received)), tuple(sorted(interval.computed)), arrived, dict(interval.dropped))
        record = RoundRecord(self.version, interval.start, self.env.now, interval.downlink_bits, interval.uplink_bits,
                             interval.streams, arrived, None, evaluation, outcome,
                             dict(interval.energy_j) if self.cell else None, updates)
        self.keep(record)
        if self.cell and not self.moving:
            self.links = self._draw_links()
        if self.version >= self.versions and not self.finished.triggered:
            self.finished.succeed()

    def evaluates(self, version: int) -> bool:
        """Evaluated after version 0, every ``evaluate_every`` versions and the last (as rounds are)."""
        return version % self.options.evaluate_every == 0 or version == self.versions

    def keep(self, record: RoundRecord) -> None:
        self.records.append(record)
        if self.options.on_round is not None:
            self.options.on_round(record)
        budget = self.options.budget
        if budget is not None and budget.spend(record) and not self.stop.triggered:
            self.stop.succeed()

    # --- a device ----------------------------------------------------------------------
    def device_process(self, device: int):
        """Device ``device`` for the whole run: wait for a model, compute, upload; each step
        reads the channel and the device's state when it starts, and a device that switched
        off or ran flat during a step loses its update (dropped with that reason)."""
        env = self.env
        while True:
            version, draw = yield self.inbox[device].get()
            links, start = self.links_now(), env.now
            yield env.timeout(links.compute_s(device, draw, 1.0))
            joules = links.compute_j(device, 1.0) if self.cell else 0.0
            self.spend(device, joules)
            self.interval.computed.add(device)
            self.trace.append(TraceEvent(self.version + 1, "compute", device, start, env.now, 0.0, joules))
            why = self.lost(device, start) or self.absent((device,)).get(device)
            if why is None and not self.links_now().can_upload(device):
                why = UPLINK_OUTAGE
            if why is not None:
                self.drop(device, why)
                continue
            if self.cell:
                links = self.links_now()  # its receiver and grant: the channel when it asks
                sent: dict = {}

                def timing(now_links, device=device, sent=sent):
                    why = self.absent((device,)).get(device) or (None if now_links.can_upload(device) else UPLINK_OUTAGE)
                    transfer = now_links.upload(device, self.model_bits, self.env.now) if why is None else None
                    sent.update(why=why, links=now_links, transfer=transfer)
                    return 0.0 if why else transfer.airtime_s

                start, _ = yield from self.carry(self.receiver(links, device), links.grant_prbs(device), timing, (device,))
                if sent["why"] is not None:  # gone or in outage when its grant came: nothing sent
                    self.drop(device, sent["why"])
                    continue
                joules = sent["links"].transmit_j(device, env.now - start, start)
                if sent["transfer"].lost:  # its link fell below the floor (or out of coverage) in the upload: cut there
                    self.spend(device, joules)
                    self.trace.append(TraceEvent(self.version + 1, "dropped", device, start, env.now, sent["transfer"].bits, joules,
                                                 UPLINK_OUTAGE))
                    self.interval.dropped[device] = UPLINK_OUTAGE
                    self.release(device)
                    continue
            else:
                start = yield self.uplink.transmit(links.uplink_s(device, self.model_bits))
                joules = 0.0
            self.spend(device, joules)
            self.interval.uplink_bits += self.model_bits
            self.trace.append(TraceEvent(self.version + 1, "uplink", device, start, env.now, self.model_bits, joules))
            why = self.lost(device, start)
            if why is not None:
                self.drop(device, why)
                continue
            self.arrive(Update(device, version, self.model_bits, env.now, self.updates))


def run_buffered(learner, network, settings: Buffered, versions: int, rng, options: RunOptions = RunOptions(),
                 trace: list | None = None, idle_rng: np.random.Generator | None = None):
    """Run ``learner`` (a ``contract.BufferedLearner``) on ``network`` until ``versions``
    aggregations (or ``options.budget``); returns the records (version 0: the initial model's
    evaluation, then one per aggregation) and the trace (appended to ``trace`` when given, so a
    run stopped by an exception keeps what happened). ``rng`` draws the compute times;
    ``idle_rng`` the random choice of idle devices (``contract.seeds.idle_seed``: its own stream,
    so the choice shifts no other draw)."""
    if versions < 1:
        raise ValueError(f"versions must be >= 1, got {versions}")
    if options.scheduler is not None:
        raise ValueError("a scheduler chooses a round's participants; buffered aggregation dispatches to idle devices")
    env = simpy.Environment()
    return drive(BufferedRun(env, learner, network, settings, rng, options, versions, idle_rng), trace)


def drive(run: BufferedRun, trace: list | None = None):
    """Run ``run`` (a ``BufferedRun`` or an orchestrator built on it) to its end: (records, trace)."""
    env, learner, options = run.env, run.learner, run.options
    if trace is not None:
        trace.extend(run.trace)
        run.trace = trace
    run.keep(RoundRecord(0, 0.0, 0.0, 0.0, 0.0, 0, (), None, learner.evaluate(0), None, None))
    if run.dynamics is not None:  # the moving channel's handovers, logged as they happen
        run.dynamics.measure(env, run.trace, lambda: run.version + 1)
    for device in range(run.num_devices):
        env.process(run.device_process(device))
    run.dispatch_idle()
    run.keep_going()
    budget = options.budget if options.budget is not None else Budget({})
    env.run(until=budget.horizon(env, run.finished, run.stop))
    if run.stalled and budget.stopped is None:
        budget.stopped = "stalled"
    return run.records, run.trace


class NetworkOnly:
    """A ``contract.BufferedLearner`` that trains nothing: the network alone under buffered
    aggregation (arrival rates, staleness), as ``netsim.engine.simulate_rounds`` times rounds."""

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
