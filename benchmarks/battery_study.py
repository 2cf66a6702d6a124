"""Time and energy to a target accuracy with and without batteries (``battery_j``): each device
starts with the same charge and drops out once the energy model has spent it
(``netsim.dynamics.battery``: dropped with reason ``battery`` at a round's start, or when a step
in the round runs it flat, the step cut there). Batteries are fractions (``--fractions``) of the mean energy a
device spends over the whole run without one (seed ``--seeds[0]``'s run; printed), the same
charge for every seed. ``digits-rotation`` (20 devices), FedAvg, 5 random devices a round, on the
UMa 19-site cell; the target is 90% of the best final mean accuracy among the runs (the
``lambda-study`` rule), a seed that never reaches it counted at its end (censored), as is its
energy. Prints the Markdown table of docs/channel-in-time.md (each figure mean +- sample std
[min-max] over the seeds, ``benchmarks.spread``) with the command and the commit it ran on, and draws accuracy against energy spent and the devices left against time
(``--figure``, seed ``--seeds[0]``).

Usage: python3 -m benchmarks.battery_study [--rounds 30] [--seeds 0 1 2 3 4] [--fractions 1 0.5 0.25] [--out results/battery-study] [--figure docs/img/battery_study.png]
"""

from __future__ import annotations

import argparse
import csv
import subprocess
from pathlib import Path

import numpy as np

SCENARIO, ALGORITHM, SYSTEM = "digits-rotation", "fedavg", "uma-3.5ghz"
PARTICIPATION = 0.25
DEVICES = 20


def flat_at(folder: str) -> dict[int, float]:
    """Each device that ran out of battery: the simulated time of its first ``battery`` drop (trace.csv)."""
    out = {}
    with open(Path(folder) / "trace.csv", newline="") as f:
        for row in csv.DictReader(f):
            if row["kind"] == "dropped" and row["reason"] == "battery":
                out.setdefault(int(row["entity"]), float(row["start"]))
    return out


def parse(argv) -> argparse.Namespace:
    """The options, each given once and checked before anything trains: a usage error is one
    line on stderr, exit 2, nothing written (``benchmarks.cell_studies.Parser``)."""
    from benchmarks.cell_studies import Parser
    from contract.setting import UsageError
    from scenarios.definitions.settings import RUN_SETTINGS
    from scenarios.records.atomic import check_output_dir

    parser = Parser(prog="python3 -m benchmarks.battery_study", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="rounds of each training (default 30)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4],
                        help="run seeds (default 0 1 2 3 4); the first one's run without batteries sizes them")
    parser.add_argument("--fractions", type=float, nargs="+", default=[1.0, 0.5, 0.25],
                        help="each battery, a fraction of a device's mean energy over the run without one (default 1 0.5 0.25)")
    parser.add_argument("--out", default="results/battery-study", help="result folders, reused when complete (default results/battery-study)")
    parser.add_argument("--figure", default="docs/img/battery_study.png", help="the figure (default docs/img/battery_study.png; '' for none)")
    args = parser.parse_args(argv)
    try:
        check_output_dir(args.out)
        RUN_SETTINGS["rounds"].check("--rounds", args.rounds)
        for seed in args.seeds:
            RUN_SETTINGS["seed"].check("--seeds", seed)
    except UsageError as error:
        parser.error(str(error))
    bad = next((f for f in args.fractions if not (np.isfinite(f) and f > 0)), None)
    if bad is not None:
        parser.error(f"--fractions takes positive numbers, not {bad:g}")
    for name, values in (("--seeds", args.seeds), ("--fractions", args.fractions)):
        twice = next((v for i, v in enumerate(values) if v in values[:i]), None)
        if twice is not None:
            parser.error(f"{name} names {twice:g} twice")
    return args


def main(argv=None) -> None:
    args = parse(argv)
    from benchmarks.spread import spread
    from scenarios.reports.over_seeds import first_reach
    from scenarios.execution.runner import RunSpec, run_experiment
    from scenarios.records.result_folder import read_run

    def runs(battery_j):
        radio = {} if battery_j is None else {"battery_j": battery_j}
        return [read_run(run_experiment(RunSpec(SCENARIO, ALGORITHM, SYSTEM, rounds=args.rounds, seed=seed, participation=PARTICIPATION,
                                                radio=radio), args.out)["result_dir"]) for seed in args.seeds]

    unlimited = runs(None)
    mean_device_j = unlimited[0].energy_j[-1] / DEVICES
    batteries = [None] + [float(f"{f * mean_device_j:.3g}") for f in args.fractions]
    found = {None: unlimited, **{b: runs(b) for b in batteries[1:]}}
    target = round(0.9 * max(r.summary["final_mean_accuracy"] for rs in found.values() for r in rs), 4)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    n = len(args.seeds)
    print(f"`python3 -m benchmarks.battery_study --rounds {args.rounds} --seeds {' '.join(map(str, args.seeds))} "
          f"--fractions {' '.join(f'{f:g}' for f in args.fractions)}` (commit {commit}); a device's mean energy over seed "
          f"{args.seeds[0]}'s run without batteries {mean_device_j:.4g} J, target {target:.4g}; mean +- sample std [min-max] "
          f"over the {n} seeds, a seed that never reached the target counted at its run's end\n")
    print("| battery | final mean acc | time to target (s) | energy to target (J) | reached | devices run flat by the end | "
          "first flat (s) | battery drops (device-rounds) |")
    print("|---|---|---|---|---|---|---|---|")
    for battery, rs in found.items():
        reach = [first_reach(r, target) for r in rs]
        times = [r.time[i] if i is not None else r.time[-1] for r, i in zip(rs, reach)]
        joules = [r.energy_j[i] if i is not None else r.energy_j[-1] for r, i in zip(rs, reach)]
        flat = [flat_at(r.folder) for r in rs]
        first = [min(f.values()) if f else np.nan for f in flat]  # a seed where none ran flat: counted apart
        name = "none" if battery is None else f"{battery:g} J ({battery / mean_device_j:.2g} x)"
        print(f"| {name} | {spread([r.summary['final_mean_accuracy'] for r in rs], 3)} | {spread(times, 2)} | {spread(joules, 2)} | "
              f"{sum(i is not None for i in reach)}/{n} | {spread([len(f) for f in flat], 1)} | {spread(first, 2)} | "
              f"{spread([r.summary['dropped'].get('battery', 0) for r in rs], 1)} |")
    if args.figure:
        figure(found, mean_device_j, args.figure)


def figure(found: dict, mean_device_j: float, out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from figures.save import save_figure

    fig, (acc, alive) = plt.subplots(1, 2, figsize=(9, 3.3))
    for battery, rs in found.items():
        run = rs[0]
        name = "no battery" if battery is None else f"{battery:g} J ({battery / mean_device_j:.2g} x)"
        acc.plot(run.energy_j, run.mean_accuracy, label=name)
        flat = sorted(flat_at(run.folder).values())
        alive.step([0.0, *flat, run.time[-1]], [DEVICES, *(DEVICES - np.arange(1, len(flat) + 1)), DEVICES - len(flat)], where="post", label=name)
    acc.set_xlabel("energy spent, all devices (J)")
    acc.set_ylabel("mean accuracy")
    alive.set_xlabel("simulated time (s)")
    alive.set_ylabel("devices with charge left")
    acc.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, out)


if __name__ == "__main__":
    main()
