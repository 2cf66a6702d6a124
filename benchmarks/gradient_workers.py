"""Mean gradients on the ``processes`` workers against the in-process loop, whole runs side by side.

``FL_COSIM_DATA=DATA_DIR python3 -m benchmarks.gradient_workers [--repeats 2] [--runs all|NAME,...]``
runs each of ``RUNS`` as a whole ``fl-cosim run`` with ``--backend loop`` and ``--backend
processes`` (2 workers x 1 torch thread), alternating, and prints the fastest wall time of
each; the two backends' ``rounds.csv`` and ``devices.csv`` must be identical, byte for byte, or
it stops. The runs: on ``mnist-rotation`` (100 devices, LeNet-5, 2 rounds, a quarter of the
devices each round, Adam) pFedMe (its ``R x K`` = 100 gradient steps of every participant a
round: ``mean_gradients`` only) and user-centric FL with k = 4 (its set-up, eq. 10: every
device's whole-set gradient and those of its disjoint mini-batches at ``theta^0``, then two
rounds of local updates); and the two edges of ``auto``'s rule on the work
(``learning/engine/auto.py``): pFedMe on ``digits-rotation`` (60 rounds of the digits MLP,
whose gradient calls are small) and a 1-round user-centric run on ``cifar10-concept-shift`` in
which a tenth of the devices train (its set-up is nearly all its work).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MNIST_ROTATION = ["--scenario", "mnist-rotation", "--rounds", "2", "--participation", "0.25", "--optimizer", "adam"]
RUNS = {
    "pFedMe": [*MNIST_ROTATION, "--algorithm", "pfedme"],
    "user-centric k = 4": [*MNIST_ROTATION, "--algorithm", "user-centric", "--streams", "4"],
    "pFedMe on digits-rotation": ["--scenario", "digits-rotation", "--algorithm", "pfedme"],
    "user-centric k = m on cifar10-concept-shift": ["--scenario", "cifar10-concept-shift", "--algorithm", "user-centric",
                                                    "--streams", "m", "--rounds", "1", "--participation", "0.1"],
}
COMMON = ["--quiet", "--no-figure", "--force"]


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
    parser.add_argument("--runs", default="all", help="all, or names of RUNS joined by commas")
    args = parser.parse_args()
    if not os.environ.get("FL_COSIM_DATA"):
        parser.error("set FL_COSIM_DATA to the folder that holds MNIST and CIFAR-10")
    names = list(RUNS) if args.runs == "all" else args.runs.split(",")
    if unknown := [name for name in names if name not in RUNS]:
        parser.error(f"unknown runs {unknown}; choose from {list(RUNS)}")
    print("| whole run | loop, in-process (s) | processes, 2 workers (s) | speed-up |")
    print("|---|---|---|---|", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        for label in names:
            arguments = RUNS[label]
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
            print(f"| {label} | {best['loop']:.1f} | {best['processes']:.1f} | {best['loop'] / best['processes']:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
