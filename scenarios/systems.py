"""Network systems by name: the journal paper's three normalized systems (V-D, Fig. 6), in
units of ``T_dl`` (the default), and the physical cell presets of ``scenarios.cells``, in seconds."""

from __future__ import annotations

from dataclasses import dataclass

from netsim.system import NetworkSystem
from scenarios.errors import UsageError


@dataclass(frozen=True)
class SystemPreset:
    name: str
    description: str
    rho: float
    t_min: float
    inv_mu: float


SYSTEMS: dict[str, SystemPreset] = {
    p.name: p
    for p in (
        SystemPreset("wireless-slow-ul", "wireless, slow uplink, unreliable devices: rho=4, T_min=T_dl=1/mu", 4.0, 1.0, 1.0),
        SystemPreset("wireless-fast-ul", "wireless, fast uplink, reliable devices: rho=2, T_min=T_dl, 1/mu=0", 2.0, 1.0, 0.0),
        SystemPreset("wired", "wired, symmetric links, reliable devices: rho=1, T_min=T_dl, 1/mu=0", 1.0, 1.0, 0.0),
    )
}

DEFAULT_SYSTEM = "wireless-slow-ul"


def system_names() -> list[str]:
    from scenarios.cells import CELLS

    return list(SYSTEMS) + list(CELLS)


def is_physical(name: str) -> bool:
    from scenarios.cells import CELLS

    return name in CELLS


def get_system(name: str, mode: str = "pipelined", deadline: float | None = None, radio: dict | None = None):
    """The named system: a ``NetworkSystem``, or for a cell preset a ``PhysicalSystem`` with the
    ``radio`` overrides applied (refused for the normalized systems)."""
    if is_physical(name):
        from scenarios.cells import get_cell_system

        return get_cell_system(name, mode, deadline, radio)
    if name not in SYSTEMS:
        raise UsageError(f"unknown system {name!r}; choose from: {', '.join(system_names())}")
    if radio:
        raise UsageError(f"--radio applies to the physical cell presets, not to the normalized system {name!r}")
    preset = SYSTEMS[name]
    try:
        return NetworkSystem(rho=preset.rho, t_min=preset.t_min, inv_mu=preset.inv_mu, mode=mode, deadline=deadline)
    except ValueError as error:
        raise UsageError(str(error)) from None
