"""Sweeps: a TOML file names a grid (and/or a list) of runs; each run goes to its hash-named
folder, on local worker processes or a Ray cluster; a killed sweep resumes where it stopped.

The file (every key optional except at least one ``[[algorithm]]`` or ``[[run]]``)::

    seeds = 3                      # 0, 1, 2; or a list: [0, 5]
    plugins = ["my_plugins/"]      # .py files, folders or modules (paths relative to this file)
    [settings]                     # every run: any run setting (SWEEP_KEYS: RunSpec's declarations)
    scenario = "digits-rotation"
    rounds = 20
    training = { lr = 0.05 }
    [grid]                         # every combination of these lists (a table's entries too)
    system = ["wired", "wireless-slow-ul"]
    training = { epochs = [1, 2] }
    tie = [["training.epochs", "system"]]  # keys whose lists go together (i-th with i-th), not crossed
    [summary]                      # the summary's target: a number, or a fraction of each group's best
    target = "0.9*best"
    group = ["algorithm"]          # settings columns that split the grid points into groups
    budget = "time=5,10,20"        # also the accuracy within these budgets (scenarios.reports.budgets)
    [[algorithm]]                  # each algorithm, with fixed options and an option grid
    name = "user-centric"
    options = { variance_batch_fraction = 0.6 }
    grid = { streams = [2, 4, "auto"], lam = [0.0] }
    [[run]]                        # explicit runs (a list), on top of the settings
    algorithm = "fedprox"
    options = { mu = 0.5 }
    system = "wired"

Runs are expanded in file order (grid combinations, then algorithms and their option
combinations, then seeds; then the ``[[run]]`` list) and identical runs are kept once; a run
that cannot be built is refused naming its grid point. The results table has one row per run and
seed, in that order, with plain numbers; the summary one per grid point, without the columns
that hold one value throughout (docs/sweep-files.md).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: tomli, the parser that became tomllib in 3.11
    import tomli as tomllib

from scenarios.errors import UsageError
from scenarios.execution.runner import RunSpec
from scenarios.records.reading import MAX_DEPTH, MAX_SWEEP_BYTES, ReadError, check_depth, read_text
from scenarios.definitions.settings import DEFAULT_SCENARIO, MAX_SEEDS, RUN_SETTINGS, SWEEP_KEYS, Setting, declared, recorded_value

TABLE_KEYS = tuple(f.name for f in declared() if f.name in SWEEP_KEYS and f.default_factory is dict)  # training, radio
TOP_KEYS = ("seeds", "settings", "grid", "algorithm", "run", "plugins", "summary")
TIE = "tie"  # [grid] tie = [["radio.downlink_bandwidth_hz", "radio.uplink_bandwidth_hz"]]: keys whose lists go together
SUMMARY_KEYS = ("target", "group", "budget")
ALGORITHM_KEYS = ("name", "options", "grid")
RUN_KEYS = SWEEP_KEYS + ("algorithm", "options")
SEEDS = Setting(int, low=1, high=MAX_SEEDS)
MAX_RUNS = 100_000


def read_sweep_file(path: Path) -> dict:
    """The sweep file's table: a regular UTF-8 file of at most ``MAX_SWEEP_BYTES``, valid TOML
    nested at most ``MAX_DEPTH`` deep (UsageError, one line, otherwise)."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise UsageError(f"sweep file {str(path)!r} does not exist")
    try:
        config = tomllib.loads(read_text(path, MAX_SWEEP_BYTES))
        check_depth(config)
    except ReadError as error:
        raise UsageError(f"sweep file {error}") from None
    except (tomllib.TOMLDecodeError, ValueError) as error:
        raise UsageError(f"{path.name}: not valid TOML ({str(error).splitlines()[0]})") from None
    except RecursionError:
        raise UsageError(f"{path.name}: not valid TOML (it is nested deeper than {MAX_DEPTH} levels)") from None
    return config


def load_sweep_plugins(config: dict, folder: Path, where: str = "sweep") -> None:
    """Load the file's ``plugins`` (paths relative to its ``folder``) before its runs are named."""
    from scenarios.plugins import load_plugins

    plugins = config.get("plugins", [])
    if not isinstance(plugins, list):
        raise UsageError(f"{where}: plugins must be a list of paths or module names, got {plugins!r}")
    load_plugins(plugins, relative_to=folder)


