"""Average validation accuracy against simulated time normalized by ``T_dl`` (journal Fig. 6)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from figures.results import read_run


def plot_accuracy_vs_time(result_dirs: Sequence[str | Path], out_file: str | Path, title: str | None = None) -> Path:
    """One labelled line per run; PNG, or PDF when ``out_file`` ends in .pdf. Written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [read_run(d) for d in result_dirs]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for run in runs:
        ax.plot(run.time, run.mean_accuracy, label=f"{run.label} ({run.summary.get('system', '')})", linewidth=1.6)
    ax.set_xlabel("simulated time / $T_{dl}$")
    ax.set_ylabel("average validation accuracy")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    out_file = Path(out_file)
    fmt = "pdf" if out_file.suffix.lower() == ".pdf" else "png"
    tmp = out_file.with_name(f".{out_file.name}.tmp")
    try:
        fig.savefig(tmp, format=fmt, dpi=130)
        os.replace(tmp, out_file)
    finally:
        plt.close(fig)
        if tmp.exists():
            tmp.unlink()
    return out_file
