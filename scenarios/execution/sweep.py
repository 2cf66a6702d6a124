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
    [[algorithm]]                  # each algorithm, with fixed options and an option grid
    name = "user-centric"
    options = { variance_batch_fraction = 0.6 }
    grid = { streams = [2, 4, "auto"], lam = [0.0] }
    [[run]]                        # explicit runs (a list), on top of the settings
    algorithm = "fedprox"
    options = { mu = 0.5 }
    system = "wired"

Runs are expanded in file order (grid combinations, then algorithms and their option
combinations, then seeds; then the ``[[run]]`` list) and identical runs are kept once. The
results table has one row per run and seed, in that order, with plain numbers.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from scenarios.errors import UsageError
from scenarios.execution.runner import RunSpec
from scenarios.records.reading import MAX_DEPTH, MAX_SWEEP_BYTES, ReadError, check_depth, read_text
from scenarios.definitions.settings import DEFAULT_SCENARIO, MAX_SEEDS, RUN_SETTINGS, SWEEP_KEYS, Setting, declared, recorded_value

TABLE_KEYS = tuple(f.name for f in declared() if f.name in SWEEP_KEYS and f.default_factory is dict)  # training, radio
TOP_KEYS = ("seeds", "settings", "grid", "algorithm", "run", "plugins")
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
    _known(config, TOP_KEYS, where)
    seeds = _seeds(config.get("seeds", [0]), where)
    settings = _table(config.get("settings", {}), f"{where} [settings]")
    _known(settings, SWEEP_KEYS, f"{where} [settings]")
    grid = _table(config.get("grid", {}), f"{where} [grid]")
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
    # counted from the lists' lengths before any run is built: a huge grid is refused at once
    count = (_size(grid, f"{where} [grid]") * sum(_size(g, f"{label} grid") for label, _, g in option_grids)
             + len(explicit)) * len(seeds)
    if count > MAX_RUNS:
        raise UsageError(f"{where}: {count:,} runs; at most {MAX_RUNS:,} in one sweep")
    specs: list[RunSpec] = []
    for combination in _combinations(grid):
        base = _merge(settings, combination, grid=True)
        for (label, options, option_grid), entry in zip(option_grids, algorithms):
            for option_combination in _combinations(option_grid):
                for seed in seeds:
                    specs.append(_spec(base, entry["name"], {**options, **option_combination}, seed, label))
    for index, entry in enumerate(explicit):
        label = f"{where} [[run]] #{index + 1}"
        _known(entry, RUN_KEYS, label)
        if "algorithm" not in entry:
            raise UsageError(f"{label}: needs algorithm = \"ALGORITHM\"")
        base = _merge(settings, {k: v for k, v in entry.items() if k in SWEEP_KEYS})
        for seed in seeds:
            specs.append(_spec(base, entry["algorithm"], _table(entry.get("options", {}), f"{label} options"), seed, label))
    unique, seen = [], set()
    for spec in specs:
        key = repr(spec)
        if key not in seen:
            seen.add(key)
            unique.append(spec)
    return unique


def _spec(settings: dict, algorithm, options: dict, seed: int, where: str) -> RunSpec:
    if not isinstance(algorithm, str):
        raise UsageError(f"{where}: algorithm must be a name, got {algorithm!r}")
    values = {"scenario": DEFAULT_SCENARIO, **settings}
    tables = {key: dict(values.pop(key)) for key in TABLE_KEYS if key in values}
    return RunSpec(algorithm=algorithm, seed=seed, options=dict(options), **tables, **values)


def _seeds(value, where: str) -> list[int]:
    if isinstance(value, int) and not isinstance(value, bool):
        return list(range(SEEDS.check(f"{where} seeds", value)))
    if isinstance(value, list) and value:
        return [RUN_SETTINGS["seed"].check(f"{where} seeds", seed) for seed in value]
    raise UsageError(f"{where}: seeds must be a count (an integer >= 1) or a non-empty list of seeds, got {value!r}")


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


def _size(grid: dict, where: str) -> int:
    """How many combinations ``grid`` has (each value a non-empty list: UsageError otherwise)."""
    size = 1
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise UsageError(f"{where}: {key} must be a non-empty list of values, got {values!r}")
        size *= len(values)
    return size


def _combinations(grid: dict):
    """Every combination of a checked ``grid`` (``_size``), one at a time."""
    keys = list(grid)
    return (dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys)))


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


def plan(specs: Sequence[RunSpec], data_dir: str | None, progress: Callable[[int], None] | None = None) -> list[PlannedRun]:
    """Every run checked and named (its data and learner built once) before anything is written;
    runs whose configs resolve to the same folder are kept once."""
    from scenarios.execution.runner import prepare, resolve

    planned, names = [], set()
    for index, spec in enumerate(specs):
        prepared = prepare(resolve(spec), data_dir)
        if prepared.name not in names:
            names.add(prepared.name)
            planned.append(PlannedRun(prepared.run.spec, prepared.name, prepared.config))
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

    root = str(Path(__file__).resolve().parents[1])
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