def expand(config: dict, where: str = "sweep") -> list[RunSpec]:
    """The runs a sweep file names, in order, duplicates removed (not yet checked: ``prepare``)."""
    return [spec for spec, _ in expand_points(config, where)]


def expand_points(config: dict, where: str = "sweep") -> list[tuple[RunSpec, str]]:
    """``expand``'s runs, each with where the file names it in words (its grid point, algorithm
    entry and option values, seed), so a refused run names its point."""
    _known(config, TOP_KEYS, where)
    summary_settings(config, where)
    seeds = _seeds(config.get("seeds", [0]), where)
    settings = _table(config.get("settings", {}), f"{where} [settings]")
    _known(settings, SWEEP_KEYS, f"{where} [settings]")
    grid = dict(_table(config.get("grid", {}), f"{where} [grid]"))
    ties = grid.pop(TIE, [])
    _known(grid, SWEEP_KEYS, f"{where} [grid]")
    algorithms = _list_of_tables(config.get("algorithm", []), f"{where} [[algorithm]]")
    explicit = _list_of_tables(config.get("run", []), f"{where} [[run]]")
    if not algorithms and not explicit:
        raise UsageError(f"{where}: names no run; add an [[algorithm]] (with name = ...) or a [[run]]")
    grid = _flatten(grid)
    option_grids = []
    for index, entry in enumerate(algorithms):
        label = f"{where} [[algorithm]] #{index + 1}"
        _known(entry, ALGORITHM_KEYS, label)
        if "name" not in entry:
            raise UsageError(f"{label}: needs name = \"ALGORITHM\"")
        option_grids.append((label, _table(entry.get("options", {}), f"{label} options"), _table(entry.get("grid", {}), f"{label} grid")))
    axes = _axes(grid, ties, f"{where} [grid]")
    option_axes = [_axes(g, [], f"{label} grid") for label, _, g in option_grids]
    # counted from the lists' lengths before any run is built: a huge grid is refused at once
    count = (_size(axes) * sum(map(_size, option_axes)) + len(explicit)) * len(seeds)
    if count > MAX_RUNS:
        raise UsageError(f"{where}: {count:,} runs; at most {MAX_RUNS:,} in one sweep")
    specs: list[tuple[RunSpec, str]] = []
    for combination in _combinations(axes):
        base = _merge(settings, combination, grid=True)
        point = f"[grid] {_words(combination)}; " if combination else ""
        for (label, options, _), option_axis, entry in zip(option_grids, option_axes, algorithms):
            for option_combination in _combinations(option_axis):
                chosen = f" {_words(option_combination)}" if option_combination else ""
                for seed in seeds:
                    named = f"{where}: {point}{label[len(where) + 1:]}{chosen}; seed {seed}"
                    specs.append((_spec(base, entry["name"], {**options, **option_combination}, seed, named), named))
    for index, entry in enumerate(explicit):
        label = f"{where} [[run]] #{index + 1}"
        _known(entry, RUN_KEYS, label)
        if "algorithm" not in entry:
            raise UsageError(f"{label}: needs algorithm = \"ALGORITHM\"")
        base = _merge(settings, {k: v for k, v in entry.items() if k in SWEEP_KEYS})
        for seed in seeds:
            specs.append((_spec(base, entry["algorithm"], _table(entry.get("options", {}), f"{label} options"), seed,
                                f"{label}; seed {seed}"), f"{label}; seed {seed}"))
    unique, seen = [], set()
    for spec, point in specs:
        key = repr(spec)
        if key not in seen:
            seen.add(key)
            unique.append((spec, point))
    return unique


def _words(combination: dict) -> str:
    """A grid point in words: ``radio.downlink_bandwidth_hz=1e+07, system=wired``."""
    return ", ".join(f"{key}={value}" for key, value in combination.items())


def _spec(settings: dict, algorithm, options: dict, seed: int, where: str) -> RunSpec:
    if not isinstance(algorithm, str):
        raise UsageError(f"{where}: algorithm must be a name, got {algorithm!r}")
    values = {"scenario": DEFAULT_SCENARIO, **settings}
    _given_once(values, where)
    tables = {key: dict(values.pop(key)) for key in TABLE_KEYS if key in values}
    return RunSpec(algorithm=algorithm, seed=seed, options=dict(options), **tables, **values)


