"""The reference round: one SimPy process per participant.

The downlink sends the streams one after another; each device waits for its model, computes,
(barrier mode: waits for everyone) and queues for the shared uplink (FIFO): the device process
of ``netsim.device_round``, shared with the cell, its airtimes given by ``FixedLinks``. The fast engine
(``netsim.timeline``) is tested against these processes on the same durations: same arrivals,
same round end, same trace in the same order.
"""

from __future__ import annotations

import numpy as np

from contract import RoundOutcome, RoundPlan
from netsim.device_round import Deadline, SharedRound, Transfer, device_process
from netsim.durations import RoundDurations, TimedSystem
from netsim.trace import TraceEvent
from netsim.transport import Tdma


def downlink_process(env, plan: RoundPlan, stream_s, received, trace, server_round):
    """Send the streams one after another; a device has its model when its last stream ends."""
    last_stream = {device: index for index, stream in enumerate(plan.streams) for device in stream.devices}
    for index, stream in enumerate(plan.streams):
        start = env.now
        yield env.timeout(stream_s[index])
        trace.append(TraceEvent(server_round, "downlink", index, start, env.now, stream.bits))
        for device in stream.devices:
            if last_stream[device] == index and device in received:
                received[device].succeed()


class FixedLinks:
    """The ``links`` of ``netsim.device_round`` for a normalized system: no outage, one TDMA
    uplink, each participant's airtime from its durations, no energy."""

    uplink_access = "tdma"

    def __init__(self, participants, uplink_s):
        self._uplink_s = dict(zip(participants, uplink_s))

    def can_upload(self, device: int, uploading: bool = False) -> bool:
        return True

    def uplink_s(self, device: int, bits: float) -> float:
        return self._uplink_s[device]

    def upload(self, device: int, bits: float, start_s: float | None = None) -> Transfer:
        """Its airtime whenever it starts (the normalized systems have no channel in time)."""
        return Transfer(self._uplink_s[device], False, bits)

    def grant_prbs(self, device: int) -> int:
        return 1

    def transmit_j(self, device: int, airtime_s: float, start_s: float | None = None) -> float:
        return 0.0


def round_process_reference(env, plan: RoundPlan, system: TimedSystem, model_bits: float, rng: np.random.Generator, trace, server_round):
    """One round, one process per participant; returns its outcome (arrivals in device order),
    with no energy and the plan's downlink bits, as ``netsim.engine`` expects."""
    durations = system.round_durations(plan, model_bits, rng)
    durations.check(plan)
    outcome = yield from _processes(env, plan, durations, system.mode, system.deadline, trace, server_round)
    return outcome, None, None


def _processes(env, plan: RoundPlan, durations: RoundDurations, mode: str, deadline_s, trace, server_round):
    participants = plan.participants
    stream_s = durations.stream_s.tolist()
    compute_s = durations.compute_s.tolist()
    uplink_s = durations.uplink_s.tolist()
    deadline = None
    if deadline_s is not None:
        deadline = Deadline(env.now + deadline_s, env.timeout(deadline_s))
    listening = {device for stream in plan.streams for device in stream.devices}
    received = {device: env.event() for device in participants if device in listening}
    downlink = env.process(downlink_process(env, plan, stream_s, received, trace, server_round))
    computed = {device: env.event() for device in participants}
    barrier = env.all_of(list(computed.values())) if mode == "barrier" else None
    uplink = dict.fromkeys(participants, Tdma(env))
    links = FixedLinks(participants, uplink_s)
    shared = SharedRound(env, barrier, uplink, links, deadline, trace, server_round)
    processes = []
    for index, device in enumerate(participants):
        if barrier is not None:
            start_signal = downlink
        else:  # a device that receives nothing this round starts at once
            start_signal = received[device] if device in received else env.timeout(0)
        processes.append(env.process(device_process(
            shared, device, start_signal, computed[device], compute_s[index], 0.0, plan.uplink_bits.get(device, 0.0),
        )))
    yield downlink
    yield env.all_of(processes)
    arrived = tuple(sorted(d for d, process in zip(participants, processes) if process.value))
    if deadline and len(arrived) < len(participants) and env.now < deadline.at:
        yield deadline.event
    return RoundOutcome(
        received=tuple(sorted(participants)),
        computed=tuple(sorted(d for d in participants if computed[d].value)),
        arrived=arrived,
        dropped={d: "deadline" for d in participants if d not in arrived},
    )
