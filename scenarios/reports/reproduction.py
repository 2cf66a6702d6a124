"""The report folder of ``fl-cosim reproduce``: Tables I and II beside the paper's published
numbers (Markdown and CSV), Fig. 2, 3, 5, 6 (PDF and PNG), the silhouette curves and the list
of runs behind them, and ``report.md`` saying what ran, where, and what stands in for what."""

from __future__ import annotations

import csv
import os
import platform
from pathlib import Path

import numpy as np

from scenarios.records.result_folder import read_run
from scenarios.records.health import JUDGED_EVALUATIONS
from scenarios.reports.journal_numbers import PAPER_ALGORITHMS, PAPER_SCENARIOS, TABLE_I, TABLE_II_COLUMNS, TABLE_II_PROPOSED, paper_table_ii
from scenarios.definitions.registry import get_scenario
from scenarios.execution.reproduce import TABLE_SCENARIOS, TEXT_SCENARIO, TIME_LABELS, TIME_SCENARIO, TIME_SYSTEMS, Outcome
from scenarios.records.atomic import atomic_write_text, csv_text
from scenarios.reports.over_seeds import SPREAD, mean_std, pm

TABLE_II_LABELS = ("ditto", "fedavg", "oracle", "cfl", "fedfomo", "pfedme", "user-centric k=m", "user-centric k=4")
FIGURES = {
    "fig2_accuracy_vs_rounds": "Fig. 2: average validation accuracy against rounds, one panel per scenario",
    "fig3_stackoverflow": "Fig. 3: Stack Overflow, accuracy against rounds (a) and against bits sent (b, log scale: "
                          "points with no bits sent yet, Local's and FedAvg's round 0, are not drawn there)",
    "fig5_silhouette": "Fig. 5: silhouette score of k-means on the eq. 9 weight rows after the set-up round",
    "fig6_accuracy_vs_time": "Fig. 6: accuracy against time / T_dl on the three systems (mnist-rotation runs re-timed, not retrained)",
}


def _final(folders: list[str], key: str) -> np.ndarray:
    """Per seed, the run's final ``key`` accuracy in per cent (NaN is refused, not averaged)."""
    values = np.array([100 * float(read_run(f).summary[key]) for f in folders])
    if not np.all(np.isfinite(values)):
        raise ValueError(f"non-finite {key} in {folders}")
    return values


def _flag_count(folders: list[str] | None) -> int:
    """How many of the runs carry a training-failure sign (``scenarios.records.health``)."""
    return sum(1 for f in folders or () if read_run(f).summary.get("training_flags"))


def _flag_mark(folders: list[str] | None) -> str:
    flagged = _flag_count(folders)
    return f" **flagged {flagged}/{len(folders)}**" if flagged else ""


def flagged_runs(outcome: Outcome) -> str:
    """A Markdown list of every flagged run and its signs, or a line saying there is none."""
    lines = []
    for (s, label), folders in outcome.folders.items():
        for seed, folder in enumerate(folders):
            for flag in read_run(folder).summary.get("training_flags") or ():
                lines.append(f"- `{s}`, {label}, seed {seed} (`{Path(folder).name}`): {flag}")
    return "\n".join(lines) if lines else (
        f"None (a run with {JUDGED_EVALUATIONS} evaluations after the set-up round is judged on its last {JUDGED_EVALUATIONS}: at "
        "chance, collapsed below half its best gain over chance, its loss above the untrained model's; or diverged).")


def _num(value: float | None, digits: int = 1) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _ours(values: np.ndarray | None) -> str:
    if values is None:
        return "-"
    return pm(mean_std(values.tolist()), ".1f")


def _paper(pair: tuple[float, float] | None) -> str:
    return "-" if pair is None else f"{pair[0]:.1f} (±{pair[1]:.1f})"


def table_i(outcome: Outcome) -> tuple[str, str]:
    """(Markdown, CSV) of Table I: mean per-device accuracy, ours beside the paper's."""
    header = ["algorithm (paper's name)"]
    for s in TABLE_SCENARIOS:
        header += [f"{s}: ours", "paper (EMNIST)" if s.startswith("mnist") else "paper"]
    rows, lines = [], []
    for label, paper in TABLE_I.items():
        cells = [f"{label} ({PAPER_ALGORITHMS[label]})"]
        for s in TABLE_SCENARIOS:
            folders = outcome.folders.get((s, label))
            values = _final(folders, "final_mean_accuracy") if folders else None
            cells += [_ours(values) + _flag_mark(folders), _paper(paper[s])]
            rows.append([s, label, PAPER_ALGORITHMS[label], len(folders) if folders else 0, _flag_count(folders), outcome.plan.rounds[s],
                         _num(values.mean() if values is not None else None, 2),
                         _num(mean_std(values.tolist())[1] if values is not None else None, 2),
                         _num(paper[s][0] if paper[s] else None), _num(paper[s][1] if paper[s] else None)])
        lines.append(cells)
    csv = csv_text(["scenario", "algorithm", "paper_algorithm", "seeds", "flagged_runs", "rounds", "mean_accuracy_pct", "std_over_seeds_pct",
                    "paper_mean_accuracy_pct", "paper_spread_pct"], rows)
    return _markdown(header, lines), csv