def _given_once(values: dict, where: str) -> None:
    """UsageError when a run's ``system`` text sets what the file also sets by its own key
    (``system = "wired:mode=barrier"`` with ``mode = "pipelined"``, from [settings], [grid] or a
    [[run]]): the run would keep one of the two silently (``scenarios.execution.spec.system_settings``
    refuses only a value off its default)."""
    from scenarios.definitions.systems import SPEC_SEPARATOR, SYSTEM_FIELDS, parse_system

    text = values.get("system")
    if not isinstance(text, str) or SPEC_SEPARATOR not in text:
        return
    try:
        overrides = parse_system(text).overrides
    except UsageError:
        return  # the run's resolve names what is wrong with the text
    for key in overrides:
        if key in SYSTEM_FIELDS and key in values:
            raise UsageError(f"{where}: {key} is set twice, in system {text!r} and as {key} = {values[key]!r}; set it once")


def _seeds(value, where: str) -> list[int]:
    if isinstance(value, int) and not isinstance(value, bool):
        return list(range(SEEDS.check(f"{where} seeds", value)))
    if isinstance(value, list) and value:
        _once(value, f"{where}: seeds")
        return [RUN_SETTINGS["seed"].check(f"{where} seeds", seed) for seed in value]
    raise UsageError(f"{where}: seeds must be a count (an integer >= 1) or a non-empty list of seeds, got {value!r}")


def _once(values: list, where: str) -> None:
    """UsageError when a list names a value twice (the run would be expanded once, the value silently dropped)."""
    for index, value in enumerate(values):
        if value in values[:index]:
            raise UsageError(f"{where} names {value!r} twice; give each once")


def _known(table: dict, keys: Sequence[str], where: str) -> None:
    unknown = [k for k in table if k not in keys]
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r}; known: {', '.join(keys)}")


