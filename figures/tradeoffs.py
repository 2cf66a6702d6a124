"""The communication trade-off studies drawn (``scenarios.reports.tradeoffs`` reads the runs and
makes their table): codecs (accuracy against time and against bits, per system) and scheduling
policies (accuracy against time and energy)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from figures.save import save_figure
from scenarios.records.result_folder import RunCurve

CODEC_COLOURS = {"none": "#000000", "qsgd": "#1f77b4", "topk": "#d62728", "sign": "#2ca02c", "coded both ways": "#9467bd"}


def codecs_figure(runs: Sequence[RunCurve], codecs: Sequence[str], out_file: str | Path) -> Path:
    """Rows: systems; columns: accuracy against time and against bits (down + up); colour: the
    run's codec (``codecs``, one per run: a key of ``CODEC_COLOURS``); solid FedAvg, dashed user-centric."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    systems = sorted({run.summary["system"] for run in runs})
    fig, axes = plt.subplots(len(systems), 2, figsize=(9, 3.2 * len(systems)), squeeze=False)
    for row, system in enumerate(systems):
        for run, codec in ((r, c) for r, c in zip(runs, codecs) if r.summary["system"] == system):
            style = {"color": CODEC_COLOURS[codec], "linestyle": "-" if run.config["algorithm"] == "fedavg" else "--",
                     "linewidth": 1.2, "label": run.label}
            axes[row, 0].plot(run.time, run.mean_accuracy, **style)
            axes[row, 1].plot(np.add(run.downlink_bits, run.uplink_bits) / 1e6, run.mean_accuracy, **style)
        unit = next(r.time_unit for r in runs if r.summary["system"] == system)
        axes[row, 0].set_xlabel(f"simulated time ({unit})")
        axes[row, 1].set_xlabel("bits on the air, down + up (Mbit)")
        axes[row, 1].set_xscale("log")
        for ax in axes[row]:
            ax.set_ylabel("mean accuracy")
            ax.set_title(system, fontsize=9)
            ax.grid(alpha=0.3)
    axes[0, 1].legend(fontsize=6, loc="lower right")
    fig.tight_layout()
    return save_figure(fig, out_file, dpi=80)


def scheduling_figure(runs: Sequence[RunCurve], labels: Sequence[str], out_file: str | Path) -> Path:
    """Accuracy (mean solid, worst device dotted) against time and against the devices' energy;
    ``labels``: one per run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    colours = plt.get_cmap("tab10")
    for index, (run, label) in enumerate(zip(runs, labels)):
        colour = colours(index)
        for ax, x in ((axes[0], run.time), (axes[1], run.energy_j)):
            ax.plot(x, run.mean_accuracy, color=colour, linewidth=1.2, label=label)
            ax.plot(x, run.worst_accuracy, color=colour, linewidth=0.8, linestyle=":")
    axes[0].set_xlabel(f"simulated time ({runs[0].time_unit})")
    axes[1].set_xlabel("energy of all devices (J)")
    for ax in axes:
        ax.set_ylabel("accuracy (mean; worst device dotted)")
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=6, loc="lower right")
    fig.tight_layout()
    return save_figure(fig, out_file, dpi=80)
