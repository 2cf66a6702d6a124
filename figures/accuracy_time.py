"""Accuracy against simulated time, bits, energy or rounds, from runs' curves: the figure of
``run`` and ``plot`` (journal Fig. 6 with one panel per system: every run re-timed from its
recorded plans by ``scenarios.reports.retime``).

Paper-ready by default: the shipped style, one IEEE column wide, a fixed colour and marker per
algorithm. Runs of one configuration over several seeds are one line, the mean with a min-max
band (``figures.bands``); an optional second row shows the worst device's accuracy.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from figures.bands import BAND, TIME_LABELS, X_AXES, draw_band, integer_x, legend_below, log_x, seed_band
from scenarios.records.result_folder import ResultError, RunCurve, seed_groups
from figures.save import save_figure
from figures.style import WIDTHS_IN, ieee_style


__all__ = ["BAND", "PlotOptions", "figure_name", "plot_accuracy_vs_time", "seed_groups"]


@dataclass(frozen=True)
class PlotOptions:
    """``x_axes``: one panel per axis of ``X_AXES`` (``energy`` only for runs on a cell);
    ``worst``: a second row with the worst device's accuracy; ``width``: ``column`` or ``double``;
    ``command``: the command line, recorded in the file's metadata."""

    title: str | None = None
    x_axes: tuple[str, ...] = ("time",)
    worst: bool = False
    width: str = "column"
    command: str | None = None


def figure_name(stem: str, result_dirs: Sequence[str | Path], suffix: str = ".png") -> str:
    """``stem`` plus a short hash of the runs' folder names: a figure of other runs gets another
    name, so figures never replace each other silently (the same runs give the same figure)."""
    names = "\n".join(sorted(Path(d).name for d in result_dirs))
    return f"{stem}_{hashlib.sha256(names.encode('utf-8')).hexdigest()[:10]}{suffix}"


PANELS_PER_ROW = {"column": 2, "double": 3}  # wider rows than this overlap their labels at 7-8 pt
PANEL_HEIGHT_IN = 1.75


def plot_accuracy_vs_time(panels: Mapping[str | None, Sequence[RunCurve]], out_file: str | Path,
                          options: PlotOptions = PlotOptions()) -> Path:
    """One panel per (key of ``panels``, x axis, accuracy), wrapped into rows of
    ``PANELS_PER_ROW`` panels at the figure's width, one line per configuration; PNG, or PDF
    when ``out_file`` ends in .pdf, written atomically with the command line in its metadata.

    ``panels``: system name -> the runs re-timed on it (journal Fig. 6 without retraining), or
    None -> the runs as recorded (``scenarios.reports.retime.curves_by_system`` gives either).
    """
    columns = [(title, drawn, x) for name, runs in panels.items() for x in options.x_axes
               for title, drawn in by_time_unit(name, runs, x)
               if x != "energy" or any(run.energy_j is not None for run in drawn)]
    labels = {}  # run -> its line's label, one labelling over every panel of a key (a label means one configuration)
    for name, runs in panels.items():
        mixed = name is None and len(panels) == 1 and len({r.summary.get("system") for r in runs}) > 1
        labels.update({id(run): label for label, group in seed_groups(runs, with_system=mixed).items() for run in group})
    if not columns:
        raise ResultError("no run has energy to plot: energy is measured on a physical cell only")
    rows = ("mean_accuracy", "worst_accuracy") if options.worst else ("mean_accuracy",)
    per_row = min(len(columns), PANELS_PER_ROW[options.width])
    block = -(-len(columns) // per_row) * per_row  # each accuracy (mean, worst) starts a row of its own
    cells = {row * block + column: (name, runs, x, y) for row, y in enumerate(rows) for column, (name, runs, x) in enumerate(columns)}
    grid_rows = len(rows) * block // per_row
    counts: set[int] = set()
    with ieee_style() as plt:
        fig, axes = plt.subplots(grid_rows, per_row, squeeze=False, layout="constrained",
                                 figsize=(WIDTHS_IN[options.width], PANEL_HEIGHT_IN * grid_rows + 0.7))
        for index, (name, runs, x, y) in cells.items():
            ax = axes.flat[index]
            runs = [run for run in runs if x != "energy" or run.energy_j is not None]
            groups: dict[str, list[RunCurve]] = {}
            for run in runs:
                groups.setdefault(labels[id(run)], []).append(run)
            for label, group in groups.items():
                draw_band(ax, label, seed_band(group, x, y))
                counts.add(len(group))
            ax.set_xlabel(TIME_LABELS[runs[0].time_unit] if x == "time" else X_AXES[x])  # one unit a panel: by_time_unit
            if "bits" in x:
                log_x(ax)
            elif x == "rounds":
                integer_x(ax)
            ax.grid(alpha=0.3)
            ax.set_ylabel("avg. validation acc." if y == "mean_accuracy" else "worst-device acc.")
            if name:
                ax.set_title(name)
        for index, ax in enumerate(axes.flat):
            ax.set_visible(index in cells)
        legend_below(fig, [axes.flat[index] for index in cells], counts, 2 if options.width == "column" else 4)
        if options.title:
            fig.suptitle(options.title)
        return save_figure(fig, out_file, metadata=_metadata(options.command, out_file))


UNIT_PANELS = {"T_dl": "normalized systems", "s": "cells"}  # the title of a panel of recorded runs in one time unit


def by_time_unit(name: str | None, runs: Sequence[RunCurve], x: str) -> list[tuple[str | None, list[RunCurve]]]:
    """The panels (title, runs) that ``runs`` under ``name`` draw on axis ``x``: one, unless
    ``x`` is time and the runs count it in different units (a normalized system's ``T_dl``, a
    cell's seconds), which one axis cannot hold: then one panel per unit, titled by it. A panel
    of runs re-timed on a cell says that the re-timing has no outages."""
    units = list(dict.fromkeys(run.time_unit for run in runs))
    if x != "time" or len(units) < 2:
        title = None if name is None else name + (" (no outages)" if units == ["s"] else "")
        return [(title, list(runs))]
    return [((f"{name}: " if name else "") + UNIT_PANELS.get(unit, unit), [run for run in runs if run.time_unit == unit])
            for unit in units]


def _metadata(command: str | None, out_file: str | Path) -> dict[str, str]:
    """The command line in the file: PDF ``Subject`` (``Creator`` fl-cosim), PNG ``Description``."""
    pdf = Path(out_file).suffix.lower() == ".pdf"
    metadata = {"Creator" if pdf else "Software": "fl-cosim"}
    if command:
        metadata["Subject" if pdf else "Description"] = command
    return metadata
