"""Run every registered algorithm on every scenario whose data is present, for a few rounds,
through the same runner as ``fl-cosim run``; print one line per pair (wall-clock, not a test).

Usage: python3 benchmarks/every_pair.py [--rounds R] [--data-dir DIR] [--scenario S ...] [--out DIR]

Cheap settings so every pair finishes: user-centric variants with 4 streams, pFedLIA with
no warm-up (so its influence round and its clustered rounds both run), evaluation only at
the end. A pair that fails prints its one-line error and the script goes on.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch

from learning.algorithms import ALGORITHMS
from scenarios.datasets import resolve_data_dir
from scenarios.errors import UsageError
from scenarios.definitions.registry import SCENARIOS
from scenarios.execution.runner import RunSpec, run_experiment

CHEAP_OPTIONS = {
    "user-centric": {"streams": 4},
    "parallel-user-centric": {"streams": 4},
    "pfedlia": {"warmup_rounds": 0},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--data-dir")
    parser.add_argument("--scenario", nargs="+", default=list(SCENARIOS))
    parser.add_argument("--algorithm", nargs="+", default=list(ALGORITHMS))
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    data_dir = str(resolve_data_dir(args.data_dir))
    out = Path(args.out or tempfile.mkdtemp(prefix="every-pair-"))
    failures = 0
    for scenario in args.scenario:
        for algorithm in args.algorithm:
            spec = RunSpec(scenario, algorithm, rounds=args.rounds, options=CHEAP_OPTIONS.get(algorithm, {}),
                           evaluate_every=args.rounds)
            start = time.perf_counter()
            try:
                s = run_experiment(spec, out, data_dir)
                extras = {k: round(s[k], 4) for k in ("clustering_ari", "estimation_error") if k in s}
                print(f"ok    {scenario:26s} {algorithm:22s} {time.perf_counter() - start:7.1f} s  streams {s['streams']:3d}  "
                      f"mean acc {s['final_mean_accuracy']:.3f}  time {s['simulated_time']:.1f} T_dl  {extras}", flush=True)
            except UsageError as error:
                failures += 1
                print(f"error {scenario:26s} {algorithm:22s} {error}", flush=True)
    print(f"{failures} pairs failed; results in {out}")


if __name__ == "__main__":
    main()
