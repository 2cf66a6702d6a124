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
from learning.training import LocalTraining
from netsim import RoundRecord, TraceEvent, run_cosimulation
from netsim.trace import TRACE_FIELDS
from scenarios.errors import UsageError
from scenarios.registry import get_algorithm, get_scenario
from scenarios.results import csv_text, ensure_writable_dir, json_text, staged_folder
from scenarios.scenario import Scenario
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
    participation: float | None = None  # fraction of devices that train per round; None: the scenario's

    @property
    def label(self) -> str:
        if not self.algorithm.endswith("user-centric"):
            return self.algorithm
        streams = self.options.get("streams")
        return f"{self.algorithm} k={'m' if streams is None else streams}"

    @property
    def run_name(self) -> str:
        extra = "".join(f"_{k}-{v}" for k, v in sorted(self.options.items()) if k != "streams")
        extra += "".join(f"_{k}-{v}" for k, v in sorted(self.training.items()))
        extra += "" if self.participation is None else f"_participation-{self.participation}"
        raw = f"{self.scenario}_{self.label}{extra}_{self.system}_{self.mode}_s{self.seed}"
        return re.sub(r"[^A-Za-z0-9._-]+", "-", raw.replace(" k=", "_k"))


def seed_streams(seed: int) -> tuple[np.random.SeedSequence, np.random.SeedSequence, np.random.SeedSequence]:
    """(data partition, learner, network) streams of one run seed."""
    data_seq, learner_seq, network_seq = np.random.SeedSequence(seed).spawn(3)
    return data_seq, learner_seq, network_seq


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


def build_learner(spec: RunSpec, data: FederatedData, scenario: Scenario):
    """The algorithm's learner with the scenario's defaults overridden by the run's options."""
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
    )
    try:
        return algorithm(setup)
    except ValueError as error:
        raise UsageError(f"{spec.algorithm}: {error}") from None


def resolved_config(spec: RunSpec, scenario: Scenario, system, learner, rounds: int) -> dict:
    return {
        "format_version": FORMAT_VERSION,
        "label": spec.label,
        "scenario": {"name": scenario.name, "version": scenario.version, "description": scenario.description},
        "algorithm": spec.algorithm,
        "algorithm_options": learner.options,  # every option, defaults resolved
        "model": {"name": scenario.model_name, "kwargs": scenario.model_kwargs, "bits": learner.model_bits},
        "training": asdict(learner.setup.training),
        "participation": learner.setup.participation,
        "system": {"name": spec.system, **asdict(system)},
        "rounds": rounds,
        "seed": spec.seed,
        "evaluate_every": spec.evaluate_every,
        "num_devices": learner.num_devices,
    }


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
    system = get_system(spec.system, spec.mode, spec.deadline)
    get_algorithm(spec.algorithm)
    out_root = ensure_writable_dir(out_root)
    data = build_data(spec.scenario, spec.seed, data_dir)
    learner = build_learner(spec, data, scenario)
    config = resolved_config(spec, scenario, system, learner, rounds)
    final = out_root / spec.run_name
    if reuse and (final / "summary.json").exists() and _read_json(final / "config.json") == _jsonable(config):
        return {**_read_json(final / "summary.json"), "result_dir": str(final), "reused": True}

    def report(record: RoundRecord) -> None:
        every = max(1, rounds // 10)
        if progress is not None and record.evaluation is not None and record.server_round % every == 0:
            progress(
                f"[{spec.label}] round {record.server_round}/{rounds}  t={record.end:.1f} T_dl  "
                f"mean acc {record.evaluation.mean_accuracy:.3f}"
            )

    _, _, network_seq = seed_streams(spec.seed)
    try:
        records, trace = run_cosimulation(
            learner, system, rounds, np.random.default_rng(network_seq), report, spec.evaluate_every
        )
    except ValueError as error:
        raise UsageError(f"{spec.label}: {error}") from None
    summary = summarize(spec, records, learner)
    with staged_folder(final) as folder:
        (folder / "config.json").write_text(json_text(config))
        (folder / "rounds.csv").write_text(rounds_csv(records, learner.num_devices))
        (folder / "trace.csv").write_text(trace_csv(trace))
        (folder / "plans.jsonl").write_text(plans_jsonl(records))
        (folder / "summary.json").write_text(json_text(summary))
    return {**summary, "result_dir": str(final), "reused": False}


def summarize(spec: RunSpec, records: list[RoundRecord], learner) -> dict:
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
    }
    summary.update({k: v for k, v in evaluation.extras.items() if k != "streams_chosen"})
    return summary


def rounds_csv(records: list[RoundRecord], num_devices: int) -> str:
    header = ["round", "time", "duration", "downlink_bits", "uplink_bits", "streams", "participants", "arrived",
              "mean_accuracy", "worst_accuracy", "mean_loss"] + [f"accuracy_{d}" for d in range(num_devices)]
    rows, downlink, uplink = [], 0.0, 0.0
    for r in records:
        downlink += r.downlink_bits
        uplink += r.uplink_bits
        participants = len(r.plan.participants) if r.plan else 0
        row = [r.server_round, repr(float(r.end)), repr(float(r.duration)), repr(downlink), repr(uplink),
               r.num_streams, participants, len(r.arrived)]
        if r.evaluation is None:
            row += [""] * (3 + num_devices)
        else:
            e = r.evaluation
            row += [repr(e.mean_accuracy), repr(e.worst_accuracy), repr(float(np.mean(e.loss)))]
            row += [repr(float(a)) for a in e.accuracy]
        rows.append(row)
    return csv_text(header, rows)


def trace_csv(trace: list[TraceEvent]) -> str:
    return csv_text(TRACE_FIELDS, ([e.round, e.kind, e.entity, repr(float(e.start)), repr(float(e.end)), repr(float(e.bits))] for e in trace))


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
