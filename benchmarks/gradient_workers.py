"""Mean gradients on the ``processes`` workers against the in-process loop, whole runs side by side.

``FL_COSIM_DATA=DATA_DIR python3 -m benchmarks.gradient_workers [--repeats 2]`` runs, on
``mnist-rotation`` (100 devices, LeNet-5, 2 rounds, a quarter of the devices each round, Adam),
pFedMe (its ``R x K`` = 100 gradient steps of every participant a round: ``mean_gradients``
only) and user-centric FL with k = 4 (its set-up, eq. 10: every device's whole-set gradient and
those of its disjoint mini-batches at ``theta^0``, then two rounds of local updates), each as a
whole ``fl-cosim run`` with ``--backend loop`` and ``--backend processes`` (2 workers x 1 torch
thread), alternating, and prints the fastest wall time of each; the two backends' ``rounds.csv``
and ``devices.csv`` must be identical, byte for byte, or it stops.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = {
    "pFedMe": ["--algorithm", "pfedme"],
    "user-centric k = 4": ["--algorithm", "user-centric", "--streams", "4"],
}
COMMON = ["--scenario", "mnist-rotation", "--rounds", "2", "--participation", "0.25", "--optimizer", "adam",
          "--quiet", "--no-figure", "--force"]


def run_s(arguments: list[str], backend: str, out: Path) -> float:
    command = [sys.executable, "-m", "scenarios.cli.main", "run", *arguments, *COMMON, "--backend", backend, "--out", str(out)]
    began = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - began


def result_files(out: Path) -> dict[str, bytes]:
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    return {name: (folder / name).read_bytes() for name in ("rounds.csv", "devices.csv")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    if not os.environ.get("FL_COSIM_DATA"):
        parser.error("set FL_COSIM_DATA to the folder that holds MNIST")
    print("| whole run (mnist-rotation, 2 rounds) | loop, in-process (s) | processes, 2 workers (s) | speed-up |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as scratch:
        for label, arguments in RUNS.items():
            best = {"loop": float("inf"), "processes": float("inf")}
            files = {}
            for repeat in range(args.repeats):
                for backend in best:
                    out = Path(scratch) / f"{label}-{backend}-{repeat}"
                    best[backend] = min(best[backend], run_s(arguments, backend, out))
                    if backend not in files:
                        files[backend] = result_files(out)
            if files["loop"] != files["processes"]:
                sys.exit(f"{label}: the backends' result files differ")
            print(f"| {label} | {best['loop']:.1f} | {best['processes']:.1f} | {best['loop'] / best['processes']:.2f}x |")


if __name__ == "__main__":
    main()
