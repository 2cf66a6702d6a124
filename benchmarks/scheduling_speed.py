"""Channel-aware scheduling's gain over random as the devices move faster: time to a target
accuracy on the UMa 19-site cell at 0, 3, 30 and 120 km/h for the random, best-channel,
proportional-fair and age-based schedulers (``netsim.scheduling``), 3 seeds, the runs of a seed
differing only in ``speed_kmh`` (the moving cell continues the static cell's drop and draws the
same block fading from the same stream: ``docs/channel-in-time.md``, "One channel at every
speed"; the base station's report is the round's own channel at every speed). Prints the
Markdown tables of docs/channel-in-time.md with the command and the commit it ran on, and draws
the gain against speed (``--figure``).

Runs ``digits-rotation`` (20 devices), FedAvg, 5
devices scheduled a round. Two targets per speed: A, 90% of the best final mean accuracy of any
run (the ``lambda-study`` rule); B, 90% of the lowest scheduler's mean final accuracy, which
every scheduler reaches on average: a scheduler that plateaus lower (best-channel keeps picking
the same devices) never reaches A, and its time counted at its run's end (censored, marked ``*``)
is then a lower bound, not a gain.

Usage: python3 -m benchmarks.scheduling_speed [--rounds 20] [--seeds 0 1 2] [--out results/scheduling-speed] [--figure docs/img/scheduling_speed.png]
"""

from __future__ import annotations

import argparse
import subprocess

import numpy as np

SCENARIO, ALGORITHM, SYSTEM = "digits-rotation", "fedavg", "uma-3.5ghz"
SPEEDS_KMH = (0.0, 3.0, 30.0, 120.0)
SCHEDULERS = ("random", "best-channel", "proportional-fair", "age-based")
PARTICIPATION = 0.25


