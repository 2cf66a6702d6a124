"""Cost of a simulated round on a physical cell against the normalized system, side by side
(wall-clock; not a test): one broadcast or N unicasts down, N uploads (TDMA or FDMA).

    python3 -m benchmarks.bench_physical
"""

from __future__ import annotations

import time

import numpy as np

from netsim import NetworkSystem, RoundPlan, Stream, simulate_rounds
from netsim.physical import channel_seeds
from scenarios.cells import get_cell_system

MODEL_BITS = 1e5


def plan(devices: int, unicast: bool) -> RoundPlan:
    everyone = tuple(range(devices))
    streams = tuple(Stream((d,), MODEL_BITS) for d in everyone) if unicast else (Stream(everyone, MODEL_BITS),)
    return RoundPlan(streams, {d: MODEL_BITS for d in everyone}, everyone)


def seconds_per_round(system, devices: int, rounds: int, unicast: bool) -> float:
    plans = [plan(devices, unicast)] * rounds
    channel = None
    if not isinstance(system, NetworkSystem):
        layout_seq, fading_seq, _ = channel_seeds(np.random.SeedSequence(0))
        system = system.bind(system.cell.place(devices, np.random.default_rng(layout_seq)), np.full(devices, 100.0))
        channel = np.random.default_rng(fading_seq)
    start = time.perf_counter()
    simulate_rounds(plans, system, MODEL_BITS, np.random.default_rng(0), keep_trace=False, channel_rng=channel)
    return (time.perf_counter() - start) / rounds


def main() -> None:
    normalized = NetworkSystem(rho=4, t_min=1, inv_mu=1)
    tdma = get_cell_system("uma-3.5ghz")
    fdma = get_cell_system("uma-3.5ghz", overrides={"uplink_access": "fdma"})
    for devices, rounds in ((100, 50), (1000, 5)):
        for unicast in (False, True):
            base = seconds_per_round(normalized, devices, rounds, unicast)
            t = seconds_per_round(tdma, devices, rounds, unicast)
            f = seconds_per_round(fdma, devices, rounds, unicast)
            kind = "unicasts" if unicast else "broadcast"
            print(f"{devices} devices, {kind}: normalized {base * 1e3:.1f} ms/round; "
                  f"cell TDMA {t / base:.2f}x, cell FDMA {f / base:.2f}x")


if __name__ == "__main__":
    main()
