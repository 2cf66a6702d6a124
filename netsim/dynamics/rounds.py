"""A round on a cell in time: who is absent at its start, and what moved during it.

``Dynamics`` holds a run's moving channel (``netsim.dynamics.motion``; None on a static cell),
its devices' availability (``netsim.dynamics.availability``) and batteries
(``netsim.dynamics.battery``). ``RoundInTime`` wraps a physical round process: at the
round's start (``env.now``) a participant that is out of the parameter server's coverage
(``out-of-coverage``), switched off (``unavailable``) or empty (``battery``) is taken out of the
plan (its streams go to the others; a stream left without listeners is not sent) and dropped
with that reason, in the outcome and in the trace; the round runs on the others, its channel
read at ``env.now``; the handovers are logged in the trace (kind ``handover``, entity the
device, ``reason`` ``sector A->B``) at their measurement instants, in the round they happened in
(the association runs on the clock: ``Dynamics.measure``). In the round, a device that
switches off or runs flat leaves at that instant, the step it was in cut there
(``netsim.transport.lifecycle.Presence``: ``RoundInTime``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from contract import RoundOutcome, RoundPlan, Stream
from netsim.transport.hold import hold_until
from netsim.transport.lifecycle import BATTERY, UNAVAILABLE
from netsim.transport.trace import TraceEvent

OUT_OF_COVERAGE = "out-of-coverage"


@dataclass
class Dynamics:
    """What changes with time on one run's cell besides the fading of a static one."""

    motion: object = None  # netsim.dynamics.motion.ChannelInTime
    availability: object = None  # OnOff or TraceAvailability
    batteries: object = None  # netsim.dynamics.battery.Batteries
    logged_handovers: int = 0
    measuring: object = None  # the SimPy environment whose clock runs the association (``measure``)
    current_round: int = 0  # the synchronous round in progress (its handovers' round)

    def absent(self, t_s: float, devices) -> dict[int, str]:
        """Of ``devices``, those that cannot take part at ``t_s``, with why (the moving channel
        moved on to ``t_s``)."""
        reasons: dict[int, str] = {}
        out = self.motion.at(t_s)[3] if self.motion is not None else None
        on = self.availability.available(t_s) if self.availability is not None else None
        empty = self.batteries.empty if self.batteries is not None else None
        for device in devices:
            if out is not None and out[device]:
                reasons[device] = OUT_OF_COVERAGE
            elif on is not None and not on[device]:
                reasons[device] = UNAVAILABLE
            elif empty is not None and empty[device]:
                reasons[device] = BATTERY
        return reasons

    def on_s(self, device: int, start_s: float, end_s: float, on_at_start: bool) -> float:
        """The seconds ``device`` is switched on in ``[start_s, end_s]`` (``on_at_start``: its
        state at ``start_s``), from its switching times."""
        if self.availability is None:
            return max(end_s - start_s, 0.0)
        t, on, total = start_s, bool(on_at_start), 0.0
        while t < end_s:
            switch = min(self.availability.next_switch_s(device, t), end_s)
            total += (switch - t) if on else 0.0
            t, on = switch, not on
        return total

    def back_s(self, device: int, t_s: float, why: str) -> float:
        """When ``device``, absent at ``t_s`` for ``why``, may be present again: never with an
        empty battery (even if it is also switched off or out of coverage now); switched off, at its next switch; out of coverage, one layer-1 measurement
        period later (TS 38.133 Table 9.2.5.2-1's 200 ms, ``association.L1_PERIOD_S``: the soonest
        a change of its strongest sector is measured)."""
        from netsim.dynamics.association import L1_PERIOD_S

        if why == BATTERY or (self.batteries is not None and self.batteries.empty[device]):
            return float("inf")  # flat, whatever else keeps it away now
        if why == UNAVAILABLE:
            return self.availability.next_switch_s(device, t_s)
        return t_s + L1_PERIOD_S

    def new_handovers(self, until_s: float = float("inf")) -> list:
        """The handovers not logged yet up to ``until_s`` (a transfer in segments may have read
        the association ahead of the clock: ``netsim.radio.physical_links``)."""
        if self.motion is None:
            return []
        handovers, start = self.motion.handovers, self.logged_handovers
        end = start
        while end < len(handovers) and handovers[end].time_s <= until_s:
            end += 1
        self.logged_handovers = end
        return handovers[start:end]

    def measure(self, env, trace: list | None, round_now: Callable[[], int]) -> None:
        """Start the association on the clock of ``env`` (once per clock): ``measurements``."""
        motion = self.motion
        if motion is None or trace is None or not motion.system.cell.interference or self.measuring is env:
            return  # nothing moves, nothing to log, or one base station: no measurement to make
        self.measuring = env
        env.process(measurements(env, self, trace, round_now))