def grid_summary(runs: Sequence[PlannedRun], out: Path, target: float | None) -> tuple[list[str], list[list], str]:
    """Per grid point (runs whose resolved configs differ in the seed alone), aggregated over its
    seeds as ``compare`` does (``scenarios.execution.compare.label_row``): (CSV header, CSV rows,
    Markdown). The target defaults, per scenario, to 90% of its best grid point's mean final
    accuracy. Columns: the scenario, label and system, the settings that vary over the grid,
    then the numbers."""
    from scenarios.records.atomic import json_text, number_cell
    from scenarios.reports.tables import cell
    from scenarios.execution.compare import legend, markdown, numeric_rows, summarize, table_rows
    from scenarios.execution.spec import run_label
    from scenarios.records.result_folder import SEED_KEYS, read_run

    points: dict[str, list[PlannedRun]] = {}
    for run in runs:
        points.setdefault(json_text({k: v for k, v in run.config.items() if k not in SEED_KEYS}, indent=None), []).append(run)
    settings = [dict(scenario=p[0].spec.scenario, system=p[0].spec.system, **setting_values(p[0].config)) for p in points.values()]
    keys = dict.fromkeys(k for s in settings for k in s)
    varying = [k for k in keys if len({json_text(s.get(k), indent=None) for s in settings}) > 1]
    rows, targets = [], {}
    for scenario in dict.fromkeys(s["scenario"] for s in settings):
        mine = [(key, p) for (key, p), s in zip(points.items(), settings) if s["scenario"] == scenario]
        found, targets[scenario] = summarize({key: [read_run(out / r.name) for r in p] for key, p in mine}, target)
        rows += [dataclasses.replace(row, label=run_label(p[0].spec)) for row, (_, p) in zip(found, mine)]
    header, body = numeric_rows(rows)
    csv_header = ["scenario", "system", *(k for k in varying if k not in ("scenario", "system")), "label", *header[1:], "target"]
    csv_rows = [[s["scenario"], s["system"], *(cell(k, s.get(k)) for k in varying if k not in ("scenario", "system")), *cells,
                 number_cell(targets[s["scenario"]])]
                for s, cells in zip(settings, body)]
    text_header, text_body = table_rows(rows)
    page = "\n".join(f"- {scenario}: {legend(t)}" for scenario, t in targets.items()) + "\n\n" + markdown(
        varying + text_header, [[str(s.get(k, "-")) for k in varying] + cells for s, cells in zip(settings, text_body)])
    return csv_header, csv_rows, page


def run_sweep(path: Path, out: str | Path | None = None, data_dir: str | None = None, jobs: int = 1,
              ray: str | None = None, target: float | None = None, progress: bool = False, gpu_share: float = 1.0) -> dict:
    """The sweep file ``path``: every run checked, those without a complete folder run (locally
    on ``jobs`` worker processes, or on Ray at ``ray``: ``local`` or an address, each run on CUDA
    asking for ``gpu_share`` of a GPU), then its
    tables written into ``out`` (default results/<file name>): one row per run and seed (CSV,
    and Parquet with pyarrow) and the summary per grid point (CSV and Markdown). Returns the
    counts, the folder and the tables' paths."""
    from scenarios.records.atomic import (atomic_write_text, check_output_dir, check_replaceable, csv_text, make_output_dir,
                                          remove_stale_staging, sha256_text)
    from scenarios.datasets import resolve_data_dir
    from scenarios.execution.progress import Progress
    from scenarios.execution.runner import reusable
    from scenarios.reports.tables import run_columns, run_row, write_tables
    from scenarios.records.result_folder import read_summary

    config = read_sweep_file(path)
    if ray is not None:
        check_ray()
    out = check_output_dir(Path(out) if out else Path("results") / path.stem)
    load_sweep_plugins(config, path.parent, path.name)
    specs = expand(config, path.name)
    data_dir = str(resolve_data_dir(data_dir))
    checking = Progress("checking", len(specs), unit="runs") if progress else None
    runs = plan(specs, data_dir, checking.update if checking else None)
    if checking:
        checking.close()
    for run in runs:  # a folder name taken by a file or a link is found before any run trains
        check_replaceable(out / run.name)
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
    summary_header, summary_rows, summary_page = grid_summary(runs, out, target)
    tables += [stem.with_name(stem.name + "_summary.csv"), stem.with_name(stem.name + "_summary.md")]
    atomic_write_text(tables[-2], csv_text(summary_header, summary_rows))
    atomic_write_text(tables[-1], f"# {path.name}: one row per grid point, over its seeds\n\n{summary_page}")
    return {"runs": len(runs), "ran": len(pending), "reused": len(runs) - len(pending),
            "diverged": sum(row["status"] == "diverged" for row in rows), "out": str(out), "tables": [str(t) for t in tables]}
