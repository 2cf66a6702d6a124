"""The SimPy processes of one round and the one round loop of the project.

Per round the loop asks the learner for its plan, simulates the downlink streams (one after
another on the shared downlink), every participant's compute and its upload (one at a time
on the shared uplink), then tells the learner who arrived, so it trains and aggregates
(zero simulated time), and records the round. The clock moves only by the network and the
compute model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import simpy

from netsim.plan import Learner, RoundPlan
from netsim.system import NetworkSystem
from netsim.trace import TraceEvent


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

    @property
    def duration(self) -> float:
        return self.end - self.start


def downlink_process(env, plan: RoundPlan, system: NetworkSystem, model_bits: float, received, trace, server_round):
    """Send the streams one after another; a device has its model when its last stream ends."""
    last_stream = {device: index for index, stream in enumerate(plan.streams) for device in stream.devices}
    for index, stream in enumerate(plan.streams):
        start = env.now
        yield env.timeout(system.downlink_time(stream.bits, model_bits))
        trace.append(TraceEvent(server_round, "downlink", index, start, env.now, stream.bits))
        for device in stream.devices:
            if last_stream[device] == index and device in received:
                received[device].succeed()


def device_process(env, device, received, compute_s, computed, barrier, uplink, uplink_s, uplink_bits, deadline, trace, server_round):
    """Wait for the model, compute, (barrier mode: wait for everyone), upload.

    Returns True when the update arrived; a device still computing at the deadline, or whose
    upload would end after it, is dropped and sends nothing.
    """
    yield received
    start = env.now
    computing = env.timeout(compute_s)
    if deadline:
        yield computing | deadline.event
    else:
        yield computing
    trace.append(TraceEvent(server_round, "compute", device, start, env.now, 0.0))
    computed.succeed()
    if env.now < start + compute_s:  # the deadline came first
        trace.append(TraceEvent(server_round, "dropped", device, env.now, env.now, 0.0))
        return False
    if barrier is not None:
        yield barrier
    if uplink_s == 0:
        return True
    with uplink.request() as slot:
        yield slot
        if deadline and env.now + uplink_s > deadline.at:
            trace.append(TraceEvent(server_round, "dropped", device, env.now, env.now, 0.0))
            return False
        start = env.now
        yield env.timeout(uplink_s)
        trace.append(TraceEvent(server_round, "uplink", device, start, env.now, uplink_bits))
    return True


@dataclass(frozen=True)
class _Deadline:
    at: float
    event: simpy.Event


def round_process(env, plan: RoundPlan, system: NetworkSystem, model_bits: float, rng: np.random.Generator, trace, server_round):
    """One round; returns the devices whose update arrived, in device order.

    Compute times are drawn up front in participant order, so barrier and pipelined runs of
    the same seed see the same draws (common random numbers).
    """
    participants = plan.participants
    draws = system.compute.sample(rng, len(participants))
    deadline = None
    if system.deadline is not None:
        deadline = _Deadline(env.now + system.deadline, env.timeout(system.deadline))
    listening = {device for stream in plan.streams for device in stream.devices}
    received = {device: env.event() for device in participants if device in listening}
    downlink = env.process(downlink_process(env, plan, system, model_bits, received, trace, server_round))
    computed = {device: env.event() for device in participants}
    barrier = env.all_of(list(computed.values())) if system.mode == "barrier" else None
    uplink = simpy.Resource(env, capacity=1)
    processes = []
    for device, draw in zip(participants, draws):
        if barrier is not None:
            start_signal = downlink
        else:  # a device that receives nothing this round starts at once
            start_signal = received[device] if device in received else env.timeout(0)
        bits = plan.uplink_bits.get(device, 0.0)
        processes.append(env.process(device_process(
            env, device, start_signal, float(draw) * plan.compute_scale.get(device, 1.0), computed[device], barrier,
            uplink, system.uplink_time(bits, model_bits), bits, deadline, trace, server_round,
        )))
    yield downlink
    yield env.all_of(processes)
    arrived = tuple(sorted(d for d, process in zip(participants, processes) if process.value))
    if deadline and len(arrived) < len(participants) and env.now < deadline.at:
        yield deadline.event
    return arrived


def _record(server_round, start, end, plan, arrived, evaluation=None) -> RoundRecord:
    return RoundRecord(
        server_round=server_round,
        start=start,
        end=end,
        downlink_bits=plan.downlink_bits if plan else 0.0,
        uplink_bits=float(sum(plan.uplink_bits.get(d, 0.0) for d in arrived)) if plan else 0.0,
        num_streams=len(plan.streams) if plan else 0,
        arrived=arrived,
        plan=plan,
        evaluation=evaluation,
    )


def cosimulation_process(env, learner: Learner, system: NetworkSystem, rounds: int, rng, trace, on_round, evaluate_round):
    """The one round loop. Round 0 is the set-up phase (or, without one, the initial model)."""
    for server_round in range(rounds + 1):
        plan = learner.plan_round(server_round)
        start = env.now
        arrived: tuple[int, ...] = ()
        if plan is not None:
            arrived = yield env.process(round_process(env, plan, system, learner.model_bits, rng, trace, server_round))
            learner.local_update(server_round, arrived)
            learner.aggregate(server_round, arrived)
        elif server_round > 0:
            raise ValueError(f"learner gave no plan for round {server_round}")
        evaluation = learner.evaluate(server_round) if evaluate_round(server_round) else None
        on_round(_record(server_round, start, env.now, plan, arrived, evaluation))


def run_cosimulation(
    learner: Learner,
    system: NetworkSystem,
    rounds: int,
    rng: np.random.Generator,
    on_round: Callable[[RoundRecord], None] | None = None,
    evaluate_every: int = 1,
) -> tuple[list[RoundRecord], list[TraceEvent]]:
    """Run ``rounds`` rounds (after round 0) of ``learner`` on ``system``; returns records and trace.

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

    env.process(cosimulation_process(env, learner, system, rounds, rng, trace, keep, evaluate_round))
    env.run()
    return records, trace


def simulate_rounds(
    plans: Iterable[RoundPlan | None],
    system: NetworkSystem,
    model_bits: float,
    rng: np.random.Generator,
) -> tuple[list[RoundRecord], list[TraceEvent]]:
    """Time a sequence of plans with no learner: the network alone (round-time studies)."""
    env = simpy.Environment()
    records: list[RoundRecord] = []
    trace: list[TraceEvent] = []

    def rounds_process():
        for server_round, plan in enumerate(plans):
            start = env.now
            arrived = ()
            if plan is not None:
                arrived = yield env.process(round_process(env, plan, system, model_bits, rng, trace, server_round))
            records.append(_record(server_round, start, env.now, plan, arrived))

    env.process(rounds_process())
    env.run()
    return records, trace


def retime_plans(plans: Sequence[RoundPlan | None], system: NetworkSystem, model_bits: float, rng) -> list[float]:
    """Cumulative end time of each recorded round on another network, without retraining.

    Valid when the learning does not depend on the network: full participation, no deadline.
    """
    if system.deadline is not None:
        raise ValueError("re-timing needs a system without deadline (arrivals would change the learning)")
    records, _ = simulate_rounds(plans, system, model_bits, rng)
    return [record.end for record in records]
