"""Handovers per device per minute of devices moving in straight lines at 30 km/h over the
UMa 19-site layout (``netsim.dynamics``), beside the analytic rate of crossing the sector
boundaries.

For straight-line motion in random directions over a tessellation with boundary length ``L``
per area ``A``, a device crosses ``(2/pi) v L / A`` boundaries per unit time (the Buffon /
Cauchy-Crofton mean; e.g. Baccelli and Zuyev, "Stochastic geometry models of mobile
communication networks", 1997). The 3-sector hexagonal layout's sector cells are hexagons of side
``ISD / 3`` (three meeting at each site: TR 38.901 Fig. 7.8-1's layout), so
``L / A = 2 / (sqrt(3) ISD / 3) = 2 sqrt(3) / ISD``; the site hexagon cut into three rhombi
instead would give ``4 / ISD``. The association is read every ``--step`` seconds (a crossing
back and forth within one step is missed: the step is far below the ~27 s a device takes
between crossings here).

Usage: python3 -m benchmarks.handover_rate [--devices 300] [--minutes 2] [--step 0.1] [--seed 0] [--shadowing on|off] [--los probabilistic|nlos] [--margin 0] [--ttt 0] [--elements 10]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from contract.seeds import motion_seed
from netsim.dynamics.motion import ChannelInTime
from scenarios.definitions.cells import get_cell_system

SPEED_KMH = 30.0


def analytic_per_minute(speed_kmh: float, isd_m: float) -> dict[str, float]:
    v = speed_kmh / 3.6
    return {"hexagonal sectors (side ISD/3)": 60.0 * 2.0 / math.pi * v * 2.0 * math.sqrt(3.0) / isd_m,
            "rhombic sectors (site hexagon in 3)": 60.0 * 2.0 / math.pi * v * 4.0 / isd_m}


def measured_per_minute(devices: int, minutes: float, step_s: float, seed: int, radio: dict) -> float:
    system = get_cell_system("uma-3.5ghz", overrides={"speed_kmh": SPEED_KMH, **radio})
    network_seq = np.random.SeedSequence(seed)
    layout = system.cell.place(devices, np.random.default_rng(network_seq))
    channel = ChannelInTime.start(system, layout, np.random.default_rng(motion_seed(network_seq)))
    steps = int(round(60.0 * minutes / step_s))
    for i in range(steps + 1):
        channel.at(i * step_s)
    return len(channel.handovers) / devices / minutes


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=300)
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--step", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shadowing", choices=("on", "off"), default="on")
    parser.add_argument("--los", choices=("probabilistic", "nlos"), default="probabilistic")
    parser.add_argument("--margin", type=float, default=0.0)
    parser.add_argument("--ttt", type=float, default=0.0, help="time to trigger (s)")
    parser.add_argument("--elements", type=int, default=10, help="vertical array elements (1: no array nulls)")
    args = parser.parse_args(argv)
    radio = {"shadowing": args.shadowing == "on", "los": args.los, "handover_margin_db": args.margin, "handover_ttt_s": args.ttt,
             "bs_elements": args.elements}
    rate = measured_per_minute(args.devices, args.minutes, args.step, args.seed, radio)
    isd = get_cell_system("uma-3.5ghz").cell.inter_site_distance_m
    print(f"`python3 -m benchmarks.handover_rate --devices {args.devices} --minutes {args.minutes:g} --step {args.step:g} "
          f"--seed {args.seed} --shadowing {args.shadowing} --los {args.los} --margin {args.margin:g} --ttt {args.ttt:g} --elements {args.elements}`\n")
    print(f"| | handovers per device per minute at {SPEED_KMH:g} km/h, UMa ISD {isd:g} m |\n|---|---|")
    print(f"| simulated (shadowing {args.shadowing}, LOS {args.los}, margin {args.margin:g} dB, time to trigger {args.ttt:g} s, {args.elements} elements) | {rate:.2f} |")
    for name, value in analytic_per_minute(SPEED_KMH, isd).items():
        print(f"| analytic, {name} | {value:.2f} (simulated / analytic {rate / value:.2f}) |")


if __name__ == "__main__":
    main()
