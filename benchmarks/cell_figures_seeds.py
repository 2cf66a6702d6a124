"""Figures of the cells that the docs quoted from one seed, over seeds, as Markdown tables
(issue 58 item 6): each figure mean +- sample standard deviation [min-max] over the seeds
(``benchmarks.spread``).

- ``codecs``: docs/tradeoffs.md's codec study on its cell, the ``umi-3.5ghz`` runs of
  ``docs/tradeoffs/codecs.toml`` that the page's text quotes (40 rounds: FedAvg uncompressed and
  with 4-bit QSGD, user-centric k = 4 with each uplink codec);
- ``scheduling``: docs/tradeoffs.md's scheduling study, every run of
  ``docs/tradeoffs/scheduling.toml`` (FedAvg on ``uma-3.5ghz``, a quarter of the devices a
  round, 60 rounds);
- ``lambda``: docs/physical-layer.md's *Which lambda on the cells* quotes the slow-uplink system's
  answer: ``fl-cosim lambda-study --seed S --rounds 30 --systems wireless-slow-ul`` run for each
  seed alone (each seed's own staircase and target, as the cells' table has them; its trainings
  in ``--out``, so a seed run again trains nothing): the k it picks, the top of k*=4's lambda
  interval, the target and the time to it;
- ``handover``: docs/channel-in-time.md's run of FedAvg on a moving UMa cell (the default
  scenario, 50 devices, 30 km/h, 15 rounds: ``fl-cosim run --algorithm fedavg --system
  uma-3.5ghz --devices 50 --rounds 15 --radio speed_kmh=30 --seed S``): its simulated time,
  handovers per device and minute up to its last round's start, and uploads lost;
- ``queues``: docs/channel-in-time.md's measure of the uploads queued at the sector serving them
  (FedAvg, the default scenario's 20 devices, ``uma-3.5ghz`` at 30 km/h, ``coverage=network``,
  100 rounds: ``fl-cosim run --algorithm fedavg --system uma-3.5ghz --radio speed_kmh=30 --radio
  coverage=network --rounds 100 --seed S``): the mean wait for a grant (an upload's first
  ``uplink`` event's start less its ``compute`` event's end in ``trace.csv``), the mean round
  (``rounds.csv``'s ``duration``, rounds 1-100), and the round's last upload's wait and time from
  its first block to its end.

The runs are those of the sweep files (and the command) with the seed set; finished runs in
``--out`` are reused. A time to 0.75 that a seed never reaches is left out of its mean and
counted apart (``(k of n seeds)``).

Usage: python3 -m benchmarks.cell_figures_seeds [--studies codecs scheduling handover queues] [--seeds 0 1 2 3 4] [--out results/cell-figures] [--jobs 1]
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import numpy as np

from benchmarks.cell_studies import Parser, run_all
from benchmarks.spread import spread

SWEEPS = {"codecs": ("docs/tradeoffs/codecs.toml", "umi-3.5ghz"), "scheduling": ("docs/tradeoffs/scheduling.toml", "uma-3.5ghz")}
STUDIES = (*SWEEPS, "lambda", "handover", "queues")


def sweep_specs(study: str, seeds: list[int]) -> list:
    """The sweep file's runs on its cell, once per seed."""
    from scenarios.execution.sweep import expand, read_sweep_file

    path, cell = SWEEPS[study]
    config = read_sweep_file(Path(path))
    config["seeds"] = list(seeds)
    return [spec for spec in expand(config, path) if spec.system == cell and quoted(spec)]


def quoted(spec) -> bool:
    """Whether the page's text quotes the run (FedAvg with top-k or sign is in its seed-0 table alone)."""
    return spec.algorithm != "fedavg" or spec.uplink_codec.split(":")[0] in ("none", "qsgd")


def handover_specs(seeds: list[int]) -> list:
    from scenarios.execution.runner import RunSpec
    from scenarios.definitions.settings import DEFAULT_SCENARIO

    return [RunSpec(DEFAULT_SCENARIO, "fedavg", "uma-3.5ghz", rounds=15, seed=seed, devices=50, radio={"speed_kmh": 30.0})
            for seed in seeds]


