"""Network time per round at scale: the vectorized timeline against the per-device SimPy
processes, side by side in one run (wall-clock; not a test).

Usage: python3 -m benchmarks.network_scale [--devices 1000 10000] [--rounds R] [--repeats K]

Each round is the broadcast of one model to every device, then every device uploads one model,
on the ``wireless-slow-ul`` system (rho 4, T_min = T_dl = 1/mu), in pipelined and barrier mode.
Both simulators time the same rounds from the same seed, trace included; the script checks that
they agree (round ends, arrivals, trace) and prints milliseconds per round and the ratio.
Times are the process's CPU time (``time.process_time``), best of K repeats after a warm-up: the
code is single-threaded, and on a shared machine wall-clock time measures the neighbours.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np

from contract import RoundPlan, Stream
from netsim import simulate_rounds
from scenarios.definitions.systems import get_system


def broadcast_plan(devices: int) -> RoundPlan:
    everyone = tuple(range(devices))
    return RoundPlan((Stream(everyone, 1.0),), {d: 1.0 for d in everyone}, everyone)


def per_round_s(plans, system, simulator: str, repeats: int):
    best, result = np.inf, None
    for _ in range(repeats):
        start = time.process_time()
        result = simulate_rounds(plans, system, 1.0, np.random.default_rng(0), simulator=simulator)
        best = min(best, time.process_time() - start)
    return best / len(plans), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for simulator in ("processes", "timeline"):  # warm-up: first calls load code paths
        per_round_s([broadcast_plan(50)] * 2, get_system("wireless-slow-ul"), simulator, 1)
    print(f"{'devices':>8} {'mode':>10} {'processes ms':>13} {'timeline ms':>12} {'speed-up':>9}  same results")
    for devices in args.devices:
        plans = [broadcast_plan(devices)] * args.rounds
        for mode in ("pipelined", "barrier"):
            system = dataclasses.replace(get_system("wireless-slow-ul"), mode=mode)
            reference_s, reference = per_round_s(plans, system, "processes", args.repeats)
            timeline_s, fast = per_round_s(plans, system, "timeline", args.repeats)
            same = ([(r.end, r.arrived) for r in fast[0]] == [(r.end, r.arrived) for r in reference[0]]
                    and fast[1] == reference[1])
            print(f"{devices:>8} {mode:>10} {reference_s * 1000:>13.1f} {timeline_s * 1000:>12.1f} "
                  f"{reference_s / timeline_s:>8.1f}x  {'yes' if same else 'NO'}", flush=True)


if __name__ == "__main__":
    main()