def _table(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise UsageError(f"{where} must be a table (key = value), got {value!r}")
    return value


def _list_of_tables(value, where: str) -> list[dict]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise UsageError(f"{where} must be an array of tables ([[...]] sections)")
    return value


def _flatten(grid: dict) -> dict:
    """A table's entries as keys of their own: ``{"training": {"lr": [...]}}`` to ``{"training.lr": [...]}``."""
    flat = {}
    for key, value in grid.items():
        if key in TABLE_KEYS:
            for name, values in _table(value, f"[grid] {key}").items():
                flat[f"{key}.{name}"] = values
        else:
            flat[key] = value
    return flat


def _axes(grid: dict, ties, where: str) -> list[tuple[tuple[str, ...], list[tuple]]]:
    """The grid's axes, each (its keys, its points): one key per axis, or the keys of a ``tie``
    together, their lists (of one length) read side by side, the i-th value of each with the
    i-th of the others. Each value a non-empty list (UsageError otherwise)."""
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise UsageError(f"{where}: {key} must be a non-empty list of values, got {values!r}")
        _once(values, f"{where}: {key}")
    if not isinstance(ties, list) or not all(isinstance(t, list) and len(t) >= 2 and all(isinstance(k, str) for k in t) for t in ties):
        raise UsageError(f"{where}: {TIE} must be a list of lists of two or more grid keys, got {ties!r}")
    tied: dict[str, int] = {}
    for index, keys in enumerate(ties):
        for key in keys:
            if key not in grid:
                raise UsageError(f"{where}: {TIE} names {key!r}, which is not a key of the grid; its keys: {', '.join(grid)}")
            if key in tied:
                raise UsageError(f"{where}: {key!r} is in two {TIE} lists; tie it once")
            tied[key] = index
        lengths = {key: len(grid[key]) for key in keys}
        if len(set(lengths.values())) > 1:
            raise UsageError(f"{where}: tied keys need lists of one length, got "
                             + ", ".join(f"{key} ({n})" for key, n in lengths.items()))
    axes, done = [], set()
    for key in grid:
        if key in done:
            continue
        keys = tuple(ties[tied[key]]) if key in tied else (key,)
        done.update(keys)
        axes.append((keys, list(zip(*(grid[k] for k in keys)))))
    return axes


def _size(axes) -> int:
    """How many combinations the grid's ``axes`` have."""
    return math.prod(len(points) for _, points in axes)


def _combinations(axes):
    """Every combination of the grid's ``axes`` (``_axes``) as a key -> value table, one at a time."""
    return ({key: value for (keys, _), point in zip(axes, points) for key, value in zip(keys, point)}
            for points in itertools.product(*(points for _, points in axes)))


def _merge(settings: dict, combination: dict, grid: bool = False) -> dict:
    """``settings`` with ``combination`` on top (a [[run]]'s own values); a ``grid`` combination
    may not set what ``[settings]`` sets (one of the two would silently be lost)."""
    merged = {k: (dict(v) if isinstance(v, dict) else v) for k, v in settings.items()}
    for key in TABLE_KEYS:
        if key in merged:
            merged[key] = _table(merged[key], f"[settings] {key}")
    for key, value in combination.items():
        table, _, entry = key.partition(".")
        if grid and (key in merged or (table in TABLE_KEYS and entry in merged.get(table, {}))):
            raise UsageError(f"{key} is set both in [settings] and in [grid]; set it in one of them")
        if table in TABLE_KEYS and entry:
            merged.setdefault(table, {})[entry] = value
        elif key in TABLE_KEYS:
            merged[key] = {**merged.get(key, {}), **_table(value, key)}
        else:
            merged[key] = value
    return merged


@dataclass(frozen=True)
class PlannedRun:
    """A checked run of a sweep: its spec, folder name and resolved config."""

    spec: RunSpec
    name: str
    config: dict
    records_energy: bool = False  # its system reports each device's energy (a cell)


def plan(specs: Sequence[RunSpec], data_dir: str | None, progress: Callable[[int], None] | None = None,
         points: Sequence[str] | None = None) -> list[PlannedRun]:
    """Every run checked and named (its data and learner built once) before anything is written;
    runs whose configs resolve to the same folder are kept once. ``points``: where the file names
    each run (``expand_points``), which a refused run's one line starts with."""
    from scenarios.execution.runner import prepare, resolve

    planned, names = [], set()
    for index, spec in enumerate(specs):
        try:
            prepared = prepare(resolve(spec), data_dir)
        except UsageError as error:
            if points is None:
                raise
            raise UsageError(f"{points[index]}: {error}") from None
        if prepared.name not in names:
            names.add(prepared.name)
            planned.append(PlannedRun(prepared.run.spec, prepared.name, prepared.config, prepared.run.system.records_energy))
        if progress:
            progress(index + 1)
    return planned


def run_locally(runs: Sequence[PlannedRun], out: Path, data_dir: str | None, jobs: int,
                done: Callable[[int], None]) -> list[dict]:
    """Each run on a worker process (``jobs`` of them, dying with this one); summaries in order;
    ``done(1)`` as each finishes."""
    import functools

    from scenarios.execution.pool import run_calls
    from scenarios.execution.runner import run_experiment

    calls = [functools.partial(run_experiment, run.spec, out, data_dir) for run in runs]
    return run_calls(calls, jobs, lambda finished: done(1))


def _run_on_ray(spec: RunSpec, out: str, data_dir: str | None, plugins: Sequence[str] = ()) -> dict:
    import torch

    from scenarios.plugins import load_plugins
    from scenarios.execution.runner import run_experiment

    torch.set_num_threads(1)
    load_plugins(plugins)  # a Ray worker starts afresh: the plugins this sweep loaded
    return run_experiment(spec, Path(out), data_dir)


def check_ray() -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        raise UsageError("--ray needs Ray: pip install 'fl-cosim[ray]'") from None


def start_ray(address: str | None, jobs: int) -> None:
    """Connect to the Ray cluster at ``address`` or, for ``local`` (or None), start a local
    instance with ``jobs`` CPUs; its workers import this checkout (PYTHONPATH). UsageError if
    Ray cannot start or the cluster cannot be reached."""
    import ray

    root = str(Path(__file__).resolve().parents[2])  # this checkout: scenarios/execution/ is two folders down
    pythonpath = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    kwargs = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False,
              "runtime_env": {"env_vars": {"PYTHONPATH": pythonpath}}}
    try:
        if address in (None, "local"):
            ray.init(num_cpus=jobs, **kwargs)
        else:
            ray.init(address=address, **kwargs)
    except Exception as error:  # Ray raises many types for an unreachable or broken cluster
        raise UsageError(f"cannot start or reach Ray at {address or 'local'}: {str(error).splitlines()[0]}") from None


def ray_resources(run: PlannedRun, gpu_share: float = 1.0) -> dict:
    """What one run asks of Ray: a CPU, and ``gpu_share`` of a GPU when it trains on CUDA (its
    device as resolved where the sweep is planned), so Ray places it on a node with a GPU,
    ``1 / gpu_share`` runs to a GPU."""
    on_gpu = str(run.config["training"]["device"]).startswith("cuda")
    return {"num_cpus": 1, "num_gpus": gpu_share if on_gpu else 0}