def table_ii(outcome: Outcome) -> tuple[str, str]:
    """(Markdown, CSV) of Table II: worst-device accuracy, ours / the paper's."""
    header = ["scenario"] + [f"{label}: ours / paper" for label in TABLE_II_LABELS]
    rows, lines = [], []
    for s in TABLE_SCENARIOS:
        cells = [s]
        proposed, annotation = TABLE_II_PROPOSED[s]
        for label in TABLE_II_LABELS:
            folders = outcome.folders.get((s, label))
            values = _final(folders, "final_worst_accuracy") if folders else None
            paper = paper_table_ii(s, label)
            note = f" ({annotation})" if label == proposed else ""
            cells.append(f"{_ours(values)}{_flag_mark(folders)} / {'-' if paper is None else f'{paper:.1f}'}{note}")
            column = "Proposed" if label == proposed else PAPER_ALGORITHMS.get(label, label)
            rows.append([s, label, column if paper is not None else "", len(folders) if folders else 0, _flag_count(folders),
                         outcome.plan.rounds[s],
                         _num(values.mean() if values is not None else None, 2),
                         _num(mean_std(values.tolist())[1] if values is not None else None, 2), _num(paper)])
        lines.append(cells)
    csv = csv_text(["scenario", "algorithm", "paper_column", "seeds", "flagged_runs", "rounds", "worst_accuracy_pct", "std_over_seeds_pct",
                    "paper_worst_accuracy_pct"], rows)
    return _markdown(header, lines), csv


def _markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows]) + "\n"


def silhouette_csv(outcome: Outcome) -> str:
    rows = [[s, seed, k, repr(float(score))]
            for s, seeds in outcome.silhouette.items() for seed, curve in sorted(seeds.items()) for k, score in sorted(curve.items())]
    return csv_text(["scenario", "seed", "k", "silhouette"], rows)


def runs_csv(outcome: Outcome) -> str:
    rows = [[s, label, seed, Path(folder).name] for (s, label), folders in outcome.folders.items()
            for seed, folder in enumerate(folders)]
    return csv_text(["scenario", "label", "seed", "result_folder"], rows)


def merged_timings(outcome: Outcome, out: Path) -> dict[str, tuple[float, float]]:
    """Folder name -> (wall s, CPU s) of every run of the report: measured now for the runs run
    now, else as an earlier report in ``out`` recorded them (reused runs cost nothing now)."""
    old: dict[str, tuple[float, float]] = {}
    try:
        with open(out / "timings.csv", newline="") as handle:
            for row in csv.DictReader(handle):
                old[row["result_folder"]] = (float(row["wall_s"]), float(row["cpu_s"]))
    except (OSError, ValueError, KeyError):
        old = {}
    names = [Path(f).name for folders in outcome.folders.values() for f in folders]
    merged = {name: outcome.timings.get(name, old.get(name)) for name in names}
    return {name: t for name, t in merged.items() if t is not None}


def timings_csv(timings: dict[str, tuple[float, float]]) -> str:
    return csv_text(["result_folder", "wall_s", "cpu_s"], [[n, f"{w:.1f}", f"{c:.1f}"] for n, (w, c) in timings.items()])


def timings_summary(outcome: Outcome, timings: dict[str, tuple[float, float]]) -> str:
    """Per scenario: the runs' summed CPU time and the longest run's wall time."""
    lines = ["| scenario | runs timed | CPU time, summed | longest run (wall) |", "|---|---|---|---|"]
    for s in outcome.plan.rounds:
        names = [Path(f).name for (scenario, _), folders in outcome.folders.items() if scenario == s for f in folders]
        timed = [timings[n] for n in names if n in timings]
        cpu = sum(c for _, c in timed)
        wall = max((w for w, _ in timed), default=0.0)
        lines.append(f"| {s} | {len(timed)} of {len(names)} | {cpu / 60:.1f} min | {wall / 60:.1f} min |")
    return "\n".join(lines)


