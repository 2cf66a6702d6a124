"""The reference round: one SimPy process per participant.

The downlink sends the streams one after another; each device waits for its model, computes,
(barrier mode: waits for everyone) and queues for the shared uplink (FIFO): the downlink and
the device process of ``netsim.transport.lifecycle``, shared with the cell, its airtimes given by
``FixedLinks``. The fast engine
(``netsim.transport.timeline``) is tested against these processes on the same durations: same arrivals,
same round end, same trace in the same order.
"""

from __future__ import annotations

import numpy as np

from contract import RoundOutcome, RoundPlan
from netsim.transport.lifecycle import Deadline, SharedRound, round_device, send_streams
from netsim.transport.durations import RoundDurations, TimedSystem
from netsim.transport.media import NormalizedLinks, Tdma


class FixedLinks(NormalizedLinks):
    """The ``links`` of ``netsim.transport.lifecycle`` for a normalized system (``NormalizedLinks``: no
    outage, one TDMA uplink, the whole band as each grant, no energy), each stream's and each
    participant's uplink airtime from its durations."""

    def __init__(self, participants, uplink_s, stream_s):
        super().__init__(None, 0.0)
        self._uplink_s = dict(zip(participants, uplink_s))
        self._stream_s = iter(stream_s)

    def stream_s(self, devices, bits: float, start_s: float | None = None) -> float:
        """The next stream's airtime: the downlink (``netsim.transport.lifecycle.send_streams``) asks each
        stream's once, at its start, in the plan's order."""
        return next(self._stream_s)

    def uplink_s(self, device: int, bits: float) -> float:
        return self._uplink_s[device]


def round_process_reference(env, plan: RoundPlan, system: TimedSystem, model_bits: float, rng: np.random.Generator, trace, server_round):
    """One round, one process per participant; returns its outcome (arrivals in device order),
    with no energy and the plan's downlink bits, as ``netsim.clock.engine`` expects."""
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
    links = FixedLinks(participants, uplink_s, stream_s)
    streams = env.process(send_streams(env, plan, links, received, trace, server_round))
    computed = {device: env.event() for device in participants}
    barrier = env.all_of(list(computed.values())) if mode == "barrier" else None
    uplink = dict.fromkeys(participants, Tdma(env))
    shared = SharedRound(env, barrier, uplink, links, deadline, trace, server_round)
    processes = []
    for index, device in enumerate(participants):
        if barrier is not None:
            start_signal = streams
        else:  # a device that receives nothing this round starts at once
            start_signal = received[device] if device in received else env.timeout(0)
        processes.append(env.process(round_device(
            shared, device, start_signal, computed[device], compute_s[index], 0.0, plan.uplink_bits.get(device, 0.0),
        )))
    yield streams
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
