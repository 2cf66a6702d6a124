"""Network systems by name: the journal paper's three normalized systems (V-D, Fig. 6), in
units of ``T_dl`` (the default), and the physical cell presets of ``scenarios.definitions.cells``, in seconds."""

from __future__ import annotations

import math

from dataclasses import dataclass, is_dataclass
from typing import Callable

from netsim.kind import adopted
from netsim.normalized.system import NetworkSystem
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


SPEC_SEPARATOR = ":"
SYSTEM_KEYS = ("mode", "deadline")  # what every system takes besides its own parameters
SYSTEM_FIELDS = ("rho", "t_min", "inv_mu", *SYSTEM_KEYS)  # a system text's overrides that are run settings of their own


@dataclass(frozen=True)
class SystemSpec:
    """A system as a user names it: a preset and its overrides, ``wireless-slow-ul:rho=10,mode=barrier``
    (``parse_system``). ``text`` is how tables and figures name it."""

    text: str
    name: str
    overrides: dict

    @property
    def mode(self) -> str:
        return self.overrides.get("mode", "pipelined")

    @property
    def deadline(self) -> float | None:
        return self.overrides.get("deadline")

    @property
    def radio(self) -> dict:
        """A cell preset's radio overrides (``--radio``): every override but ``SYSTEM_KEYS``."""
        return {k: v for k, v in self.overrides.items() if k not in SYSTEM_KEYS}

    def build(self):
        """The system it names (``get_system``): UsageError naming the spec for an impossible value."""
        try:
            if self.name in SYSTEMS and isinstance(SYSTEMS[self.name], SystemPreset):
                preset = SYSTEMS[self.name]
                values = {"rho": preset.rho, "t_min": preset.t_min, "inv_mu": preset.inv_mu, **self.overrides}
                return NetworkSystem(**values)
            return get_system(self.name, self.mode, self.deadline, self.radio)
        except (UsageError, ValueError) as error:
            raise UsageError(f"system {self.text!r}: {error}") from None


def parse_system(text: str) -> SystemSpec:
    """``NAME`` or ``NAME:KEY=VALUE,KEY=VALUE``: a preset (``system_names``) and overrides of its
    declared parameters, each typed and range-checked by its declaration (``option``): on a
    normalized preset ``NetworkSystem``'s ``rho``, ``t_min``, ``inv_mu``, ``mode`` and
    ``deadline``; on a cell preset ``mode``, ``deadline`` and its radio parameters (as
    ``--radio``); on a plugin's system ``mode`` and ``deadline``. A piece without ``=`` continues
    the value before it (``distances_m=10,20``). The one place a system's text is read: UsageError,
    one line naming the text, for an unknown preset, key or value."""
    import dataclasses

    from contract.setting import field_setting, parse_value
    from scenarios.definitions.cells import CELLS, PARAMETERS

    if not isinstance(text, str) or not text:
        raise UsageError(f"a system is a name (see 'fl-cosim list'), got {text!r}")
    name, _, rest = text.partition(SPEC_SEPARATOR)
    if name not in SYSTEMS and name not in CELLS:
        raise UsageError(f"unknown system {name!r}; choose from: {', '.join(system_names())}")
    pieces: list[str] = []
    for piece in rest.split(",") if rest else []:
        if "=" not in piece and pieces:
            pieces[-1] += "," + piece
        else:
            pieces.append(piece)
    declared = {f.name: f for f in dataclasses.fields(NetworkSystem) if f.name in SYSTEM_FIELDS}
    if name in CELLS:
        keys = (*SYSTEM_KEYS, *PARAMETERS)
    elif isinstance(SYSTEMS[name], SystemPreset):
        keys = tuple(declared)
    else:
        keys = SYSTEM_KEYS
    overrides: dict = {}
    for piece in pieces:
        if "=" not in piece:
            raise UsageError(f"system {text!r}: {piece!r} must look like key=value (NAME:KEY=VALUE,KEY=VALUE)")
        key, raw = piece.split("=", 1)
        value = parse_value(raw)
        if key not in keys:
            raise UsageError(f"system {text!r}: {name} has no parameter {key!r}; known: {', '.join(keys)}")
        if key in overrides:
            raise UsageError(f"system {text!r}: {key} is given twice; give it once")
        if key in declared:
            value = field_setting(NetworkSystem, declared[key]).check(f"system {text!r}: {key}", value)
        overrides[key] = value
    spec = SystemSpec(text, name, overrides)
    spec.build()  # every value checked now (a cell's radio parameters where its cell is built)
    return spec


def parse_systems(texts) -> dict[str, SystemSpec]:
    """Each text's ``SystemSpec`` (``parse_system``) by its text, duplicates kept once."""
    return {text: parse_system(text) for text in dict.fromkeys(texts)}


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
