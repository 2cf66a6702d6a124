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
version to the first of them (in the order they became idle; at the start, device order), all
together as one stream (a broadcast when they are all of them). A device trains each version
at most once: one that reported (or missed its model) waits for the next version. Every
arrival is handed to the learner (its local update from the version it was dispatched,
``contract.Update``); at the K-th arrival of the buffer the learner aggregates it and the
version moves on. With K = N and full concurrency this is the synchronous pipelined round: one
broadcast of each version to every device, the aggregation when the last update arrived.

On a cell the links are those of the current fading draw (``netsim.links.PhysicalLinks``; one
block-fading draw per model version, as a synchronous round has one per round): a stream at its
weakest listener's rate (who hears it: that draw's), each upload at the device's own on its
grant (its receiver and grant: the draw's when it asks), the energies on the trace; a device
in downlink outage misses the version (dropped ``downlink-outage``), one in uplink outage
computed but cannot upload (``uplink-outage``); when nobody is left training, a partial buffer
is aggregated, and with none the run ends (``stalled``). One record per aggregation (``RoundRecord``:
its ``server_round`` is the version it made, ``updates`` the messages it aggregated); a trace
event's ``round`` is the version the interval it happened in made, a ``downlink`` event's
``entity`` the version it sent.

Waiting on a cell is charged as the synchronous rounds charge it (``physical_round.idle_events``,
TR 38.840's waiting power ``PhysicalNetwork.idle_power_w``; nothing when it is 0): at each
aggregation, every device's time in the interval less its receiving and sending airtime clipped
to the interval (a transfer that straddles an aggregation is busy time in both, each its own
part), compute time counting as waiting; one ``idle`` event per device and interval, its energy
in the interval's record. A transfer's receiving or sending is counted from the moment it starts,
so the waiting of an interval is known when it ends.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import simpy

from contract import Dispatch, RoundOutcome, Update
from netsim import energy
from netsim.budget import Budget
from netsim.device_round import UPLINK_OUTAGE
from netsim.engine import RoundRecord, RunOptions
from netsim.links import DOWNLINK_OUTAGE, PhysicalLinks
from netsim.trace import TraceEvent
from netsim.transport import ACCESS, NormalizedLinks, ResourceBlocks, Tdma


@dataclass(frozen=True)
class Buffered:
    """The orchestrator's settings: aggregate every ``buffer_k`` arrivals; at most
    ``concurrency`` devices training at once (None: every device); the access schemes of the
    downlink and the uplink (``netsim.transport.ACCESS``)."""

    buffer_k: int
    concurrency: int | None = None
    downlink_access: str = "tdma"
    uplink_access: str = "tdma"

    def check(self, num_devices: int) -> None:
        """ValueError unless ``1 <= K <= concurrency <= num_devices`` and the schemes are known."""
        concurrency = num_devices if self.concurrency is None else self.concurrency
        if not 1 <= concurrency <= num_devices:
            raise ValueError(f"concurrency must be in 1..{num_devices} (the devices), got {concurrency}")
        if not 1 <= self.buffer_k <= concurrency:
            raise ValueError(f"buffer K must be in 1..{concurrency} (the concurrency: more arrivals never come at once), got {self.buffer_k}")
        for access in (self.downlink_access, self.uplink_access):
            if access not in ACCESS:
                raise ValueError(f"unknown access scheme {access!r}; choose from {', '.join(ACCESS)}")


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

    def spend(self, device: int, joules: float) -> None:
        self.energy_j[device] = self.energy_j.get(device, 0.0) + joules


class BufferedRun:
    """One run of the orchestrator: its state and its processes (plain generator functions)."""

    def __init__(self, env, learner, network, settings: Buffered, rng, options: RunOptions, versions: int):
        self.env, self.learner, self.network, self.settings = env, learner, network, settings
        self.rng, self.options, self.versions = rng, options, versions
        self.num_devices = int(learner.num_devices)
        self.model_bits = float(learner.model_bits)
        if not self.model_bits > 0 or self.model_bits == float("inf"):
            raise ValueError(f"the learner's model_bits must be a finite number > 0, got {learner.model_bits!r}")
        settings.check(self.num_devices)
        self.concurrency = self.num_devices if settings.concurrency is None else settings.concurrency
        self.cell = options.channel_rng is not None
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
        self.links = self._draw_links()
        self.version = 0
        self.offered = [-1] * self.num_devices  # the last version dispatched to each device
        self.idle = deque(range(self.num_devices))
        self.training = 0
        self.buffer: list[Update] = []
        self.updates = 0  # the updates that arrived so far (each its sequence number)
        self.inbox = [simpy.Store(env) for _ in range(self.num_devices)]
        self.interval = _Interval(0.0)
        self.records: list[RoundRecord] = []
        self.trace: list[TraceEvent] = []
        self.finished = env.event()
        self.stop = env.event()
        self.stalled = False  # nobody could train any more (outages): the run ended early

    def _draw_links(self):
        if self.cell:
            return PhysicalLinks.draw(self.network, self.options.channel_rng)
        if not (hasattr(self.network, "downlink_time") and hasattr(self.network, "uplink_time")):
            raise ValueError("buffered aggregation needs a system that times a payload (downlink_time, uplink_time)")
        return NormalizedLinks(self.network, self.model_bits)

    # --- the server ------------------------------------------------------------------
    def dispatch_idle(self) -> None:
        """Send the current version to the first idle devices that have not trained from it,
        up to the concurrency, as one stream."""
        chosen = []
        for device in list(self.idle):
            if self.training + len(chosen) >= self.concurrency:
                break
            if self.offered[device] < self.version:
                chosen.append(device)
        if not chosen:
            return
        chosen.sort()  # one stream; its compute draws in device order, as a round draws its participants'
        for device in chosen:
            self.idle.remove(device)
            self.offered[device] = self.version
            self.learner.dispatch(Dispatch(device, self.version, self.model_bits))
        self.training += len(chosen)
        draws = self.network.compute.sample(self.rng, len(chosen))
        self.env.process(self.send(tuple(chosen), dict(zip(chosen, draws.tolist())), self.version))

    def send(self, devices: tuple[int, ...], draws: dict, version: int):
        """One stream of ``version`` to ``devices`` on the downlink; each device that gets it
        starts (who gets it: the draw that timed it)."""
        links = self.links
        airtime = links.stream_s(devices, self.model_bits)
        getting = [d for d in devices if links.receives(d)]
        if self.cell:
            start = yield from self.carry(self.downlink, 1, airtime, getting)
        else:
            start = yield self.downlink.transmit(airtime)
        interval, now = self.interval, self.env.now
        interval.streams += 1
        if getting:
            interval.downlink_bits += self.model_bits
        self.trace.append(TraceEvent(self.version + 1, "downlink", version, start, now, self.model_bits if getting else 0.0))
        for device in devices:  # (a release may aggregate: self.interval is then the next one's)
            if device not in getting:
                self.trace.append(TraceEvent(self.version + 1, "dropped", device, now, now, 0.0, 0.0, DOWNLINK_OUTAGE))
                self.interval.dropped[device] = DOWNLINK_OUTAGE
                self.release(device)
                continue
            if self.cell:
                joules = links.receive_j(device, now - start)
                self.interval.spend(device, joules)
                self.trace.append(TraceEvent(self.version + 1, "receive", device, start, now, self.model_bits, joules))
            self.interval.received.add(device)
            self.inbox[device].put((version, draws[device]))

    def carry(self, medium: ResourceBlocks, prbs: int, airtime: float, devices):
        """A transfer on a cell, in the asking process: ``prbs`` of ``medium``'s blocks held for
        ``airtime``; ``devices`` receive or send on it (busy, not waiting) from its start.
        Returns its start."""
        env = self.env
        with medium.request(prbs) as grant:
            yield grant
            start = env.now
            if self.waiting_w:
                for device in devices:
                    self.busy[device].append((start, start + airtime))
            yield env.timeout(airtime)
        return start

    def receiver(self, links, device: int) -> ResourceBlocks:
        """The resource blocks of ``device``'s uplink receiver on ``links``: one per receiver for the run."""
        queue = int(links.uplink_queue[device])
        if queue not in self.receivers:
            self.receivers[queue] = ResourceBlocks(self.env, links.band_prbs)
        return self.receivers[queue]

    def charge_waiting(self, interval: _Interval, end: float) -> None:
        """Every device's waiting from ``interval.start`` to ``end`` (the aggregation): that
        time less its transfers clipped to it, at the waiting power (``energy.idle_energy_j``),
        as ``idle`` events of the version the interval made."""
        if not self.waiting_w:
            return
        start = interval.start
        for device, segments in self.busy.items():
            busy_s = sum(max(min(stop, end) - max(begin, start), 0.0) for begin, stop in segments)
            joules = energy.idle_energy_j(self.waiting_w, end - start, busy_s)
            interval.spend(device, joules)
            self.trace.append(TraceEvent(self.version, "idle", device, start, end, 0.0, joules))
            self.busy[device] = [(begin, stop) for begin, stop in segments if stop > end]

    def release(self, device: int) -> None:
        """``device`` is idle again (it could not report: an outage); fill the free places."""
        self.training -= 1
        self.idle.append(device)
        self.dispatch_idle()
        self.keep_going()

    def keep_going(self) -> None:
        """Nobody training (the others missed the current version): aggregate what the buffer
        holds; with nothing in it, the run has stalled."""
        if self.training == 0 and self.buffer:
            self.aggregate()
            self.dispatch_idle()
        if self.training == 0 and not self.finished.triggered:
            self.stalled = True
            self.finished.succeed()

    def arrive(self, update: Update) -> None:
        """An update arrived: the learner's local update, into the buffer; the K-th aggregates."""
        self.updates += 1
        self.learner.local_update(update)
        self.buffer.append(update)
        self.interval.uplink_bits += update.bits
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
        if self.cell:
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
        """Device ``device`` for the whole run: wait for a model, compute, upload."""
        env = self.env
        while True:
            version, draw = yield self.inbox[device].get()
            links, start = self.links, env.now
            yield env.timeout(links.compute_s(device, draw, 1.0))
            joules = links.compute_j(device, 1.0) if self.cell else 0.0
            self.interval.spend(device, joules)
            self.interval.computed.add(device)
            self.trace.append(TraceEvent(self.version + 1, "compute", device, start, env.now, 0.0, joules))
            links = self.links  # the channel now
            if not links.can_upload(device):
                self.trace.append(TraceEvent(self.version + 1, "dropped", device, env.now, env.now, 0.0, 0.0, UPLINK_OUTAGE))
                self.interval.dropped[device] = UPLINK_OUTAGE
                self.release(device)
                continue
            airtime = links.uplink_s(device, self.model_bits)
            if self.cell:
                start = yield from self.carry(self.receiver(links, device), links.grant_prbs(device), airtime, (device,))
            else:
                start = yield self.uplink.transmit(airtime)
            joules = links.transmit_j(device, airtime) if self.cell else 0.0
            self.interval.spend(device, joules)
            self.trace.append(TraceEvent(self.version + 1, "uplink", device, start, env.now, self.model_bits, joules))
            self.arrive(Update(device, version, self.model_bits, env.now, self.updates))


def run_buffered(learner, network, settings: Buffered, versions: int, rng, options: RunOptions = RunOptions(),
                 trace: list | None = None):
    """Run ``learner`` (a ``contract.BufferedLearner``) on ``network`` until ``versions``
    aggregations (or ``options.budget``); returns the records (version 0: the initial model's
    evaluation, then one per aggregation) and the trace (appended to ``trace`` when given, so a
    run stopped by an exception keeps what happened)."""
    if versions < 1:
        raise ValueError(f"versions must be >= 1, got {versions}")
    if options.scheduler is not None:
        raise ValueError("a scheduler chooses a round's participants; buffered aggregation dispatches to idle devices")
    env = simpy.Environment()
    run = BufferedRun(env, learner, network, settings, rng, options, versions)
    if trace is not None:
        run.trace = trace
    run.keep(RoundRecord(0, 0.0, 0.0, 0.0, 0.0, 0, (), None, learner.evaluate(0), None, None))
    for device in range(run.num_devices):
        env.process(run.device_process(device))
    run.dispatch_idle()
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
