"""The lambda study on one page (journal IV-C and Fig. 6): the silhouette curve, the staircase
k*(lambda), and the time and bits to the target accuracy of each k on each system. Drawn from
the study's JSON file only."""

from __future__ import annotations

import json
from pathlib import Path

from figures.save import save_figure
from figures.style import DOUBLE_COLUMN_WIDTH_IN, ieee_style


def plot_lambda_study(study_file: str | Path, out_file: str | Path) -> Path:
    """Four panels from ``study_file`` into ``out_file`` (PNG, or PDF by suffix), atomically."""
    study = json.loads(Path(study_file).read_text())
    with ieee_style() as plt:
        return _draw(plt, study, out_file)


def _draw(plt, study: dict, out_file: str | Path) -> Path:
    import matplotlib.ticker

    silhouette = dict(sorted((int(k), v) for k, v in study["silhouette"].items()))
    steps = study["staircase"]
    fig, axes = plt.subplots(2, 2, figsize=(DOUBLE_COLUMN_WIDTH_IN, 5.2), layout="constrained")
    ax = axes[0][0]
    ax.plot(list(silhouette), list(silhouette.values()), marker="o")
    ax.set_xlabel("streams k")
    ax.set_ylabel("silhouette $s_k$ of k-means on W's rows")
    ax.set_title("silhouette curve")
    ax = axes[0][1]
    finite_ends = [s["lambda_to"] for s in steps if s["lambda_to"] is not None]
    right = 1.25 * max(finite_ends) if finite_ends else 1.0
    xs, ys = [], []
    for step in steps:
        xs += [step["lambda_from"], step["lambda_to"] if step["lambda_to"] is not None else right]
        ys += [step["k"], step["k"]]
    ax.plot(xs, ys, drawstyle="steps-post")
    ax.set_xlim(0, right)
    ax.set_xlabel("lambda")
    ax.set_ylabel("k* = argmax_k $s_k$ - lambda k")
    ax.set_title("Algorithm 2's staircase")
    target = study["target"]
    for ax, key, label in ((axes[1][0], "time_to_target", "time to target / $T_{dl}$"),
                           (axes[1][1], "bits_to_target", "bits to target (down + up)")):
        for system in study["systems"]:
            rows = sorted((r for r in study["rows"] if r["system"] == system and r[key] is not None), key=lambda r: r["k"])
            ax.plot([r["k"] for r in rows], [r[key] for r in rows], marker="o", label=system)
            if key == "bits_to_target":
                break  # the same on every system: one line
        ax.set_xticks(sorted({step["k"] for step in steps}))
        ax.set_xlabel("streams k (one training each)")
        ax.set_ylabel(label)
        ax.set_title(f"{label.split(' /')[0]} (target mean accuracy {target})")
        ax.grid(alpha=0.3)
        if key == "time_to_target":
            ax.legend()
    for ax in axes[0]:
        ax.grid(alpha=0.3)
    axes[0][0].xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    axes[0][1].yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    fig.suptitle(f"which lambda? {study['scenario']}, seed {study['seed']}")
    return save_figure(fig, out_file)
