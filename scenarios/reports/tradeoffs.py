"""The communication trade-off studies from result folders: codecs (accuracy against time and
against bits, per system) and scheduling policies (accuracy against time and energy), with one
Markdown table row per run (``figures.tradeoffs`` draws them).

    python -m scenarios.reports.tradeoffs codecs RESULTS_DIR OUT.png
    python -m scenarios.reports.tradeoffs scheduling RESULTS_DIR OUT.png
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

import numpy as np

from netsim.scheduling import jain_index, participation_counts
from scenarios.errors import UsageError
from scenarios.records.result_folder import RunCurve, read_plans, read_run, read_table

TARGET_ACCURACY = 0.75
CODECS = ("none", "qsgd", "topk", "sign", "coded both ways")  # the order of the codecs study's rows


def read_runs(root: str | Path) -> list[RunCurve]:
    return [read_run(folder) for folder in sorted(Path(root).iterdir()) if (folder / "summary.json").exists()]


def fairness(run: RunCurve) -> tuple[int, float | None, int, float | None]:
    """(devices never scheduled, Jain's index of the scheduled counts, devices never heard
    from, Jain's index of the arrived uploads), from ``plans.jsonl`` and ``trace.csv`` (an
    arrived upload is an ``uplink`` event); an index is None where its counts are all 0
    (``netsim.scheduling.jain_index``)."""
    uploads: dict[int, list[int]] = {}
    for row in read_table(run.folder, "trace.csv"):
        if row["kind"] == "uplink":
            uploads.setdefault(int(row["round"]), []).append(int(row["entity"]))
    rounds = [(r, plan.participants if plan else (), uploads.get(r, ())) for r, plan in enumerate(read_plans(run.folder))]
    scheduled, arrived = participation_counts(rounds, run.config["num_devices"])
    return int(np.sum(scheduled == 0)), jain_index(scheduled), int(np.sum(arrived == 0)), jain_index(arrived)


def run_label(run: RunCurve) -> str:
    """The run's label (which names its deadline where it has one), its scheduler named (``random`` too)."""
    return run.label if "scheduler" in run.config.get("communication", {}) else run.label + " sched=random"


def time_to(run: RunCurve, target: float = TARGET_ACCURACY) -> float | None:
    """First evaluated time at which the mean accuracy reaches ``target`` (None: never)."""
    for time, accuracy in zip(run.time, run.mean_accuracy):
        if accuracy >= target:
            return time
    return None


def accuracy_at(run: RunCurve, time: float) -> float | None:
    """Mean accuracy of the last evaluation at or before ``time`` (None: none by then, as when
    a run's set-up round outlasts the quickest run)."""
    before = [a for t, a in zip(run.time, run.mean_accuracy) if t <= time]
    return before[-1] if before else None


def table(runs: Sequence[RunCurve], with_fairness: bool = False) -> str:
    """One Markdown row per run: final mean and worst accuracy, the mean accuracy when the
    quickest run of its system ends (equal time), time to the target, bits, energy (cells) and,
    ``with_fairness``, the devices never scheduled and never heard from and Jain's index of each."""
    quickest = {}
    for run in runs:
        system = run.summary["system"]
        quickest[system] = min(quickest.get(system, np.inf), run.end_time)
    header = ["run", "system", "mean acc", "worst acc", "acc at equal time", f"time to {TARGET_ACCURACY}", "time",
              "uplink Mbit", "downlink Mbit", "energy J"] + (["never scheduled", "Jain scheduled", "never arrived", "Jain arrived"]
                                   if with_fairness else [])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for run in runs:
        s = run.summary
        reach = time_to(run)
        deadline = run.config["system"].get("deadline")
        equal = quickest[s["system"]]
        at = accuracy_at(run, equal)
        cells = [run_label(run) if with_fairness else run.label, s["system"] + ("" if deadline is None else f", deadline {deadline:g}"),
                 f"{s['final_mean_accuracy']:.3f}", f"{s['final_worst_accuracy']:.3f}", ("-" if at is None else f"{at:.3f}") + f" at {equal:.4g}",
                 "-" if reach is None else f"{reach:.4g}", f"{run.end_time:.4g} {run.time_unit}",
                 f"{s['uplink_bits'] / 1e6:.2f}", f"{s['downlink_bits'] / 1e6:.2f}",
                 f"{s['energy_j']:.4g}" if "energy_j" in s else "-"]
        if with_fairness:
            never, jain, unheard, jain_arrived = fairness(run)
            cells += [str(never), jain_cell(jain, "nobody scheduled"), str(unheard), jain_cell(jain_arrived, "nothing arrived")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def jain_cell(value: float | None, why: str) -> str:
    """A Jain index's table cell: ``-`` with the reason where it is undefined (all counts 0)."""
    return f"- ({why})" if value is None else f"{value:.3f}"


def codec(run: RunCurve) -> str:
    """The uplink codec's name, or ``coded both ways`` when the downlink is coded too."""
    codecs = run.config.get("communication", {})
    if "downlink_codec" in codecs:
        return "coded both ways"
    return codecs.get("uplink_codec", "none").split(":")[0]


def main(argv: Sequence[str]) -> int:
    from figures.tradeoffs import codecs_figure, scheduling_figure

    if len(argv) != 3 or argv[0] not in ("codecs", "scheduling"):
        print("usage: python -m scenarios.reports.tradeoffs codecs|scheduling RESULTS_DIR OUT.png", file=sys.stderr)
        return 2
    try:
        runs = read_runs(argv[1])
    except (OSError, UsageError) as error:
        print(f"error: {getattr(error, 'strerror', None) or error}", file=sys.stderr)
        return 2
    if argv[0] == "codecs":
        runs.sort(key=lambda r: (r.summary["system"], r.config["algorithm"], CODECS.index(codec(r))))
        codecs_figure(runs, [codec(r) for r in runs], argv[2])
    else:
        runs.sort(key=lambda r: (r.config["system"].get("deadline") is not None, r.label))
        scheduling_figure(runs, [run_label(r) for r in runs], argv[2])
    print(table(runs, with_fairness=argv[0] == "scheduling"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
