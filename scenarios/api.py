"""The Python API: describe a run, run it (or reuse it), read its rounds as a pandas DataFrame;
compare algorithms over seeds, run a sweep file, draw a figure; no command line needed. The
same checks, folders and files as ``fl-cosim run``, ``compare``, ``sweep`` and ``plot``.

    from scenarios.api import RunSpec, run
    result = run(RunSpec("digits-rotation", "fedavg", rounds=5), out="results")
    result.rounds()        # pandas DataFrame, one row per round

Bad input raises ``scenarios.errors.UsageError`` with a one-line message.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scenarios.errors import UsageError
from scenarios.execution.runner import RunSpec

__all__ = ["Comparison", "RunResult", "RunSpec", "UsageError", "compare", "load", "plot", "run", "sweep"]


@dataclass(frozen=True)
class RunResult:
    """A complete result folder: its summary, config, and its tables as DataFrames."""

    folder: Path
    summary: dict

    @property
    def config(self) -> dict:
        from scenarios.records.result_folder import read_config

        return read_config(self.folder)

    @property
    def diverged(self) -> bool:
        return self.summary.get("status") == "diverged"

    def rounds(self):
        """``rounds.csv``: one row per round (empty cells, NaN here, where a round was not evaluated)."""
        import pandas

        return pandas.read_csv(self.folder / "rounds.csv")

    def trace(self):
        """``trace.csv``: every downlink stream, compute, upload and drop on the clock."""
        import pandas

        return pandas.read_csv(self.folder / "trace.csv")


def run(spec: RunSpec, out: str | Path = "results", data_dir: str | Path | None = None, force: bool = False,
        progress: bool = False) -> RunResult:
    """Run ``spec`` into its hash-named folder under ``out`` (reused when complete, unless
    ``force``); ``data_dir`` as ``--data-dir``. A diverged run returns normally: see ``diverged``."""
    from scenarios.datasets import resolve_data_dir
    from scenarios.records.atomic import output_name
    from scenarios.execution.runner import run_experiment

    summary = run_experiment(_spec(spec), Path(output_name(_path(out, "out"), "out")),
                             str(resolve_data_dir(str(data_dir) if data_dir else None)), progress=progress, reuse=not force)
    folder = Path(summary.pop("result_dir"))
    summary.pop("reused", None)
    return RunResult(folder, summary)


def load(folder: str | Path) -> RunResult:
    """A finished run's folder (every file checked against the sealed index: ``UsageError`` if not)."""
    from scenarios.records.result_folder import read_summary

    return RunResult(Path(_path(folder, "folder")), read_summary(folder))


def _check_counts(jobs: int, target: float | None) -> None:
    """``jobs`` and ``target`` as the commands check ``--jobs`` and ``--target``."""
    from scenarios.definitions.settings import JOBS, TARGET

    JOBS.check("jobs", jobs)
    TARGET.check("target", target)


@dataclass(frozen=True)
class Comparison:
    """``compare``'s answer: one row per label (``scenarios.execution.compare.Row``: means with the
    sample std over seeds, to-target numbers with censored seeds counted), the target, and each
    label's result folders in seed order."""

    rows: list
    target: float | None
    folders: dict[str, list[Path]]

    def table(self):
        """The rows as a pandas DataFrame, the columns of compare's CSV (plain numbers, NaN for none)."""
        import io

        import pandas

        from scenarios.records.atomic import csv_text
        from scenarios.execution.compare import numeric_rows

        return pandas.read_csv(io.StringIO(csv_text(*numeric_rows(self.rows))))


def compare(specs: dict[str, list[RunSpec]], out: str | Path = "results", data_dir: str | Path | None = None,
            target: float | None = None, jobs: int = 1, force: bool = False) -> Comparison:
    """Run (or reuse) every spec of every label (label -> its seeds' specs), ``jobs`` at a time,
    and compare them as ``fl-cosim compare`` does; ``target`` defaults to 90% of the best
    label's mean final accuracy."""
    from scenarios.records.atomic import output_name
    from scenarios.datasets import resolve_data_dir
    from scenarios.execution.compare import compare as compare_runs

    if not isinstance(specs, dict) or not all(isinstance(k, str) and isinstance(v, list) and v for k, v in specs.items()):
        raise UsageError("compare takes a dict: label -> a non-empty list of RunSpec (one per seed)")
    specs = {label: [_spec(spec) for spec in seeds] for label, seeds in specs.items()}
    _check_counts(jobs, target)
    rows, target, curves = compare_runs(specs, Path(output_name(_path(out, "out"), "out")), str(resolve_data_dir(str(data_dir) if data_dir else None)),
                                        target, jobs=jobs, reuse=not force)
    return Comparison(rows, target, {label: [Path(c.folder) for c in cs] for label, cs in curves.items()})


