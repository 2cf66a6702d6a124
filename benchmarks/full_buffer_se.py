"""The cell's full-buffer spectral efficiency, downlink and uplink, as ITU-R M.2410 defines it
(cell average bit/s/Hz per TRxP and 5th-percentile user), beside a published evaluation (not a
test: the table ``docs/link-layer.md`` quotes).

    python3 -m benchmarks.full_buffer_se [--presets uma-3.5ghz umi-3.5ghz uma-2.1ghz] [--drops 50] [--devices 30] [--rounds 20] [--seeds 0 1 2 3 4] [--radio KEY=VALUE ...]

Per seed: ``drops`` independent drops of ``devices`` devices on the centre site (30: ITU-R
M.2412's 10 users per TRxP on average over its three sectors), each with ``rounds`` block-fading
draws. Full buffer, round robin: each sector (TRxP) gives each of its ``N_s`` devices an equal
share of its resource blocks over time, 1 / ``N_s``: the whole band downlink, one device at a
time; uplink on the TDMA grant ``ul_allocation`` gives, a device on ``m`` of the ``M`` blocks
sent ``M / m`` times as often (narrow grants side by side, packed without loss). A device's
throughput is its rate on the band at its grant's efficiency, averaged over the rounds (0 in a
round it is in outage), over ``N_s``; the sector's is the mean of its devices' rates. M.2410 (clauses 4.4, 4.5):

- *average spectral efficiency*: the TRxPs' throughput over the channel bandwidth (20 MHz),
  averaged over the TRxPs of every drop;
- *5th-percentile user spectral efficiency*: the 5% point of the users' throughput over the
  channel bandwidth, pooled over the seed's drops.

Rates are the cell's own (``RoundChannel.downlink_bps``/``uplink_bps``): the duplex share,
the resource blocks' occupancy and TS 38.306's overhead included. Both columns are given for
TDD: per second of the whole carrier (what the cell delivers) and per second of the
direction's own slots (the duplex share removed: the figure an FDD evaluation would give).
Each under ``link_abstraction`` ``shannon`` and ``nr`` (not the presets' ``nr-harq``, which draws each upload) on the same drops and
fading draws. ``--radio`` overrides a preset's parameter as ``fl-cosim``'s does (e.g.
``bs_rx_antennas=32``). Then the mean and the sample standard deviation over the seeds.
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np

from scenarios.definitions.cells import get_cell_system

PRESETS = ("uma-3.5ghz", "umi-3.5ghz", "uma-2.1ghz")
ABSTRACTIONS = ("shannon", "nr")


def measure(preset: str, drops: int, devices: int, rounds: int, seed: int, overrides: dict | None = None) -> dict:
    """{(abstraction, direction): (average SE, 5th-percentile user SE)} per second of the carrier."""
    base = get_cell_system(preset, overrides=overrides)
    systems = {name: dataclasses.replace(base, link_abstraction=name) for name in ABSTRACTIONS}
    layout_rng = np.random.default_rng([seed, 0])
    cells = {key: [] for key in ((a, d) for a in ABSTRACTIONS for d in ("downlink", "uplink"))}
    users = {key: [] for key in cells}
    for drop in range(drops):
        layout = base.cell.place(devices, layout_rng)
        sector = np.asarray(layout.sector)
        for name, system in systems.items():
            network = system.network(layout, np.zeros(devices))
            fading_rng = np.random.default_rng([seed, 1, drop])  # the same draws under each abstraction
            rates = {"downlink": np.zeros(devices), "uplink": np.zeros(devices)}
            for _ in range(rounds):
                channel = network.draw_round(fading_rng)
                rates["downlink"] += np.where(channel.downlink_outage, 0.0, channel.downlink_bps) / rounds
                # its rate per share of the band's blocks: a grant of m of M blocks served M / m times as often
                per_band = channel.uplink_bps * system.uplink_prbs / channel.allocated_prbs
                rates["uplink"] += np.where(channel.uplink_outage, 0.0, per_band) / rounds
            for direction, rate in rates.items():
                bandwidth_hz = (system.downlink if direction == "downlink" else system.uplink).bandwidth_hz
                for s in np.unique(sector):
                    served = sector == s
                    cells[(name, direction)].append(rate[served].mean() / bandwidth_hz)
                    users[(name, direction)].extend(rate[served] / served.sum() / bandwidth_hz)
    return {key: (float(np.mean(cells[key])), float(np.percentile(users[key], 5))) for key in cells}


def _value(item: str) -> tuple[str, object]:
    """``KEY=VALUE``, the value an int, a float or else the text."""
    key, _, text = item.partition("=")
    for kind in (int, float):
        try:
            return key, kind(text)
        except ValueError:
            pass
    return key, text


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", nargs="+", default=list(PRESETS))
    parser.add_argument("--drops", type=int, default=50)
    parser.add_argument("--devices", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--radio", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    overrides = dict(_value(item) for item in args.radio)
    if overrides:
        print("overrides: " + ", ".join(f"{k}={v}" for k, v in overrides.items()))
    print(f"{args.drops} drops x {args.devices} devices x {args.rounds} fading rounds per seed, seeds "
          f"{' '.join(map(str, args.seeds))}; mean +- sample std over the seeds (bit/s/Hz)\n")
    print("| cell | link abstraction | direction | average SE per TRxP | 5th-percentile user SE | "
          "average SE, direction's slots | 5th-percentile, direction's slots |")
    print("|---|---|---|---|---|---|---|")
    for preset in args.presets:
        system = get_cell_system(preset, overrides=overrides)
        results = [measure(preset, args.drops, args.devices, args.rounds, seed, overrides) for seed in args.seeds]
        for name in ABSTRACTIONS:
            for index, direction in enumerate(("downlink", "uplink")):
                share = system.shares[index]
                values = np.array([r[(name, direction)] for r in results])  # seeds x (average, 5th)
                mean, std = values.mean(axis=0), values.std(axis=0, ddof=1) if len(results) > 1 else np.zeros(2)
                print(f"| {preset} | {name} | {direction} | {mean[0]:.3f} +- {std[0]:.3f} | {mean[1]:.4f} +- {std[1]:.4f} | "
                      f"{mean[0] / share:.3f} | {mean[1] / share:.4f} |")


if __name__ == "__main__":
    main()
