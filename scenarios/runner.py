"""Build a learner and a network system, run the co-simulation, write one result folder.

One seed per run, split by ``numpy.random.SeedSequence`` into independent streams: the data
partition, the learner (model init, per-device batches, server choices) and the network
(compute times). The partition and the learner streams do not depend on the algorithm, so
algorithms run on the same seed see the same devices and the same initial model.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import sys
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Callable

import numpy as np

from learning.algorithms import LearnerSetup
from learning.data import FederatedData
from learning.engine import release
from learning.training import LocalTraining
from netsim import RoundRecord, TraceEvent, run_cosimulation
from netsim.physical import PhysicalSystem, channel_seeds
from netsim.trace import TRACE_FIELDS
from scenarios.errors import UsageError
from scenarios.registry import get_algorithm, get_scenario
from scenarios.results import csv_text, ensure_writable_dir, json_text, staged_folder
from scenarios.scenario import Scenario
from scenarios.seeds import seed_streams
from scenarios.systems import get_system

FORMAT_VERSION = 1


@dataclass(frozen=True)
class RunSpec:
    """One run: which scenario, algorithm (and its options), network system, rounds, seed."""

    scenario: str
    algorithm: str
    system: str = "wireless-slow-ul"
    rounds: int | None = None  # None: the scenario's default
    seed: int = 0
    options: dict = field(default_factory=dict)
    mode: str = "pipelined"
    deadline: float | None = None
    evaluate_every: int = 1
    training: dict = field(default_factory=dict)  # overrides of the scenario's LocalTraining fields
    radio: dict = field(default_factory=dict)  # overrides of a physical cell preset's parameters
    participation: float | None = None  # fraction of devices that train per round; None: the scenario's

    @property
    def label(self) -> str:
        if not self.algorithm.endswith("user-centric"):
            return self.algorithm
        streams = self.options.get("streams")
        label = f"{self.algorithm} k={'m' if streams is None else streams}"
        if self.options.get("formation") == "channel":
            loss = self.options.get("silhouette_loss")
            label += " channel" + ("" if loss is None else f" loss={loss}")
        return label

    @property
    def run_name(self) -> str:
        extra = "".join(f"_{k}-{v}" for k, v in sorted(self.options.items()) if k != "streams")
        extra += "".join(f"_{k}-{v}" for k, v in sorted(self.training.items()))
        radio = "".join(f"_{k}-{v}" for k, v in sorted(self.radio.items()))
        extra += "" if self.participation is None else f"_participation-{self.participation}"
        raw = f"{self.scenario}_{self.label}{extra}_{self.system}{radio}_{self.mode}_s{self.seed}"
        return re.sub(r"[^A-Za-z0-9._-]+", "-", raw.replace(" k=", "_k"))


@functools.lru_cache(maxsize=4)
def build_data(scenario_name: str, seed: int, data_dir: str | None) -> FederatedData:
    """The scenario's federated data for a seed (cached: several runs of a command share it)."""
    scenario = get_scenario(scenario_name)
    data_seq, _, _ = seed_streams(seed)
    try:
        return scenario.build(np.random.default_rng(data_seq), Path(data_dir) if data_dir else None)
    except ValueError as error:
        raise UsageError(f"scenario {scenario_name!r}: {error}") from None


def resolved_training(spec: RunSpec, scenario: Scenario) -> LocalTraining:
    """The scenario's training settings with the run's overrides (checked: UsageError)."""
    unknown = sorted(set(spec.training) - {f.name for f in fields(LocalTraining)})
    if unknown:
        raise UsageError(f"unknown training setting {', '.join(unknown)}; settings: {', '.join(f.name for f in fields(LocalTraining))}")
    try:
        return dataclasses.replace(scenario.training, **spec.training)
    except ValueError as error:
        raise UsageError(f"training: {error}") from None


def build_learner(spec: RunSpec, data: FederatedData, scenario: Scenario, multicast_airtime=None):
    """The algorithm's learner with the scenario's defaults overridden by the run's options (on
    a physical cell it can estimate a multicast's airtime, as a base station from channel reports)."""
    algorithm = get_algorithm(spec.algorithm)
    options = {**scenario.algorithm_options.get(spec.algorithm, {}), **spec.options}
    _, learner_seq, _ = seed_streams(spec.seed)
    setup = LearnerSetup(
        data=data,
        model_name=scenario.model_name,
        model_kwargs=scenario.model_kwargs,
        training=resolved_training(spec, scenario),
        seed_sequence=learner_seq,
        participation=scenario.participation if spec.participation is None else spec.participation,
        options=options,
        multicast_airtime=multicast_airtime,
    )
    try:
        return algorithm(setup)
    except ValueError as error:
        raise UsageError(f"{spec.algorithm}: {error}") from None


