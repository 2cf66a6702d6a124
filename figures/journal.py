"""The journal's figures from runs' curves (user-centric FL, V-B to V-D): Fig. 2 and 3
(accuracy against rounds and bits), Fig. 5 (silhouette curves), Fig. 6 (accuracy against time
on three systems, every run re-timed from its recorded plans, not retrained).

Every figure is one IEEE column wide, in PDF and PNG. A run label's several seeds are drawn as
their mean with a shaded min-max band; where the x value (time, bits) differs between seeds,
the x of a point is the seeds' mean at that evaluated round.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from figures.bands import draw_band, integer_x, legend_below, log_x, seed_band
from figures.save import save_figure
from scenarios.records.result_folder import RunCurve
from figures.style import COLUMN_WIDTH_IN, ieee_style

FORMATS = ("pdf", "png")
SCENARIO_STYLE = (("#1f77b4", "o", "-"), ("#d62728", "s", "--"), ("#2ca02c", "^", ":"), ("#9467bd", "D", "-."))


def save(fig, stem: Path) -> list[Path]:
    """``stem``.pdf and ``stem``.png, each written atomically (``figures.save``)."""
    return [save_figure(fig, stem.with_suffix(f".{fmt}"), close=False) for fmt in FORMATS]


def accuracy_panels(curves: Mapping[str, Mapping[str, Sequence[RunCurve]]], stem: Path, x: str = "rounds",
                    x_label: str = "communication round") -> list[Path]:
    """One panel per title (stacked), one band per label; ``curves``: title -> label -> the
    curves of that label's seeds."""
    with ieee_style() as plt:
        fig, axes = plt.subplots(len(curves), 1, figsize=(COLUMN_WIDTH_IN, 1.7 * len(curves) + 1.0),
                                 squeeze=False, layout="constrained")
        axes = axes[:, 0]
        counts = set()
        for ax, (title, runs) in zip(axes, curves.items()):
            for label, seeds in runs.items():
                draw_band(ax, label, seed_band(seeds, x))
                counts.add(len(seeds))
            ax.set_title(title)
            ax.set_ylabel("avg. validation acc.")
            ax.set_xlabel(x_label)
            ax.grid(alpha=0.3)
            if x == "bits":
                log_x(ax)
            elif x == "rounds":
                integer_x(ax)
        legend_below(fig, axes, counts)
        try:
            return save(fig, stem)
        finally:
            plt.close(fig)


def stackoverflow_figure(curves: Mapping[str, Sequence[RunCurve]], stem: Path, title: str) -> list[Path]:
    """Fig. 3: accuracy against rounds (a) and against downlink + uplink bits (b); ``curves``:
    label -> the curves of its seeds."""
    with ieee_style() as plt:
        fig, axes = plt.subplots(2, 1, figsize=(COLUMN_WIDTH_IN, 4.4), layout="constrained")
        for ax, (x, x_label) in zip(axes, (("rounds", "communication round"), ("bits", "bits sent (downlink + uplink)"))):
            for label, seeds in curves.items():
                draw_band(ax, label, seed_band(seeds, x))
            ax.set_ylabel("avg. validation acc.")
            ax.set_xlabel(x_label)
            ax.grid(alpha=0.3)
        axes[0].set_title(f"(a) {title}: accuracy against rounds")
        axes[1].set_title(f"(b) {title}: accuracy against bits")
        integer_x(axes[0])
        log_x(axes[1])
        legend_below(fig, axes, {len(seeds) for seeds in curves.values()})
        try:
            return save(fig, stem)
        finally:
            plt.close(fig)


def silhouette_figure(table: Mapping[str, Mapping[int, Mapping[int, float]]], stem: Path, names: Mapping[str, str],
                      max_k: int = 10) -> list[Path]:
    """Fig. 5: the silhouette score of k-means on W's rows for k = 2..``max_k`` (k = 1 and
    k = m are 0 by convention, not drawn), one line per scenario, mean and band over seeds;
    ``table``: scenario -> seed -> k -> score."""
    with ieee_style() as plt:
        fig, ax = plt.subplots(figsize=(COLUMN_WIDTH_IN, 2.8), layout="constrained")
        for (scenario, seeds), (colour, marker, line) in zip(table.items(), SCENARIO_STYLE * 4):
            ks = sorted(set.intersection(*(set(k for k in curve if 2 <= k <= max_k and k < max(curve)) for curve in seeds.values())))
            scores = np.array([[curve[k] for k in ks] for curve in seeds.values()])
            ax.plot(ks, scores.mean(axis=0), color=colour, marker=marker, linestyle=line, label=names.get(scenario, scenario))
            if len(seeds) > 1:
                ax.fill_between(ks, scores.min(axis=0), scores.max(axis=0), color=colour, alpha=0.18, linewidth=0)
        ax.set_xlabel("number of clusters k")
        ax.set_ylabel("silhouette score")
        ax.grid(alpha=0.3)
        fig.legend(loc="outside lower center", ncol=2, frameon=False)
        try:
            return save(fig, stem)
        finally:
            plt.close(fig)


def systems_figure(curves: Mapping[str, Mapping[str, Sequence[RunCurve]]], stem: Path) -> list[Path]:
    """Fig. 6: one panel per system, accuracy against time / T_dl; ``curves``: system -> label
    -> every seed's run re-timed on it from its recorded plans (``scenarios.reports.retime``)."""
    return accuracy_panels(curves, stem, "time", "simulated time / $T_{dl}$")
