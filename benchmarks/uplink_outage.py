"""Uplink outage at many devices, whole-band TDMA grants against grants sized by each device's
power headroom (``ul_allocation=headroom``, ``PhysicalSystem.allocated_prbs``) and at its power
headroom limit (``power-limit``, the presets' default), on the presets' link layer
(``link_abstraction=nr-harq``: outage also where MCS 0 misses 10% after four copies), and the
per-Mbit uplink energy of TDMA and FDMA in both accountings, radiated and TR 38.840's device
states (not a test: the numbers ``docs/physical-layer.md`` quotes).

    python3 -m benchmarks.uplink_outage [--devices 1000] [--rounds 20] [--seeds 0 1 2 3 4] [--clock-devices 20] [--clock-rounds 5]

Per seed, one drop of ``devices`` devices (layout drawn from ``default_rng(seed)``, the fading
from ``default_rng(seed + 1)``: seed 0 is the drop the page quoted before) and ``rounds``
independent fading draws:

- *outage*: the fraction of device-rounds whose uplink is below the outage floor (CQI 1's
  efficiency) on their TDMA grant, or (``nr-harq``) where MCS 0 misses 10% BLER after four copies;
- *energy per Mbit*: the transmit energy of 1 Mbit at the device's power and rate (TDD: its
  uplink symbols only), median over the device-rounds not in outage of the devices whose
  whole-band power is below ``P_CMAX``; TDMA on the preset's grant (``power-limit``) at its
  expected HARQ goodput (``RoundChannel.harq_uplink_bps``; under ``shannon`` its rate), FDMA
  with ``n`` devices sharing the band (``n`` 10 and 50) at each one's power on its share
  (TS 38.213 7.1.1; under ``nr-harq`` at the share's expected HARQ goodput). Two accountings:
  *radiated* (``power_unit_w=0``, ``ue_energy=airtime``: the radiated watts times the time on the
  air) and *device states* (the presets' ``power_unit_w`` and ``ue_energy=slots``, TR 38.840 Table
  8.1-1's PUSCH state: 250 units at 0 dBm to 700 at 23 dBm, charged for the time on the air, and
  PDCCH monitoring, 100 units, in the upload's downlink slots).

Then on the clock (``netsim.simulate_rounds``, the vectorized timeline for TDMA, the processes
for FDMA): per seed one drop of ``clock_devices`` devices (``default_rng([seed, 0])``),
``clock_rounds`` rounds in which every device uploads 1 Mbit at once (no downlink, no compute;
TDMA uploads drawn through the link layer, their HARQ stream ``SeedSequence([seed, 5])``);
the uploads heard (not in uplink outage) and the transmit energy of all uploads over their bits (mJ/Mbit), split into the devices whose
whole-band power is below ``P_CMAX`` and the power-limited ones (at ``P_CMAX``), and the mean
round. Every figure: mean +- sample standard deviation [min-max] over the seeds.
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np

from benchmarks.spread import spread
from contract import RoundPlan
from netsim import simulate_rounds
from netsim.radio import harq_uplink
from scenarios.definitions.cells import get_cell_system

PRESETS = ("uma-3.5ghz", "umi-3.5ghz")
SHARINGS = (10, 50)
ACCOUNTINGS = {"radiated (power_unit_w=0)": {"power_unit_w": 0.0, "ue_energy": "airtime"}, "device states (TR 38.840, default)": {}}



def measure(preset: str, overrides: dict, devices: int, rounds: int, seed: int) -> dict:
    """Outage, narrow grants and the median mJ/Mbit of TDMA and FDMA n = 10, 50 for one seed."""
    system = get_cell_system(preset, overrides=overrides)
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
        rate_bps = channel.harq_uplink_bps if system.link_abstraction == "nr-harq" else channel.uplink_bps
        with np.errstate(divide="ignore"):
            tdma_mj.append(np.where(ok & below_cap, 1e3 * channel.transmit_j(1e6 / rate_bps, everyone), np.nan))
        for n in SHARINGS:
            with np.errstate(divide="ignore"):  # no goodput on the share: no energy per bit to give (masked below)
                seconds = 1e6 / channel.uplink_share_bps(everyone, n)
            carried = ok & below_cap & np.isfinite(seconds)
            fdma_mj[n].append(np.where(carried, 1e3 * network.upload_j(network.share_power_w(everyone, n) * np.where(carried, seconds, 0.0)),
                                       np.nan))
    return {"outage": float(np.mean(outage)), "narrow": float(np.mean(narrow)), "tdma": float(np.nanmedian(tdma_mj)),
            **{f"fdma{n}": float(np.nanmedian(fdma_mj[n])) for n in SHARINGS}}


def measure_clock(preset: str, overrides: dict, devices: int, rounds: int, seed: int) -> dict:
    """Transmit mJ per uplink Mbit on the clock (all devices, below ``P_CMAX``, at ``P_CMAX``) and the mean round."""
    system = get_cell_system(preset, overrides=overrides)
    layout = system.cell.place(devices, np.random.default_rng([seed, 0]))
    network = system.network(layout, np.zeros(devices))
    if system.link_abstraction == "nr-harq":  # TDMA uploads drawn through the link layer: the HARQ stream ([seed, 5])
        network = dataclasses.replace(network, link_state=harq_uplink.LinkState(np.random.SeedSequence([seed, 5])))
    capped = network.uplink_power_dbm >= system.uplink.tx_power_dbm - 1e-9
    plan = RoundPlan((), {d: 1e6 for d in range(devices)}, tuple(range(devices)))
    records, trace = simulate_rounds([plan] * rounds, network, 1e6, np.random.default_rng([seed, 1]),
                                     channel_rng=np.random.default_rng([seed, 2]))
    ups = [e for e in trace if e.kind == "uplink"]

    def per_mbit(events) -> float:
        bits = sum(e.bits for e in events)
        return 1e3 * sum(e.energy_j for e in events) / (bits / 1e6) if bits else float("nan")

    return {"all": per_mbit(ups), "below": per_mbit([e for e in ups if not capped[e.entity]]),
            "capped": per_mbit([e for e in ups if capped[e.entity]]),
            "heard": len(ups) / (devices * rounds), "round_s": float(np.mean([r.end - r.start for r in records])),
            "capped_devices": int(capped.sum())}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--clock-devices", type=int, default=20)
    parser.add_argument("--clock-rounds", type=int, default=5)
    args = parser.parse_args(argv)
    seeds = " ".join(map(str, args.seeds))
    print(f"{args.devices} devices, {args.rounds} fading rounds, seeds {seeds}: mean +- sample std over the seeds [min-max]\n")
    print("| cell | TDMA grant | uplink outage | grants narrower than the band |")
    print("|---|---|---|---|")
    for preset in PRESETS:
        for allocation in ("whole-band", "headroom", "power-limit"):
            rs = [measure(preset, {"ul_allocation": allocation, **ACCOUNTINGS["radiated (power_unit_w=0)"]}, args.devices, args.rounds, s) for s in args.seeds]
            print(f"| {preset} | {allocation} | {spread([r['outage'] for r in rs], 2, 100, '%')} | "
                  f"{spread([r['narrow'] for r in rs], 1, 100, '%')} |")

    print("\nmJ per Mbit, median over the device-rounds not in outage of the devices below P_CMAX (TDMA: the preset's power-limit grants)\n")
    print("| cell | accounting | TDMA mJ/Mbit | " + " | ".join(f"FDMA n={n} mJ/Mbit" for n in SHARINGS) + " | "
          + " | ".join(f"FDMA n={n} / TDMA" for n in SHARINGS) + " |")
    print("|---|---|---|" + "---|" * (2 * len(SHARINGS)))
    for preset in PRESETS:
        for accounting, overrides in ACCOUNTINGS.items():
            rs = [measure(preset, overrides, args.devices, args.rounds, s) for s in args.seeds]
            print(f"| {preset} | {accounting} | {spread([r['tdma'] for r in rs], 3)} | "
                  + " | ".join(spread([r[f'fdma{n}'] for r in rs], 3) for n in SHARINGS) + " | "
                  + " | ".join(spread([r[f'fdma{n}'] / r['tdma'] for r in rs], 2) for n in SHARINGS) + " |")

    print(f"\nOn the clock: {args.clock_devices} devices each uploading 1 Mbit at once, {args.clock_rounds} rounds per seed, "
          f"seeds {seeds}; transmit mJ per uplink Mbit\n")
    print("| cell | accounting | uplink | uploads heard | all devices | devices below P_CMAX | power-limited devices | round (s) |")
    print("|---|---|---|---|---|---|---|---|")
    for preset in PRESETS:
        for accounting, overrides in ACCOUNTINGS.items():
            for access, extra in (("TDMA power-limit", {}), ("FDMA", {"uplink_access": "fdma"})):
                rs = [measure_clock(preset, {**overrides, **extra}, args.clock_devices, args.clock_rounds, s) for s in args.seeds]
                print(f"| {preset} | {accounting} | {access} | {spread([r['heard'] for r in rs], 1, 100, '%')} | {spread([r['all'] for r in rs], 1)} | "
                      f"{spread([r['below'] for r in rs], 1)} | {spread([r['capped'] for r in rs], 1)} | "
                      f"{spread([r['round_s'] for r in rs], 1)} |", flush=True)
    print("\npower-limited devices per seed: " + ", ".join(
        f"{p} " + "/".join(str(measure_clock(p, {}, args.clock_devices, 1, s)["capped_devices"]) for s in args.seeds) for p in PRESETS))


if __name__ == "__main__":
    main()
