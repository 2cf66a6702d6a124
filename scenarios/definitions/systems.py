"""Network systems by name: the journal paper's three normalized systems (V-D, Fig. 6), in
units of ``T_dl`` (the default), and the physical cell presets of ``scenarios.definitions.cells``, in seconds."""

from __future__ import annotations

import math

from dataclasses import dataclass, is_dataclass
from typing import Callable

from netsim.kind import adopted
from netsim.system import NetworkSystem
from scenarios.errors import UsageError


@dataclass(frozen=True)
class SystemPreset:
    name: str
    description: str
    rho: float
    t_min: float
    inv_mu: float


@dataclass(frozen=True)
class SystemFactory:
    """A network system from a plugin: ``make(mode=..., deadline=...)`` returns a frozen dataclass
    with ``mode``, ``deadline``, ``t_dl`` (the time unit: one model's downlink time) and
    ``round_durations(plan, model_bits, rng)``; its fields are recorded in each run's config."""

    name: str
    description: str
    make: Callable[..., object]


SYSTEMS: dict[str, SystemPreset | SystemFactory] = {
    p.name: p
    for p in (
        SystemPreset("wireless-slow-ul", "wireless, slow uplink, unreliable devices: rho=4, T_min=T_dl=1/mu", 4.0, 1.0, 1.0),
        SystemPreset("wireless-fast-ul", "wireless, fast uplink, reliable devices: rho=2, T_min=T_dl, 1/mu=0", 2.0, 1.0, 0.0),
        SystemPreset("wired", "wired, symmetric links, reliable devices: rho=1, T_min=T_dl, 1/mu=0", 1.0, 1.0, 0.0),
    )
}

DEFAULT_SYSTEM = "wireless-slow-ul"


def system_names() -> list[str]:
    from scenarios.definitions.cells import CELLS

    return list(SYSTEMS) + list(CELLS)


def get_system(name: str, mode: str = "pipelined", deadline: float | None = None, radio: dict | None = None):
    """The named system: a ``NetworkSystem``, or for a cell preset a ``PhysicalSystem`` with the
    ``radio`` overrides applied (refused for the normalized systems)."""
    from scenarios.definitions.cells import CELLS, get_cell_system

    if not isinstance(name, str):
        raise UsageError(f"a system is a name, got {name!r}")
    if name in CELLS:
        return get_cell_system(name, mode, deadline, radio)
    if name not in SYSTEMS:
        raise UsageError(f"unknown system {name!r}; choose from: {', '.join(system_names())}")
    if radio:
        raise UsageError(f"--radio applies to the physical cell presets, not to the normalized system {name!r}")
    preset = SYSTEMS[name]
    try:
        if isinstance(preset, SystemFactory):
            system = preset.make(mode=mode, deadline=deadline)
            if not (is_dataclass(system) and callable(getattr(system, "round_durations", None)) and hasattr(system, "t_dl")):
                raise UsageError(f"system {name!r} must be a dataclass with t_dl and round_durations, got {type(system).__name__}")
            t_dl = system.t_dl
            if isinstance(t_dl, bool) or not isinstance(t_dl, (int, float)) or not 0 < t_dl < math.inf:
                raise UsageError(f"system {name!r}: t_dl (the time unit) must be a finite number > 0, got {t_dl!r}")
            return adopted(system)
        return NetworkSystem(rho=preset.rho, t_min=preset.t_min, inv_mu=preset.inv_mu, mode=mode, deadline=deadline)
    except ValueError as error:
        raise UsageError(str(error)) from None
