"""The lambda study on one page (journal IV-C and Fig. 6): the silhouette curve, the staircase
k*(lambda), and the time and bits to the target accuracy of each k on each system. One time
panel per time unit (``T_dl`` for the normalized systems, seconds for a physical cell): two
units never share an axis. Over several seeds: the mean with its min-max band (error bars on
the time panels; an open marker where a seed never reached the target and counts at its run's
end). Drawn from the study's JSON object only (what ``lambda-study`` writes)."""

from __future__ import annotations

from pathlib import Path

from figures.save import save_figure
from figures.style import DOUBLE_COLUMN_WIDTH_IN, ieee_style


def plot_lambda_study(study: dict, out_file: str | Path) -> Path:
    """The panels of ``study`` (the study's JSON object) into ``out_file`` (PNG, or PDF by
    suffix), atomically."""
    with ieee_style() as plt:
        return _draw(plt, study, out_file)


TIME_AXES = {"T_dl": "time to target / $T_{dl}$", "s": "time to target (s)"}
UNIT_TITLES = {"T_dl": "time, normalized systems", "s": "time, physical cells"}


def _draw(plt, study: dict, out_file: str | Path) -> Path:
    import matplotlib.ticker

    seeds = study.get("seeds", [study["seed"]])
    units = list(dict.fromkeys(r["time_unit"] for r in study["rows"]))
    fig = plt.figure(figsize=(DOUBLE_COLUMN_WIDTH_IN, 5.4), layout="constrained")
    top, bottom = fig.subfigures(2, 1)
    top_axes, bottom_axes = top.subplots(1, 2), bottom.subplots(1, len(units) + 1, squeeze=False)[0]
    _silhouette(top_axes[0], study, len(seeds))
    _staircase(top_axes[1], study["staircase"])
    ks = sorted({r["k"] for r in study["rows"]})  # the staircase's, or every k trained
    for ax, unit in zip(bottom_axes, units):
        for index, system in enumerate(s for s in study["systems"] if _unit(study, s) == unit):
            rows = sorted((r for r in study["rows"] if r["system"] == system), key=lambda r: r["k"])
            style = {"marker": MARKERS[index % len(MARKERS)], "linestyle": LINES[index % len(LINES)]}
            line = ax.errorbar([r["k"] for r in rows], [r["time_to_target"] for r in rows],
                               yerr=_span(rows, "time") if len(seeds) > 1 else None, capsize=2, label=system, **style)[0]
            censored = [r for r in rows if r["censored"]]
            ax.plot([r["k"] for r in censored], [r["time_to_target"] for r in censored], linestyle="none",
                    marker=style["marker"], markersize=6, markerfacecolor="white", color=line.get_color())
        times = [r["time_to_target"] for r in study["rows"] if r["time_unit"] == unit and r["time_to_target"]]
        if times and max(times) > 5 * min(times):  # systems an order of magnitude apart (rho = 1 and 10): both readable
            ax.set_yscale("log")
        ax.set_ylabel(TIME_AXES.get(unit, f"time to target ({unit})"))
        ax.set_title(UNIT_TITLES.get(unit, f"time to target ({unit})"))
        ax.legend(fontsize=6)
    ax = bottom_axes[-1]
    rows = sorted((r for r in study["rows"] if r["system"] == study["systems"][0]), key=lambda r: r["k"])
    ax.errorbar([r["k"] for r in rows], [r["bits_to_target"] for r in rows],  # the same on every system: one line
                yerr=_span(rows, "bits") if len(seeds) > 1 else None, marker="o", capsize=2)
    ax.set_ylabel("bits to target (down + up)")
    ax.set_title("bits to target, any system")
    for ax in bottom_axes:
        ax.set_xticks(ks)
        ax.set_xlabel("streams k (one training per seed)" if len(seeds) > 1 else "streams k (one training)")
    for ax in (*top_axes, *bottom_axes):
        ax.grid(alpha=0.3)
    top_axes[0].xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    top_axes[1].yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    seed_text = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]}-{seeds[-1]}"
    notes = ([f"band and bars: min-max over {len(seeds)} seeds"] if len(seeds) > 1 else []) + (
        ["open marker: a seed never reached the target (counted at its run's end)"] if any(r["censored"] for r in study["rows"]) else [])
    fig.suptitle(f"which lambda? {study['scenario']}, {seed_text}; target mean accuracy {study['target']}"
                 + "".join("\n" + n for n in ["; ".join(notes)] if n), fontsize=8)
    return save_figure(fig, out_file)


MARKERS = ("o", "s", "^", "D", "v")
LINES = ("-", "--", ":", "-.")


def _unit(study: dict, system: str) -> str:
    return next(r["time_unit"] for r in study["rows"] if r["system"] == system)


def _span(rows: list[dict], key: str) -> list[list[float]]:
    """Error bar lengths from the mean to the min and max over seeds of ``key`` (time or bits)."""
    return [[r[f"{key}_to_target"] - r[f"{key}_min"] for r in rows], [r[f"{key}_max"] - r[f"{key}_to_target"] for r in rows]]


def _silhouette(ax, study: dict, seeds: int) -> None:
    silhouette = dict(sorted((int(k), v) for k, v in study["silhouette"].items()))
    ax.plot(list(silhouette), list(silhouette.values()), marker="o", label="mean" if seeds > 1 else None)
    if seeds > 1:
        curves = [[c[str(k)] for k in silhouette] for c in study["silhouette_seeds"].values()]
        ax.fill_between(list(silhouette), [min(v) for v in zip(*curves)], [max(v) for v in zip(*curves)], alpha=0.2,
                        linewidth=0, label=f"min-max over {seeds} seeds")  # ordered as the mean's ks
        ax.legend(fontsize=6)
    ax.set_xlabel("streams k")
    ax.set_ylabel("silhouette $s_k$ (k-means on W's rows)")
    ax.set_title("silhouette curve")


def _staircase(ax, steps: list[dict]) -> None:
    finite_ends = [s["lambda_to"] for s in steps if s["lambda_to"] is not None]
    right = 1.25 * max(finite_ends) if finite_ends else 1.0
    xs, ys = [], []
    for step in steps:
        xs += [step["lambda_from"], step["lambda_to"] if step["lambda_to"] is not None else right]
        ys += [step["k"], step["k"]]
    ax.plot(xs, ys, drawstyle="steps-post")
    ax.set_xlim(0, right)
    ax.set_xlabel("lambda")
    ax.set_ylabel("k* = argmax$_k$ $s_k$ - lambda k")
    ax.set_title("Algorithm 2's staircase")
