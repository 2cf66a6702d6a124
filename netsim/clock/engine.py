"""The round process and the one round loop of the project.

Per round the loop asks the learner for its plan, simulates the downlink streams (one after
another on the shared downlink), every participant's compute and its upload (one at a time
on the shared uplink), then tells the learner who received its model, who computed and who
arrived, so it trains and aggregates (zero simulated time), and records the round. The clock
moves only by the network and the compute model.

A round is the SimPy process the network gives (``netsim.kind.Network.round_process``): on a
normalized system one that computes the round's whole timeline at once (``netsim.transport.timeline``,
vectorized) and holds the clock until its end, or with ``simulator="processes"`` the reference,
one SimPy process per participant (``netsim.transport.reference``); on a physical network
(``netsim.radio.physical``), its fading drawn from ``channel_rng``, the same two: vectorized
(``netsim.transport.physical_timeline``; TDMA) or per-device processes with outages, FDMA and energy
(``netsim.transport.physical_round``, the reference). A system that is not a ``Network`` (a plugin's
duck-typed one) is adopted as a normalized one (``netsim.kind.adopted``).

Every round process returns ``(RoundOutcome, energy_j, downlink_bits)``: the energy per
participant (joules; None off a physical network) and the bits of the streams actually sent
(None: the plan's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import simpy

from contract import Learner, RoundOutcome, RoundPlan
from contract.checks import check_outcome, check_plan, check_schedule, who
from netsim.clock.budget import Budget
from netsim.clock.recorder import Recorder
from netsim.transport.durations import TimedSystem
from netsim.kind import SIMULATORS, Network, adopted
from netsim.scheduling import Policy
from netsim.transport.trace import TraceEvent


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
    updates: tuple = ()  # buffered aggregation: the contract.Update messages aggregated (netsim.clock.buffered)

    def __post_init__(self) -> None:
        """A time or an energy that is not a finite number is a fault of the network model: stop
        here, where the round is known, rather than let a nan pass on into the results as a number."""
        if not math.isfinite(self.start) or not math.isfinite(self.end):
            raise RuntimeError(f"round {self.server_round}: the clock reached a time that is not a finite number ({self.start}, {self.end})")
        if self.energy_j is not None:
            for device, joules in self.energy_j.items():
                if not math.isfinite(joules):
                    raise RuntimeError(f"round {self.server_round}: device {device}'s energy is not a finite number ({joules})")

    @property
    def duration(self) -> float:
        return self.end - self.start


def _round_process(simulator: str, network: Network, channel_rng=None):
    if simulator not in SIMULATORS:
        raise ValueError(f"unknown simulator {simulator!r}; choose from {', '.join(SIMULATORS)}")
    return network.round_process(simulator, channel_rng)


def _record(server_round, start, end, plan, result=None, evaluation=None) -> RoundRecord:
    outcome, energy_j, sent_bits = result if result is not None else (None, None, None)
    arrived = outcome.arrived if outcome is not None else ()
    return RoundRecord(
        server_round=server_round,
        start=start,
        end=end,
        downlink_bits=(plan.downlink_bits if sent_bits is None else sent_bits) if plan else 0.0,
        uplink_bits=float(sum(map(plan.uplink_bits.get, arrived, repeat(0.0)))) if plan else 0.0,
        num_streams=len(plan.streams) if plan else 0,
        arrived=arrived,
        plan=plan,
        evaluation=evaluation,
        outcome=outcome,
        energy_j=energy_j,
    )


@dataclass(frozen=True)
class ScheduleOnClock:
    """A scheduling policy fed, at each round's start, the network's report of the round to come."""

    scheduler: Policy
    network: Network
    channel_rng: np.random.Generator | None

    def __call__(self, server_round: int, now_s: float = 0.0):
        return self.scheduler.choose(server_round, self.network.channel_report(self.channel_rng, now_s))

    def observe(self, server_round: int, arrived) -> None:
        self.scheduler.observe(server_round, arrived)


@dataclass(frozen=True)
class RunOptions:
    """How ``run_cosimulation`` runs, besides the learner, network, rounds and compute draws.

    ``on_round``: called with each round's record as it ends. ``evaluate_every``: the learner
    is evaluated after round 0, every that many rounds and after the last. ``simulator``:
    ``timeline`` (fast) or ``processes`` (the per-device reference). ``channel_rng``: the
    fading draws of a network that draws its channel (a ``PhysicalNetwork``). ``scheduler``:
    the network's choice of participants each round (a ``netsim.scheduling.Policy``; None: the
    learner samples its own). ``budget``: the run's horizon (``netsim.clock.budget.Budget``: time,
    bits, energy; None: it runs all its rounds), told why it stopped.
    """

    on_round: Callable[[RoundRecord], None] | None = None
    evaluate_every: int = 1
    simulator: str = "timeline"
    channel_rng: np.random.Generator | None = None
    scheduler: Policy | None = None
    budget: Budget | None = None


@dataclass(frozen=True)
class LoopHooks:
    """What the round loop calls besides the learner: the round process
    (``round_process(env, plan, system, model_bits, rng, trace, server_round)``), the run's
    recorder (``netsim.clock.recorder.Recorder``: which rounds are evaluated, where each record goes),
    and the network's scheduler on the clock (None: the learner samples its own participants)."""

    round_process: Callable
    recorder: Recorder
    schedule: ScheduleOnClock | None = None


