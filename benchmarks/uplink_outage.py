"""Uplink outage at many devices, whole-band TDMA grants against grants sized by each device's
power headroom (``--radio ul_allocation=headroom``, ``PhysicalSystem.allocated_prbs``), and the
per-Mbit uplink energy of TDMA and FDMA (not a test: the numbers ``docs/physical-layer.md``
quotes).

    python3 -m benchmarks.uplink_outage [--devices 1000] [--rounds 20] [--seed 0]

Outage: the fraction of device-rounds whose uplink is below the outage floor (CQI 1's
efficiency) over ``rounds`` independent fading draws of one seeded drop. Energy per Mbit: the
radiated energy of 1 Mbit at the device's power and rate on its grant (TDD: its uplink symbols),
median over the device-rounds not in outage of the devices whose whole-band power is below
``P_CMAX``; FDMA with ``n`` devices sharing the band (``n`` 10 and 50) at each one's power on its
share (TS 38.213 7.1.1).
"""

from __future__ import annotations

import argparse

import numpy as np

from scenarios.definitions.cells import get_cell_system

PRESETS = ("uma-3.5ghz", "umi-3.5ghz")
SHARINGS = (10, 50)


def measure(preset: str, allocation: str, devices: int, rounds: int, seed: int) -> dict:
    # radiated energy alone (power_unit_w 0): the transmit power TS 38.213 sets, not the device's states
    system = get_cell_system(preset, overrides={"ul_allocation": allocation, "power_unit_w": 0.0})
    layout = system.cell.place(devices, np.random.default_rng(seed))
    network = system.network(layout, np.zeros(devices))
    rng = np.random.default_rng(seed + 1)
    outage, narrow, tdma_mj, fdma_mj = [], [], [], {n: [] for n in SHARINGS}
    everyone = np.arange(devices)
    below_cap = network.uplink_power_dbm < system.uplink.tx_power_dbm - 1e-9
    for _ in range(rounds):
        channel = network.draw_round(rng)
        outage.append(channel.uplink_outage)
        narrow.append(channel.allocated_prbs < system.uplink_prbs)
        ok = ~channel.uplink_outage
        tdma_mj.append(np.where(ok & below_cap, 1e3 * channel.transmit_j(1e6 / channel.uplink_bps, everyone), np.nan))
        for n in SHARINGS:
            seconds = 1e6 / channel.uplink_share_bps(everyone, n)
            fdma_mj[n].append(np.where(ok & below_cap, 1e3 * network.upload_j(network.share_power_w(everyone, n) * seconds), np.nan))
    return {"outage": float(np.mean(outage)), "narrow": float(np.mean(narrow)),
            "tdma_mj_per_mbit": float(np.nanmedian(tdma_mj)),
            **{f"fdma{n}_mj_per_mbit": float(np.nanmedian(fdma_mj[n])) for n in SHARINGS}}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"{args.devices} devices, {args.rounds} fading rounds, seed {args.seed}; radiated energy: median over devices below P_CMAX\n")
    print("| cell | TDMA grant | uplink outage | grants narrower than the band | TDMA mJ/Mbit | " + " | ".join(f"FDMA n={n} mJ/Mbit" for n in SHARINGS) + " |")
    print("|---|---|---|---|---|" + "---|" * len(SHARINGS))
    for preset in PRESETS:
        for allocation in ("whole-band", "headroom"):
            r = measure(preset, allocation, args.devices, args.rounds, args.seed)
            print(f"| {preset} | {allocation} | {100 * r['outage']:.1f}% | {100 * r['narrow']:.1f}% | {r['tdma_mj_per_mbit']:.3f} | "
                  + " | ".join(f"{r[f'fdma{n}_mj_per_mbit']:.3f}" for n in SHARINGS) + " |")


if __name__ == "__main__":
    main()
