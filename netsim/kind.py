"""What a run asks of the system a preset names, whatever its kind: the one place the
normalized/physical choice is made.

A system is either normalized (``netsim.system.NetworkSystem``, the journal paper's V-D model,
time in units of ``T_dl``; it is its own network) or physical (``netsim.physical.PhysicalSystem``,
a cell, time in seconds, with energy; bound to a layout it gives a ``PhysicalNetwork``).
Callers ask the system (its ``time_unit``, ``records_energy``, ``record``, ``with_overrides``,
``bind``) instead of testing its type. The defaults below are the normalized kind's; a plugin
system that only duck-types the normalized one is adopted through ``Normalized``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

OVERRIDES = ("rho", "t_min", "inv_mu")


class SystemKind:
    """The common interface of the normalized and the physical systems (defaults: normalized).

    ``time_unit``: the unit of the simulated clock (``"T_dl"``: one model's downlink time;
    ``"s"``: seconds). ``records_energy``: whether rounds report each device's energy (J).
    ``multicast_airtime_s_per_bit``: the bound network's estimate of a multicast's downlink
    seconds per bit for a group of devices (None: none; a normalized system is its own network
    and has none).
    """

    time_unit = "T_dl"
    records_energy = False
    multicast_airtime_s_per_bit = None

    def record(self, name: str) -> dict:
        """The system as a run's config records it (its folder name hashes it): ``name`` and
        every field."""
        return {"name": name, **asdict(self)}

    def with_overrides(self, rho: float | None = None, t_min: float | None = None, inv_mu: float | None = None):
        """This system with the given ``rho``, ``t_min``, ``inv_mu`` (None: kept); the dataclass's
        checks raise ValueError, a system without these fields TypeError."""
        given = {key: value for key, value in zip(OVERRIDES, (rho, t_min, inv_mu)) if value is not None}
        return replace(self, **given) if given else self

    def bind(self, samples: np.ndarray, network_seq: np.random.SeedSequence) -> tuple[Any, np.random.Generator | None]:
        """(network the engine drives, channel generator) for one run whose devices process
        ``samples`` training samples per local update; a normalized system is its own network
        and draws no channel."""
        return self, None


@dataclass(frozen=True)
class Normalized(SystemKind):
    """A plugin's normalized system (a frozen dataclass with ``mode``, ``deadline``, ``t_dl`` and
    ``round_durations``) that does not subclass ``SystemKind``, given the interface: recorded,
    overridden and timed as itself."""

    system: Any

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "system":  # pickling and copying look up dunders first
            raise AttributeError(name)
        return getattr(self.system, name)  # mode, deadline, round_durations...: the plugin's own

    def record(self, name: str) -> dict:
        return {"name": name, **asdict(self.system)}

    def with_overrides(self, rho: float | None = None, t_min: float | None = None, inv_mu: float | None = None):
        given = {key: value for key, value in zip(OVERRIDES, (rho, t_min, inv_mu)) if value is not None}
        return Normalized(replace(self.system, **given)) if given else self  # TypeError: no such field


def adopted(system):
    """``system`` if it has the interface (a ``SystemKind``), else the plugin system adopted as
    a normalized one."""
    return system if isinstance(system, SystemKind) else Normalized(system)
