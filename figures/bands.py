"""Runs of one configuration over several seeds drawn as one line: the mean over the seeds at
their common evaluated rounds, with a shaded min-max band (every seed inside it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from scenarios.records.result_folder import ResultError, RunCurve, check_seeds
from figures.style import algorithm_style

BAND = "min-max over seeds"
X_AXES = {  # the x axes a curve offers -> axis label (time's depends on the unit)
    "time": None,
    "bits": "bits (down + up)",
    "downlink-bits": "downlink bits",
    "uplink-bits": "uplink bits",
    "energy": "energy, all devices (J)",
    "rounds": "communication round",
}
TIME_LABELS = {"T_dl": "simulated time / $T_{dl}$", "s": "simulated time (s)"}


@dataclass(frozen=True)
class Band:
    """Seeds of one label at their common evaluated rounds: mean x, mean, min and max y."""

    x: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    seeds: int


def x_values(curve: RunCurve, x: str) -> np.ndarray:
    """The curve's x values on axis ``x`` (one of ``X_AXES``) at its evaluated rounds."""
    if x == "rounds":
        return np.array(curve.rounds, dtype=float)
    if x == "time":
        return np.array(curve.time)
    if x == "bits":
        return np.array(curve.downlink_bits) + np.array(curve.uplink_bits)
    if x == "downlink-bits":
        return np.array(curve.downlink_bits)
    if x == "uplink-bits":
        return np.array(curve.uplink_bits)
    if x == "energy":
        if curve.energy_j is None:
            raise ResultError(f"{curve.folder or curve.label} has no energy: it did not run on a physical cell")
        return np.array(curve.energy_j)
    raise ValueError(f"unknown x axis {x!r}")


def seed_band(curves: Sequence[RunCurve], x: str = "rounds", y: str = "mean_accuracy") -> Band:
    """``x``: one of ``X_AXES``; ``y``: a curve field. Where x differs between seeds (time, bits),
    a point's x is the seeds' mean at that evaluated round. The curves differ in the seed alone
    (``check_seeds``: one line otherwise)."""
    check_seeds(curves[0].label, curves)
    common = sorted(set.intersection(*(set(c.rounds) for c in curves)))
    if not common:
        raise ResultError(f"runs of {curves[0].label} share no evaluated round")
    xs, ys = [], []
    for c in curves:
        at = {r: i for i, r in enumerate(c.rounds)}
        index = [at[r] for r in common]
        xs.append(x_values(c, x)[index])
        ys.append(np.array(getattr(c, y))[index])
    ys = np.stack(ys)
    return Band(np.mean(xs, axis=0), ys.mean(axis=0), ys.min(axis=0), ys.max(axis=0), len(curves))


def draw_band(ax, label: str, band: Band) -> None:
    """The mean line in the label's colour, marker and line style, with markers on every
    ``every``-th point (at most about 8, every other point at least from 4 points on) starting
    at the line's place in the panel, so lines that coincide show alternating markers; markers
    hollow, so one drawn over another leaves it visible; and the band."""
    style = algorithm_style(label)
    every = 1 if len(band.x) < 4 else max(2, -(-len(band.x) // 8))
    ax.plot(band.x, band.mean, label=label, markevery=(len(ax.get_lines()) % every, every), markerfacecolor="none", **style)
    if band.seeds > 1:
        ax.fill_between(band.x, band.low, band.high, color=style["color"], alpha=0.18, linewidth=0)


def log_x(ax) -> None:
    """A log x axis labelled at its decades only (minor labels overlap at column width)."""
    import matplotlib.ticker

    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def integer_x(ax) -> None:
    """Ticks on whole numbers only (communication rounds)."""
    import matplotlib.ticker

    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))


def band_label(counts: set[int]) -> str | None:
    """The legend entry of the shaded bands: min-max over how many seeds (None: no band)."""
    counts = {n for n in counts if n > 1}
    if not counts:
        return None
    many = f"{min(counts)}" if len(counts) == 1 else f"{min(counts)}-{max(counts)}"
    return f"shaded: {BAND.replace('seeds', many + ' seeds')}"


def coinciding(axes) -> dict[str, str]:
    """Label -> the earlier label whose line it lies on in every panel that has both (a line
    hidden under another is named in the legend, never silently lost)."""
    lines: dict[str, list] = {}
    for ax in axes:
        for line in ax.get_lines():
            lines.setdefault(line.get_label(), []).append((ax, line))
    labels, same = list(lines), {}
    for later_index, later in enumerate(labels):
        for earlier in labels[:later_index]:
            pairs = [(a, b) for ax, a in lines[earlier] for other, b in lines[later] if ax is other]
            if pairs and all(np.array_equal(a.get_xdata(), b.get_xdata()) and np.array_equal(a.get_ydata(), b.get_ydata())
                             for a, b in pairs):
                same[later] = same.get(earlier, earlier)
                break
    return same


def legend_below(fig, axes, counts: set[int], columns: int = 2) -> None:
    """One legend under the panels: every line once (first seen), and what the bands are
    (``counts``: the seed counts of the lines drawn)."""
    from matplotlib.patches import Patch

    handles: dict = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    same = coinciding(axes)
    handles = {f"{label} (= {same[label]})" if label in same else label: handle for label, handle in handles.items()}
    band = band_label(counts)
    if band:
        handles[band] = Patch(color="0.6", alpha=0.4, linewidth=0)
    fit_legend(fig, list(handles.values()), list(handles), columns)


def fit_legend(fig, handles: list, labels: list[str], columns: int):
    """``fig.legend`` under the panels, as wide as the figure at most: fewer columns while it is
    wider (down to one), then each label wrapped onto lines of fewer characters (a label as long
    as a configuration's differences would otherwise be clipped at the column's edge)."""
    import textwrap

    renderer = fig.canvas.get_renderer()
    limit = fig.bbox.width

    def place(texts: list[str], ncol: int):
        return fig.legend(handles, texts, loc="outside lower center", ncol=ncol, frameon=False)

    legend = place(labels, columns)
    while legend.get_window_extent(renderer).width > limit and columns > 1:
        legend.remove()
        columns -= 1
        legend = place(labels, columns)
    width = max(map(len, labels), default=0)
    while legend.get_window_extent(renderer).width > limit and width > 12:
        width = max(12, int(width * 0.85))
        legend.remove()
        legend = place([textwrap.fill(label, width, break_long_words=False) for label in labels], columns)
    return legend
