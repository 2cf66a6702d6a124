"""``fl-cosim round-time`` under each ``link_abstraction`` over seeds: the table of
``docs/link-layer.md`` ("The link abstractions in the cell's rounds"), each figure mean +- sample
standard deviation [min-max] over the seeds (not a test).

    python3 -m benchmarks.link_abstractions [--system umi-3.5ghz] [--devices 20] [--rounds 5] [--seeds 0 1 2 3 4]

Each cell of the table is one ``fl-cosim round-time --system S --devices N --rounds R --seed SEED
--radio link_abstraction=L --json`` per seed (barrier, 1 Mbit each way, 100 samples of compute
per device: ``benchmarks.round_time_seeds``).
"""

from __future__ import annotations

import argparse

from benchmarks.round_time_seeds import round_time
from benchmarks.spread import spread

ABSTRACTIONS = ("shannon", "nr", "nr-harq", "attenuated-shannon")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system", default="umi-3.5ghz")
    parser.add_argument("--devices", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    args = parser.parse_args(argv)
    print(f"`fl-cosim round-time --system {args.system} --devices {args.devices} --rounds {args.rounds} --radio "
          f"link_abstraction=L`, seeds {' '.join(map(str, args.seeds))}: mean +- sample std over the seeds [min-max]\n")
    print("| `link_abstraction` | mean round (s) | energy per device and round (J) | updates arrived |")
    print("| --- | --- | --- | --- |")
    for name in ABSTRACTIONS:
        rs = [round_time(args.system, args.devices, args.rounds, s, [f"link_abstraction={name}"]) for s in args.seeds]
        label = f"`{name}`" + (" (default)" if name == "shannon" else "")
        print(f"| {label} | {spread([r['simulated_mean_s'] for r in rs], 2)} | "
              f"{spread([r['energy_j_per_device_round'] for r in rs], 3)} | "
              f"{spread([r['arrived_fraction'] for r in rs], 1, 100, '%')} |", flush=True)


if __name__ == "__main__":
    main()