def main(argv=None) -> None:
    from scenarios.reports.over_seeds import first_reach
    from scenarios.execution.runner import RunSpec, run_experiment
    from scenarios.records.result_folder import read_run

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--out", default="results/scheduling-speed")
    parser.add_argument("--figure", default="docs/img/scheduling_speed.png")
    args = parser.parse_args(argv)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"`python3 -m benchmarks.scheduling_speed --rounds {args.rounds} --seeds {' '.join(map(str, args.seeds))}` (commit {commit})\n")
    print("| speed | scheduler | final mean acc, per seed | time to target A (s), per seed | mean | / random | "
          "time to target B (s), per seed | mean | / random |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios, targets, folders = {}, {}, {}
    for speed in SPEEDS_KMH:
        radio = {"speed_kmh": speed} if speed > 0 else {}  # only the motion differs
        runs = {s: [read_run(run_experiment(RunSpec(SCENARIO, ALGORITHM, SYSTEM, rounds=args.rounds, seed=seed,
                                                     participation=PARTICIPATION, scheduler=s, radio=dict(radio)),
                                             args.out)["result_dir"]) for seed in args.seeds] for s in SCHEDULERS}
        folders[speed] = {s: [r.folder for r in rs] for s, rs in runs.items()}
        finals = {s: [r.summary["final_mean_accuracy"] for r in rs] for s, rs in runs.items()}
        targets[speed] = (round(0.9 * max(max(f) for f in finals.values()), 4), round(0.9 * min(np.mean(f) for f in finals.values()), 4))
        cells = {}
        for which, target in zip("AB", targets[speed]):
            means = {}
            for s, rs in runs.items():
                reach = [first_reach(r, target) for r in rs]
                times = [r.time[i] if i is not None else r.time[-1] for r, i in zip(rs, reach)]
                means[s] = np.mean(times)
                censored = sum(i is None for i in reach)
                ratios[which, speed, s] = (means[s] / means["random"], censored + ratios.get((which, speed, "random"), (0, 0))[1])
                ratio = "" if s == "random" else f"{ratios[which, speed, s][0]:.2f}" + ("*" if ratios[which, speed, s][1] else "")
                cells.setdefault(s, []).append(f"{', '.join(f'{t:.2f}' + ('' if i is not None else '*') for t, i in zip(times, reach))} | "
                                                f"{means[s]:.2f} | {ratio}")
        for s in SCHEDULERS:
            print(f"| {speed:g} km/h | {s} | {np.mean(finals[s]):.3f} ({', '.join(f'{a:.3f}' for a in finals[s])}) | {' | '.join(cells[s])} |")
    print("\nTargets per speed: A, 90% of the best final mean accuracy of any run (the lambda-study rule); B, 90% of the "
          "lowest scheduler's mean final accuracy (one every scheduler reaches on average): "
          + "; ".join(f"{v:g} km/h A {a:.4g}, B {b:.4g}" for v, (a, b) in targets.items())
          + ". *: a seed that never reached it, counted at its run's end (a lower bound; its ratio is not a gain).")
    for which in "AB":
        print(f"\nMean time to target {which} over random's (below 1: faster than random):\n")
        print("| scheduler | " + " | ".join(f"{v:g} km/h" for v in SPEEDS_KMH) + " |")
        print("|---|" + "---|" * len(SPEEDS_KMH))
        for s in SCHEDULERS[1:]:
            print(f"| {s} | " + " | ".join(f"{ratios[which, v, s][0]:.2f}" + ("*" if ratios[which, v, s][1] else "") for v in SPEEDS_KMH) + " |")
    print("\nThe rounds behind them (summed over the seeds; a round's median: the mean over the seeds of each run's median; "
          "cut: uploads lost mid-way as the link fell below the outage floor, made: uploads started):\n")
    print("| speed | random: median round (s) | longest round (s) | uploads cut / made | proportional-fair: median round (s) | longest (s) | cut / made |")
    print("|---|---|---|---|---|---|---|")
    for speed in SPEEDS_KMH:
        cells = []
        for s in ("random", "proportional-fair"):
            medians, longest, cut, made = [], 0.0, 0, 0
            for folder in folders[speed][s]:
                durations, (run_cut, run_made) = round_durations(folder), uploads(folder)
                medians.append(float(np.median(durations)))
                longest, cut, made = max(longest, float(durations.max())), cut + run_cut, made + run_made
            cells.append(f"{np.mean(medians):.2f} | {longest:.1f} | {cut} / {made}")
        print(f"| {speed:g} km/h | " + " | ".join(cells) + " |")
    if args.figure:
        figure({(v, s): ratios["B", v, s][0] for v in SPEEDS_KMH for s in SCHEDULERS}, args.figure)


def round_durations(folder) -> np.ndarray:
    """The durations of a run's rounds after round 0 (its ``rounds.csv``)."""
    import csv
    from pathlib import Path

    with open(Path(folder) / "rounds.csv", newline="") as handle:
        return np.array([float(row["duration"]) for row in csv.DictReader(handle) if int(row["round"]) > 0])


def uploads(folder) -> tuple[int, int]:
    """(cut, made) of a run's uploads (its ``trace.csv``): cut, an ``uplink-outage`` drop with
    airtime (the link lost mid-upload); made, every upload that went on the air."""
    import csv
    from pathlib import Path

    with open(Path(folder) / "trace.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    cut = sum(r["kind"] == "dropped" and r["reason"] == "uplink-outage" and float(r["end"]) > float(r["start"]) for r in rows)
    return cut, cut + sum(r["kind"] == "uplink" for r in rows)


def figure(ratios: dict, out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from figures.save import save_figure

    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    at = np.arange(len(SPEEDS_KMH))
    for s, marker in zip(SCHEDULERS[1:], "osd"):
        ax.plot(at, [ratios[v, s] for v in SPEEDS_KMH], marker=marker, label=s)
    ax.axhline(1.0, color="grey", lw=0.8, ls="--", label="random")
    ax.set_xticks(at, [f"{v:g}" for v in SPEEDS_KMH])
    ax.set_xlabel("device speed (km/h)")
    ax.set_ylabel("time to target B / random's")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, out)


if __name__ == "__main__":
    main()
