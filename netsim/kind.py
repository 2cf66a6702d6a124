"""What a run asks of the system a preset names, and what the engine asks of the network it
drives, whatever their kind: the one place the normalized/physical choice is made.

A system is either normalized (``netsim.normalized.system.NetworkSystem``, the journal paper's V-D model,
time in units of ``T_dl``; it is its own network) or physical (``netsim.radio.physical.PhysicalSystem``,
a cell, time in seconds, with energy; bound to a layout it gives a ``PhysicalNetwork``).
Callers ask the system (``SystemKind``: its ``time_unit``, ``records_energy``, ``record``,
``with_overrides``, ``check_compute``, ``bind``) and the bound network (``Network``: its round
process, outages, channel reports, a scheduler's expectations) instead of testing their type.
The defaults below are the normalized kind's; a plugin system that only duck-types the
normalized one is adopted through ``Normalized``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Callable

import numpy as np

from contract.setting import recorded

from netsim.transport.reference import round_process_reference
from netsim.scheduling import ChannelReport, Expectations
from netsim.transport.timeline import round_process
from netsim.transport.media import NormalizedLinks

OVERRIDES = ("rho", "t_min", "inv_mu")
SIMULATORS = ("timeline", "processes")  # the vectorized round, or one SimPy process per device (the reference)


class SystemKind:
    """The common interface of the normalized and the physical systems (defaults: normalized).

    ``time_unit``: the unit of the simulated clock (``"T_dl"``: one model's downlink time;
    ``"s"``: seconds). ``records_energy``: whether rounds report each device's energy (J).
    """

    time_unit = "T_dl"
    records_energy = False

    @property
    def time_scale(self) -> float:
        """The simulated clock per time unit: ``t_dl`` (a normalized system's unit is one model's
        downlink time); 1 where the clock is in the unit itself (a cell: seconds)."""
        return float(self.t_dl)

    def record(self, name: str) -> dict:
        """The system as a run's config records it (its folder name hashes it): ``name`` and
        every field (those declared ``omit_default`` only when set: ``contract.setting.recorded``)."""
        return {"name": name, **recorded(self)}

    def with_overrides(self, rho: float | None = None, t_min: float | None = None, inv_mu: float | None = None):
        """This system with the given ``rho``, ``t_min``, ``inv_mu`` (None: kept); the dataclass's
        checks raise ValueError, a system without these fields TypeError."""
        given = {key: value for key, value in zip(OVERRIDES, (rho, t_min, inv_mu)) if value is not None}
        return replace(self, **given) if given else self

    def check_compute(self, samples: np.ndarray, limit: float) -> None:
        """ValueError when a device's local update of ``samples`` samples would add more than
        ``limit`` (the clock's unit) to a round by the system's own parameters; a normalized
        system's compute time does not grow with the samples (``t_min`` is a setting)."""

    def bind(self, samples: np.ndarray, network_seq: np.random.SeedSequence) -> tuple[Network, np.random.Generator | None]:
        """(network the engine drives, channel generator) for one run whose devices process
        ``samples`` training samples per local update; a normalized system is its own network
        and draws no channel."""
        return self, None


class Network:
    """What the engine, the scheduler and the recorder ask of the network a run drives
    (defaults: a normalized system, its own network).

    ``time_unit`` and ``records_energy``: as ``SystemKind``'s. ``has_outages``: whether a device
    can miss a round by its channel (re-timing then would change the learning).
    ``reports_channel``: whether the base station learns each round's channel before it starts
    (``channel_report``), as channel-aware scheduling policies need.
    ``multicast_airtime_s_per_bit``: its estimate of a multicast's downlink seconds per bit for a
    group of devices (None: none).
    """

    time_unit = "T_dl"
    records_energy = False
    has_outages = False
    reports_channel = False
    multicast_airtime_s_per_bit = None

    def round_process(self, simulator: str, channel_rng: np.random.Generator | None = None) -> Callable:
        """The SimPy process of one round, ``(env, plan, network, model_bits, rng, trace,
        server_round)`` -> ``(RoundOutcome, energy_j, downlink_bits)``: the vectorized timeline
        (``netsim.transport.timeline``) or the per-device reference (``netsim.transport.reference``)."""
        return {"timeline": round_process, "processes": round_process_reference}[simulator]

    def channel_report(self, channel_rng: np.random.Generator | None, now_s: float = 0.0) -> ChannelReport:
        """The round's channel as the base station learns it at the round's start ``now_s`` (none here)."""
        return ChannelReport()

    def transfer_links(self, model_bits: float, channel_rng: np.random.Generator | None, now_s: float,
                       access: tuple[str, str] = ("tdma", "tdma")):
        """The ``netsim.transport.media.Links`` a transfer or step starting at ``now_s`` reads: here the
        normalized system's (``NormalizedLinks``, no channel drawn), its downlink and uplink
        media of the orchestrator's ``access`` schemes."""
        if not (hasattr(self, "downlink_time") and hasattr(self, "uplink_time")):
            raise ValueError("buffered aggregation needs a system that times a payload (downlink_time, uplink_time)")
        return NormalizedLinks(self, model_bits, *access)

    def expectations(self, num_devices: int, model_bits: float, uplink_bits: float) -> Expectations:
        """What a deadline-aware scheduler expects before a round: each device's mean compute
        time and, on a normalized system, the airtimes per bit (``T_dl`` and ``T_ul`` per model)."""
        try:
            return Expectations(np.full(num_devices, self.compute.mean), model_bits, uplink_bits,
                                self.t_dl / model_bits, self.t_ul / model_bits)
        except AttributeError as missing:  # a plugin system without them
            raise ValueError(f"a scheduler that expects round times needs the system's compute, t_dl and t_ul "
                             f"(it has no {missing})") from None


@dataclass(frozen=True)
class Normalized(SystemKind, Network):
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
    """``system`` if it has the interface (a ``SystemKind`` or a ``Network``), else the plugin
    system adopted as a normalized one."""
    return system if isinstance(system, (SystemKind, Network)) else Normalized(system)