def run_on_ray(runs: Sequence[PlannedRun], out: Path, data_dir: str | None, done: Callable[[int], None],
               gpu_share: float = 1.0) -> list[dict]:
    """Each run as a Ray task (``ray_resources``) on the cluster ``start_ray`` joined; the result
    folders must be on a file system the cluster's nodes share. Summaries in order; Ray is
    shut down at the end."""
    import ray

    try:
        from scenarios.plugins import sources

        task = ray.remote(max_retries=0)(_run_on_ray)
        plugins = sources()
        pending = {task.options(**ray_resources(run, gpu_share)).remote(run.spec, str(out), data_dir, plugins): index
                   for index, run in enumerate(runs)}
        summaries: list[dict | None] = [None] * len(runs)
        waiting = list(pending)
        while waiting:
            ready, waiting = ray.wait(waiting, num_returns=1)
            for ref in ready:
                summaries[pending[ref]] = ray.get(ref)
                done(1)
        return summaries
    finally:
        ray.shutdown()


def setting_columns(configs: Sequence[dict]) -> list[str]:
    """The settings columns of a sweep's table: every declared run setting whose resolved value
    a config records (``recorded``; the communication settings when a run sets one), every
    training field and every algorithm option any run has (``training_KEY``, ``option_KEY``),
    and the radio parameters that differ between the runs' cells (``radio_KEY``)."""
    from scenarios.records.atomic import json_text

    coded = any("communication" in c for c in configs)
    recorded = [f.name for f in declared() if "recorded" in f.metadata and (coded or f.metadata["section"] != "communication")]
    options = sorted({k for c in configs for k in c["algorithm_options"]})
    training = sorted({k for c in configs for k in c["training"]})
    radios = [radio_values(c) for c in configs]
    radio = [k for k in dict.fromkeys(k for r in radios for k in r) if len({json_text(r.get(k), indent=None) for r in radios}) > 1]
    return recorded + [f"training_{k}" for k in training] + [f"option_{k}" for k in options] + radio


def radio_values(config: dict) -> dict:
    """``radio_KEY`` -> value of each radio parameter of the run's cell (none off a cell)."""
    from scenarios.definitions.cells import radio_parameters

    return {f"radio_{k}": v for k, v in radio_parameters(config["system"]).items()}


def setting_values(config: dict) -> dict:
    """The run's value of each settings column (``setting_columns``), read from its config."""
    values = {f.name: recorded_value(config, f) for f in declared() if "recorded" in f.metadata}
    values.update({f"training_{k}": v for k, v in config["training"].items()})
    values.update({f"option_{k}": v for k, v in config["algorithm_options"].items()})
    values.update(radio_values(config))
    return values


@dataclass(frozen=True)
class SummarySettings:
    """How a sweep's summary sets its target: ``target`` for every group, else ``fraction`` of
    each group's best grid point (its mean final accuracy); a group is the grid points of one
    scenario and one value of each setting column in ``group`` (``algorithm``, ``system``,
    ``devices``, ``radio_KEY``...). ``budget``: axis -> budgets of the accuracy-within-budget
    columns (``scenarios.reports.budgets``; one axis or several), or none."""

    target: float | None = None
    fraction: float = 0.9
    group: tuple[str, ...] = ()
    budget: dict[str, tuple[float, ...]] | None = None


FRACTION = Setting(float, low=0, high=1, low_open=True)
TARGET = Setting(float, low=0, high=1, low_open=True)


def parse_target(value, where: str) -> SummarySettings:
    """A target mean accuracy (``0.8``) or a fraction of each group's best (``"0.9*best"``)."""
    if isinstance(value, str):  # the command line's text: a number, or FRACTION*best
        text = value.replace(" ", "")
        number, best = (text[:-len("*best")], True) if text.endswith("*best") else (text, False)
        try:
            number = float(number)
        except ValueError:
            number = None
        if number is not None and best:
            return SummarySettings(fraction=FRACTION.check(f"{where} fraction of the best", number))
        if number is not None:
            return SummarySettings(target=TARGET.check(where, number))
        raise UsageError(f"{where} must be a mean accuracy in (0, 1] or a fraction of each group's best "
                         f"(\"0.9*best\"), got {value!r}")
    return SummarySettings(target=TARGET.check(where, value))