def queues_specs(seeds: list[int]) -> list:
    from scenarios.execution.runner import RunSpec
    from scenarios.definitions.settings import DEFAULT_SCENARIO

    return [RunSpec(DEFAULT_SCENARIO, "fedavg", "uma-3.5ghz", rounds=100, seed=seed,
                    radio={"speed_kmh": 30.0, "coverage": "network"}) for seed in seeds]


def sweep_figures(folder: str, fairness_too: bool) -> tuple[str, dict]:
    """(the run's label as the tradeoffs tables name it, its figures)."""
    from scenarios.records.result_folder import read_run
    from scenarios.reports.tradeoffs import fairness, run_label, time_to

    run = read_run(folder)
    s = run.summary
    reach = time_to(run)
    figures = {"mean acc": s["final_mean_accuracy"], "worst acc": s["final_worst_accuracy"],
               "time to 0.75 (s)": np.nan if reach is None else reach, "time (s)": run.end_time, "energy (J)": s["energy_j"]}
    if fairness_too:
        never, jain, unheard, jain_arrived = fairness(run)
        figures.update({"never scheduled": never, "Jain scheduled": jain, "never arrived": unheard, "Jain arrived": jain_arrived})
    return run_label(run) if fairness_too else run.label, figures


DIGITS = {"mean acc": 3, "worst acc": 3, "time to 0.75 (s)": 2, "time (s)": 2, "energy (J)": 2, "never scheduled": 1,
          "Jain scheduled": 3, "never arrived": 1, "Jain arrived": 3, "handovers / device / min": 2,
          "time to last round's start (s)": 2, "uploads lost": 1, "k*": 1, "k*=4 below lambda": 4, "target": 3,
          "time to target (T_dl)": 0, "bits to target (Mbit)": 1, "grant wait (s)": 2, "round (s)": 2,
          "last upload's wait (s)": 2, "last upload's sending (s)": 2}


def handover_figures(folder: str) -> tuple[str, dict]:
    """The run's handovers per device and minute up to its last round's start (the ``handover``
    events of ``trace.csv`` before it), that time, its simulated time and uploads lost."""
    from scenarios.records.result_folder import read_config, read_summary, read_table

    summary, config = read_summary(folder), read_config(folder)
    rows = read_table(folder, "trace.csv")
    last_start_s = max(float(r["start"]) for r in rows if r["kind"] == "downlink")  # the last round's broadcast starts it
    handovers = sum(1 for r in rows if r["kind"] == "handover" and float(r["start"]) < last_start_s)
    devices = len(config["device_samples_per_update"])
    return summary["label"], {"handovers / device / min": handovers / devices / (last_start_s / 60.0),
                              "time to last round's start (s)": last_start_s, "time (s)": summary["simulated_time"],
                              "energy (J)": summary["energy_j"], "uploads lost": sum(summary["dropped"].values()),
                              "mean acc": summary["final_mean_accuracy"]}


def queues_figures(folder: str) -> tuple[str, dict]:
    """Each upload's wait for its grant (its first ``uplink`` event's start less its ``compute``
    event's end), the mean round, and each round's last upload: its wait and the time from its
    first block to its last (segments, and the stalls between them, included)."""
    from scenarios.records.result_folder import read_summary, read_table

    summary = read_summary(folder)
    computed, uplinks = {}, {}
    for r in read_table(folder, "trace.csv"):
        key = (int(r["round"]), r["entity"])
        if r["kind"] == "compute":
            computed[key] = float(r["end"])
        elif r["kind"] == "uplink":
            start, end = uplinks.get(key, (float("inf"), float("-inf")))
            uplinks[key] = (min(start, float(r["start"])), max(end, float(r["end"])))
    waits = {key: start - computed[key] for key, (start, _) in uplinks.items()}
    last = {}
    for key, (_, end) in uplinks.items():
        if key[0] not in last or end > uplinks[last[key[0]]][1]:
            last[key[0]] = key
    durations = [float(r["duration"]) for r in read_table(folder, "rounds.csv") if int(r["round"]) >= 1]
    return summary["label"], {"grant wait (s)": float(np.mean(list(waits.values()))), "round (s)": float(np.mean(durations)),
                              "last upload's wait (s)": float(np.mean([waits[k] for k in last.values()])),
                              "last upload's sending (s)": float(np.mean([uplinks[k][1] - uplinks[k][0] for k in last.values()])),
                              "energy (J)": summary["energy_j"], "uploads lost": sum(summary["dropped"].values())}


