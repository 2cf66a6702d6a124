"""Uplink outage and user throughput of one FL upload round at many devices: TDMA on each
grant policy (``ul_allocation`` ``whole-band``, ``headroom``, ``power-limit``) against FDMA and the
proportional-fair scheduler (``uplink_access=pf``), and the last two on the interference of the
devices actually uploading (``ul_interference=clock``) in place of the full-buffer interferers,
and FDMA and PF through the NR link layer (``link_abstraction=nr-harq``: each grant at its
expected HARQ goodput), with either interference (not a test: the tables ``docs/physical-layer.md``
quotes).

    python3 -m benchmarks.uplink_access [--preset uma-3.5ghz] [--devices 1000] [--rounds 5] [--megabits 1] [--seeds 0 1 2 3 4]
                                        [--uplinks NAME ...] [--radio KEY=VALUE ...]

Per seed: one drop of ``devices`` devices on the preset's centre site; ``rounds`` rounds on the
clock (``netsim.simulate_rounds``, the vectorized timeline), each one in which every device
uploads ``megabits`` at once (no downlink, no compute: the uplink alone), its fading drawn anew.
Per round:

- *uplink outage*: the share of the devices dropped for uplink outage;
- *user throughput*: a device's bits over the time from the round's start to its upload's end
  (waiting for its grant or its share included), mean and 5th percentile over the devices that
  uploaded (the outage is counted apart);
- *round*: the last upload's end; *transmit energy*: mean over the devices that uploaded.

Then the mean over the rounds of each seed, and the mean and sample standard deviation (and
range) over the seeds.
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np

from contract import RoundPlan
from netsim import simulate_rounds
from netsim.dynamics.rounds import dynamics_of
from netsim.radio import harq_uplink
from scenarios.definitions.cells import get_cell_system

POLICIES = {"TDMA whole-band": {"ul_allocation": "whole-band"}, "TDMA headroom": {"ul_allocation": "headroom"},
            "TDMA power-limit (default)": {"ul_allocation": "power-limit"}, "FDMA": {"uplink_access": "fdma"},
            "PF": {"uplink_access": "pf"}, "PF clock interference": {"uplink_access": "pf", "ul_interference": "clock"},
            "FDMA clock interference": {"uplink_access": "fdma", "ul_interference": "clock"},
            "FDMA nr-harq": {"uplink_access": "fdma", "link_abstraction": "nr-harq"},
            "FDMA nr-harq clock interference": {"uplink_access": "fdma", "link_abstraction": "nr-harq", "ul_interference": "clock"},
            "PF nr-harq": {"uplink_access": "pf", "link_abstraction": "nr-harq"},
            "PF nr-harq clock interference": {"uplink_access": "pf", "link_abstraction": "nr-harq", "ul_interference": "clock"}}


def measure(preset: str, overrides: dict, devices: int, rounds: int, bits: float, seed: int) -> dict:
    system = get_cell_system(preset, overrides=overrides)
    layout = system.cell.place(devices, np.random.default_rng([seed, 0]))
    network = system.network(layout, np.zeros(devices))
    if system.in_time:  # a moving cell (--radio speed_kmh=...): its paths from their own stream, the same layout
        network = dataclasses.replace(network, dynamics=dynamics_of(system, layout, np.random.default_rng([seed, 4])))
    if system.ul_interference == "clock":  # the interference fading's own stream (a run's: contract.seeds.interference_seed)
        network = dataclasses.replace(network, interference_rng=np.random.default_rng([seed, 3]))
    if system.link_abstraction == "nr-harq":  # TDMA uploads drawn through the link layer: the HARQ stream ([seed, 5])
        network = dataclasses.replace(network, link_state=harq_uplink.LinkState(np.random.SeedSequence([seed, 5])))
    plan = RoundPlan((), {d: bits for d in range(devices)}, tuple(range(devices)))
    records, trace = simulate_rounds([plan] * rounds, network, bits, np.random.default_rng([seed, 1]),
                                     channel_rng=np.random.default_rng([seed, 2]))
    out = {"outage": [], "mean_mbps": [], "p5_mbps": [], "round_s": [], "energy_mj": []}
    for record in records:
        ups = [e for e in trace if e.round == record.server_round and e.kind == "uplink"]
        dropped = sum(1 for e in trace if e.round == record.server_round and e.kind == "dropped")
        throughput_mbps = np.array([e.bits / (e.end - record.start) for e in ups]) / 1e6
        out["outage"].append(dropped / devices)
        out["mean_mbps"].append(throughput_mbps.mean())
        out["p5_mbps"].append(np.percentile(throughput_mbps, 5))
        out["round_s"].append(record.end - record.start)
        out["energy_mj"].append(1e3 * np.mean([e.energy_j for e in ups]))
    return {key: float(np.mean(values)) for key, values in out.items()}


COLUMNS = (("outage", "uplink outage", 100, "%", 2), ("mean_mbps", "mean user throughput (Mbit/s)", 1, "", 3),
           ("p5_mbps", "5th-percentile user throughput (Mbit/s)", 1, "", 4), ("round_s", "round (s)", 1, "", 1),
           ("energy_mj", "transmit energy per upload (mJ)", 1, "", 1))


def _number(text: str):
    """A ``--radio`` value: a number where it reads as one, else the word."""
    try:
        return float(text)
    except ValueError:
        return text


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="uma-3.5ghz")
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--megabits", type=float, default=1.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--uplinks", nargs="+", choices=list(POLICIES), default=list(POLICIES), help="the rows to run")
    parser.add_argument("--radio", action="append", default=[], metavar="KEY=VALUE",
                        help="a radio setting added to every row (e.g. speed_kmh=3: a moving cell, coverage=network)")
    args = parser.parse_args(argv)
    extra = {key: _number(value) for key, value in (setting.split("=", 1) for setting in args.radio)}
    print(f"{args.preset}{''.join(' --radio ' + r for r in args.radio)}, {args.devices} devices each uploading {args.megabits:g} Mbit at once, {args.rounds} rounds per seed, "
          f"seeds {' '.join(map(str, args.seeds))}: mean +- sample std over the seeds [min-max]\n")
    print("| uplink | " + " | ".join(label for _, label, _, _, _ in COLUMNS) + " |")
    print("|---|" + "---|" * len(COLUMNS))
    for name in args.uplinks:
        overrides = {**POLICIES[name], **extra}
        results = [measure(args.preset, overrides, args.devices, args.rounds, 1e6 * args.megabits, seed) for seed in args.seeds]
        cells = []
        for key, _, scale, unit, digits in COLUMNS:
            values = np.array([scale * r[key] for r in results])
            std = values.std(ddof=1) if values.size > 1 else 0.0
            cells.append(f"{values.mean():.{digits}f}{unit} +- {std:.{digits}f} [{values.min():.{digits}f}-{values.max():.{digits}f}]")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