def summary_settings(config: dict, where: str = "sweep", target=None, budget: str | None = None) -> SummarySettings:
    """The file's ``[summary]`` (``target``, ``group``, ``budget``), its target and budget replaced
    by ``target`` and ``budget`` when given (the command line's ``--target`` and ``--budget``)."""
    from scenarios.reports.budgets import parse_budget_axes

    table = _table(config.get("summary", {}), f"{where} [summary]")
    _known(table, SUMMARY_KEYS, f"{where} [summary]")
    group = table.get("group", [])
    if not isinstance(group, list) or not all(isinstance(g, str) for g in group):
        raise UsageError(f"{where} [summary] group must be a list of settings columns (algorithm, devices, radio_KEY...), got {group!r}")
    chosen = target if target is not None else table.get("target")
    found = SummarySettings() if chosen is None else parse_target(chosen, "--target" if target is not None else f"{where} [summary] target")
    spend = budget if budget is not None else table.get("budget")
    name = "--budget" if budget is not None else f"{where} [summary] budget"
    if spend is not None and not isinstance(spend, str) and not (isinstance(spend, list) and spend and all(isinstance(t, str) for t in spend)):
        raise UsageError(f"{name} must be AXIS=B1,B2,... or a list of them (one per axis), got {spend!r}")
    budgets = None if spend is None else parse_budget_axes(spend, name)
    return dataclasses.replace(found, group=tuple(dict.fromkeys(group)), budget=budgets)


def check_summary(runs: Sequence[PlannedRun], summary: SummarySettings, where: str = "sweep") -> None:
    """UsageError naming a ``group`` column that no run's settings have (``setting_values``), or
    an energy budget where a run records no energy (before anything trains)."""
    known = dict.fromkeys(["system", "algorithm", *(k for run in runs for k in setting_values(run.config))])
    for name in summary.group:
        if name not in known:
            raise UsageError(f"{where} [summary] group: no settings column {name!r}; the runs' columns: {', '.join(known)}")
    if summary.budget is not None and "energy_j" in summary.budget:
        bare = next((run for run in runs if not run.records_energy), None)
        if bare is not None:
            raise UsageError(f"{where}: an energy_j budget needs runs that record energy (a cell); {bare.name} does not")


EMPTY_CELLS = ("", "-")  # a cell without a value: CSV, Markdown


def constant_columns(header: Sequence[str], rows: Sequence[Sequence]) -> tuple[list[int], dict[str, object]]:
    """Which columns of a table vary (their indices: two values or more among the rows that
    have one) and the value of each that does not (the same wherever it is set, with two rows
    or more): any column, whatever it holds (an option only one algorithm has, at one value, is
    left out with the rest)."""
    if len(rows) < 2:
        return list(range(len(header))), {}
    values = [[str(row[i]) for row in rows if str(row[i]) not in EMPTY_CELLS] for i in range(len(header))]
    keep = [i for i, found in enumerate(values) if len(set(found)) > 1]
    return keep, {header[i]: found[0] if found else "-" for i, found in enumerate(values) if i not in keep}


def told_apart(header: Sequence[str], rows: Sequence[Sequence], keep: list[int], same: dict) -> tuple[list[int], dict]:
    """``constant_columns``' choice, plus, where the kept columns leave two rows alike, each column
    that tells them apart by a value beside an empty cell (a grid's ``battery_j = [1.0, "none"]``:
    its rows differ there alone), taken out of ``same``."""
    def distinct(columns) -> int:
        return len({tuple(str(row[i]) for i in columns) for row in rows})

    every = distinct(range(len(header)))
    keep = list(keep)
    for i in range(len(header)):
        if distinct(keep) >= every:
            break
        if i not in keep and len({str(row[i]) for row in rows}) > 1:
            keep = sorted(keep + [i])
            same = {k: v for k, v in same.items() if k != header[i]}
    return keep, same


