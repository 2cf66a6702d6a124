"""The cell studies of docs/physical-layer.md over seeds, as Markdown tables.

What each preset's cell looks like, the weakest-member penalty per stream count
(interference-limited presets beside the isolated cell), TDMA against FDMA, TDD against FDD,
where each cell's FedAvg time goes (its slowest device's uploads, the device-rounds lost to
outage) and which lambda on the cells; printed with the command and the commit they ran on.

Usage: python3 -m benchmarks.cell_studies [--rounds 30] [--seeds 0 1 2 3 4] [--per-seed] [--out results/cell-studies] [--jobs 1]
       python3 -m benchmarks.cell_studies --cells-only [--seeds 0 1 2 3 4] [--per-seed]

Each seed is one drop of ``digits-rotation`` (20 devices in 4 rotated groups) trained with
FedAvg and user-centric k = 2, 4 and m (one stream per device) on each cell, and with
user-centric at Algorithm 2's k for each lambda of ``LAMBDAS``; finished runs in
``--out`` are reused, so seeds run one at a time (``--seeds 0``, then ``--seeds 1``...) are
aggregated later without training again. Over several seeds every figure is mean +- sample
standard deviation [min-max] over the seeds (``benchmarks.spread``); ``--per-seed`` also prints
each seed's own tables first, as one seed alone (``--seeds 0``) prints them. ``--cells-only``
prints only what the cells look like (``fl-cosim cell``'s figures, 20 devices, 1,000 fading
rounds; no training: about 10 s a seed).
"""

from __future__ import annotations

import argparse
import subprocess
import sys

import numpy as np

from benchmarks.spread import spread
from scenarios.cli.common import OnceParser

SCENARIO = "digits-rotation"
ALGORITHMS = (("fedavg", {}), ("user-centric", {"streams": 2}), ("user-centric", {"streams": 4}), ("user-centric", {}))
PENALTY_CELLS = (("uma-3.5ghz", {}), ("umi-3.5ghz", {}), ("uma-3.5ghz", {"interference": False}),
                 ("umi-3.5ghz", {"interference": False}))
# FDMA on the NR link layer's curve (nr-harq, the presets' default, serves whole-PRB grants: TDMA and PF)
ACCESS_CELLS = (("uma-3.5ghz", {}), ("uma-3.5ghz", {"uplink_access": "fdma", "link_abstraction": "nr"}), ("uma-2.1ghz", {}))
LAMBDAS = (0.0, 0.1, 1.0)  # lambdas in three steps of the staircase (k* = 4, 2, 1 on wireless-slow-ul; the cells set up their own)
LAMBDA_CELLS = (("uma-3.5ghz", {}), ("umi-3.5ghz", {}))


def cell_name(system: str, radio: dict) -> str:
    return system + "".join(f" {k}={'off' if v is False else v}" for k, v in radio.items())


def run_all(specs, out: str, jobs: int) -> list[dict]:
    from scenarios.execution.runner import run_experiment

    if jobs == 1:
        return [run_experiment(spec, out) for spec in specs]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(jobs) as pool:
        return list(pool.map(run_experiment, specs, [out] * len(specs)))


OFF = {"ul_power_control": "off", "ul_allocation": "headroom"}  # full power: power-limit's grants need open-loop power
DESCRIBED = (("uma-3.5ghz", {}), ("umi-3.5ghz", {}), ("uma-2.1ghz", {}), ("uma-3.5ghz", OFF), ("umi-3.5ghz", OFF),
             ("uma-3.5ghz", {"interference": "off"}), ("umi-3.5ghz", {"interference": "off"}))



