"""The boundary of the round loop: what a learner, a scheduling policy or a network hands the
engine is checked as user input is, one line naming who handed it (``ContractError``, a
``UsageError``: exit status 2 on the command line, and no folder written). The same
checks hold for a plan read back from a result folder (``scenarios.records.result_folder``).

A plan, a schedule or an outcome names devices by their index: integers in ``[0, devices)``,
none twice in one list; bits are finite and non-negative; a compute scale is finite and positive.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

from contract.plan import RoundOutcome, RoundPlan
from contract.setting import UsageError


class ContractError(UsageError, ValueError):
    """What a learner, a policy or a network handed the engine breaks the contract."""


def who(kind: str, thing) -> str:
    """``kind`` and ``thing``'s name (its ``name``, else its class's): ``algorithm fedavg``."""
    return f"{kind} {getattr(thing, 'name', None) or type(thing).__name__}"


def _devices(devices, num_devices: int | None, said: str) -> None:
    """Each of ``devices`` an integer in ``[0, num_devices)`` (None: any), none twice;
    ``said`` begins the message (``algorithm fedavg planned participants with``)."""
    try:
        listed = list(devices)
    except TypeError:
        raise ContractError(f"{said} {devices!r:.60}, not a list of devices") from None
    for device in listed:
        if not isinstance(device, Integral) or isinstance(device, bool):
            raise ContractError(f"{said} device {device!r:.40}, not an integer")
        if num_devices is not None and not 0 <= device < num_devices:
            raise ContractError(f"{said} device {device}, not one of the run's {num_devices} devices (0..{num_devices - 1})")
    if len(set(map(int, listed))) != len(listed):
        raise ContractError(f"{said} device {next(d for d in listed if listed.count(d) > 1)} twice")


def _amounts(values, said: str, positive: bool = False) -> None:
    for value in values:
        if not isinstance(value, Real) or isinstance(value, bool) or not math.isfinite(value) or value < 0 \
                or (positive and value == 0):
            raise ContractError(f"{said} {value!r:.40}, not a finite number {'> 0' if positive else '>= 0'}")


def check_plan(plan, num_devices: int, where: str) -> None:
    """``plan`` (None: a round that sends nothing) names devices of the run, each stream and
    the participants once, finite non-negative bits and finite positive compute scales;
    ``where`` names who planned it (``algorithm fedavg``, ``round 3``)."""
    if plan is None:
        return
    if not isinstance(plan, RoundPlan):
        raise ContractError(f"{where} planned {plan!r:.60}, not a RoundPlan")
    for stream in plan.streams:
        _devices(stream.devices, num_devices, f"{where} planned a stream with")
    for what, devices in (("participants", plan.participants), ("uplink bits", plan.uplink_bits),
                          ("compute scales", plan.compute_scale)):
        _devices(devices, num_devices, f"{where} planned {what} with")
    _amounts([s.bits for s in plan.streams], f"{where} planned a stream of bits")
    _amounts(plan.uplink_bits.values(), f"{where} planned uplink bits")
    _amounts(plan.compute_scale.values(), f"{where} planned a compute scale", positive=True)


def check_schedule(devices, num_devices: int, where: str) -> None:
    """A policy's choice of a round's devices (None: the learner samples its own)."""
    if devices is not None:
        _devices(devices, num_devices, f"{where} scheduled")


def check_outcome(outcome, plan: RoundPlan, where: str) -> None:
    """A round's outcome names only the plan's participants, each once per list."""
    if not isinstance(outcome, RoundOutcome):
        raise ContractError(f"{where} reported {outcome!r:.60}, not a RoundOutcome")
    planned = set(plan.participants)
    for what, devices in (("received", outcome.received), ("computed", outcome.computed), ("arrived", outcome.arrived),
                          ("dropped", outcome.dropped)):
        _devices(devices, None, f"{where} reported as {what}")
        stranger = next((d for d in devices if d not in planned), None)
        if stranger is not None:
            raise ContractError(f"{where} reported as {what} device {stranger}, which the round's plan did not schedule")