def grid_summary(runs: Sequence[PlannedRun], out: Path, summary: SummarySettings | float | None = None
                 ) -> tuple[list[str], list[list], str]:
    """Per grid point (runs whose resolved configs differ in the seed alone), aggregated over its
    seeds as ``compare`` does (``scenarios.execution.compare.label_row``): (CSV header, CSV rows,
    Markdown). The target is ``summary``'s: given, or a fraction (default 90%) of the best mean
    final accuracy of each group (a scenario and one value of each ``group`` setting). Columns:
    the scenario, system and label, the settings, the numbers, the accuracy within each of
    ``summary``'s budgets (``scenarios.reports.budgets``: its mean and sample std over the seeds
    that finished and how many of them ended before spending it) and the target; a column the
    same in every row is left out of both tables (the Markdown says its value above the table)."""
    from scenarios.records.atomic import json_text, number_cell
    from scenarios.reports.tables import cell
    from scenarios.execution.compare import CENSORED, SCORED, SPREAD, markdown, numeric_rows, summarize, table_rows
    from scenarios.execution.spec import run_label
    from scenarios.records.result_folder import SEED_KEYS, read_run
    from scenarios.reports.budgets import budget_numbers, budget_table
    from scenarios.reports.over_seeds import mean_std

    if not isinstance(summary, SummarySettings):
        summary = SummarySettings(target=summary)
    points: dict[str, list[PlannedRun]] = {}
    for run in runs:
        points.setdefault(json_text({k: v for k, v in run.config.items() if k not in SEED_KEYS}, indent=None), []).append(run)
    settings = [dict(scenario=p[0].spec.scenario, system=p[0].spec.system, algorithm=p[0].spec.algorithm, **setting_values(p[0].config))
                for p in points.values()]
    columns = [k for k in dict.fromkeys(k for s in settings for k in s) if k not in ("scenario", "system", "algorithm")]
    groups = [json_text([s["scenario"], *(s.get(g) for g in summary.group)], indent=None) for s in settings]
    point_runs = list(points.values())
    rows: list = [None] * len(settings)
    spent: list = [([], [])] * len(settings)  # per point: (CSV cells, Markdown cells) within the budgets
    targets: dict[str, float | None] = {}
    for group in dict.fromkeys(groups):
        mine = [i for i, g in enumerate(groups) if g == group]
        curves = {i: [read_run(out / r.name) for r in point_runs[i]] for i in mine}
        target = summary.target
        if target is None:
            finals = [mean_std([c.summary["final_mean_accuracy"] for c in cs])[0] for cs in curves.values()]
            finals = [f for f in finals if f is not None]
            target = round(summary.fraction * max(finals), 4) if finals else None
        found, targets[group] = summarize(curves, target)
        for i, row in zip(mine, found):
            rows[i] = dataclasses.replace(row, label=run_label(point_runs[i][0].spec))
        for axis, budgets in (summary.budget or {}).items():  # one axis after the other, as the columns go
            numbers, (_, texts) = budget_numbers(curves, axis, budgets), budget_table(curves, axis, budgets)
            for i, text in zip(mine, texts):
                spent[i] = (spent[i][0] + [v for n in numbers if n["algorithm"] == i for v in (
                    number_cell(n["accuracy"]), number_cell(n["accuracy_std"]), n["censored"])], spent[i][1] + text[1:])
    axes = summary.budget or {}
    budget_header = [f"{name}_within_{axis}_{b:g}" for axis, budgets in axes.items() for b in budgets
                     for name in ("accuracy", "accuracy_std", "censored")]
    header, body = numeric_rows(rows)
    csv_header = ["scenario", "system", *columns, "label", *header[1:], *budget_header, "target"]
    csv_rows = [[s["scenario"], s["system"], *(cell(k, s.get(k)) for k in columns), *cells, *within[0], number_cell(targets[g])]
                for s, cells, within, g in zip(settings, body, spent, groups)]
    keep, same = told_apart(csv_header, csv_rows, *constant_columns(csv_header, csv_rows))
    text_header, text_body = table_rows(rows)
    page_header = ["scenario", "system", *columns, *text_header,
                   *(h for axis, budgets in axes.items() for h in budget_table({}, axis, budgets)[0][1:]), "target"]
    page_rows = [[s["scenario"], s["system"], *(cell(k, s.get(k)) or "-" for k in columns), *cells, *within[1], str(targets[g])]
                 for s, cells, within, g in zip(settings, text_body, spent, groups)]
    page_keep, page_same = told_apart(page_header, page_rows, *constant_columns(page_header, page_rows))
    how = (f"target mean accuracy {summary.target} for every row" if summary.target is not None else
           f"target: {summary.fraction:g} x the best mean final accuracy of its group (scenario"
           + "".join(f", {g}" for g in summary.group) + ")")
    note = (f"One row per grid point. {how}. Cells: mean over the seeds that finished, ({SPREAD}) in brackets; "
            f"to target: {CENSORED}; {SCORED}.")
    if axes:
        note += (f" Accuracy within a budget on {' and '.join(axes)}: at each seed's last evaluation within it, >= where "
                 f"a seed ended before spending it (the CSV's censored_within_* counts them).")
    if page_same:
        note += ("\n\nSame in every row where set (left out of the table): "
                 + "; ".join(f"{k} = {v}" for k, v in page_same.items()) + ".")
    page = note + "\n\n" + markdown([page_header[i] for i in page_keep], [[r[i] for i in page_keep] for r in page_rows])
    return [csv_header[i] for i in keep], [[r[i] for i in keep] for r in csv_rows], page


