"""The communication trade-off studies from result folders: codecs (accuracy against time and
against bits, per system) and scheduling policies (accuracy against time and energy), with one
Markdown table row per run.

    python -m figures.tradeoffs codecs RESULTS_DIR OUT.png
    python -m figures.tradeoffs scheduling RESULTS_DIR OUT.png
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

import numpy as np

from scenarios.records.result_folder import RunCurve, read_plans, read_run, read_table
from figures.save import save_figure
from netsim.scheduling import jain_index, participation_counts

TARGET_ACCURACY = 0.75
CODEC_COLOURS = {"none": "#000000", "qsgd": "#1f77b4", "topk": "#d62728", "sign": "#2ca02c", "coded both ways": "#9467bd"}


def read_runs(root: str | Path) -> list[RunCurve]:
    return [read_run(folder) for folder in sorted(Path(root).iterdir()) if (folder / "summary.json").exists()]


def fairness(run: RunCurve) -> tuple[int, float, int, float]:
    """(devices never scheduled, Jain's index of the scheduled counts, devices never heard
    from, Jain's index of the arrived uploads), from ``plans.jsonl`` and ``trace.csv`` (an
    arrived upload is an ``uplink`` event)."""
    uploads: dict[int, list[int]] = {}
    for row in read_table(run.folder, "trace.csv"):
        if row["kind"] == "uplink":
            uploads.setdefault(int(row["round"]), []).append(int(row["entity"]))
    rounds = [(r["round"], r["plan"]["participants"] if r["plan"] else (), uploads.get(r["round"], ()))
              for r in read_plans(run.folder)]
    scheduled, arrived = participation_counts(rounds, run.config["num_devices"])
    return int(np.sum(scheduled == 0)), jain_index(scheduled), int(np.sum(arrived == 0)), jain_index(arrived)


def run_label(run: RunCurve) -> str:
    """The run's label, its scheduler named (``random`` too) and its deadline where it has one."""
    deadline = run.config["system"].get("deadline")
    label = run.label if "scheduler" in run.config.get("communication", {}) else run.label + " sched=random"
    return label + ("" if deadline is None else f", deadline {deadline:g} {run.time_unit}")


def time_to(run: RunCurve, target: float = TARGET_ACCURACY) -> float | None:
    """First evaluated time at which the mean accuracy reaches ``target`` (None: never)."""
    for time, accuracy in zip(run.time, run.mean_accuracy):
        if accuracy >= target:
            return time
    return None


def accuracy_at(run: RunCurve, time: float) -> float:
    """Mean accuracy of the last evaluation at or before ``time``."""
    return [a for t, a in zip(run.time, run.mean_accuracy) if t <= time][-1]


def table(runs: Sequence[RunCurve], with_fairness: bool = False) -> str:
    """One Markdown row per run: final mean and worst accuracy, the mean accuracy when the
    quickest run of its system ends (equal time), time to the target, bits, energy (cells) and,
    ``with_fairness``, the devices never scheduled and never heard from and Jain's index of each."""
    quickest = {}
    for run in runs:
        system = run.summary["system"]
        quickest[system] = min(quickest.get(system, np.inf), run.summary["simulated_time"])
    header = ["run", "system", "mean acc", "worst acc", "acc at equal time", f"time to {TARGET_ACCURACY}", "time",
              "uplink Mbit", "downlink Mbit", "energy J"] + (["never scheduled", "Jain scheduled", "never arrived", "Jain arrived"]
                                   if with_fairness else [])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for run in runs:
        s = run.summary
        reach = time_to(run)
        deadline = run.config["system"].get("deadline")
        equal = quickest[s["system"]]
        cells = [run_label(run) if with_fairness else run.label, s["system"] + ("" if deadline is None else f", deadline {deadline:g}"),
                 f"{s['final_mean_accuracy']:.3f}", f"{s['final_worst_accuracy']:.3f}", f"{accuracy_at(run, equal):.3f} at {equal:.4g}",
                 "-" if reach is None else f"{reach:.4g}", f"{s['simulated_time']:.4g} {run.time_unit}",
                 f"{s['uplink_bits'] / 1e6:.2f}", f"{s['downlink_bits'] / 1e6:.2f}",
                 f"{s['energy_j']:.4g}" if "energy_j" in s else "-"]
        if with_fairness:
            never, jain, unheard, jain_arrived = fairness(run)
            cells += [str(never), f"{jain:.3f}", str(unheard), f"{jain_arrived:.3f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _codec(run: RunCurve) -> str:
    """The uplink codec's name, or ``coded both ways`` when the downlink is coded too."""
    codecs = run.config.get("communication", {})
    if "downlink_codec" in codecs:
        return "coded both ways"
    return codecs.get("uplink_codec", "none").split(":")[0]


def codecs_figure(runs: Sequence[RunCurve], out_file: str | Path) -> Path:
    """Rows: systems; columns: accuracy against time and against bits (down + up); colour: the
    uplink codec; solid FedAvg, dashed user-centric."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    systems = sorted({run.summary["system"] for run in runs})
    fig, axes = plt.subplots(len(systems), 2, figsize=(9, 3.2 * len(systems)), squeeze=False)
    for row, system in enumerate(systems):
        for run in (r for r in runs if r.summary["system"] == system):
            style = {"color": CODEC_COLOURS[_codec(run)], "linestyle": "-" if run.config["algorithm"] == "fedavg" else "--",
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


def scheduling_figure(runs: Sequence[RunCurve], out_file: str | Path) -> Path:
    """Accuracy (mean solid, worst device dotted) against time and against the devices' energy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    colours = plt.get_cmap("tab10")
    for index, run in enumerate(runs):
        colour = colours(index)
        for ax, x in ((axes[0], run.time), (axes[1], run.energy_j)):
            ax.plot(x, run.mean_accuracy, color=colour, linewidth=1.2, label=run_label(run))
            ax.plot(x, run.worst_accuracy, color=colour, linewidth=0.8, linestyle=":")
    axes[0].set_xlabel(f"simulated time ({runs[0].time_unit})")
    axes[1].set_xlabel("energy of all devices (J)")
    for ax in axes:
        ax.set_ylabel("accuracy (mean; worst device dotted)")
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=6, loc="lower right")
    fig.tight_layout()
    return save_figure(fig, out_file, dpi=80)


def main(argv: Sequence[str]) -> int:
    if len(argv) != 3 or argv[0] not in ("codecs", "scheduling"):
        print("usage: python -m figures.tradeoffs codecs|scheduling RESULTS_DIR OUT.png", file=sys.stderr)
        return 2
    runs = read_runs(argv[1])
    if argv[0] == "codecs":
        runs.sort(key=lambda r: (r.summary["system"], r.config["algorithm"], list(CODEC_COLOURS).index(_codec(r))))
        codecs_figure(runs, argv[2])
    else:
        runs.sort(key=lambda r: (r.config["system"].get("deadline") is not None, r.label))
        scheduling_figure(runs, argv[2])
    print(table(runs, with_fairness=argv[0] == "scheduling"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