def lambda_figures(seed: int, out: str) -> tuple[str, dict]:
    """One seed's lambda-study on ``wireless-slow-ul`` (a subprocess: the command as a user runs it)."""
    import json
    import sys

    command = [sys.executable, "-m", "scenarios.cli.main", "lambda-study", "--seed", str(seed), "--rounds", "30",
               "--systems", "wireless-slow-ul", "--out", out, "--jobs", "1", "--quiet", "--json"]
    printed = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
    study = json.loads(Path(printed["json"]).read_text())  # the study as written
    (choice,) = study["choices"]
    four = next(step for step in study["staircase"] if step["k"] == 4)
    return "wireless-slow-ul", {"k*": choice["k"], "k*=4 below lambda": four["lambda_to"], "target": study["target"],
                               "time to target (T_dl)": choice["time_to_target"], "bits to target (Mbit)": choice["bits_to_target"] / 1e6}


RUNS = {"handover": (handover_specs, handover_figures), "queues": (queues_specs, queues_figures)}  # a command's runs, not a sweep's


def spread_table(rows: list[tuple[str, dict]], seeds: int) -> str:
    """One row per run label (its seeds in a row), each figure's spread over the seeds."""
    labels = list(dict.fromkeys(label for label, _ in rows))
    keys = list(rows[0][1])
    lines = ["| run | " + " | ".join(keys) + " |", "|---|" + "---|" * len(keys)]
    for label in labels:
        mine = [figures for l, figures in rows if l == label]
        assert len(mine) == seeds, (label, len(mine))
        lines.append(f"| {label} | " + " | ".join(spread([f[k] for f in mine], DIGITS[k]) for k in keys) + " |")
    return "\n".join(lines)


def parse(argv) -> argparse.Namespace:
    """The options, each given once and checked before anything trains: a usage error is one
    line on stderr, exit 2 (``benchmarks.cell_studies.Parser``)."""
    from contract.setting import UsageError
    from scenarios.definitions.settings import JOBS, RUN_SETTINGS
    from scenarios.records.atomic import check_output_dir

    parser = Parser(prog="python3 -m benchmarks.cell_figures_seeds", description=__doc__.splitlines()[0])
    parser.add_argument("--studies", nargs="+", choices=STUDIES, default=list(STUDIES), help="which (default: all)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4], help="run seeds (default 0 1 2 3 4)")
    parser.add_argument("--out", default="results/cell-figures", help="result folders, reused when complete (default results/cell-figures)")
    parser.add_argument("--jobs", type=int, default=1, help="training processes (default 1; lambda-study trains with one)")
    args = parser.parse_args(argv)
    try:
        check_output_dir(args.out)
        JOBS.check("--jobs", args.jobs)
        for seed in args.seeds:
            RUN_SETTINGS["seed"].check("--seeds", seed)
    except UsageError as error:
        parser.error(str(error))
    for name, values in (("--seeds", args.seeds), ("--studies", args.studies)):
        twice = next((v for i, v in enumerate(values) if v in values[:i]), None)
        if twice is not None:
            parser.error(f"{name} names {twice} twice")
    return args


def main(argv=None) -> None:
    args = parse(argv)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"`python3 -m benchmarks.cell_figures_seeds --studies {' '.join(args.studies)} --seeds {' '.join(map(str, args.seeds))}` "
          f"(commit {commit}); mean +- sample std [min-max] over {len(args.seeds)} seeds\n")
    for study in args.studies:
        if study == "lambda":
            print(f"## lambda\n\n{spread_table([lambda_figures(seed, args.out) for seed in args.seeds], len(args.seeds))}\n", flush=True)
            continue
        if study in RUNS:
            specs, figures = RUNS[study]
            rows = [figures(s["result_dir"]) for s in run_all(specs(args.seeds), args.out, args.jobs)]
        else:
            summaries = run_all(sweep_specs(study, args.seeds), args.out, args.jobs)
            rows = [sweep_figures(s["result_dir"], study == "scheduling") for s in summaries]
        print(f"## {study}\n\n{spread_table(rows, len(args.seeds))}\n", flush=True)


if __name__ == "__main__":
    main()
