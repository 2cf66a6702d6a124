"""Re-time a finished run on another network without retraining (journal Fig. 6 from one run).

The learning does not depend on the network when every device arrives (no deadline, no
outage), so the recorded plans, simulated again on another system, give the run's curve on
that system. On a physical cell the re-timing turns the outage threshold off (every listener
is served, however slow: outages would have changed the learning) and gives energy too.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from contract import RoundPlan
from netsim import retime_plans, simulate_rounds
from scenarios.records.result_folder import ResultError, RunCurve, read_plans, read_run


def run_network_seed(seed: int) -> np.random.SeedSequence:
    """The network stream of run seed ``seed``: the third child of its SeedSequence, as
    ``scenarios.definitions.seeds.seed_streams`` splits it (data, learner, network; a test holds them equal)."""
    return np.random.SeedSequence(seed).spawn(3)[2]


def retimed_curve(folder: str | Path, system, rng: np.random.Generator | None = None,
                  network_seq: np.random.SeedSequence | None = None) -> RunCurve:
    """The run's curve with times from ``system`` (in units of its ``T_dl``, or seconds on a
    physical cell, whose layout and fading come from ``network_seq``'s channel child). Without
    ``rng`` and ``network_seq``, the run's own network stream gives both: the compute draws it
    ran with, so on its own system the times are its own."""
    curve = read_run(folder)
    if rng is None and network_seq is None:
        network_seq = run_network_seed(int(curve.config["seed"]))
        rng = np.random.default_rng(network_seq)
    if curve.config["system"].get("deadline") is not None:
        raise ResultError(f"{folder} ran with a deadline: its learning depends on the network, re-run it instead")
    if curve.summary.get("dropped"):
        raise ResultError(f"{folder} had dropped devices ({curve.summary['dropped']}): its learning depends on the network, re-run it instead")
    try:
        plans = [RoundPlan.from_dict(r["plan"]) if r["plan"] else None for r in read_plans(folder)]
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ResultError(f"{folder} has no readable plans.jsonl ({error})") from None
    model_bits = float(curve.config["model"]["bits"])
    if not system.records_energy:
        ends = retime_plans(plans, system, model_bits, rng)
        return dataclasses.replace(curve, time=[ends[r] / system.t_dl for r in curve.rounds], time_unit="T_dl", energy_j=None)
    samples = curve.config.get("device_samples_per_update")
    if samples is None:
        raise ResultError(f"{folder} does not record its devices' samples per update (an older run): re-run it to re-time it on a cell")
    system = dataclasses.replace(system, min_bps_per_hz=None)
    network, channel_rng = system.bind(np.asarray(samples, dtype=float), network_seq if network_seq is not None else np.random.SeedSequence(0))
    records, _ = simulate_rounds(plans, network, model_bits, rng, channel_rng=channel_rng)
    spent = np.cumsum([sum((r.energy_j or {}).values()) for r in records])
    return dataclasses.replace(curve, time=[records[r].end for r in curve.rounds], time_unit="s",
                               energy_j=[float(spent[r]) for r in curve.rounds])