def machine() -> str:
    """CPU model, cores, OS, Python and torch versions of this machine."""
    import torch

    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}, torch {torch.__version__}")


def write_figures(outcome: Outcome, out: Path) -> list[Path]:
    """Fig. 2, 3, 5 and 6 from the outcome's folders (Fig. 6: every run re-timed on each system)."""
    from figures.journal import accuracy_panels, silhouette_figure, stackoverflow_figure, systems_figure
    from scenarios.definitions.systems import get_system
    from scenarios.reports.retime import retimed_curve

    def folders(scenario: str) -> dict[str, list[str]]:
        return {label: f for (s, label), f in outcome.folders.items() if s == scenario}

    def curves(runs: dict[str, list[str]]) -> dict[str, list]:
        return {label: [read_run(f) for f in seeds] for label, seeds in runs.items()}

    devices = {s: read_run(outcome.folders[(s, "fedavg")][0]).config["num_devices"] for s in TABLE_SCENARIOS}
    panels = {f"({'abc'[i]}) {s}, m = {devices[s]}": curves(folders(s)) for i, s in enumerate(TABLE_SCENARIOS)}
    written = accuracy_panels(panels, out / "fig2_accuracy_vs_rounds")
    written += stackoverflow_figure(curves(folders(TEXT_SCENARIO)), out / "fig3_stackoverflow", TEXT_SCENARIO)
    table = {s: dict(sorted(seeds.items())) for s, seeds in outcome.silhouette.items()}  # in silhouette.csv's order
    written += silhouette_figure(table, out / "fig5_silhouette", {s: s for s in TABLE_SCENARIOS})
    rotation = {label: f for label, f in folders(TIME_SCENARIO).items() if label in TIME_LABELS}
    systems = {name: get_system(name) for name in TIME_SYSTEMS}
    retimed = {name: {label: [retimed_curve(f, system) for f in seeds] for label, seeds in rotation.items()}
               for name, system in systems.items()}
    written += systems_figure(retimed, out / "fig6_accuracy_vs_time")
    return written


def silhouette_summary(outcome: Outcome, max_k: int = 10) -> str:
    lines = []
    for s, seeds in outcome.silhouette.items():
        ks = [k for k in range(2, max_k + 1) if all(k in c and k < max(c) for c in seeds.values())]
        mean = {k: float(np.mean([c[k] for c in seeds.values()])) for k in ks}
        best = max(ks, key=lambda k: (mean[k], -k))
        curve = ", ".join(f"{mean[k]:.3f}" for k in ks)
        lines.append(f"- {s}: s_2..s_{ks[-1]} = {curve}; maximum at k = {best}")
    return "\n".join(lines)


def settings_summary(outcome: Outcome) -> str:
    """The training settings and user-centric options each scenario's runs recorded."""
    lines = []
    for s in (*TABLE_SCENARIOS, TEXT_SCENARIO):
        config = read_run(outcome.folders[(s, "user-centric k=m")][0]).config
        t = config["training"]
        options = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                            for k, v in config["algorithm_options"].items() if k != "streams")
        lines.append(f"- {s} (v{config['scenario']['version']}): {config['num_devices']} devices, "
                     f"{config['model']['name']} ({config['model']['bits'] / 32:.0f} parameters); training: {t['optimizer']} "
                     f"lr {t['lr']}" + (f" momentum {t['momentum']}" if t["optimizer"] == "sgd" else "")
                     + f", batch {t['batch_size']}, E = {t['epochs']}, init {t['init']}; user-centric: {options}")
    return "\n".join(lines)


