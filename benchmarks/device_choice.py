"""Which device should ``--device auto`` give a run on a machine with a GPU? Side by side in one
run: whole ``fl-cosim run`` commands (a fresh process each) with ``--device cpu`` and with
``--device cuda``, interleaved, for runs from 1 round of the digits MLP to 20 rounds of
LeNet-5, beside a bare
``python3 -c "import torch"`` and the same with CUDA made ready (a context and one cuDNN
convolution). Prints a Markdown table: the median wall seconds of each, the CPU rule's estimate
of each run's one-thread training seconds (``learning.engine.auto``, read back from the CPU
run's ``config.json``) and the CUDA run's time as a ratio to the CPU run's.

    python3 -m benchmarks.device_choice [--repeats 2] [--cases all|NAME,...]

Needs a CUDA device and the datasets the cases name (``FL_COSIM_DATA``). Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = {  # name -> run arguments: from a 1-round run of the smallest model to LeNet-5 for tens of rounds
    "digits-1": ["--scenario", "digits-rotation", "--algorithm", "fedavg", "--rounds", "1"],
    "digits-60": ["--scenario", "digits-rotation", "--algorithm", "fedavg"],
    "digits-uc-60": ["--scenario", "digits-rotation", "--algorithm", "user-centric", "--streams", "4"],
    "digits-pfedme-20": ["--scenario", "digits-rotation", "--algorithm", "pfedme", "--rounds", "20"],
    "mnist-fedprox-20": ["--scenario", "mnist-fedprox", "--algorithm", "fedavg", "--rounds", "20"],
    "mnist-rotation-2": ["--scenario", "mnist-rotation", "--algorithm", "fedavg", "--rounds", "2"],
    "mnist-rotation-20": ["--scenario", "mnist-rotation", "--algorithm", "fedavg", "--rounds", "20"],
    "demo": [],  # the README's: fl-cosim run, no options
}
CUDA_READY = ("import torch; x = torch.zeros(1, 1, 8, 8, device='cuda'); "
              "torch.nn.functional.conv2d(x, torch.zeros(1, 1, 3, 3, device='cuda')).sum().item()")


def wall_s(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def estimate_s(folder: Path) -> float | None:
    """The CPU rule's estimate of a run's one-thread training seconds, from its recorded choice."""
    for config in folder.glob("*/config.json"):
        found = re.search(r"about ([0-9.e+]+) s of training", json.loads(config.read_text())["provenance"].get("backend_choice", ""))
        if found:
            return float(found.group(1))
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--cases", default="all")
    parser.add_argument("--cuda", default="cuda", help="the GPU device to compare against (cpu: a dry run without a GPU)")
    args = parser.parse_args()
    names = list(CASES) if args.cases == "all" else args.cases.split(",")
    python = [sys.executable]
    import torch

    gpu = torch.cuda.get_device_name(0) if args.cuda != "cpu" else "no GPU (a dry run: cpu twice)"
    print(f"{gpu}, {os.cpu_count()} cores, torch {torch.__version__}, median of {args.repeats}; "
          f"load average {os.getloadavg()[0]:.1f}\n", flush=True)
    ready = CUDA_READY.replace("'cuda'", repr(args.cuda))
    for what, command in (("import torch", ["-c", "import torch"]), ("import torch, CUDA ready", ["-c", ready])):
        print(f"- `{what}`: {statistics.median(wall_s(python + command) for _ in range(args.repeats)):.2f} s", flush=True)
    print("\n| run | CPU rule's estimate, 1 thread (s) | `--device cpu` (s) | `--device cuda` (s) | cuda / cpu |")
    print("|---|---|---|---|---|", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        for name in names:  # a row as each case ends: a run cut short still says what it measured
            timed: dict[str, list[float]] = {"cpu": [], "cuda": []}
            estimate = None
            for repeat in range(args.repeats):
                for label, device in (("cpu", "cpu"), ("cuda", args.cuda)):
                    out = Path(scratch) / f"{name}-{label}-{repeat}"
                    command = python + ["-m", "scenarios.cli.main", "run", *CASES[name], "--device", device,
                                        "--out", str(out), "--quiet", "--no-figure"]
                    timed[label].append(wall_s(command))
                    if label == "cpu" and estimate is None:
                        estimate = estimate_s(out)
            cpu, cuda = statistics.median(timed["cpu"]), statistics.median(timed["cuda"])
            print(f"| {name} | {'-' if estimate is None else f'{estimate:.3g}'} | {cpu:.1f} | {cuda:.1f} | {cuda / cpu:.2f}x |",
                  flush=True)


if __name__ == "__main__":
    main()
