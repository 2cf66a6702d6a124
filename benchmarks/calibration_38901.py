"""TR 38.901 Sec. 7.8.1 large-scale calibration of the 19-site layout against 3GPP's reference
curves (R1-165974), UMi and UMa at 6 GHz: the CDF figure of docs/physical-layer.md and its
percentile table (Markdown, on stdout), with the commit it ran on.

Usage: python3 -m benchmarks.calibration_38901 [--drop 20000] [--seeds 8] [--out docs/img/calibration_38901.png]

Seeds 0..seeds-1 pooled; each the same drop as
``fl-cosim cell umi-3.5ghz --drop N --radio carrier_hz=6e9 --seed S --json``.
"""

from __future__ import annotations

import argparse
import subprocess

import numpy as np

from scenarios.reports.calibration import CALIBRATION_DROP, CALIBRATION_SEEDS, REFERENCE_PERCENTILES, drops, markdown_table, reference


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drop", type=int, default=CALIBRATION_DROP)
    parser.add_argument("--seeds", type=int, default=CALIBRATION_SEEDS)
    parser.add_argument("--out", default="docs/img/calibration_38901.png")
    args = parser.parse_args(argv)
    dropped = drops(args.drop, args.seeds)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"`python3 -m benchmarks.calibration_38901 --drop {args.drop} --seeds {args.seeds}` (commit {commit})\n")
    print(markdown_table(dropped))
    figure(dropped, args.out)


def figure(drops: dict, out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from figures.save import save_figure

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, name, label in ((axes[0], "coupling_loss_db", "coupling loss (dB)"), (axes[1], "geometry_db", "geometry (dB)")):
        for (scenario, d), colour in zip(drops.items(), ("#1f77b4", "#d62728")):
            values = np.sort(d[name])
            ax.plot(values, np.arange(1, values.size + 1) / values.size, color=colour, label=f"{scenario.upper()}, this layout")
            ax.plot(reference(scenario)[name], np.array(REFERENCE_PERCENTILES) / 100, "+--", color=colour,
                    label=f"{scenario.upper()}, 3GPP R1-165974")
        ax.set_xlabel(label)
        ax.set_ylabel("CDF")
        ax.grid(True, alpha=0.3)
    axes[1].legend(loc="lower right", fontsize=8)
    fig.suptitle("TR 38.901 7.8.1 large-scale calibration, 19 sites x 3 sectors, wrap-around, 6 GHz")
    fig.tight_layout()
    save_figure(fig, out)


if __name__ == "__main__":
    main()
