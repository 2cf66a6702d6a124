"""Re-time a finished run on another network without retraining (journal Fig. 6 from one run).

The learning does not depend on the network when every device arrives (no deadline, no
outage) and who takes part is drawn without looking at the network (a scheduler that needs no
channel report or deadline, no device leaving as the clock runs), so the recorded plans,
simulated again on another system, give the run's curve on that system. Anything else is
refused in one line (``check_retimable``, ``timing_dependence``): a run recorded under a
buffered orchestrator (fedbuff, fedasync: its dispatches follow the arrivals and it records no
round plans), with a deadline, dropped devices, a network-aware scheduler or a cell in time
(batteries, availability, motion: ``cell_dynamics``), and a target system with a deadline, an
outage threshold given or a cell in time. On a physical cell the re-timing turns the outage
threshold off (every listener is served, however slow: outages would have changed the learning)
and gives energy too.
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
    check_retimable(curve, system)
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
    records, _ = simulate_rounds(plans, network, model_bits, rng, keep_trace=False, channel_rng=channel_rng)  # times and energy alone
    spent = np.cumsum([sum((r.energy_j or {}).values()) for r in records])
    return dataclasses.replace(curve, time=[records[r].end for r in curve.rounds], time_unit="s",
                               energy_j=[float(spent[r]) for r in curve.rounds])


def check_retimable(curve: RunCurve, system) -> None:
    """ResultError (one line) where re-timing ``curve`` on ``system`` would not give that
    system's run: who takes part, or when, depended on the timing (``timing_dependence``)."""
    reason = timing_dependence(curve)
    if reason is not None:
        raise ResultError(f"{curve.folder} {reason}: its learning depends on the timing, re-run it instead")
    if getattr(system, "deadline", None) is not None:
        raise ResultError("a system with a deadline drops late devices, which changes the learning: "
                          "re-timing takes none (run on it instead)")
    dynamics = cell_dynamics(system)
    if dynamics:
        raise ResultError(f"a system with {', '.join(dynamics)} changes who takes part, which changes the learning: "
                          "re-timing takes none (run on it instead)")


def timing_dependence(curve: RunCurve) -> str | None:
    """Why the recorded run's learning depends on its timing (None: it does not, it can be
    re-timed): a buffered orchestrator (its dispatches follow the arrivals; its ``plans.jsonl``
    holds no round plans), a deadline, dropped devices, a scheduler that picks devices from the
    network, or a cell in time (``cell_dynamics``: batteries, availability, motion)."""
    from netsim.scheduling import POLICIES

    config = curve.config
    orchestrator = config.get("clock", {}).get("orchestrator", "sync")
    if orchestrator != "sync":
        return f"ran with --orchestrator {orchestrator}, whose dispatches follow the arrivals (it records no round plans)"
    if config["system"].get("deadline") is not None:
        return "ran with a deadline"
    if curve.summary.get("dropped"):
        return f"had dropped devices ({curve.summary['dropped']})"
    policy = POLICIES.get(config.get("communication", {}).get("scheduler", "random"))
    if policy is not None and (policy.needs_channel or policy.needs_deadline):
        return f"ran with scheduler {policy.name!r}, which picks devices from the network"
    dynamics = cell_dynamics(config["system"])
    if dynamics:
        return f"ran on a cell in time ({', '.join(dynamics)}), which changes who takes part"
    return None


def cell_dynamics(system) -> list[str]:
    """The settings of a cell in time (``netsim.dynamics``) that ``system`` has, as ``KEY=VALUE``:
    a battery (``battery_j``), availability (``mean_off_s`` > 0, ``availability_trace``) and
    motion (``speed_kmh`` other than 0), each of which changes who takes part as the clock runs.
    ``system``: a built system or a recorded one (the config's ``system``); a normalized system
    has none."""
    def value(source, key, default=None):
        return source.get(key, default) if isinstance(source, dict) else getattr(source, key, default)

    found = [f"{key}={value(system, key)}" for key, off in (("battery_j", None), ("mean_off_s", 0.0), ("availability_trace", None))
             if value(system, key, off) not in (off, 0)]
    speed = value(value(system, "cell", {}) or {}, "speed_kmh", 0.0)
    if speed not in (0, 0.0, None):
        found.append(f"speed_kmh={speed}")
    return found


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


def retime_systems(texts: Sequence[str]) -> dict:
    """The systems named by ``texts`` (``parse_system``: a preset and its overrides) that a run
    can be re-timed onto, text -> system; UsageError, one line, for one whose arrivals would
    change the learning: a deadline (late devices dropped), an outage threshold given (a cell's
    re-timing serves every listener)."""
    from scenarios.definitions.systems import parse_systems
    from scenarios.errors import UsageError

    specs = parse_systems(texts)
    for text, spec in specs.items():
        if spec.deadline is not None:
            raise UsageError(f"system {text!r}: a deadline drops late devices, which changes the learning; "
                             "re-timing takes none (run on it instead)")
        if spec.overrides.get("min_bps_per_hz") is not None:
            raise UsageError(f"system {text!r}: an outage threshold drops devices, which changes the learning; "
                             "re-timing serves every listener (leave out min_bps_per_hz)")
    systems = {text: spec.build() for text, spec in specs.items()}
    for text, system in systems.items():
        dynamics = cell_dynamics(system)
        if dynamics:
            raise UsageError(f"system {text!r}: {', '.join(dynamics)} changes who takes part as the clock runs, which "
                             "changes the learning; re-timing takes a cell without batteries, availability or motion "
                             "(run on it instead)")
    return systems


def retime_table(result_dirs: Sequence[str | Path], systems: Mapping, target: float | None) -> tuple[list[dict], float | None]:
    """Per run and system (``retime_systems``), the run re-timed there with its own network
    stream: its final mean accuracy, the time (in the system's unit) and, on a cell, the energy
    of all devices to ``target`` (None: never reached) and at the run's end. The target
    defaults to 90% of the best final mean accuracy of the runs. Every run is read and re-timed
    before anything is returned (ResultError, one line, for one that cannot be)."""
    from scenarios.reports.over_seeds import first_reach

    curves = {str(folder): read_run(folder) for folder in result_dirs}
    if target is None:
        finals = [c.summary.get("final_mean_accuracy") for c in curves.values()]
        finals = [f for f in finals if isinstance(f, (int, float))]
        target = round(0.9 * max(finals), 4) if finals else None
    rows = []
    for folder, curve in curves.items():
        for name, system in systems.items():
            timed = retimed_curve(folder, system)
            hit = first_reach(timed, target) if target is not None else None
            energy = timed.energy_j
            rows.append({
                "run": Path(folder).name, "label": curve.config.get("label"), "system": name, "time_unit": timed.time_unit,
                "final_mean_accuracy": curve.summary.get("final_mean_accuracy"),
                "time_to_target": None if hit is None else timed.time[hit], "end_time": timed.time[-1],
                "energy_to_target_j": None if hit is None or energy is None else energy[hit],
                "energy_j": None if energy is None else energy[-1],
            })
    return rows, target
