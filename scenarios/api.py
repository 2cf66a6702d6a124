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

    summary = run_experiment(spec, Path(output_name(out, "out")), str(resolve_data_dir(str(data_dir) if data_dir else None)),
                             progress=progress, reuse=not force)
    folder = Path(summary.pop("result_dir"))
    summary.pop("reused", None)
    return RunResult(folder, summary)


def load(folder: str | Path) -> RunResult:
    """A finished run's folder (every file checked against the sealed index: ``UsageError`` if not)."""
    from scenarios.records.result_folder import read_summary

    return RunResult(Path(folder), read_summary(folder))


def _check_counts(jobs: int, target: float | None) -> None:
    """``jobs`` and ``target`` as the commands check ``--jobs`` and ``--target``."""
    from scenarios.definitions.settings import Setting

    Setting(int, low=1, high=256).check("jobs", jobs)
    Setting(float, low=0, high=1, low_open=True, none=True).check("target", target)


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

    if not isinstance(specs, dict) or not all(isinstance(v, list) and v for v in specs.values()):
        raise UsageError("compare takes a dict: label -> a non-empty list of RunSpec (one per seed)")
    _check_counts(jobs, target)
    rows, target, curves = compare_runs(specs, Path(output_name(out, "out")), str(resolve_data_dir(str(data_dir) if data_dir else None)),
                                        target, jobs=jobs, reuse=not force)
    return Comparison(rows, target, {label: [Path(c.folder) for c in cs] for label, cs in curves.items()})


def sweep(config_file: str | Path, out: str | Path | None = None, data_dir: str | Path | None = None, jobs: int = 1,
          target: float | None = None) -> dict:
    """Run the sweep file as ``fl-cosim sweep`` does (resumable; local worker processes); returns
    the counts, the output folder and its tables' paths (the per-run CSV first, the per-grid-point
    summary CSV and Markdown last)."""
    from scenarios.execution.sweep import run_sweep

    _check_counts(jobs, target)
    return run_sweep(Path(config_file), out, str(data_dir) if data_dir else None, jobs, None, target)


def plot(result_dirs, out_file: str | Path, x: tuple[str, ...] = ("time",), worst: bool = False, width: str = "column",
         systems: tuple[str, ...] = (), title: str | None = None) -> Path:
    """The figure ``fl-cosim plot`` draws from ``result_dirs`` into ``out_file`` (.pdf or .png):
    one panel per x axis (and per system in ``systems``, every run re-timed on it with its own
    network stream; a system is a preset with overrides, ``wired:rho=10``), seeds of one configuration as their mean with a min-max band."""
    from figures.accuracy_time import PlotOptions, plot_accuracy_vs_time
    from figures.bands import X_AXES
    from figures.style import WIDTHS_IN
    from scenarios.reports.retime import curves_by_system, retime_systems

    if width not in WIDTHS_IN or not set(x) <= set(X_AXES):
        raise UsageError(f"width must be one of {', '.join(WIDTHS_IN)} and x axes among {', '.join(X_AXES)}")
    if Path(out_file).suffix.lower() not in (".png", ".pdf"):
        raise UsageError(f"out_file must end in .png or .pdf, got {str(out_file)!r}")
    named = retime_systems(systems) if systems else None
    return plot_accuracy_vs_time(curves_by_system([str(d) for d in result_dirs], named), out_file,
                                 PlotOptions(title, tuple(x), worst, width))
