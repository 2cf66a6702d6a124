"""Cost of a simulated round on a physical cell, side by side in one run (wall-clock; not a
test): the vectorized round (``simulator="timeline"``) against the per-device SimPy processes
(``"processes"``, the reference) and the normalized timeline, one broadcast or N unicasts down,
N uploads (TDMA; FDMA rounds run as processes on both).

    python3 -m benchmarks.bench_physical [--devices 1000 10000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from contract import RoundPlan, Stream
from netsim import NetworkSystem, simulate_rounds
from scenarios.definitions.cells import get_cell_system

MODEL_BITS = 1e5


def plan(devices: int, unicast: bool) -> RoundPlan:
    everyone = tuple(range(devices))
    streams = tuple(Stream((d,), MODEL_BITS) for d in everyone) if unicast else (Stream(everyone, MODEL_BITS),)
    return RoundPlan(streams, {d: MODEL_BITS for d in everyone}, everyone)


def seconds_per_round(system, devices: int, rounds: int, unicast: bool, simulator: str) -> float:
    plans = [plan(devices, unicast)] * rounds
    channel = None
    if not isinstance(system, NetworkSystem):  # bound as a run binds it: nr-harq's link and stream state with it
        system, channel = system.bind(np.full(devices, 100.0), np.random.SeedSequence(0))
    start = time.perf_counter()
    simulate_rounds(plans, system, MODEL_BITS, np.random.default_rng(0), simulator=simulator, keep_trace=False,
                    channel_rng=channel)
    return (time.perf_counter() - start) / rounds


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--devices", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    normalized = NetworkSystem(rho=4, t_min=1, inv_mu=1)
    for simulator in ("timeline", "processes"):  # warm-up: imports and first calls out of the timings
        seconds_per_round(normalized, 10, 1, False, simulator)
        seconds_per_round(get_cell_system("uma-3.5ghz"), 10, 1, False, simulator)
    print("| devices | downlink | normalized timeline | cell TDMA vectorized | cell TDMA processes | speed-up | cell FDMA processes |")
    print("|---|---|---|---|---|---|---|")
    for devices in args.devices:
        rounds = args.rounds if devices <= 1000 else max(1, args.rounds // 5)
        for unicast in (False, True):
            base = seconds_per_round(normalized, devices, rounds, unicast, "timeline")
            fast = seconds_per_round(get_cell_system("uma-3.5ghz"), devices, rounds, unicast, "timeline")
            slow = seconds_per_round(get_cell_system("uma-3.5ghz"), devices, rounds, unicast, "processes")
            fdma = "not run"  # processor sharing recomputes every rate at every start and end: O(N^2)
            if devices <= 1000:
                fdma_s = seconds_per_round(get_cell_system("uma-3.5ghz", overrides={"uplink_access": "fdma"}), devices,
                                           rounds, unicast, "processes")
                fdma = f"{fdma_s * 1e3:.0f} ms"
            kind = "unicasts" if unicast else "broadcast"
            print(f"| {devices:,} | {kind} | {base * 1e3:.1f} ms | {fast * 1e3:.1f} ms | {slow * 1e3:.1f} ms | "
                  f"{slow / fast:.0f}x | {fdma} |")


if __name__ == "__main__":
    main()
