"""``fl-cosim round-time`` over seeds: the mean round, the energy per device and round and the
fraction of updates that arrived, each as mean +- sample standard deviation [min-max] over the
seeds (not a test: the numbers ``docs/physical-layer.md`` quotes for 1,000 devices).

    python3 -m benchmarks.round_time_seeds [--system uma-3.5ghz] [--devices 1000] [--rounds 5] [--seeds 0 1 2 3 4] [--radio KEY=VALUE ...]

Each seed is one ``fl-cosim round-time --system S --devices N --rounds R --seed SEED --json``
(barrier, 1 Mbit each way, 100 samples of compute per device); ``--radio`` is passed on to
every one of them and every row of the table is one setting: the preset's default
(``ul_allocation=power-limit``, ``link_abstraction=nr-harq``) and ``ul_allocation=whole-band``, unless ``--radio`` is given.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from benchmarks.spread import spread



def round_time(system: str, devices: int, rounds: int, seed: int, radio: list[str]) -> dict:
    command = [sys.executable, "-m", "scenarios.cli.main", "round-time", "--system", system, "--devices", str(devices),
               "--rounds", str(rounds), "--seed", str(seed), "--json"]
    for setting in radio:
        command += ["--radio", setting]
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system", default="uma-3.5ghz")
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--radio", action="append", default=[])
    args = parser.parse_args(argv)
    settings = [args.radio] if args.radio else [[], ["ul_allocation=whole-band"]]
    print(f"`fl-cosim round-time --system {args.system} --devices {args.devices} --rounds {args.rounds}`, seeds "
          f"{' '.join(map(str, args.seeds))}: mean +- sample std over the seeds [min-max]\n")
    print("| radio | round (s) | updates arrived | energy per device and round (J) |")
    print("|---|---|---|---|")
    for radio in settings:
        rs = [round_time(args.system, args.devices, args.rounds, s, radio) for s in args.seeds]
        print(f"| {' '.join(radio) or 'preset default'} | {spread([r['simulated_mean_s'] for r in rs], 1)} | "
              f"{spread([r['arrived_fraction'] for r in rs], 1, 100, '%')} | {spread([r['energy_j_per_device_round'] for r in rs], 2)} |",
              flush=True)


if __name__ == "__main__":
    main()