def report_markdown(outcome: Outcome, table1_md: str, table2_md: str, command: str, wall_s: float, load: str,
                    timings: dict[str, tuple[float, float]]) -> str:
    plan = outcome.plan
    scale = plan.scale
    every = {s: "every round" if e == 1 else f"every {e} rounds" for s, e in plan.evaluate_every.items()}
    rounds = "\n".join(f"  - `{s}`: {plan.rounds[s]} of its {plan.scenario_rounds[s]} rounds, evaluated {every[s]}"
                       for s in plan.rounds)
    descriptions = "\n".join(f"  - `{s}`: {get_scenario(s).description}" for s in plan.rounds)
    figures = "\n\n".join(f"![{caption}]({stem}.png)\n\n*{caption}.* (PDF beside it: `{stem}.pdf`.)"
                          for stem, caption in FIGURES.items())
    spread = (f"Ours: mean over seeds (± the {SPREAD})" if plan.seeds > 1
              else "Ours: one seed, so no spread")
    participation = ("every device trains in every round" if scale.participation is None else
                     f"in each round a random {scale.participation:.0%} of the devices train (this scale's shortcut; "
                     "the set-up round and every evaluation take all devices)")
    return f"""# Reproduction of the journal's experiments (user-centric FL, section V)

Made by `{command}`. Scale **{scale.name}**: {scale.description}.

## What ran

- Seeds: {plan.seeds} (0..{plan.seeds - 1}); the paper averages 5 experiments.
- Rounds (the scenarios' defaults are the registry's; the paper does not state its round
  counts for the image scenarios):
{rounds}
- Participation: {participation}.
- Network: every run trains once on `wireless-slow-ul`; Fig. 6 re-times the recorded plans on
  the three systems (the learning does not depend on the network: no deadline, and which
  devices train is drawn by the learner, not the network).
- Runs: {outcome.ran + outcome.reused} ({outcome.ran} run now, {outcome.reused} reused from earlier),
  plus the user-centric set-up per scenario and seed for Fig. 5. Wall time of this command:
  {wall_s:.0f} s ({wall_s / 60:.1f} min).
- Machine: {machine()}; load average at the start {load} (the machine is shared, so wall
  times depend on what else ran).

Time the runs took when they ran (`timings.csv`; one torch thread per run; CPU time is what
the runs need, wall time what they got on the shared machine):

{timings_summary(outcome, timings)}

Training settings and user-centric options, as the runs recorded them (`config.json`):

{settings_summary(outcome)}

## What stands in for what

- **MNIST stands in for EMNIST** (where EMNIST is not in the data folder): 10 classes instead of 62 and
  fewer images. Our `mnist-label-shift` and `mnist-rotation` face the paper's EMNIST columns,
  so those numbers are not directly comparable (MNIST's 10 digits are an easier task).
- The scenarios, as the registry describes them:
{descriptions}
- The paper's Table II "Proposed" is k = 20 (= m) on label shift and k = 4 on the other two;
  we report both k = m and k = 4 and put the paper's number beside the matching one.
- The paper's spread in Table I (±) is not defined there; {spread.lower()}.
- Fig. 3 follows V-B: user-centric with k = m and with 16 streams against the baselines.

## Table I: average accuracy (%)

{spread}. Paper: Table I of the journal, EMNIST columns facing our MNIST rows.

{table1_md}
## Table II: worst-device accuracy (%)

Ours (mean over seeds of the worst device's final accuracy) / the paper's (averaged over 5 experiments).

{table2_md}
Plain numbers: `table1.csv`, `table2.csv`; the runs behind every cell: `runs.csv`.

## Runs flagged for training failure

A cell marked **flagged** holds runs that failed to train (`training_flags` in each run's
`summary.json`): mean validation accuracy at chance over their last evaluations, collapsed to less
than half of its best gain over chance, a validation loss above the untrained model's over their
last evaluations, or diverged. Such a number measures a training failure, not the algorithm. A validation loss rising
while the accuracy holds is overfitting, noted in `training_notes`, not flagged.

{flagged_runs(outcome)}

## Figures

Seeds are drawn as their mean with a shaded band from the minimum to the maximum over seeds
(no band with one seed); where time or bits differ between seeds, a point's x is their mean.

{figures}

Silhouette curves (`silhouette.csv`, mean over seeds):

{silhouette_summary(outcome)}
"""


def write_report(outcome: Outcome, out: Path, command: str, wall_s: float, load: str) -> dict:
    """Write every file of the report folder ``out``; returns what was written."""
    table1_md, table1_csv = table_i(outcome)
    table2_md, table2_csv = table_ii(outcome)
    atomic_write_text(out / "table1.csv", table1_csv)
    atomic_write_text(out / "table2.csv", table2_csv)
    atomic_write_text(out / "silhouette.csv", silhouette_csv(outcome))
    atomic_write_text(out / "runs.csv", runs_csv(outcome))
    timings = merged_timings(outcome, out)
    atomic_write_text(out / "timings.csv", timings_csv(timings))
    figures = write_figures(outcome, out)
    atomic_write_text(out / "report.md", report_markdown(outcome, table1_md, table2_md, command, wall_s, load, timings))
    return {"report": str(out / "report.md"), "tables": [str(out / "table1.csv"), str(out / "table2.csv")],
            "figures": [str(f) for f in figures]}
