"""The cell studies of docs/physical-layer.md, regenerated: what each preset's cell looks like,
the weakest-member penalty per stream count (interference-limited presets beside the isolated
cell), and TDMA against FDMA, TDD against FDD. Prints the Markdown tables with the command and
the commit they ran on.

Usage: python3 -m benchmarks.cell_studies [--rounds 30] [--seed 0] [--out results/cell-studies] [--jobs 1]
       python3 -m benchmarks.cell_studies --cells-only [--describe-seeds 0 1 2 3 4]

Runs ``digits-rotation`` (20 devices in 4 rotated groups), one seed, FedAvg and user-centric
k = 2, 4 and m (one stream per device); finished runs in ``--out`` are reused. ``--cells-only``
prints only what the cells look like (no training: about 10 s a seed), seed ``--seed``'s table
and, over ``--describe-seeds``, each figure's mean +- sample standard deviation [min-max].
"""

from __future__ import annotations

import argparse
import subprocess

import numpy as np

from benchmarks.spread import spread

SCENARIO = "digits-rotation"
ALGORITHMS = (("fedavg", {}), ("user-centric", {"streams": 2}), ("user-centric", {"streams": 4}), ("user-centric", {}))
PENALTY_CELLS = (("uma-3.5ghz", {}), ("umi-3.5ghz", {}), ("uma-3.5ghz", {"interference": False}),
                 ("umi-3.5ghz", {"interference": False}))
ACCESS_CELLS = (("uma-3.5ghz", {}), ("uma-3.5ghz", {"uplink_access": "fdma"}), ("uma-2.1ghz", {}))
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


DESCRIBED = (("uma-3.5ghz", {}), ("umi-3.5ghz", {}), ("uma-2.1ghz", {}), ("uma-3.5ghz", {"ul_power_control": "off"}),
             ("umi-3.5ghz", {"ul_power_control": "off"}), ("uma-3.5ghz", {"interference": "off"}),
             ("umi-3.5ghz", {"interference": "off"}))



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


def penalty_table(summaries, cells) -> str:
    from scenarios.reports.penalty import downlink_penalty

    lines = ["| cell | run | models / round | downlink ms / round | normalized `k T_dl` ms | penalty | broadcast / `T_dl` | "
             "mean acc | worst acc | time | energy | never arrived |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (system, radio), summary in zip(cells, summaries):
        p = downlink_penalty(summary["result_dir"])
        lines.append(f"| {cell_name(system, radio)} | {p['label']} | {p['models_per_round']:.2f} | {p['downlink_s_per_round'] * 1e3:.2f} | "
                     f"{p['normalized_downlink_s_per_round'] * 1e3:.2f} | {p['penalty']:.2f} | {p['broadcast_s'] / p['t_dl_s']:.2f} | "
                     f"{p['final_mean_accuracy']:.3f} | {p['final_worst_accuracy']:.3f} | {p['simulated_time_s']:.2f} s | "
                     f"{p['energy_j']:.3g} J | {never_heard(summary['result_dir'])} |")
    return "\n".join(lines)


def lambda_table(summaries, cells) -> str:
    """Per cell and lambda: the k Algorithm 2 picks from the set-up on that cell (its own
    outages included), the final accuracy, and the time and bits to 90% of the cell's best final
    mean accuracy (the rule of ``fl-cosim lambda-study``), each lambda's run trained on the cell."""
    from scenarios.reports.over_seeds import first_reach
    from scenarios.records.result_folder import read_run

    lines = ["| cell | lambda | k* | final mean acc | target | time to target | bits to target | time (all rounds) | energy |",
             "|---|---|---|---|---|---|---|---|---|"]
    by_cell: dict[str, list] = {}
    for (system, radio), summary in zip(cells, summaries):
        by_cell.setdefault(cell_name(system, radio), []).append(read_run(summary["result_dir"]))
    for name, runs in by_cell.items():
        target = round(0.9 * max(r.summary["final_mean_accuracy"] for r in runs), 4)
        for lam, run in zip(LAMBDAS, runs):
            at = first_reach(run, target)
            hit = None if at is None else (run.time[at], run.downlink_bits[at] + run.uplink_bits[at])
            lines.append(f"| {name} | {lam:g} | {run.summary['streams']} | {run.summary['final_mean_accuracy']:.3f} | {target:.4g} | "
                         f"{'-' if hit is None else f'{hit[0]:.2f} s'} | {'-' if hit is None else f'{hit[1] / 1e6:.1f} Mbit'} | "
                         f"{run.summary['simulated_time']:.2f} s | {run.summary['energy_j']:.3g} J |")
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


def main(argv=None) -> None:
    from scenarios.execution.runner import RunSpec

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="results/cell-studies")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--cells-only", action="store_true", help="what the cells look like, no training")
    parser.add_argument("--describe-seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    args = parser.parse_args(argv)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    if args.cells_only:
        seeds = " ".join(map(str, args.describe_seeds))
        print(f"`python3 -m benchmarks.cell_studies --cells-only --seed {args.seed} --describe-seeds {seeds}` (commit {commit})\n")
        print(describe(args.seed) + "\n")
        print(describe_seeds(args.describe_seeds))
        return
    print(f"`python3 -m benchmarks.cell_studies --rounds {args.rounds} --seed {args.seed}` (commit {commit})\n")
    print(describe(args.seed) + "\n")

    def spec(system, radio, algorithm, options):
        return RunSpec(SCENARIO, algorithm, system, rounds=args.rounds, seed=args.seed, options=dict(options), radio=dict(radio))

    cells = [(s, r) for s, r in PENALTY_CELLS for _ in ALGORITHMS]
    specs = [spec(s, r, a, o) for s, r in PENALTY_CELLS for a, o in ALGORITHMS]
    access = [(s, r) for s, r in ACCESS_CELLS for _ in ALGORITHMS[::2]]
    specs += [spec(s, r, a, o) for s, r in ACCESS_CELLS for a, o in ALGORITHMS[::2]]
    lambdas = [(s, r) for s, r in LAMBDA_CELLS for _ in LAMBDAS]
    specs += [spec(s, r, "user-centric", {"streams": "auto", "lam": lam}) for s, r in LAMBDA_CELLS for lam in LAMBDAS]
    summaries = run_all(specs, args.out, args.jobs)
    print(penalty_table(summaries[:len(cells)], cells) + "\n")
    print(penalty_table(summaries[len(cells):len(cells) + len(access)], access) + "\n")
    print(lambda_table(summaries[len(cells) + len(access):], lambdas))


if __name__ == "__main__":
    main()