def resolved_config(spec: RunSpec, scenario: Scenario, system, learner, rounds: int, samples: np.ndarray) -> dict:
    return {
        "format_version": FORMAT_VERSION,
        "label": spec.label,
        "scenario": {"name": scenario.name, "version": scenario.version, "description": scenario.description},
        "algorithm": spec.algorithm,
        "algorithm_options": learner.options,  # every option, defaults resolved
        "model": {"name": scenario.model_name, "kwargs": scenario.model_kwargs, "bits": learner.model_bits},
        "training": asdict(learner.setup.training),
        "participation": learner.setup.participation,
        "system": system_config(spec.system, system),
        "rounds": rounds,
        "seed": spec.seed,
        "evaluate_every": spec.evaluate_every,
        "num_devices": learner.num_devices,
        "device_samples_per_update": samples.tolist(),
    }


def system_config(name: str, system) -> dict:
    """The system as recorded: the normalized one's ``rho``, ``t_min``... (time in ``T_dl``), or a
    physical one's every parameter with ``kind: physical`` and ``time_unit: s``."""
    if isinstance(system, PhysicalSystem):
        return {"name": name, "kind": "physical", "time_unit": "s", **asdict(system)}
    return {"name": name, **asdict(system)}


def samples_per_update(training: LocalTraining, data: FederatedData) -> np.ndarray:
    """Training samples a device processes in one standard local update (E epochs of its data):
    the unit a physical network counts CPU cycles in."""
    return training.epochs * np.asarray(data.train_sizes, dtype=float)


def bind_network(system, network_seq: np.random.SeedSequence, samples: np.ndarray):
    """(network the engine drives, channel generator): a physical system gets its layout and
    fading from the channel child of the network seed; a normalized one is its own network."""
    if not isinstance(system, PhysicalSystem):
        return system, None
    layout_seq, fading_seq, planning_seq = channel_seeds(network_seq)
    try:
        layout = system.cell.place(samples.size, np.random.default_rng(layout_seq))
    except ValueError as error:
        raise UsageError(str(error)) from None
    return system.bind(layout, samples, np.random.default_rng(planning_seq)), np.random.default_rng(fading_seq)