def cosimulation_process(env, learner: Learner, system: TimedSystem, rounds: int, rng, trace, hooks: LoopHooks):
    """The one round loop. Round 0 is the set-up phase (or, without one, the initial model).

    ``hooks.schedule(server_round)``: the devices the network schedules (None: the learner
    samples its own), told to the learner through its ``schedule`` before it plans. Before
    training, a learner with ``round_outcome`` is told who received its model, who computed and
    who arrived (a device in downlink outage still needs its model); after the local update and
    before the aggregation, a learner with ``hold`` is told who holds its model and who missed it.
    """
    schedule = hooks.schedule
    for server_round in range(rounds + 1):
        chosen = schedule(server_round, env.now) if schedule is not None and server_round > 0 else None
        if chosen is not None:
            check_schedule(chosen, learner.num_devices, who("scheduler", schedule.scheduler))
            learner.schedule(server_round, chosen)
        plan = learner.plan_round(server_round)
        check_plan(plan, learner.num_devices, who("algorithm", learner))
        start = env.now
        result = None
        if plan is not None:
            result = yield env.process(hooks.round_process(env, plan, system, learner.model_bits, rng, trace, server_round))
            outcome = result[0]
            check_outcome(outcome, plan, who("network", system))
            tell = getattr(learner, "round_outcome", None)
            if tell is not None:
                tell(server_round, outcome)
            learner.local_update(server_round, outcome.arrived)
            hold = getattr(learner, "hold", None)
            if hold is not None:  # who holds its model, before an aggregation that reaches them next round
                hold(outcome.received, outcome.missed)
            learner.aggregate(server_round, outcome.arrived)
            if schedule is not None:
                schedule.observe(server_round, outcome.arrived)
        elif server_round > 0:
            raise ValueError(f"learner gave no plan for round {server_round}")
        evaluation = hooks.recorder.evaluation(learner, server_round)
        hooks.recorder.keep(_record(server_round, start, env.now, plan, result, evaluation))


def run_cosimulation(
    learner: Learner,
    system: TimedSystem,
    rounds: int,
    rng: np.random.Generator,
    options: RunOptions = RunOptions(),
) -> tuple[list[RoundRecord], list[TraceEvent]]:
    """Run ``rounds`` rounds (after round 0) of ``learner`` on ``system``, its compute drawn from
    ``rng``; returns records and trace. ``options``: see ``RunOptions``."""
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    env = simpy.Environment()
    trace: list[TraceEvent] = []
    recorder = Recorder.of(env, rounds, options)
    network = adopted(system)
    process = _round_process(options.simulator, network, options.channel_rng)
    schedule = None if options.scheduler is None else ScheduleOnClock(options.scheduler, network, options.channel_rng)
    loop = env.process(cosimulation_process(env, learner, network, rounds, rng, trace, LoopHooks(process, recorder, schedule)))
    return recorder.run(loop), trace


def simulate_rounds(
    plans: Iterable[RoundPlan | None],
    system: TimedSystem,
    model_bits: float,
    rng: np.random.Generator,
    simulator: str = "timeline",
    keep_trace: bool = True,
    channel_rng: np.random.Generator | None = None,
) -> tuple[list[RoundRecord], list[TraceEvent]]:
    """Time a sequence of plans with no learner: the network alone (round-time studies).

    ``keep_trace=False`` skips the trace (returned empty), which the timeline then never builds.
    On a network that draws its channel (``PhysicalNetwork``) the fading comes from ``channel_rng``.
    """
    network = adopted(system)
    round_process = _round_process(simulator, network, channel_rng)
    env = simpy.Environment()
    records: list[RoundRecord] = []
    trace: list[TraceEvent] | None = [] if keep_trace or simulator != "timeline" else None

    def rounds_process():
        for server_round, plan in enumerate(plans):
            start = env.now
            result = None
            if plan is not None:
                result = yield env.process(round_process(env, plan, network, model_bits, rng, trace, server_round))
            records.append(_record(server_round, start, env.now, plan, result))

    env.run(until=env.process(rounds_process()))  # a moving cell's association runs on the clock for ever
    return records, trace if keep_trace else []


def retime_plans(plans: Sequence[RoundPlan | None], system: TimedSystem, model_bits: float, rng,
                 simulator: str = "timeline", channel_rng=None) -> list[float]:
    """Cumulative end time of each recorded round on another network, without retraining.

    Valid when the learning does not depend on the network: full participation, no deadline,
    no outage (a physical network to re-time on must have its outage threshold off).
    """
    if system.deadline is not None:
        raise ValueError("re-timing needs a system without deadline (arrivals would change the learning)")
    if adopted(system).has_outages:
        raise ValueError("re-timing needs a network without outages (missed rounds would change the learning)")
    records, _ = simulate_rounds(plans, system, model_bits, rng, simulator, keep_trace=False, channel_rng=channel_rng)
    return [record.end for record in records]
