"""CPU time of one round's channel for 1,000 devices on the 19-site UMa layout: a moving cell
(the association's measurements since the last round, every 200 ms: one of all 57 sectors each
second and four of each device's three strongest sites between; then positions, spatially
consistent LOS and shadowing, path loss and antennas to 57 sectors, SINR and the round's block
fading at the round's start: ``PhysicalNetwork.draw_round(rng, t)`` on ``netsim.dynamics``)
beside the static round (the same layout's block fading draw), both followed by what a round
reads from them (efficiencies, rates, outages), measured side by side in one process (CPU time,
``time.process_time``; the median over the rounds). Rounds start ``ROUND_S`` apart: the
measurements a round pays for grow with that gap (five per second).

Usage: python3 -m benchmarks.mobile_round [--devices 1000] [--rounds 50] [--speed 30] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from scenarios.definitions.cells import get_cell_system

ROUND_S = 1.0  # the clock between two rounds' starts


def per_round_ms(network, channel_rng, rounds: int, moving: bool) -> float:
    spent = []
    for i in range(rounds):
        start = time.process_time()
        channel = network.draw_round(channel_rng, i * ROUND_S) if moving else network.draw_round(channel_rng)
        channel.downlink_bps, channel.uplink_bps, channel.downlink_outage, channel.uplink_outage  # noqa: B018 (what a round reads)
        spent.append(time.process_time() - start)
    return 1e3 * float(np.median(spent))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--speed", type=float, default=30.0, help="km/h")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    samples = np.full(args.devices, 100.0)
    static, static_rng = get_cell_system("uma-3.5ghz").bind(samples, np.random.SeedSequence(args.seed))
    moving, moving_rng = get_cell_system("uma-3.5ghz", overrides={"speed_kmh": args.speed}).bind(samples, np.random.SeedSequence(args.seed))
    static_ms = per_round_ms(static, static_rng, args.rounds, False)
    moving_ms = per_round_ms(moving, moving_rng, args.rounds, True)
    print(f"`python3 -m benchmarks.mobile_round --devices {args.devices} --rounds {args.rounds} --speed {args.speed:g} --seed {args.seed}`\n")
    print(f"| round's channel, {args.devices} devices, UMa 19 sites, {static.system.subbands} subbands | CPU ms per round |\n|---|---|")
    print(f"| static (i.i.d. fading draw) | {static_ms:.2f} |")
    print(f"| moving at {args.speed:g} km/h (5 association measurements, positions, fields, 57 sectors, SINR, fading) | {moving_ms:.2f} "
          f"({moving_ms / static_ms:.1f} x static) |")


if __name__ == "__main__":
    main()