def run_sweep(path: Path, out: str | Path | None = None, data_dir: str | None = None, jobs: int = 1,
              ray: str | None = None, summary: dict | None = None, progress: bool = False, gpu_share: float = 1.0) -> dict:
    """The sweep file ``path``: every run checked, those without a complete folder run (locally
    on ``jobs`` worker processes, or on Ray at ``ray``: ``local`` or an address, each run on CUDA
    asking for ``gpu_share`` of a GPU), then its tables written into ``out`` (default
    results/<file name>): one row per run and seed (CSV, and Parquet with pyarrow) and the
    summary per grid point (CSV and Markdown); ``summary``'s ``target`` and ``budget``
    (``AXIS=B1,B2``), where given, replace the file's ``[summary]`` ones. Returns the counts, the folder and the tables' paths."""
    from scenarios.records.atomic import (atomic_write_text, check_output_dir, check_replaceable, csv_text, make_output_dir,
                                          remove_stale_staging, sha256_text)
    from scenarios.datasets import resolve_data_dir
    from scenarios.execution.pool import start_pool_server
    from scenarios.execution.progress import Progress
    from scenarios.execution.runner import reusable
    from scenarios.reports.tables import run_columns, run_row, write_tables
    from scenarios.records.result_folder import read_summary

    config = read_sweep_file(path)
    if ray is not None:
        check_ray()
    out = check_output_dir(Path(out) if out else Path("results") / path.stem)
    load_sweep_plugins(config, path.parent, path.name)
    specs, points = zip(*expand_points(config, path.name))
    overrides = summary or {}
    targeting = summary_settings(config, path.name, overrides.get("target"), overrides.get("budget"))
    data_dir = str(resolve_data_dir(data_dir))
    if ray is None:
        start_pool_server(jobs, len(specs))  # its imports run beside the checks
    checking = Progress("checking", len(specs), unit="runs") if progress else None
    runs = plan(specs, data_dir, checking.update if checking else None, points)
    if checking:
        checking.close()
    for run in runs:  # a folder name taken by a file or a link is found before any run trains
        check_replaceable(out / run.name)
    check_summary(runs, targeting, path.name)
    if ray is not None:
        start_ray(ray, jobs)  # before anything is written: an unreachable cluster is one line
    make_output_dir(out)
    remove_stale_staging(out)
    pending = [run for run in runs if reusable(out / run.name, run.config) is not None]
    bar = Progress("sweep", len(runs), unit="runs") if progress else None
    finished = [len(runs) - len(pending)]

    def done(count: int) -> None:
        finished[0] += count
        if bar:
            bar.update(finished[0])

    done(0)
    if ray is not None:
        run_on_ray(pending, out, data_dir, done, gpu_share)
    else:
        run_locally(pending, out, data_dir, jobs, done)
    if bar:
        bar.close()
    summaries = [read_summary(out / run.name) for run in runs]
    columns = run_columns(summaries) + setting_columns([run.config for run in runs])
    rows = [run_row({**summary, "result_dir": run.name}, setting_values(run.config)) for run, summary in zip(runs, summaries)]
    stem = out / f"{path.stem}_{sha256_text(chr(10).join(run.name for run in runs))[:10]}"
    tables = write_tables(rows, columns, stem)
    summary_header, summary_rows, summary_page = grid_summary(runs, out, targeting)
    tables += [stem.with_name(stem.name + "_summary.csv"), stem.with_name(stem.name + "_summary.md")]
    atomic_write_text(tables[-2], csv_text(summary_header, summary_rows))
    atomic_write_text(tables[-1], f"# {path.name}: one row per grid point, over its seeds\n\n{summary_page}")
    return {"runs": len(runs), "ran": len(pending), "reused": len(runs) - len(pending),
            "diverged": sum(row["status"] == "diverged" for row in rows), "out": str(out), "tables": [str(t) for t in tables]}