def measurements(env, dynamics: Dynamics, trace: list, round_now: Callable[[], int]):
    """The moving channel's association as a SimPy process: at each measurement instant
    (``ChannelInTime.measure_until``: TS 38.133's 200 ms layer-1 period) the measurement runs
    and the handovers it made are logged then, as ``handover`` events of ``round_now()`` (the
    round, or the version an interval makes, in progress). So each handover lies in the span it
    happened in and the trace stays in the clock's order. The association is the same whoever
    reads the channel when: its instants are fixed, this process only logs them on time."""
    motion = dynamics.motion
    per_second = 1.0 / motion.measurement_period_s  # the instants measure_until runs: k / per_second
    k = 0  # the next instant to log (the measurements may have run ahead: a transfer in segments reads the channel ahead)
    while True:
        motion.measure_until(env.now)
        trace.extend(TraceEvent(round_now(), "handover", h.device, h.time_s, h.time_s, 0.0, 0.0, f"sector {h.source}->{h.target}")
                     for h in dynamics.new_handovers(env.now))
        while k / per_second <= env.now:
            k += 1
        yield from hold_until(env, k / per_second)


def without(plan: RoundPlan, absent) -> RoundPlan:
    """``plan`` with the ``absent`` devices taken out of its participants and streams."""
    streams = tuple(Stream(kept, s.bits) for s in plan.streams for kept in [tuple(d for d in s.devices if d not in absent)] if kept)
    return RoundPlan(streams, {d: b for d, b in plan.uplink_bits.items() if d not in absent},
                     tuple(d for d in plan.participants if d not in absent),
                     {d: c for d, c in plan.compute_scale.items() if d not in absent})


@dataclass(frozen=True)
class RoundInTime:
    """A physical round process (``inner``) run on the devices present at ``env.now``; the same
    contract. With availability or batteries the round runs as per-device processes
    (``netsim.transport.physical_round.physical_round_process``, whatever ``inner`` is: the vectorized
    round cannot stop a device in a step), each device's state read as its steps happen."""

    inner: Callable

    def __call__(self, env, plan: RoundPlan, network, model_bits: float, rng, trace, server_round, channel_rng=None):
        return _round_in_time(env, plan, network, (model_bits, rng, trace, server_round, channel_rng), self.inner)


def _round_in_time(env, plan: RoundPlan, network, round_args: tuple, inner: Callable):
    """The SimPy process: ``round_args`` are ``inner``'s (model bits, compute generator, trace, round, channel generator).

    With availability or batteries the round is ``physical_round_process``: a participant leaves
    when it switches off (its next switch after the round's start) or when a step's energy runs
    its battery flat, the step cut there (``netsim.transport.lifecycle.Presence``); the receive, compute
    and transmit energies are drained from the battery as each step ends, the waiting (idle)
    energy at the round's end (a device it empties loses the upload it made in the round,
    ``battery``: the rule of a battery settled after the round).
    """
    from netsim.transport.physical_round import physical_round_process

    model_bits, rng, trace, server_round, channel_rng = round_args
    dynamics = network.dynamics
    start = env.now
    dynamics.current_round = server_round
    dynamics.measure(env, trace, lambda: dynamics.current_round)  # the handovers, logged as they happen
    absent = dynamics.absent(start, plan.participants)  # reads the moving channel at the start
    if trace is not None:
        trace.extend(TraceEvent(server_round, "dropped", d, start, start, 0.0, 0.0, why) for d, why in sorted(absent.items()))
    present = without(plan, absent)
    if dynamics.availability is not None or dynamics.batteries is not None:
        inner = physical_round_process  # the vectorized round cannot stop a device in a step
    if present.participants:
        outcome, energy, sent_bits = yield from inner(env, present, network, model_bits, rng, trace, server_round, channel_rng)
    else:
        outcome, energy, sent_bits = RoundOutcome((), (), ()), {}, 0.0
    energy = {**energy, **{d: 0.0 for d in absent}} if energy is not None else None
    return RoundOutcome(outcome.received, outcome.computed, outcome.arrived, {**outcome.dropped, **absent}), energy, sent_bits


def dynamics_of(system, layout, rng) -> Dynamics:
    """A run's ``Dynamics`` on ``system`` (a ``netsim.radio.physical.PhysicalSystem`` whose cell lives in
    time) from its initial ``layout``, its draws from ``rng`` (the motion stream): the paths,
    fields and fading first, then the availability."""
    from netsim.dynamics.availability import OnOff, TraceAvailability
    from netsim.dynamics.battery import Batteries
    from netsim.dynamics.motion import ChannelInTime

    devices = layout.num_devices
    motion = ChannelInTime.start(system, layout, rng) if system.channel_in_time else None
    if system.mean_off_s > 0:
        availability = OnOff(rng, devices, system.mean_on_s, system.mean_off_s)
    elif system.availability_trace is not None:
        availability = TraceAvailability.load(system.availability_trace, devices)
    else:
        availability = None
    batteries = Batteries(devices, system.battery_j) if system.battery_j is not None else None
    return Dynamics(motion, availability, batteries)
