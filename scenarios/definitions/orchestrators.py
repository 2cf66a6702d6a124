"""Who drives the learner: the orchestrators, one object each, registered by name
(``ORCHESTRATORS``; a plugin adds its own, ``scenarios.plugins``). An orchestrator only decides
when to dispatch to whom and when to aggregate; a device's lifecycle (``netsim.transport.lifecycle``:
its receive, compute and upload steps, and the one stream step) and the one recorder
(``netsim.clock.recorder``: records, evaluations, budget) are the same for all. Each says

- ``reads``: the run settings it reads (``RunSpec`` fields whose declaration has
  ``requires={"orchestrator": read_by(...)}``); one set that it does not read is refused before
  anything is built (``settings.check_effect``);
- ``settings(spec, learner, network)``: its settings from the run spec (ValueError for ones it cannot take);
- ``wrap(learner, settings)``: the learner it drives over the run's (the learner itself for
  synchronous rounds; ``learning.asynchronous.BufferedServer`` or ``TieredServer`` by messages);
- ``run(job)``: the run (``Job``) to its end: (records, trace).

The built-in ones: ``sync`` (the synchronous round loop, ``netsim.clock.engine``), ``fedbuff``
(Nguyen et al. 2022, Algorithm 1) and ``fedasync`` (Xie et al. 2019) on ``netsim.clock.buffered``,
``fedat`` (Chai et al. 2021) on ``netsim.clock.tiered``.

What an orchestrator hands back is checked at the boundary (``check_record``) as input is: one
line naming it, before any file is written.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from contract.plan import DROP_REASONS, RoundOutcome
from contract.setting import Needs
from netsim.clock.buffered import Buffered, BufferedRun, drive
from netsim.clock.engine import RoundRecord, RunOptions, run_cosimulation
from netsim.transport.trace import TraceEvent


@dataclass(frozen=True)
class Job:
    """One run for an orchestrator: the learner it drives (its ``wrap``), its ``settings``, the
    bound ``network``, the ``rounds`` (aggregations) after round 0, ``rng`` (the compute draws)
    and ``seed`` (the run's network ``SeedSequence``, whose named streams, ``contract.seeds``,
    it may draw from), ``options`` (``netsim.clock.engine.RunOptions``: the recorder's ``on_round``,
    ``evaluate_every``, ``budget``; the channel's generator, the scheduler) and ``trace``, the list
    its trace events are appended to as they happen (a run stopped by an exception keeps them)."""

    learner: object
    settings: object
    network: object
    rounds: int
    rng: np.random.Generator
    seed: np.random.SeedSequence
    options: RunOptions
    trace: list


class Orchestrator:
    """Base of every orchestrator: its ``name`` (a run's ``--orchestrator``), one-line ``doc``,
    the settings it ``reads`` and whether it drives the learner ``by_messages``
    (``contract.BufferedLearner``: dispatches and updates; False: ``contract.Learner``'s round
    plans, which report missed models and replay a diverged run's trace)."""

    name: str = ""
    doc: str = ""
    reads: frozenset = frozenset()
    by_messages: bool = True

    def settings(self, spec, learner, network):
        """Its settings from the run ``spec`` (None: it has none); ValueError for ones it cannot take."""
        return None

    def wrap(self, learner, settings):
        """The learner it drives over the run's ``learner``; ValueError for one it cannot drive."""
        return learner

    def run(self, job: Job) -> tuple[list, list]:
        """Run ``job`` to its end: (records, trace)."""
        raise NotImplementedError


class Synchronous(Orchestrator):
    name = "sync"
    doc = "synchronous rounds (barrier, pipelined, deadline, participation, schedulers: netsim.clock.engine)"
    reads = frozenset({"mode", "deadline", "participation", "scheduler"})
    by_messages = False

    def run(self, job: Job) -> tuple[list, list]:
        records, trace = run_cosimulation(job.learner, job.network, job.rounds, job.rng, job.options)
        job.trace.extend(trace)
        return records, job.trace


def _default(spec, name: str):
    return next(f.default for f in dataclasses.fields(spec) if f.name == name)


@dataclass(frozen=True)
class BufferedSettings:
    """A buffered run's settings: the server's rule (``learning.asynchronous.AsyncRule``) and the clock's (``netsim.clock.buffered.Buffered``)."""

    rule: object
    buffered: Buffered


class FedBuff(Orchestrator):
    """Buffered asynchronous aggregation (Nguyen et al. 2022, Algorithm 1): every K arrivals.
    ``run_class``: the ``netsim.clock.buffered.BufferedRun`` it runs; an orchestrator that changes only
    when to aggregate subclasses both and names its own."""

    name = "fedbuff"
    doc = "buffered asynchronous aggregation every K arrivals (Nguyen et al. 2022)"
    reads = frozenset({"buffer_k", "concurrency", "idle_choice", "max_staleness", "server_lr", "staleness_exponent"})
    rule = "fedbuff"
    run_class = BufferedRun

    def buffer_k(self, spec, concurrency: int) -> int:
        """K: the spec's, else half the concurrency."""
        return max(1, concurrency // 2) if spec.buffer_k is None else spec.buffer_k

    def settings(self, spec, learner, network) -> BufferedSettings:
        from learning.asynchronous import AsyncRule

        concurrency = learner.num_devices if spec.concurrency is None else spec.concurrency
        if spec.idle_choice != _default(spec, "idle_choice") and concurrency >= learner.num_devices:
            raise ValueError(f"--idle-choice chooses which idle devices get a version when --concurrency leaves fewer places than "
                             f"devices; at concurrency {concurrency} (every device) every idle device is sent it")
        buffered = Buffered(self.buffer_k(spec, concurrency), spec.concurrency, idle_choice=spec.idle_choice,
                            max_staleness=spec.max_staleness)
        buffered.check(learner.num_devices)
        return BufferedSettings(AsyncRule(self.rule, spec.server_lr, spec.mixing_alpha, spec.staleness_exponent), buffered)

    def wrap(self, learner, settings: BufferedSettings):
        from learning.asynchronous import BufferedServer

        return BufferedServer(learner, settings.rule)

    def run(self, job: Job) -> tuple[list, list]:
        from contract.seeds import idle_seed

        idle_rng = np.random.default_rng(idle_seed(job.seed))  # its own stream: the choice shifts no other draw
        run = self.run_class.start(job.learner, job.network, job.settings.buffered, job.rounds, job.rng, job.options, idle_rng)
        return drive(run, job.trace)


class FedAsync(FedBuff):
    """FedAsync (Xie et al. 2019): K = 1, each update mixed in as it arrives."""

    name = "fedasync"
    doc = "asynchronous aggregation at each arrival (Xie et al. 2019)"
    reads = frozenset({"concurrency", "idle_choice", "max_staleness", "staleness_exponent", "mixing_alpha"})
    rule = "fedasync"

    def buffer_k(self, spec, concurrency: int) -> int:
        return 1


class FedAT(Orchestrator):
    """FedAT (Chai et al. 2021): latency tiers, synchronous within a tier, asynchronous across (``netsim.clock.tiered``)."""

    name = "fedat"
    doc = "latency tiers, synchronous within a tier and asynchronous across (Chai et al. 2021)"
    reads = frozenset({"tiers"})

    def settings(self, spec, learner, network):
        from netsim.clock.tiered import Tiered, expected_latency_s, latency_tiers

        return Tiered(latency_tiers(expected_latency_s(network, learner.num_devices, learner.model_bits), spec.tiers))

    def wrap(self, learner, settings):
        from learning.asynchronous import TieredServer

        return TieredServer(learner, settings.tiers)

    def run(self, job: Job) -> tuple[list, list]:
        from netsim.clock.tiered import run_tiered

        records, _ = run_tiered(job.learner, job.network, job.settings, job.rounds, job.rng, job.options, job.trace)
        return records, job.trace


ORCHESTRATORS: dict[str, Orchestrator] = {o.name: o for o in (Synchronous(), FedBuff(), FedAsync(), FedAT())}


def get_orchestrator(name: str) -> Orchestrator:
    """The registered orchestrator ``name`` (ValueError naming the registered ones)."""
    if name not in ORCHESTRATORS:
        raise ValueError(f"unknown orchestrator {name!r}; choose from {', '.join(ORCHESTRATORS)}")
    return ORCHESTRATORS[name]


class ReadBy(Needs):
    """A setting's need (``requires={"orchestrator": read_by("buffer_k")}``): an orchestrator that
    reads it (its ``reads``), read when checked, so a plugin's orchestrator counts; in words, the
    registered ones that do (``--orchestrator fedbuff or fedasync``)."""

    def __init__(self, setting: str):
        object.__setattr__(self, "test", lambda value: value in ORCHESTRATORS and setting in ORCHESTRATORS[value].reads)
        object.__setattr__(self, "text", setting)

    def __str__(self) -> str:
        return " or ".join(name for name, o in ORCHESTRATORS.items() if self.text in o.reads)


def read_by(setting: str) -> ReadBy:
    return ReadBy(setting)


def _finite(value, low: float = 0.0) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value) and value >= low


def _devices(devices, num_devices: int) -> bool:
    return all(isinstance(d, Integral) and not isinstance(d, bool) and 0 <= d < num_devices for d in devices)


def record_problem(record, previous, num_devices: int) -> str | None:
    """What is wrong with ``record`` (after ``previous``, None for the first) of a run with
    ``num_devices`` devices, in words; None when nothing is: a ``RoundRecord`` numbered after the
    last, its times finite, from 0 on and never going back, its bits finite and >= 0, its
    arrived, received, computed and dropped devices in range, its drops' reasons known, its
    energies finite and >= 0 per device in range."""
    if not isinstance(record, RoundRecord):
        return f"a record that is not a netsim.clock.engine.RoundRecord: {type(record).__name__}"
    expected = 0 if previous is None else previous.server_round + 1
    if not isinstance(record.server_round, Integral) or record.server_round != expected:
        return f"record {record.server_round!r} where record {expected} was due"
    where = f"record {record.server_round}"
    if not (_finite(record.start) and _finite(record.end) and record.start <= record.end):
        return f"{where}: its span {record.start!r} .. {record.end!r} is not a finite time from 0 on"
    if previous is not None and (record.start < previous.start or record.end < previous.end):
        return f"{where}: the time goes back ({record.start!r} .. {record.end!r} after {previous.start!r} .. {previous.end!r})"
    if not (_finite(record.downlink_bits) and _finite(record.uplink_bits)):
        return f"{where}: bits that are not finite numbers >= 0 ({record.downlink_bits!r}, {record.uplink_bits!r})"
    if not isinstance(record.num_streams, Integral) or record.num_streams < 0:
        return f"{where}: {record.num_streams!r} streams"
    if not isinstance(record.arrived, tuple) or not _devices(record.arrived, num_devices):
        return f"{where}: arrived devices {record.arrived!r} not all in 0..{num_devices - 1}"
    outcome = record.outcome
    if outcome is not None:
        if not isinstance(outcome, RoundOutcome):
            return f"{where}: an outcome that is not a contract.RoundOutcome"
        for part in (outcome.received, outcome.computed, outcome.arrived, tuple(outcome.dropped)):
            if not _devices(part, num_devices):
                return f"{where}: outcome devices {part!r} not all in 0..{num_devices - 1}"
        unknown = sorted(set(map(str, outcome.dropped.values())) - set(DROP_REASONS))
        if unknown:
            return f"{where}: drop reasons {unknown} not among {', '.join(DROP_REASONS)}"
    energy = record.energy_j
    if energy is not None and not (isinstance(energy, dict) and _devices(energy, num_devices)
                                   and all(_finite(j) for j in energy.values())):
        return f"{where}: energies {energy!r} not finite joules >= 0 of devices in 0..{num_devices - 1}"
    return None


def check_handed(handed, num_devices: int, who: str) -> tuple[list, list]:
    """What ``run`` handed back, (records, trace); ValueError (one line, ``who`` handed back ...)
    unless it is a pair of a non-empty list of good records (``record_problem``) and a list of
    trace events, each with a finite span from 0 on and finite bits and joules >= 0."""
    if not (isinstance(handed, tuple) and len(handed) == 2 and isinstance(handed[1], list)):
        raise ValueError(f"{who} handed back {type(handed).__name__} {handed!r:.60}, not (records, trace)")
    records = handed[0]
    if not isinstance(records, list) or not records:
        raise ValueError(f"{who} handed back {type(records).__name__} {records!r:.60}, not a non-empty list of records")
    previous = None
    for record in records:
        problem = record_problem(record, previous, num_devices)
        if problem is not None:
            raise ValueError(f"{who} handed back {problem}")
        previous = record
    for event in handed[1]:
        if not (isinstance(event, TraceEvent) and _finite(event.start) and _finite(event.end) and event.start <= event.end
                and _finite(event.bits) and _finite(event.energy_j)):
            raise ValueError(f"{who} handed back a trace event {event!r:.80} that is not a TraceEvent with a finite span "
                             "from 0 on and finite bits and joules >= 0")
    return handed
