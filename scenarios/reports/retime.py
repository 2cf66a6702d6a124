"""Re-time a finished run on another network without retraining (journal Fig. 6 from one run).

The learning does not depend on the network when every device arrives (no deadline, no
outage), so the recorded plans, simulated again on another system, give the run's curve on
that system. On a physical cell the re-timing turns the outage threshold off (every listener
is served, however slow: outages would have changed the learning) and gives energy too.
A report over finished folders: it reads them (``read_run``, ``read_plans``), runs the clock
(``netsim``) and writes nothing.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from netsim import retime_plans, simulate_rounds
from scenarios.definitions.seeds import seed_streams
from scenarios.records.result_folder import ResultError, RunCurve, read_plans, read_run


def retimed_curve(folder: str | Path, system, rng: np.random.Generator | None = None,
                  network_seq: np.random.SeedSequence | None = None) -> RunCurve:
    """The run's curve with times from ``system`` (in units of its ``T_dl``, or seconds on a
    physical cell, whose layout and fading come from ``network_seq``'s channel child). Without
    ``rng`` and ``network_seq``, the run's own network stream gives both: the compute draws it
    ran with, so on its own system the times are its own."""
    curve = read_run(folder)
    if rng is None and network_seq is None:
        network_seq = seed_streams(int(curve.config["seed"])).network
        rng = np.random.default_rng(network_seq)
    if curve.config["system"].get("deadline") is not None:
        raise ResultError(f"{folder} ran with a deadline: its learning depends on the network, re-run it instead")
    if curve.summary.get("dropped"):
        raise ResultError(f"{folder} had dropped devices ({curve.summary['dropped']}): its learning depends on the network, re-run it instead")
    plans = read_plans(folder)
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


def curves_by_system(result_dirs: Sequence[str | Path], systems: Mapping | None = None,
                     seed: int | None = None) -> dict[str | None, list[RunCurve]]:
    """The runs' curves as recorded (under None), or with ``systems`` (name -> system) re-timed
    on each (under its name), each run with its own network stream, or every run with
    ``seed``'s when given: what ``plot`` draws, one panel per key."""
    if not systems:
        return {None: [read_run(folder) for folder in result_dirs]}

    def retimed(folder, system):
        if seed is None:
            return retimed_curve(folder, system)
        network = seed_streams(seed).network  # a fresh sequence per run: binding a cell spawns from it
        return retimed_curve(folder, system, np.random.default_rng(network), network)

    return {name: [retimed(folder, system) for folder in result_dirs] for name, system in systems.items()}