def sweep(config_file: str | Path, out: str | Path | None = None, data_dir: str | Path | None = None, jobs: int = 1,
          target: float | str | None = None, budget: str | list[str] | None = None) -> dict:
    """Run the sweep file as ``fl-cosim sweep`` does (resumable; local worker processes); returns
    the counts, the output folder and its tables' paths (the per-run CSV first, the per-grid-point
    summary CSV and Markdown last). ``target`` and ``budget`` take what the file's ``[summary]``
    takes and replace it: a mean accuracy (0.8) or a fraction of each group's best (``"0.9*best"``);
    ``"time=5,10,20"``, or a list of them, one per axis (``["time=5,10", "uplink_bits=1e7"]``)."""
    from scenarios.execution.sweep import parse_target, run_sweep
    from scenarios.reports.budgets import parse_budget_axes

    _check_counts(jobs, None)
    if target is not None:
        parse_target(target, "target")
    if budget is not None:
        parse_budget_axes(budget, "budget")
    return run_sweep(Path(config_file), out, str(data_dir) if data_dir else None, jobs, None,
                     {"target": target, "budget": budget})


def plot(result_dirs, out_file: str | Path, x: tuple[str, ...] = ("time",), worst: bool = False, width: str = "column",
         systems: tuple[str, ...] = (), title: str | None = None, force: bool = False) -> Path:
    """The figure ``fl-cosim plot`` draws from ``result_dirs`` (one folder, or a list of them)
    into ``out_file`` (.pdf or .png; an existing file is replaced only with ``force``): one panel
    per x axis (and per system in ``systems``, every run re-timed on it with its own network
    stream; a system is a preset with overrides, ``wired:rho=10``), seeds of one configuration as their mean with a min-max band."""
    from figures.accuracy_time import PlotOptions, plot_accuracy_vs_time
    from figures.bands import X_AXES
    from figures.style import WIDTHS_IN
    from scenarios.cli.plot import check_figure_file, check_title
    from scenarios.records.atomic import output_dir
    from scenarios.reports.retime import curves_by_system, retime_systems

    folders = [result_dirs] if isinstance(result_dirs, (str, Path)) else _listed(result_dirs, "result_dirs", (str, Path), "folders")
    x, systems = ([value] if isinstance(value, str) else value for value in (x, systems))
    if width not in WIDTHS_IN or not set(_listed(x, "x", str, "axis names")) <= set(X_AXES):
        raise UsageError(f"width must be one of {', '.join(WIDTHS_IN)} and x axes among {', '.join(X_AXES)}")
    if title is not None and not isinstance(title, str):
        raise UsageError(f"title must be text, got {title!r:.60}")
    out = check_figure_file(_path(out_file, "out_file"), force, "out_file", "force=True")
    check_title(title, "title")
    systems = _listed(systems, "systems", str, "system names")
    named = retime_systems(systems) if systems else None
    curves = curves_by_system([str(d) for d in folders], named)
    with output_dir(out.parent):
        return plot_accuracy_vs_time(curves, out, PlotOptions(title, tuple(dict.fromkeys(x)), bool(worst), width))


def _listed(values, name: str, kinds, what: str) -> list:
    """``values`` as a list of ``kinds`` (UsageError naming ``name`` and ``what`` otherwise)."""
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise UsageError(f"{name} must be a list of {what}, got {values!r:.60}")
    values = list(values)
    if not all(isinstance(v, kinds) for v in values):
        raise UsageError(f"{name} must be a list of {what}, got {values!r:.60}")
    return values


def _path(value, name: str) -> str | Path:
    if not isinstance(value, (str, Path)):
        raise UsageError(f"{name} must be a path, got {value!r:.60}")
    return value


def _spec(spec) -> RunSpec:
    """``spec``, a RunSpec, with NumPy's integers and floats as Python's (``np.int64(3)`` is a
    seed as ``3`` is); UsageError for anything else."""
    import dataclasses
    import numbers

    if not isinstance(spec, RunSpec):
        raise UsageError(f"a run is a RunSpec, got {spec!r:.60}")

    def native(value):
        if isinstance(value, bool) or not isinstance(value, numbers.Number):
            return {k: native(v) for k, v in value.items()} if isinstance(value, dict) else value
        return int(value) if isinstance(value, numbers.Integral) else float(value) if isinstance(value, numbers.Real) else value

    return dataclasses.replace(spec, **{f.name: native(getattr(spec, f.name)) for f in dataclasses.fields(spec)})
