"""The asynchronous study of docs/findings.md, regenerated: FedAvg in synchronous rounds (barrier;
pipelined with a deadline) against FedBuff and FedAsync (``--orchestrator``) on a straggler-heavy
normalized system and on the ``umi-3.5ghz`` cell, each run stopped at the largest time budget,
``--seeds`` seeds (0..N-1); prints the Markdown tables (accuracy within 3 time budgets; on the
cell also within 3 energy budgets), each cell mean +- sample std [min-max] over the seeds, with
the command and commit, and writes the accuracy-against-time-and-energy figure.

Usage: python3 -m benchmarks.async_study [--seeds 5] [--out results/async-study] [--figures docs/img]

Runs ``digits-rotation`` (20 devices); finished runs in ``--out`` are reused.
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from benchmarks.spread import spread

SCENARIO = "digits-rotation"
# system, its settings, time budgets (its clock's unit), FedAvg's deadline, energy budgets (J; a cell)
SYSTEMS = (
    ("wireless-slow-ul", {"inv_mu": 20.0}, (500.0, 1000.0, 2000.0), 50.0, ()),  # 1/mu = 20 T_dl: stragglers
    ("umi-3.5ghz", {}, (5.0, 10.0, 20.0), 0.5, (5.0, 10.0, 20.0)),  # J: TR 38.840 states, about 1.4 J a round of 20 devices
)
# label, settings; evaluated about as often in time (an aggregation of FedAsync is one update)
VARIANTS = (
    ("fedavg barrier", {"mode": "barrier"}),
    ("fedavg deadline", {"mode": "pipelined", "deadline": None}),  # the system's deadline
    ("fedbuff K=5 C=10", {"orchestrator": "fedbuff", "buffer_k": 5, "concurrency": 10, "evaluate_every": 4}),
    ("fedasync C=20", {"orchestrator": "fedasync", "evaluate_every": 20}),
)
MAX_VERSIONS = 20_000  # a cap the time budget comes before


def specs(system: str, settings: dict, horizon: float, deadline: float, seeds: int):
    from scenarios.execution.runner import RunSpec

    found = {}
    for label, given in VARIANTS:
        values = {**settings, **given}
        if "deadline" in values:
            values["deadline"] = deadline
        found[label] = [RunSpec(SCENARIO, "fedavg", system=system, seed=seed, rounds=MAX_VERSIONS,
                                until={"time": horizon}, **values) for seed in range(seeds)]
    return found


def study(seeds: int, out: str, figures: Path | None) -> str:
    from figures.accuracy_time import PlotOptions, plot_accuracy_vs_time
    from scenarios.execution.runner import run_experiment
    from scenarios.records.result_folder import read_run

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [f"`python3 -m benchmarks.async_study --seeds {seeds}` (commit {commit}); accuracy % mean +- sample std "
             f"[min-max] over seeds 0-{seeds - 1}; `>=`: a seed ended before spending the budget (its accuracy at its end)."]
    for system, settings, budgets, deadline, energy in SYSTEMS:
        plan = specs(system, settings, max(budgets), deadline, seeds)
        curves = {label: [read_run(run_experiment(spec, out)["result_dir"]) for spec in runs] for label, runs in plan.items()}
        name = system + "".join(f" {k}={v:g}" for k, v in settings.items())
        for axis, values in (("time", budgets), ("energy_j", energy)):
            if values:
                header, body = budget_spread(curves, axis, values)
                lines += ["", f"**{name}**, accuracy within {axis} budgets:", "", "| " + " | ".join(header) + " |",
                          "|" + "---|" * len(header)] + ["| " + " | ".join(row) + " |" for row in body]
        if energy:
            lines.append("energy spent by the end (J): " + "; ".join(f"{label} {spread([c.summary['energy_j'] for c in cs], 1)}"
                                                                   for label, cs in curves.items()))
        updates = {label: [c.summary.get("updates") for c in cs] for label, cs in curves.items()}
        staleness = {label: [c.summary.get("staleness_mean") for c in cs] for label, cs in curves.items()}
        lines += ["", f"rounds (versions) done by {max(budgets):g}: " + "; ".join(
            f"{label} {', '.join(str(c.summary['rounds']) for c in cs)}" for label, cs in curves.items()),
            "mean staleness (versions): " + "; ".join(f"{label} {', '.join(f'{s:.2f}' for s in v)}"
                                                      for label, v in staleness.items() if v[0] is not None),
            "updates aggregated: " + "; ".join(f"{label} {', '.join(map(str, v))}" for label, v in updates.items() if v[0] is not None)]
        if figures is not None:
            axes = ("time", "energy") if energy else ("time",)
            path = plot_accuracy_vs_time({None: [c for cs in curves.values() for c in cs]}, figures / f"async_study_{system}.png",
                                         PlotOptions(title=f"{SCENARIO} on {name}", x_axes=axes,
                                                     command=f"python3 -m benchmarks.async_study --seeds {seeds}"))
            lines.append(f"figure: {path}")
    return "\n".join(lines)


def budget_spread(curves: dict, axis: str, budgets) -> tuple[list[str], list[list[str]]]:
    """One row per label, one column per budget: the accuracy % each seed reached within it
    (``scenarios.reports.budgets.within``), mean +- sample std [min-max] over the seeds
    (``benchmarks.spread``; a run that did not finish, diverged, counted apart: ``(k of n seeds)``),
    ``>=`` where a seed ended before spending it."""
    from scenarios.reports.budgets import within

    header = ["algorithm"] + [f"acc % within {axis} {b:g}" for b in budgets]
    body = []
    for label, cs in curves.items():
        row = [label]
        for b in budgets:
            found = [within(c, axis, b) for c in cs if c.summary.get("status", "finished") == "finished"]
            accuracy = [within(c, axis, b).accuracy if c.summary.get("status", "finished") == "finished" else None for c in cs]
            row.append((">= " if any(f.censored for f in found) else "") + spread(accuracy, 1, 100.0))
        body.append(row)
    return header, body


def main(argv=None) -> None:
    from benchmarks.cell_studies import Parser
    from contract.setting import UsageError
    from scenarios.records.atomic import check_output_dir

    parser = Parser(prog="python3 -m benchmarks.async_study", description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1 (default 5)")
    parser.add_argument("--out", default="results/async-study", help="result folders, reused when complete (default results/async-study)")
    parser.add_argument("--figures", type=Path, default=None, help="folder for the figures (default: none)")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds is the number of seeds, at least 1, not {args.seeds}")
    try:
        check_output_dir(args.out)
        if args.figures is not None:
            check_output_dir(args.figures)
    except UsageError as error:
        parser.error(str(error))
    print(study(args.seeds, args.out, args.figures))


if __name__ == "__main__":
    main()
