"""A run as asked (``RunSpec``) and as resolved, once, up front (``ResolvedRun``).

``resolve`` is the one place a spec is read: every setting typed and range-checked, the
scenario, algorithm and network system looked up, the scenario's defaults filled in, training
resolved for this machine and the seed split into named streams. Checking, building, running,
naming and the config record all read the ``ResolvedRun``.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, replace

from learning.codecs import Codec
from learning.engine import resolve_training
from learning.options import Options
from learning.training import LocalTraining
from scenarios.errors import UsageError
from scenarios.plugins import load_installed
from scenarios.definitions.registry import get_algorithm, get_scenario
from scenarios.definitions.scenario import Scenario
from scenarios.definitions.seeds import RunSeeds, seed_streams
from scenarios.definitions.settings import RunSpec, check_spec, label_suffix
from scenarios.definitions.systems import SPEC_SEPARATOR, SYSTEM_FIELDS, get_system, parse_system


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
    uplink_codec: Codec  # parsed once here; ``spec.uplink_codec`` is its canonical text
    downlink_codec: Codec

    @property
    def label(self) -> str:
        return run_label(self.spec)

    @property
    def prefix(self) -> str:
        """The readable part of the folder name (the hash of the config makes it unique): the
        label with the algorithm's labelled options joined to its name (``user-centric_k4``)."""
        spec = self.spec
        label = get_algorithm(spec.algorithm).Options.folder_label(spec.algorithm, spec.options) + label_suffix(spec)
        return file_word(f"{spec.scenario}_{label}_{spec.system}_s{spec.seed}")


def file_word(text: str) -> str:
    """``text`` as part of a file name: every run of other characters than letters, digits, ``.``,
    ``_`` and ``-`` one ``-`` (``wired:rho=10`` -> ``wired-rho-10``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text)


def run_label(spec: RunSpec) -> str:
    """The algorithm's name, with what its options declare worth showing (``user-centric k=4``),
    and the labelled settings that are not their defaults (``ul=qsgd:bits=4``)."""
    spec = system_settings(spec)
    return get_algorithm(spec.algorithm).Options.label(spec.algorithm, spec.options) + label_suffix(spec)




def system_settings(spec: RunSpec) -> RunSpec:
    """``spec`` with a system given as a preset with overrides (``wired:rho=10,mode=barrier``:
    ``parse_system``, the one reading of a system's text) read into the settings of the same
    words: ``system`` the preset, ``rho``, ``t_min``, ``inv_mu``, ``mode``, ``deadline``, and a
    cell's parameters into ``radio`` (``--radio``'s keys). So ``--system wired:rho=10`` and
    ``--system wired --rho 10`` are one run: one config, one folder. A setting given both ways
    (``--rho`` off its default, a ``--radio`` key) is refused, one line, whatever the values."""
    if not isinstance(spec.system, str) or SPEC_SEPARATOR not in spec.system:
        return spec
    named = parse_system(spec.system)
    values, radio = {"system": named.name}, dict(spec.radio) if isinstance(spec.radio, dict) else spec.radio
    defaults = {f.name: f.default for f in dataclasses.fields(RunSpec)}
    for key, value in named.overrides.items():
        given = getattr(spec, key) != defaults[key] if key in SYSTEM_FIELDS else isinstance(radio, dict) and key in radio
        if given:
            flag = f"--{key.replace('_', '-')}" if key in SYSTEM_FIELDS else f"--radio {key}"
            raise UsageError(f"system {spec.system!r}: {key} is given twice (also {flag}); give it once")
        if key in SYSTEM_FIELDS:
            values[key] = value
        elif isinstance(radio, dict):
            radio[key] = value
    return replace(spec, **values, radio=radio)


def resolve(spec: RunSpec) -> ResolvedRun:
    """``spec`` checked and resolved (UsageError naming the setting): the one reading of a spec."""
    load_installed()  # a run in a fresh process (the API, a Ray worker) knows the installed plugins too
    spec = system_settings(spec)
    scenario = get_scenario(spec.scenario)
    algorithm = get_algorithm(spec.algorithm)
    values = check_spec(spec, scenario.knobs)
    codecs = {link: values[link] for link in ("uplink_codec", "downlink_codec")}
    values.update({link: codec.spec for link, codec in codecs.items()})
    options = algorithm.Options.resolve(spec.options, scenario.algorithm_options.get(spec.algorithm, {}), owner=spec.algorithm)
    spec = replace(spec, **{**values, "options": {key: getattr(options, key) for key in spec.options}})
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
        **codecs,
    )


def _training(spec: RunSpec, scenario: Scenario) -> LocalTraining:
    """The scenario's training settings with the run's (checked) overrides, ``auto`` resolved for this machine."""
    try:
        return resolve_training(dataclasses.replace(scenario.training, **spec.training))
    except ValueError as error:
        raise UsageError(f"training: {error}") from None


def _system(spec: RunSpec):
    """The spec's network: its preset, with ``rho``/``t_min``/``inv_mu`` where given (a cell's
    radio parameters checked against the run's settings they need: ``cells.cell_parameters``)."""
    from scenarios.definitions.cells import CELLS, cell_parameters

    system = get_system(spec.system, spec.mode, spec.deadline, spec.radio)
    if spec.system in CELLS and isinstance(spec.radio, dict):
        cell_parameters(spec.system, spec.radio, {"scheduler": spec.scheduler})
    if spec.duplex != "full":
        from netsim.normalized.system import NetworkSystem

        if not isinstance(system, NetworkSystem):
            raise UsageError(f"--duplex applies to the normalized preset systems, not to {spec.system!r} (a cell: --radio duplex=tdd|fdd)")
        from scenarios.definitions.orchestrators import get_orchestrator

        if "mode" in get_orchestrator(spec.orchestrator).reads and spec.mode == "pipelined":
            raise UsageError("--duplex half: a pipelined round would upload while the streams are on the air; give --mode barrier")
        system = replace(system, duplex=spec.duplex)
    overrides = {key: getattr(spec, key) for key in ("rho", "t_min", "inv_mu") if getattr(spec, key) is not None}
    if not overrides:
        return system
    try:
        return system.with_overrides(**overrides)
    except ValueError as error:
        raise UsageError(str(error)) from None
    except TypeError:  # a system without these fields
        raise UsageError(f"--rho, --t-min and --inv-mu apply to the normalized preset systems, not to {spec.system!r}") from None
