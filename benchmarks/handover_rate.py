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

The association is NR's (``netsim.dynamics.association``): RSRP without fast fading (TS 38.215
Sec. 5.1.1), layer-3 filtered (TS 38.331 Sec. 5.5.3.2, ``--filter-k``, default fc4), event A3
with an offset and hysteresis (``--margin``, their sum) held for a time to trigger (``--ttt``).
The defaults, 3 dB and 480 ms, were taken from memory as handover parameter set 1 of TR 36.839's
mobility simulation assumptions; no copy of that TR's table could be found to check them (480 ms is
one of TS 38.331's ``timeToTrigger`` values; ns-3's ``A3RsrpHandoverAlgorithm`` defaults to 3 dB
and 256 ms). Also counted: ping-pongs, handovers back to the sector just left within 1 s (the
minimum time of stay recalled from the same TR, equally unchecked).

Usage: python3 -m benchmarks.handover_rate [--devices 300] [--minutes 2] [--step 0.1] [--seeds 0] [--shadowing on|off] [--los probabilistic|nlos] [--margin 3] [--ttt 0.48] [--filter-k 4] [--elements 10] [--indoor 0.8]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from contract.seeds import motion_seed
from netsim.dynamics.motion import ChannelInTime
from scenarios.definitions.cells import get_cell_system

SPEED_KMH = 30.0
PING_PONG_S = 1.0


def analytic_per_minute(speed_kmh: float, isd_m: float) -> dict[str, float]:
    v = speed_kmh / 3.6
    return {"hexagonal sectors (side ISD/3)": 60.0 * 2.0 / math.pi * v * 2.0 * math.sqrt(3.0) / isd_m,
            "rhombic sectors (site hexagon in 3)": 60.0 * 2.0 / math.pi * v * 4.0 / isd_m}


def ping_pongs(handovers) -> int:
    """Handovers back to the sector just left within the minimum time of stay ``PING_PONG_S``
    (ping-pong as recalled from TR 36.839; unchecked)."""
    last = {}
    count = 0
    for h in handovers:  # in time order
        before = last.get(h.device)
        count += before is not None and h.target == before.source and h.time_s - before.time_s < PING_PONG_S
        last[h.device] = h
    return count


def measured_per_minute(devices: int, minutes: float, step_s: float, seed: int, radio: dict) -> tuple[float, float]:
    system = get_cell_system("uma-3.5ghz", overrides={"speed_kmh": SPEED_KMH, **radio})
    network_seq = np.random.SeedSequence(seed)
    layout = system.cell.place(devices, np.random.default_rng(network_seq))
    channel = ChannelInTime.start(system, layout, np.random.default_rng(motion_seed(network_seq)))
    steps = int(round(60.0 * minutes / step_s))
    for i in range(steps + 1):
        channel.at(i * step_s)
    return len(channel.handovers) / devices / minutes, ping_pongs(channel.handovers) / devices / minutes


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=300)
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--step", type=float, default=0.1)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--shadowing", choices=("on", "off"), default="on")
    parser.add_argument("--los", choices=("probabilistic", "nlos"), default="probabilistic")
    parser.add_argument("--margin", type=float, default=3.0, help="A3 offset plus hysteresis (dB)")
    parser.add_argument("--ttt", type=float, default=0.48, help="time to trigger (s)")
    parser.add_argument("--filter-k", type=int, default=4, help="layer-3 filter coefficient k (TS 38.331 fc4; 0: unfiltered)")
    parser.add_argument("--indoor", type=float, default=0.8, help="share of devices indoors (O2I)")
    parser.add_argument("--elements", type=int, default=10, help="vertical array elements (1: no array nulls)")
    args = parser.parse_args(argv)
    radio = {"shadowing": args.shadowing == "on", "los": args.los, "handover_margin_db": args.margin, "handover_ttt_s": args.ttt,
             "handover_filter_k": args.filter_k, "bs_elements": args.elements, "indoor_fraction": args.indoor}
    rates = np.array([measured_per_minute(args.devices, args.minutes, args.step, seed, radio) for seed in args.seeds])
    rate, ping_pong = rates.mean(axis=0)
    isd = get_cell_system("uma-3.5ghz").cell.inter_site_distance_m
    print(f"`python3 -m benchmarks.handover_rate --devices {args.devices} --minutes {args.minutes:g} --step {args.step:g} "
          f"--seeds {' '.join(map(str, args.seeds))} --shadowing {args.shadowing} --los {args.los} --margin {args.margin:g} --ttt {args.ttt:g} --filter-k {args.filter_k} "
          f"--elements {args.elements} --indoor {args.indoor:g}`\n")
    print(f"| | handovers per device per minute at {SPEED_KMH:g} km/h, UMa ISD {isd:g} m |\n|---|---|")
    print(f"| simulated (shadowing {args.shadowing}, LOS {args.los}, margin {args.margin:g} dB, time to trigger {args.ttt:g} s, {args.elements} elements; mean of {len(args.seeds)} seeds) | {rate:.2f} "
          f"({', '.join(f'{r:.2f}' for r in rates[:, 0])}) |")
    print(f"| of which back to the sector just left within {PING_PONG_S:g} s (ping-pong) | {ping_pong:.2f} |")
    for name, value in analytic_per_minute(SPEED_KMH, isd).items():
        print(f"| analytic, {name} | {value:.2f} (simulated / analytic {rate / value:.2f}) |")


if __name__ == "__main__":
    main()
