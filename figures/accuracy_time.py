"""Average validation accuracy against simulated time (normalized by ``T_dl``, journal Fig. 6,
or in seconds on a physical cell) and, on a physical cell, against the devices' energy."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

import numpy as np

from figures.save import save_figure
from figures.results import read_run
from figures.style import algorithm_style

TIME_LABELS = {"T_dl": "simulated time / $T_{dl}$", "s": "simulated time (s)"}


def figure_name(stem: str, result_dirs: Sequence[str | Path], suffix: str = ".png") -> str:
    """``stem`` plus a short hash of the runs' folder names: a figure of other runs gets another
    name, so figures never replace each other silently (the same runs give the same figure)."""
    names = "\n".join(sorted(Path(d).name for d in result_dirs))
    return f"{stem}_{hashlib.sha256(names.encode('utf-8')).hexdigest()[:10]}{suffix}"


def plot_accuracy_vs_time(
    result_dirs: Sequence[str | Path],
    out_file: str | Path,
    title: str | None = None,
    systems: dict | None = None,
    seed: int = 0,
) -> Path:
    """One labelled line per run; PNG, or PDF when ``out_file`` ends in .pdf. Written atomically.

    With ``systems`` (name -> NetworkSystem or PhysicalSystem), one panel per system, every run
    re-timed on it from its recorded plans (journal Fig. 6 without retraining). Runs on a
    physical cell get a second panel: accuracy against the energy of all devices (J).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if systems:
        from figures.retime import retimed_curve

        panels = {name: [retimed_curve(d, system, np.random.default_rng(seed), np.random.SeedSequence(seed)) for d in result_dirs]
                  for name, system in systems.items()}
    else:
        panels = {None: [read_run(d) for d in result_dirs]}
    columns = []
    for name, runs in panels.items():
        columns.append((name, runs, "time"))
        if any(run.energy_j is not None for run in runs):
            columns.append((name, [run for run in runs if run.energy_j is not None], "energy"))
    fig, axes = plt.subplots(1, len(columns), figsize=(7 * len(columns), 4.5), squeeze=False, sharey=True)
    for ax, (name, runs, axis) in zip(axes[0], columns):
        units = sorted({run.time_unit for run in runs})
        for run in runs:
            label = run.label if name else f"{run.label} ({run.summary.get('system', '')})"
            x = run.time if axis == "time" else run.energy_j
            ax.plot(x, run.mean_accuracy, label=label, linewidth=1.6, markevery=max(1, len(x) // 8),
                    **algorithm_style(run.label))
        if axis == "energy":
            ax.set_xlabel("energy of all devices (J)")
        else:
            ax.set_xlabel(" / ".join(TIME_LABELS[u] for u in units))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        if name:
            ax.set_title(name + (" (no outages)" if units == ["s"] else ""))
    axes[0][0].set_ylabel("average validation accuracy")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return save_figure(fig, out_file, dpi=130)