def describe_seeds(seeds) -> str:
    """``describe``'s figures over seeds (20 devices and 1,000 fading rounds each): indoor and
    LOS shares, the median UE power and SINRs, the outages, mean rates and one broadcast's
    airtime over a typical unicast's, mean +- sample std [min-max]."""
    from scenarios.reports.cell import describe_cell

    columns = ("indoor (of 20)", "LOS %", "median UE power (dBm)", "median DL SINR (dB)", "median UL SINR (dB)",
               "DL outage %", "UL outage %", "DL Mbit/s (mean)", "UL Mbit/s (mean)", "broadcast / unicast")
    lines = ["| cell | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for system, radio in DESCRIBED:
        per_seed = []
        for seed in seeds:
            info = describe_cell(system, seed, 20, radio, 1000)
            rows, s = info["device_table"], info["summary"]
            per_seed.append((sum(r.get("indoor", False) for r in rows), 100 * s["los_fraction"],
                             np.median([r["ue_power_dbm"] for r in rows]), np.median([r["downlink_snr_db"] for r in rows]),
                             np.median([r["uplink_snr_db"] for r in rows]), 100 * s["downlink_outage_probability"],
                             100 * s["uplink_outage_probability"], np.mean([r["downlink_mbps"] for r in rows]),
                             np.mean([r["uplink_mbps"] for r in rows]), s["broadcast_over_unicast_airtime"]))
        values = np.array(per_seed).T
        digits = (1, 0, 1, 1, 1, 2, 2, 1, 1, 2)
        lines.append(f"| {cell_name(system, radio)} | " + " | ".join(spread(v, d) for v, d in zip(values, digits)) + " |")
    return "\n".join(lines)


def describe(seed: int) -> str:
    """Per preset (and the isolated cell): SNR/SINR spread, LOS and indoor share, outages, rates,
    and one broadcast's airtime over a typical unicast's (20 devices, 1,000 fading rounds)."""
    from scenarios.reports.cell import describe_cell

    lines = ["| cell | devices indoor | LOS | UE power (dBm) | mean DL SINR (dB) | mean UL SINR (dB) | DL outage | UL outage | "
             "DL Mbit/s (mean) | UL Mbit/s (mean) | broadcast / unicast |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for system, radio in DESCRIBED:
        info = describe_cell(system, seed, 20, radio, 1000)
        rows, s = info["device_table"], info["summary"]
        dl = [r["downlink_snr_db"] for r in rows]
        ul = [r["uplink_snr_db"] for r in rows]
        indoor = sum(r.get("indoor", False) for r in rows)
        power = [r["ue_power_dbm"] for r in rows]
        lines.append(f"| {cell_name(system, radio)} | {indoor} of 20 | {s['los_fraction']:.0%} | {min(power):.1f} to {max(power):.1f} "
                     f"(median {np.median(power):.1f}) | {min(dl):.1f} to {max(dl):.1f} "
                     f"(median {np.median(dl):.1f}) | {min(ul):.1f} to {max(ul):.1f} (median {np.median(ul):.1f}) | "
                     f"{s['downlink_outage_probability']:.3f} | {s['uplink_outage_probability']:.3f} | "
                     f"{np.mean([r['downlink_mbps'] for r in rows]):.1f} | {np.mean([r['uplink_mbps'] for r in rows]):.1f} | "
                     f"{s['broadcast_over_unicast_airtime']:.2f} |")
    return "\n".join(lines)


PENALTY_HEADER = ("| cell | run | models / round | downlink ms / round | normalized `k T_dl` ms | penalty | broadcast / `T_dl` | "
                  "mean acc | worst acc | time | energy | never arrived |")
# the penalty tables' figures over seeds: (column, key of penalty_figures, digits)
PENALTY_SPREAD = (("models / round", "models_per_round", 2), ("downlink ms / round", "downlink_ms", 2),
                  ("normalized `k T_dl` ms", "normalized_ms", 2), ("penalty", "penalty", 2),
                  ("broadcast / `T_dl`", "broadcast_over_t_dl", 2), ("mean acc", "mean_accuracy", 3),
                  ("worst acc", "worst_accuracy", 3), ("time (s)", "time_s", 1), ("energy (J)", "energy_j", 1),
                  ("never arrived", "never_arrived", 1))


def penalty_figures(folder: str) -> dict:
    """One run's row of the penalty tables (``scenarios.reports.penalty.downlink_penalty``). A
    device in downlink outage on every one of the base station's fading samples has an infinite
    unicast airtime, so ``T_dl`` (their mean) is undefined: the normalized downlink, the penalty and
    the broadcast over ``T_dl`` are then NaN here (left out of the spread, "-" in a seed's table), not 0."""
    from scenarios.reports.penalty import downlink_penalty

    p = downlink_penalty(folder)
    undefined = lambda value: np.nan if value is None else value  # noqa: E731
    defined = p["t_dl_s"] is not None and p["broadcast_s"] is not None
    return {"label": p["label"], "models_per_round": p["models_per_round"], "downlink_ms": p["downlink_s_per_round"] * 1e3,
            "normalized_ms": undefined(p["normalized_downlink_s_per_round"]) * 1e3, "penalty": undefined(p["penalty"]),
            "broadcast_over_t_dl": p["broadcast_s"] / p["t_dl_s"] if defined else np.nan, "mean_accuracy": p["final_mean_accuracy"],
            "worst_accuracy": p["final_worst_accuracy"], "time_s": p["simulated_time_s"], "energy_j": p["energy_j"],
            "never_arrived": never_heard(folder)}


def penalty_table(summaries, cells) -> str:
    """One seed's penalty table: each run's figures ("-": undefined, see ``penalty_figures``)."""
    lines = [PENALTY_HEADER, "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (system, radio), summary in zip(cells, summaries):
        f = penalty_figures(summary["result_dir"])
        undefined = {k: f"{f[k]:.2f}" if np.isfinite(f[k]) else "-" for k in ("normalized_ms", "penalty", "broadcast_over_t_dl")}
        lines.append(f"| {cell_name(system, radio)} | {f['label']} | {f['models_per_round']:.2f} | {f['downlink_ms']:.2f} | "
                     f"{undefined['normalized_ms']} | {undefined['penalty']} | {undefined['broadcast_over_t_dl']} | "
                     f"{f['mean_accuracy']:.3f} | {f['worst_accuracy']:.3f} | {f['time_s']:.2f} s | "
                     f"{f['energy_j']:.3g} J | {f['never_arrived']} |")
    return "\n".join(lines)


def penalty_spread(per_seed, cells) -> str:
    """The penalty table over seeds: ``per_seed`` holds each seed's summaries (in ``cells``'
    order); each figure is mean +- sample std [min-max] over the seeds where it is defined,
    ``(k of n seeds)`` when it is not on some."""
    lines = ["| cell | run | " + " | ".join(c for c, _, _ in PENALTY_SPREAD) + " |", "|---|---|" + "---|" * len(PENALTY_SPREAD)]
    for i, (system, radio) in enumerate(cells):
        figures = [penalty_figures(summaries[i]["result_dir"]) for summaries in per_seed]
        lines.append(f"| {cell_name(system, radio)} | {figures[0]['label']} | "
                     + " | ".join(spread([f[key] for f in figures], d) for _, key, d in PENALTY_SPREAD) + " |")
    return "\n".join(lines)


def lambda_figures(summaries, cells) -> dict[str, list[dict]]:
    """Per cell, per lambda (``LAMBDAS``' order): the k Algorithm 2 picks from the set-up on that
    cell (its own outages included), the final accuracy, the target (90% of the cell's best final
    mean accuracy over the lambdas: the rule of ``fl-cosim lambda-study``), the time and bits to
    it (None: never reached), and the time and energy of all rounds."""
    from scenarios.records.result_folder import read_run
    from scenarios.reports.over_seeds import first_reach

    by_cell: dict[str, list] = {}
    for (system, radio), summary in zip(cells, summaries):
        by_cell.setdefault(cell_name(system, radio), []).append(read_run(summary["result_dir"]))
    figures: dict[str, list[dict]] = {}
    for name, runs in by_cell.items():
        target = round(0.9 * max(r.summary["final_mean_accuracy"] for r in runs), 4)
        figures[name] = []
        for lam, run in zip(LAMBDAS, runs):
            at = first_reach(run, target)
            figures[name].append({"lam": lam, "streams": run.summary["streams"], "final": run.summary["final_mean_accuracy"],
                                  "target": target, "time_to_target_s": None if at is None else run.time[at],
                                  "bits_to_target": None if at is None else run.downlink_bits[at] + run.uplink_bits[at],
                                  "time_s": run.summary["simulated_time"], "energy_j": run.summary["energy_j"]})
    return figures


LAMBDA_HEADER = "| cell | lambda | k* | final mean acc | target | time to target | bits to target | time (all rounds) | energy |"


def lambda_table(summaries, cells) -> str:
    """One seed's lambda table: per cell and lambda, each lambda's run trained on the cell
    (``lambda_figures``)."""
    lines = [LAMBDA_HEADER, "|---|---|---|---|---|---|---|---|---|"]
    for name, rows in lambda_figures(summaries, cells).items():
        for f in rows:
            reached = f["time_to_target_s"] is not None
            to_time = f"{f['time_to_target_s']:.2f} s" if reached else "-"
            to_bits = f"{f['bits_to_target'] / 1e6:.1f} Mbit" if reached else "-"
            lines.append(f"| {name} | {f['lam']:g} | {f['streams']} | {f['final']:.3f} | {f['target']:.4g} | {to_time} | "
                         f"{to_bits} | {f['time_s']:.2f} s | {f['energy_j']:.3g} J |")
    return "\n".join(lines)


def lambda_spread(per_seed, cells) -> str:
    """The lambda table over seeds: k* as each seed's pick (in the seeds' order), every other
    figure mean +- sample std [min-max] over the seeds; a time or bits to target over the seeds
    that reached it, ``(k of n seeds)`` when some did not."""
    lines = ["| cell | lambda | k* (per seed) | final mean acc | target | time to target (s) | bits to target (Mbit) | "
             "time, all rounds (s) | energy (J) |", "|---|---|---|---|---|---|---|---|---|"]
    tables = [lambda_figures(summaries, cells) for summaries in per_seed]
    for name in tables[0]:
        for i, lam in enumerate(LAMBDAS):
            rows = [table[name][i] for table in tables]

            def over(key, digits, scale=1.0):
                return spread([np.nan if r[key] is None else r[key] for r in rows], digits, scale)

            lines.append(f"| {name} | {lam:g} | {' '.join(str(r['streams']) for r in rows)} | {over('final', 3)} | "
                         f"{over('target', 3)} | {over('time_to_target_s', 1)} | {over('bits_to_target', 1, 1e-6)} | "
                         f"{over('time_s', 1)} | {over('energy_j', 1)} |")
    return "\n".join(lines)


TIME_SPREAD = (("time (s)", "time_s", 1), ("slowest device's uploads (s)", "slowest_upload_s", 1),
               ("their share of the time %", "slowest_share_pct", 0), ("energy (J)", "energy_j", 1),
               ("of it idle %", "idle_pct", 0), ("device-rounds lost to UL outage", "uplink_outage_drops", 1),
               ("to DL outage", "downlink_outage_drops", 1))


def time_figures(folder: str) -> dict:
    """Where one run's time goes: its simulated time, the training-round uploads of its slowest
    device (the one whose uplink events in ``trace.csv`` last longest in all) and their share of
    the time, the devices' energy and its idle part (waiting, in the idle states), and the
    device-rounds dropped for uplink and for downlink outage (``summary.json``)."""
    from scenarios.records.result_folder import read_summary, read_table

    summary = read_summary(folder)
    seconds: dict[int, float] = {}
    for row in read_table(folder, "trace.csv"):
        if row["kind"] == "uplink" and int(row["round"]) > 0:
            seconds[int(row["entity"])] = seconds.get(int(row["entity"]), 0.0) + float(row["end"]) - float(row["start"])
    device, slowest = max(seconds.items(), key=lambda item: (item[1], -item[0]))
    return {"time_s": summary["simulated_time"], "slowest_device": device, "slowest_upload_s": slowest,
            "slowest_share_pct": 100 * slowest / summary["simulated_time"], "energy_j": summary["energy_j"],
            "idle_pct": 100 * summary["idle_energy_j"] / summary["energy_j"],
            "uplink_outage_drops": summary["dropped_uplink_outage"], "downlink_outage_drops": summary["dropped_downlink_outage"]}


def time_table(summaries, cells) -> str:
    """One seed's FedAvg runs: where each run's time goes (``time_figures``)."""
    lines = ["| cell | time | slowest device | its uploads | their share of the time | energy | of it idle | "
             "device-rounds lost to UL outage | to DL outage |", "|---|---|---|---|---|---|---|---|---|"]
    for (system, radio), summary in zip(cells, summaries):
        f = time_figures(summary["result_dir"])
        lines.append(f"| {cell_name(system, radio)} | {f['time_s']:.2f} s | {f['slowest_device']} | {f['slowest_upload_s']:.2f} s | "
                     f"{f['slowest_share_pct']:.0f}% | {f['energy_j']:.3g} J | {f['idle_pct']:.0f}% | {f['uplink_outage_drops']} | "
                     f"{f['downlink_outage_drops']} |")
    return "\n".join(lines)


def time_spread(per_seed, cells) -> str:
    """``time_table`` over seeds: each figure mean +- sample std [min-max] over the seeds."""
    lines = ["| cell | " + " | ".join(c for c, _, _ in TIME_SPREAD) + " |", "|---|" + "---|" * len(TIME_SPREAD)]
    for i, (system, radio) in enumerate(cells):
        figures = [time_figures(summaries[i]["result_dir"]) for summaries in per_seed]
        lines.append(f"| {cell_name(system, radio)} | " + " | ".join(spread([f[key] for f in figures], d) for _, key, d in TIME_SPREAD) + " |")
    return "\n".join(lines)


def never_heard(folder: str) -> int:
    """Devices none of whose training-round uploads arrived (from the trace's uplink events)."""
    import csv
    import json
    from pathlib import Path

    devices = len(json.loads((Path(folder) / "config.json").read_text())["device_samples_per_update"])
    with open(Path(folder) / "trace.csv", newline="") as handle:
        heard = {int(r["entity"]) for r in csv.DictReader(handle) if r["kind"] == "uplink" and int(r["round"]) > 0}
    return devices - len(heard)


class Parser(OnceParser):
    """The benchmark's options, each given once; a usage error is one line on stderr, exit 2."""

    def error(self, message):
        print(f"{self.prog}: {message} (see --help)", file=sys.stderr)
        sys.exit(2)


def parse(argv) -> argparse.Namespace:
    """The options, checked before anything is drawn or trained; ``--cells-only`` refuses the
    training's options (they would have no effect)."""
    from contract.setting import UsageError
    from scenarios.definitions.settings import JOBS, RUN_SETTINGS
    from scenarios.records.atomic import check_output_dir

    parser = Parser(prog="python3 -m benchmarks.cell_studies", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="rounds of each training (default 30)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4],
                        help="run seeds, one drop and one training per cell and algorithm each (default 0 1 2 3 4)")
    parser.add_argument("--per-seed", action="store_true", help="also print each seed's own tables (one seed alone prints only them)")
    parser.add_argument("--out", default="results/cell-studies", help="result folders, reused when complete (default results/cell-studies)")
    parser.add_argument("--jobs", type=int, default=1, help="training processes (default 1)")
    parser.add_argument("--cells-only", action="store_true", help="what the cells look like, no training")
    args = parser.parse_args(argv)
    if args.cells_only:
        for dest, flag in (("rounds", "--rounds"), ("out", "--out"), ("jobs", "--jobs")):
            if dest in args.given_dests:
                parser.error(f"{flag} has no effect with --cells-only (nothing is trained); leave it out")
    try:
        if not args.cells_only:
            check_output_dir(args.out)
        RUN_SETTINGS["rounds"].check("--rounds", args.rounds)
        JOBS.check("--jobs", args.jobs)
        for seed in args.seeds:
            RUN_SETTINGS["seed"].check("--seeds", seed)
    except UsageError as error:
        parser.error(str(error))
    return args


def command_line(args) -> str:
    seeds = " ".join(map(str, args.seeds))
    if args.cells_only:
        return f"python3 -m benchmarks.cell_studies --cells-only --seeds {seeds}{' --per-seed' if args.per_seed else ''}"
    return f"python3 -m benchmarks.cell_studies --rounds {args.rounds} --seeds {seeds}{' --per-seed' if args.per_seed else ''}"


def main(argv=None) -> None:
    args = parse(argv)
    from scenarios.execution.runner import RunSpec

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip() or "unknown: not a git checkout"
    several = len(args.seeds) > 1
    print(f"`{command_line(args)}` (commit {commit})" + (f": mean +- sample std [min-max] over seeds {' '.join(map(str, args.seeds))}"
                                                          if several else "") + "\n")
    shown = args.seeds if (args.per_seed or not several) else []
    blocks = []
    if args.cells_only:
        for seed in shown:
            blocks.append((f"seed {seed}:\n\n" if several else "") + describe(seed))
        if several:
            blocks.append(describe_seeds(args.seeds))
        print("\n\n".join(blocks))
        return

    def spec(seed, system, radio, algorithm, options):
        return RunSpec(SCENARIO, algorithm, system, rounds=args.rounds, seed=seed, options=dict(options), radio=dict(radio))

    cells = [(s, r) for s, r in PENALTY_CELLS for _ in ALGORITHMS]
    access = [(s, r) for s, r in ACCESS_CELLS for _ in ALGORITHMS[::2]]
    lambdas = [(s, r) for s, r in LAMBDA_CELLS for _ in LAMBDAS]

    def seed_specs(seed):
        return ([spec(seed, s, r, a, o) for s, r in PENALTY_CELLS for a, o in ALGORITHMS]
                + [spec(seed, s, r, a, o) for s, r in ACCESS_CELLS for a, o in ALGORITHMS[::2]]
                + [spec(seed, s, r, "user-centric", {"streams": "auto", "lam": lam}) for s, r in LAMBDA_CELLS for lam in LAMBDAS])

    summaries = run_all([one for seed in args.seeds for one in seed_specs(seed)], args.out, args.jobs)  # seed after seed
    n = len(summaries) // len(args.seeds)
    per_seed = [summaries[i * n:(i + 1) * n] for i in range(len(args.seeds))]
    penalty = [s[:len(cells)] for s in per_seed]
    access_runs = [s[len(cells):len(cells) + len(access)] for s in per_seed]
    lambda_runs = [s[len(cells) + len(access):] for s in per_seed]
    algorithms = [a for _ in PENALTY_CELLS for a, _ in ALGORITHMS] + [a for _ in ACCESS_CELLS for a, _ in ALGORITHMS[::2]]
    fedavg, fedavg_cells = [], []  # each cell's FedAvg run, once
    for i, (cell, algorithm) in enumerate(zip(cells + access, algorithms)):
        if algorithm == "fedavg" and cell not in fedavg_cells:
            fedavg.append(i)
            fedavg_cells.append(cell)
    fedavg_runs = [[s[i] for i in fedavg] for s in per_seed]
    for i, seed in enumerate(args.seeds):
        if seed in shown:
            blocks += [(f"seed {seed}:\n\n" if several else "") + describe(seed), penalty_table(penalty[i], cells),
                       penalty_table(access_runs[i], access), time_table(fedavg_runs[i], fedavg_cells),
                       lambda_table(lambda_runs[i], lambdas)]
    if several:
        blocks += [describe_seeds(args.seeds), penalty_spread(penalty, cells), penalty_spread(access_runs, access),
                   time_spread(fedavg_runs, fedavg_cells), lambda_spread(lambda_runs, lambdas)]
    print("\n\n".join(blocks))


if __name__ == "__main__":
    main()