def run_experiment(
    spec: RunSpec,
    out_root: Path,
    data_dir: str | None = None,
    progress: Callable[[str], None] | None = None,
    reuse: bool = True,
) -> dict:
    """Run ``spec`` and write its folder under ``out_root``; returns the run's summary.

    With ``reuse``, a finished folder with the same resolved config is not run again.
    Everything that can be checked is checked before any file is written.
    """
    scenario = get_scenario(spec.scenario)
    rounds = scenario.rounds if spec.rounds is None else spec.rounds
    if rounds < 1:
        raise UsageError(f"rounds must be >= 1, got {rounds}")
    if spec.evaluate_every < 1:
        raise UsageError(f"evaluate-every must be >= 1, got {spec.evaluate_every}")
    system = get_system(spec.system, spec.mode, spec.deadline, spec.radio)
    get_algorithm(spec.algorithm)
    out_root = ensure_writable_dir(out_root)
    data = build_data(spec.scenario, spec.seed, data_dir)
    samples = samples_per_update(resolved_training(spec, scenario), data)
    _, _, network_seq = seed_streams(spec.seed)
    network, channel_rng = bind_network(system, network_seq, samples)
    airtime = network.multicast_airtime_s_per_bit if channel_rng is not None else None
    learner = build_learner(spec, data, scenario, airtime)
    config = resolved_config(spec, scenario, system, learner, rounds, samples)
    final = out_root / spec.run_name
    if reuse and (final / "summary.json").exists() and _read_json(final / "config.json") == _jsonable(config):
        return {**_read_json(final / "summary.json"), "result_dir": str(final), "reused": True}

    physical = isinstance(system, PhysicalSystem)
    unit, unit_digits = ("s", 3) if physical else ("T_dl", 1)

    def report(record: RoundRecord) -> None:
        every = max(1, rounds // 10)
        if progress is not None and record.evaluation is not None and record.server_round % every == 0:
            progress(
                f"[{spec.label}] round {record.server_round}/{rounds}  t={record.end:.{unit_digits}f} {unit}  "
                f"mean acc {record.evaluation.mean_accuracy:.3f}"
            )

    try:
        records, trace = run_cosimulation(
            learner, network, rounds, np.random.default_rng(network_seq), report, spec.evaluate_every, channel_rng=channel_rng
        )
    except ValueError as error:
        raise UsageError(f"{spec.label}: {error}") from None
    finally:
        release(learner.trainer)  # training worker processes, if the backend started any
    summary = summarize(spec, records, learner, trace if physical else None)
    with staged_folder(final) as folder:
        (folder / "config.json").write_text(json_text(config))
        (folder / "rounds.csv").write_text(rounds_csv(records, learner.num_devices, physical))
        (folder / "trace.csv").write_text(trace_csv(trace))
        (folder / "plans.jsonl").write_text(plans_jsonl(records))
        (folder / "summary.json").write_text(json_text(summary))
    return {**summary, "result_dir": str(final), "reused": False}


def summarize(spec: RunSpec, records: list[RoundRecord], learner, trace: list[TraceEvent] | None = None) -> dict:
    """The run's summary; on a physical network (``trace`` given) with its energy: totals by
    kind from the trace and per-device totals from the rounds."""
    last = records[-1]
    evaluation = last.evaluation
    sending = [r for r in records if r.server_round > 0 and r.num_streams > 0]
    summary = {
        "label": spec.label,
        "algorithm": spec.algorithm,
        "scenario": spec.scenario,
        "system": spec.system,
        "seed": spec.seed,
        "rounds": last.server_round,
        # streams: what Algorithm 2 chose, else the last round that sent anything down
        "streams": int(evaluation.extras.get("streams_chosen", sending[-1].num_streams if sending else 0)),
        "final_mean_accuracy": evaluation.mean_accuracy,
        "final_worst_accuracy": evaluation.worst_accuracy,
        "simulated_time": float(last.end),
        "downlink_bits": float(sum(r.downlink_bits for r in records)),
        "uplink_bits": float(sum(r.uplink_bits for r in records)),
        "time_unit": "s" if trace is not None else "T_dl",
        "dropped": dropped_counts(records),
    }
    if trace is not None:
        device_j = np.zeros(learner.num_devices)
        for r in records:
            for device, joules in (r.energy_j or {}).items():
                device_j[device] += joules
        by_kind = {"receive": 0.0, "compute": 0.0, "uplink": 0.0, "dropped": 0.0}
        for e in trace:
            if e.kind in by_kind:
                by_kind[e.kind] += e.energy_j
        summary.update({
            "energy_j": float(device_j.sum()),
            "receive_energy_j": by_kind["receive"],
            "compute_energy_j": by_kind["compute"],
            # uploads that arrived, and FDMA uploads cut by the deadline
            "transmit_energy_j": by_kind["uplink"] + by_kind["dropped"],
            "device_energy_j": device_j.tolist(),
        })
    summary.update({k: v for k, v in evaluation.extras.items() if k != "streams_chosen"})
    return summary


def dropped_counts(records: list[RoundRecord]) -> dict[str, int]:
    """How many device-rounds were dropped, by reason (deadline, downlink-outage, uplink-outage)."""
    counts: dict[str, int] = {}
    for r in records:
        for reason in (r.outcome.dropped.values() if r.outcome else ()):
            counts[reason] = counts.get(reason, 0) + 1
    return dict(sorted(counts.items()))


def rounds_csv(records: list[RoundRecord], num_devices: int, physical: bool = False) -> str:
    """One row per round; on a physical network also the round's energy, cumulative energy and
    each device's energy in the round (``energy_j_<d>``), in joules."""
    header = ["round", "time", "duration", "downlink_bits", "uplink_bits", "streams", "participants", "received",
              "computed", "arrived", "mean_accuracy", "worst_accuracy", "mean_loss"] + [f"accuracy_{d}" for d in range(num_devices)]
    if physical:
        header += ["round_energy_j", "energy_j"] + [f"energy_j_{d}" for d in range(num_devices)]
    rows, downlink, uplink, spent = [], 0.0, 0.0, 0.0
    for r in records:
        downlink += r.downlink_bits
        uplink += r.uplink_bits
        participants = len(r.plan.participants) if r.plan else 0
        received = len(r.outcome.received) if r.outcome else 0
        computed = len(r.outcome.computed) if r.outcome else 0
        row = [r.server_round, repr(float(r.end)), repr(float(r.duration)), repr(downlink), repr(uplink),
               r.num_streams, participants, received, computed, len(r.arrived)]
        if r.evaluation is None:
            row += [""] * (3 + num_devices)
        else:
            e = r.evaluation
            row += [repr(e.mean_accuracy), repr(e.worst_accuracy), repr(float(np.mean(e.loss)))]
            row += [repr(float(a)) for a in e.accuracy]
        if physical:
            per_device = [float((r.energy_j or {}).get(d, 0.0)) for d in range(num_devices)]
            spent += sum(per_device)
            row += [repr(sum(per_device)), repr(spent)] + [repr(j) for j in per_device]
        rows.append(row)
    return csv_text(header, rows)


def trace_csv(trace: list[TraceEvent]) -> str:
    return csv_text(TRACE_FIELDS, ([e.round, e.kind, e.entity, repr(float(e.start)), repr(float(e.end)), repr(float(e.bits)),
                                    repr(float(e.energy_j)), e.reason] for e in trace))


def plans_jsonl(records: list[RoundRecord]) -> str:
    return "".join(json.dumps({"round": r.server_round, "plan": r.plan.to_dict() if r.plan else None}) + "\n" for r in records)


def _read_json(path: Path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def _jsonable(data):
    return json.loads(json.dumps(data))


def stderr_progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
