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

With shadowing the geometric rate is not the shadowed network's: TR 38.901's shadow fading,
correlated as ``exp(-d/d_corr)``, is not differentiable, so the strongest sector's boundary has no
finite crossing rate (unfiltered, the count grows as the reading step's ``-1/2`` power). Layer 3's
filter makes it finite, and for the one case it covers, ``rice_per_minute`` gives its analytic
partner: every link NLOS (``--los nlos``), every device outdoors (``--indoor 0``), zero margin and no
time to trigger, filter ``fc k`` > 0. There the filtered measurement of two sites' difference is
``m(t) + Y(t)``: ``m`` the shadow-free difference (path loss and antennas), ``Y`` the filtered
difference of the two sites' independent shadow fields, along the path an exponentially
correlated (Ornstein-Uhlenbeck) process of variance ``2 sigma^2`` and time constant
``T = d_corr / v`` through the filter's exponential of time constant ``tau``
(``(1 - a)^(dt / X) = exp(-dt / tau)``), a Gaussian process of variance ``s0^2 = 2 sigma^2 T / (T + tau)``
and derivative variance ``s1^2 = 2 sigma^2 / (tau (T + tau))`` (its spectrum
``2 T / (1 + w^2 T^2)`` times ``1 / (1 + w^2 tau^2)``, integrated). Rice's formula counts its zero
crossings: ``E N = int phi(m / s0) / s0 E|m' + s1 Z| dt``, Z standard normal, each pair of the
``RICE_PAIRS`` strongest sites' crossing weighted by the probability that the other sites'
filtered measurements (independent, each of variance ``s0^2 / 2``) lie below the pair's common
level there (Gauss-Hermite over that level); a change between co-sited sectors, which share
their shadowing and LOS state (TR 38.901 Sec. 7.5 step 4), counts when its site is the strongest,
with that probability. The integral runs along the benchmark's own shadow-free, filtered paths
(the same seeds). Its assumptions: Gaussian fields (the simulation's are sums of 16 sinusoids
with that correlation) and continuous reading (the simulation reads every ``--step``, missing a
crossing and its return within one step).

Usage: python3 -m benchmarks.handover_rate [--devices 300] [--minutes 2] [--step 0.1] [--seeds 0] [--shadowing on|off] [--los probabilistic|nlos] [--margin 3] [--ttt 0.48] [--filter-k 4] [--elements 10] [--indoor 0.8]
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from scipy.special import ndtr

from contract.seeds import motion_seed
from netsim.dynamics.association import L1_PERIOD_S
from netsim.dynamics.motion import SF_CORRELATION_M, ChannelInTime
from scenarios.definitions.cells import get_cell_system

SPEED_KMH = 30.0
PING_PONG_S = 1.0
RICE_SITES, RICE_PAIRS, RICE_NODES = 8, 5, 16  # sites in the "others below" product; the strongest of them paired; Gauss-Hermite nodes


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


def _channel(devices: int, seed: int, radio: dict, step_s: float) -> ChannelInTime:
    """The moving channel of ``seed``, its association measuring every ``step_s`` (a run's: every
    ``L1_PERIOD_S``, 200 ms)."""
    system = get_cell_system("uma-3.5ghz", overrides={"speed_kmh": SPEED_KMH, **radio})
    network_seq = np.random.SeedSequence(seed)
    layout = system.cell.place(devices, np.random.default_rng(network_seq))
    return ChannelInTime.start(system, layout, np.random.default_rng(motion_seed(network_seq)), measurement_period_s=step_s)


def covered_by_rice(radio: dict) -> bool:
    """The configurations ``rice_per_minute`` is the analytic partner of."""
    return (radio["shadowing"] and radio["los"] == "nlos" and radio["indoor_fraction"] == 0.0 and radio["handover_margin_db"] == 0.0
            and radio["handover_ttt_s"] == 0.0 and radio["handover_filter_k"] > 0)


def filtered_shadowing_db(sigma_db: float, correlation_m: float, speed_m_s: float, k: int) -> tuple[float, float]:
    """(s0 dB, s1 dB/s): the standard deviations of the layer-3 filtered difference of two sites'
    independent shadow fields (each ``sigma_db``, ``exp(-d / correlation_m)``) read by a device
    moving at ``speed_m_s``, and of its time derivative (see the module's docstring)."""
    tau_s = -L1_PERIOD_S / math.log(1.0 - 2.0 ** (-k / 4.0))
    t_s = correlation_m / speed_m_s
    return math.sqrt(2.0 * t_s / (t_s + tau_s)) * sigma_db, math.sqrt(2.0 / (tau_s * (t_s + tau_s))) * sigma_db


def mean_abs_db(mean, sd: float):
    """``E|mean + sd Z|``, Z standard normal."""
    return sd * math.sqrt(2.0 / math.pi) * np.exp(-0.5 * (mean / sd) ** 2) + mean * (1.0 - 2.0 * ndtr(-mean / sd))


def _all_below(level, others, site_sd: float, weights) -> np.ndarray:
    """Per device, the probability that every other site's filtered measurement (``others``, each
    of standard deviation ``site_sd``) lies below ``level`` (devices x Gauss-Hermite nodes),
    averaged over the nodes with ``weights``."""
    return np.prod(ndtr((level[:, :, None] - others[:, None, :]) / site_sd), axis=2) @ weights


def rice_per_minute(devices: int, minutes: float, step_s: float, seed: int, radio: dict) -> float:
    """Rice's expected handovers per device per minute of the shadowed, filtered, zero-margin
    association, integrated along the shadow-free, filtered paths of ``seed`` (see the module's docstring)."""
    channel = _channel(devices, seed, {**radio, "shadowing": False}, step_s)
    cell = channel.system.cell
    s0, s1 = filtered_shadowing_db(cell.propagation.sigma_sf_nlos_db, SF_CORRELATION_M[cell.scenario][1], SPEED_KMH / 3.6,
                                   radio["handover_filter_k"])
    site_sd = s0 / math.sqrt(2.0)  # one site's filtered shadowing
    nodes, weights = np.polynomial.hermite_e.hermegauss(RICE_NODES)
    weights = weights / weights.sum()
    rows = np.arange(devices)[:, None]
    expected, before, sector_before = 0.0, None, None
    for i in range(int(round(60.0 * minutes / step_s)) + 1):
        channel.at(i * step_s)
        by_site = channel.measured_db.reshape(devices, -1, 3)
        mean, sector = by_site.max(axis=2), by_site.argmax(axis=2)  # devices x sites: each site's best sector
        top = np.argsort(-mean, axis=1)[:, :RICE_SITES]
        level = mean[rows, top]  # devices x K, strongest first
        if before is not None:
            slope = (level - before[rows, top]) / step_s
            for a, b in zip(*np.triu_indices(RICE_PAIRS, 1)):  # two sites' crossing, the others below the common level
                gap, others = level[:, a] - level[:, b], np.delete(level, [a, b], axis=1)
                common = 0.5 * (level[:, a] + level[:, b])[:, None] + nodes * site_sd / math.sqrt(2.0)  # devices x nodes
                on_top = _all_below(common, others, site_sd, weights)
                density = np.exp(-0.5 * (gap / s0) ** 2) / (s0 * math.sqrt(2.0 * math.pi))
                expected += float(np.sum(density * mean_abs_db(slope[:, a] - slope[:, b], s1) * on_top) * step_s)
            turned = sector[rows, top] != sector_before[rows, top]  # within a site: co-sited sectors share the shadowing
            for a in range(RICE_SITES):
                others = np.delete(level, a, axis=1)
                shadowed = level[:, a, None] + nodes * site_sd  # devices x nodes
                on_top = _all_below(shadowed, others, site_sd, weights)
                expected += float(np.sum(on_top[turned[:, a]]))
        before, sector_before = mean, sector
    return expected / devices / minutes


def measured_per_minute(devices: int, minutes: float, step_s: float, seed: int, radio: dict) -> tuple[float, float]:
    channel = _channel(devices, seed, radio, step_s)
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
    if covered_by_rice(radio):
        rice = np.array([rice_per_minute(args.devices, args.minutes, args.step, seed, radio) for seed in args.seeds])
        print(f"| analytic with shadowing (Rice, filtered, along the same paths) | {rice.mean():.2f} "
              f"({', '.join(f'{r:.2f}' for r in rice)}; simulated / analytic {rate / rice.mean():.2f}) |")


if __name__ == "__main__":
    main()
