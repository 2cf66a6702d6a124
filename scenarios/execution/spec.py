"""A run as asked (``RunSpec``) and as resolved, once, up front (``ResolvedRun``).

``resolve`` is the one place a spec is read: every setting typed and range-checked, the
scenario, algorithm and network system looked up, the scenario's defaults filled in, training
resolved for this machine and the seed split into named streams. Checking, building, running,
naming and the config record all read the ``ResolvedRun``.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field, fields, replace

from learning.options import Options
from learning.training import LocalTraining
from scenarios.definitions import communication
from scenarios.errors import UsageError
from scenarios.plugins import load_installed
from scenarios.definitions.registry import get_algorithm, get_scenario
from scenarios.definitions.scenario import Scenario
from scenarios.definitions.seeds import RunSeeds, seed_streams
from scenarios.definitions.settings import NETWORK_SETTINGS, RUN_SETTINGS, SCENARIO_KNOBS, check_communication, check_training
from scenarios.definitions.systems import get_system


@dataclass(frozen=True)
class RunSpec:
    """One run as asked: which scenario, algorithm (and its options), network system (and its
    timing, deadline and optional ``rho``/``t_min``/``inv_mu`` in place of the preset's), rounds,
    seed, evaluation period and participation (None: the scenario's)."""

    scenario: str
    algorithm: str
    system: str = "wireless-slow-ul"
    rounds: int | None = None  # None: the scenario's default
    seed: int = 0
    options: dict = field(default_factory=dict)
    mode: str = "pipelined"
    deadline: float | None = None
    evaluate_every: int = 1
    participation: float | None = None
    rho: float | None = None
    t_min: float | None = None
    inv_mu: float | None = None
    training: dict = field(default_factory=dict)  # overrides of the scenario's LocalTraining fields
    devices: int | None = None  # scenario knobs (None: the scenario's), where the scenario has them
    alpha: float | None = None
    radio: dict = field(default_factory=dict)  # overrides of a physical cell preset's parameters
    # communication (scenarios.definitions.communication): update codecs and the network's scheduler
    uplink_codec: str = "none"
    downlink_codec: str = "none"
    scheduler: str = "random"


@dataclass(frozen=True)
class ResolvedRun:
    """A checked run with everything looked up and every default filled in."""

    spec: RunSpec  # typed and range-checked; ``options`` holds only what the run gave
    scenario: Scenario
    algorithm: type  # the learner class
    options: Options  # the scenario's defaults for the algorithm, overridden by the run's
    training: LocalTraining  # ``auto`` resolved for this machine
    system: object  # the network system (a normalized preset with overrides, or a cell)
    knobs: dict  # the scenario's knobs: its defaults with the run's values where given
    rounds: int
    participation: float
    seeds: RunSeeds

    @property
    def label(self) -> str:
        return run_label(self.spec)

    @property
    def prefix(self) -> str:
        """The readable part of the folder name (the hash of the config makes it unique)."""
        spec = self.spec
        raw = f"{spec.scenario}_{self.label}_{spec.system}_s{spec.seed}"
        return re.sub(r"[^A-Za-z0-9._-]+", "-", raw.replace(" k=", "_k"))


def run_label(spec: RunSpec) -> str:
    """The algorithm's name, with what its options declare worth showing (``user-centric k=4``),
    and the communication settings that are not the defaults."""
    return get_algorithm(spec.algorithm).Options.label(spec.algorithm, spec.options) + communication.label_suffix(spec)


def resolve(spec: RunSpec) -> ResolvedRun:
    """``spec`` checked and resolved (UsageError naming the setting): the one reading of a spec."""
    load_installed()  # a run in a fresh process (the API, a Ray worker) knows the installed plugins too
    scenario = get_scenario(spec.scenario)
    algorithm = get_algorithm(spec.algorithm)
    values = {key: setting.check(key.replace("_", "-"), getattr(spec, key)) for key, setting in RUN_SETTINGS.items()}
    values.update({key: setting.check(key.replace("_", "-"), getattr(spec, key)) for key, setting in NETWORK_SETTINGS.items()})
    for key, setting in SCENARIO_KNOBS.items():
        values[key] = setting.check(key, getattr(spec, key))
        if values[key] is not None and key not in scenario.knobs:
            takes = ", ".join(scenario.knobs) or "none"
            raise UsageError(f"scenario {spec.scenario!r} has no {key} setting (its settings: {takes})")
    if not isinstance(spec.options, dict):
        raise UsageError(f"options must be a table of key = value, got {spec.options!r}")
    options = algorithm.Options.resolve(spec.options, scenario.algorithm_options.get(spec.algorithm, {}), owner=spec.algorithm)
    values.update(check_communication({key: getattr(spec, key) for key in communication.SHORT}))
    spec = replace(spec, options={key: getattr(options, key) for key in spec.options}, training=check_training(spec.training),
                   **values)
    return ResolvedRun(
        spec=spec,
        scenario=scenario,
        algorithm=algorithm,
        options=options,
        training=_training(spec, scenario),
        system=_system(spec),
        knobs={key: (default if getattr(spec, key) is None else getattr(spec, key)) for key, (_, default) in scenario.knobs.items()},
        rounds=scenario.rounds if spec.rounds is None else spec.rounds,
        participation=scenario.participation if spec.participation is None else spec.participation,
        seeds=seed_streams(spec.seed),
    )


def _training(spec: RunSpec, scenario: Scenario) -> LocalTraining:
    """The scenario's training settings with the run's overrides, ``auto`` resolved for this machine."""
    unknown = sorted(set(spec.training) - {f.name for f in fields(LocalTraining)})
    if unknown:
        raise UsageError(f"unknown training setting {', '.join(unknown)}; settings: {', '.join(f.name for f in fields(LocalTraining))}")
    try:
        return dataclasses.replace(scenario.training, **spec.training).resolved()
    except ValueError as error:
        raise UsageError(f"training: {error}") from None


def _system(spec: RunSpec):
    """The spec's network: its preset, with ``rho``/``t_min``/``inv_mu`` where given."""
    system = get_system(spec.system, spec.mode, spec.deadline, spec.radio)
    overrides = {key: getattr(spec, key) for key in ("rho", "t_min", "inv_mu") if getattr(spec, key) is not None}
    if not overrides:
        return system
    try:
        return system.with_overrides(**overrides)
    except ValueError as error:
        raise UsageError(str(error)) from None
    except TypeError:  # a system without these fields
        raise UsageError(f"--rho, --t-min and --inv-mu apply to the normalized preset systems, not to {spec.system!r}") from None
