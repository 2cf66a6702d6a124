"""The TDMA grants of ``ul_allocation=power-limit`` against the power headroom limit they come
from, and against today's ``headroom`` grants, at many devices over several seeded drops (not a
test: the table ``docs/physical-layer.md`` quotes).

    python3 -m benchmarks.power_limited_grants [--preset uma-3.5ghz] [--devices 1000] [--rounds 20] [--seeds 0 1 2 3 4]

Per seed (one drop of ``devices`` on the preset's centre site, ``rounds`` fading draws):

- *power-limited devices*: those whose open-loop PUSCH power on the whole band exceeds
  ``P_CMAX`` (TS 38.213 7.1.1): their power headroom limit, ``floor(10^((P_CMAX - P0 - alpha PL)
  / 10) / 2^mu)`` blocks (``PhysicalSystem.power_limit_prbs``), is below the band's. Median of
  that limit, and median of their ``power-limit`` grant (the limit at least 1, at most the band,
  rounded down to a DFT-s-OFDM size ``2^a 3^b 5^c``, TS 38.211 6.3.1.4);
- *narrow headroom grants*: the device-rounds that today's ``headroom`` policy grants fewer
  blocks than the band (those below the outage floor on the whole band): the median of those
  grants, and of the power headroom limit and the ``power-limit`` grant of the same device-rounds;
- uplink outage (device-rounds below CQI 1's efficiency on their grant; under the presets'
  ``nr-harq`` also where MCS 0 misses 10% after four copies) under each policy.

Then the mean and the spread (sample standard deviation, min-max) over the seeds.
"""

from __future__ import annotations

import argparse

import numpy as np

from scenarios.definitions.cells import get_cell_system


def measure(preset: str, devices: int, rounds: int, seed: int) -> dict:
    headroom = get_cell_system(preset, overrides={"ul_allocation": "headroom"})
    limited = get_cell_system(preset, overrides={"ul_allocation": "power-limit"})
    layout = headroom.cell.place(devices, np.random.default_rng(seed))
    networks = {"headroom": headroom.network(layout, np.zeros(devices)), "power-limit": limited.network(layout, np.zeros(devices))}
    limit = headroom.power_limit_prbs(networks["headroom"].coupling_loss_db)
    grant = networks["power-limit"].power_limited_grant_prbs
    capped = limit < headroom.uplink_prbs
    narrow_grant, narrow_limit, narrow_power_limited, outage = [], [], [], {name: [] for name in networks}
    for name, network in networks.items():
        rng = np.random.default_rng(seed + 1)  # the same fading draws under both policies
        for _ in range(rounds):
            channel = network.draw_round(rng)
            outage[name].append(channel.uplink_outage.mean())
            if name == "headroom":
                narrow = channel.allocated_prbs < headroom.uplink_prbs
                narrow_grant.append(channel.allocated_prbs[narrow])
                narrow_limit.append(limit[narrow])
                narrow_power_limited.append(grant[narrow])
    return {
        "power_limited": capped.mean(), "limit_median": np.median(limit[capped]), "grant_median": np.median(grant[capped]),
        "narrow": np.concatenate(narrow_grant).size / (devices * rounds),
        "narrow_headroom_median": np.median(np.concatenate(narrow_grant)),
        "narrow_limit_median": np.median(np.concatenate(narrow_limit)),
        "narrow_power_limit_median": np.median(np.concatenate(narrow_power_limited)),
        "outage_headroom": np.mean(outage["headroom"]), "outage_power_limit": np.mean(outage["power-limit"]),
    }


ROWS = (("power_limited", "devices power-limited on the whole band", 100, "%"),
        ("limit_median", "their power headroom limit, median (PRBs)", 1, ""),
        ("grant_median", "their power-limit grant, median (PRBs)", 1, ""),
        ("narrow", "device-rounds on a narrow headroom grant", 100, "%"),
        ("narrow_headroom_median", "those: headroom grant, median (PRBs)", 1, ""),
        ("narrow_limit_median", "those: power headroom limit, median (PRBs)", 1, ""),
        ("narrow_power_limit_median", "those: power-limit grant, median (PRBs)", 1, ""),
        ("outage_headroom", "uplink outage, headroom grants", 100, "%"),
        ("outage_power_limit", "uplink outage, power-limit grants", 100, "%"))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="uma-3.5ghz")
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    args = parser.parse_args(argv)
    results = [measure(args.preset, args.devices, args.rounds, seed) for seed in args.seeds]
    print(f"{args.preset}, {args.devices} devices, {args.rounds} fading rounds, seeds {' '.join(map(str, args.seeds))}\n")
    print("| quantity | " + " | ".join(f"seed {s}" for s in args.seeds) + " | mean | std | min-max |")
    print("|---|" + "---|" * (len(args.seeds) + 3))
    for key, label, scale, unit in ROWS:
        values = np.array([scale * r[key] for r in results])
        spread = f"{values.std(ddof=1):.2f}" if values.size > 1 else "-"
        print(f"| {label} | " + " | ".join(f"{v:.1f}{unit}" for v in values)
              + f" | {values.mean():.2f}{unit} | {spread} | {values.min():.1f}-{values.max():.1f} |")


if __name__ == "__main__":
    main()
