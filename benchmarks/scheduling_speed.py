"""Channel-aware scheduling's gain over random as the devices move faster: time to a target
accuracy on the UMa 19-site cell at 0, 3, 30 and 120 km/h for the random, best-channel,
proportional-fair and age-based schedulers (``netsim.scheduling``), over seeds (``--seeds``;
each figure mean +- sample std [min-max] over them, ``benchmarks.spread``), the runs of a seed
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

Usage: python3 -m benchmarks.scheduling_speed [--rounds 20] [--seeds 0 1 2 3 4] [--out results/scheduling-speed] [--figure docs/img/scheduling_speed.png]
"""

from __future__ import annotations

import argparse
import subprocess

import numpy as np

from benchmarks.spread import spread

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
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--out", default="results/scheduling-speed")
    parser.add_argument("--figure", default="docs/img/scheduling_speed.png")
    args = parser.parse_args(argv)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    n = len(args.seeds)
    print(f"`python3 -m benchmarks.scheduling_speed --rounds {args.rounds} --seeds {' '.join(map(str, args.seeds))}` (commit {commit}); "
          f"mean +- sample std [min-max] over the {n} seeds\n")
    print("| speed | scheduler | final mean acc | time to target A (s) | reached A | time to target B (s) | reached B |")
    print("|---|---|---|---|---|---|---|")
    ratios, targets, folders = {}, {}, {}
    for speed in SPEEDS_KMH:
        radio = {"speed_kmh": speed} if speed > 0 else {}  # only the motion differs
        runs = {s: [read_run(run_experiment(RunSpec(SCENARIO, ALGORITHM, SYSTEM, rounds=args.rounds, seed=seed,
                                                     participation=PARTICIPATION, scheduler=s, radio=dict(radio)),
                                             args.out)["result_dir"]) for seed in args.seeds] for s in SCHEDULERS}
        folders[speed] = {s: [r.folder for r in rs] for s, rs in runs.items()}
        finals = {s: [r.summary["final_mean_accuracy"] for r in rs] for s, rs in runs.items()}
        targets[speed] = (round(0.9 * max(max(f) for f in finals.values()), 4), round(0.9 * min(np.mean(f) for f in finals.values()), 4))
        cells = {s: [] for s in SCHEDULERS}
        for which, target in zip("AB", targets[speed]):
            times, reached = {}, {}
            for s, rs in runs.items():
                reach = [first_reach(r, target) for r in rs]
                times[s] = np.array([r.time[i] if i is not None else r.time[-1] for r, i in zip(rs, reach)])
                reached[s] = np.array([i is not None for i in reach])
                cells[s] += [spread(times[s], 2), f"{reached[s].sum()}/{n}"]
            for s in SCHEDULERS[1:]:  # each seed's time over random's of the same seed; censored: either not reached
                ratios[which, speed, s] = (times[s] / times["random"], int(np.sum(~(reached[s] & reached["random"]))))
        for s in SCHEDULERS:
            print(f"| {speed:g} km/h | {s} | {spread(finals[s], 3)} | {' | '.join(cells[s])} |")
    print("\nTargets per speed: A, 90% of the best final mean accuracy of any run (the lambda-study rule); B, 90% of the "
          "lowest scheduler's mean final accuracy (one every scheduler reaches on average): "
          + "; ".join(f"{v:g} km/h A {a:.4g}, B {b:.4g}" for v, (a, b) in targets.items())
          + ". A seed that never reached a target counts at its run's end (a lower bound).")
    for which in "AB":
        print(f"\nTime to target {which} over random's, each seed's over random's of the same seed (below 1: faster than "
              f"random; faster in k of the {n} seeds; *: k seeds where it or random never reached it, counted at the end, "
              "whose ratio is not a gain):\n")
        print("| scheduler | " + " | ".join(f"{v:g} km/h" for v in SPEEDS_KMH) + " |")
        print("|---|" + "---|" * len(SPEEDS_KMH))
        for s in SCHEDULERS[1:]:
            print(f"| {s} | " + " | ".join(ratio_cell(*ratios[which, v, s]) for v in SPEEDS_KMH) + " |")
    print(f"\nThe rounds behind them (a run's median and longest round, over the seeds; cut: uploads lost mid-way as the link "
          f"fell below the outage floor, made: uploads started, summed over the {n} seeds):\n")
    print("| speed | random: median round (s) | longest round (s) | uploads cut / made | proportional-fair: median round (s) | longest (s) | cut / made |")
    print("|---|---|---|---|---|---|---|")
    for speed in SPEEDS_KMH:
        cells = []
        for s in ("random", "proportional-fair"):
            medians, longest, cut, made = [], [], 0, 0
            for folder in folders[speed][s]:
                durations, (run_cut, run_made) = round_durations(folder), uploads(folder)
                medians.append(float(np.median(durations)))
                longest.append(float(durations.max()))
                cut, made = cut + run_cut, made + run_made
            cells.append(f"{spread(medians, 2)} | {spread(longest, 1)} | {cut} / {made}")
        print(f"| {speed:g} km/h | " + " | ".join(cells) + " |")
    if args.figure:
        figure({(v, s): ratios["B", v, s][0] for v in SPEEDS_KMH for s in SCHEDULERS[1:]}, args.figure)


def ratio_cell(per_seed: np.ndarray, censored: int) -> str:
    """Per-seed time ratios over the seeds, the seeds faster than random, the censored ones."""
    return f"{spread(per_seed, 2)} ({int(np.sum(per_seed < 1))}/{per_seed.size} faster)" + (f" {censored}*" if censored else "")


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
    for s, marker in zip(SCHEDULERS[1:], "osd"):  # mean and sample std over the seeds of each seed's ratio
        ax.errorbar(at, [ratios[v, s].mean() for v in SPEEDS_KMH], yerr=[ratios[v, s].std(ddof=1) for v in SPEEDS_KMH],
                    marker=marker, capsize=3, label=s)
    ax.axhline(1.0, color="grey", lw=0.8, ls="--", label="random")
    ax.set_xticks(at, [f"{v:g}" for v in SPEEDS_KMH])
    ax.set_xlabel("device speed (km/h)")
    ax.set_ylabel("time to target B / random's, per seed")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, out)


if __name__ == "__main__":
    main()
