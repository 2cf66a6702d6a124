"""Build a learner and a network system, run the co-simulation, write one result folder.

A run's folder is named by a readable prefix and a hash of its full resolved config, so two
different configs never share a folder. Everything is checked (``prepare``) before any file
or folder is created. A run whose loss or parameters turn NaN or infinite stops and is
written as ``diverged`` (round and reason).

One seed per run, split by ``numpy.random.SeedSequence`` into independent streams: the data
partition, the learner (model init, per-device batches, server choices) and the network
(compute times). The partition and the learner streams do not depend on the algorithm, so
algorithms run on the same seed see the same devices and the same initial model.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

import numpy as np
import torch

from learning.algorithms import LearnerSetup
from learning.data import FederatedData
from learning.training import LocalTraining
from netsim import RoundRecord, TraceEvent, run_cosimulation, simulate_rounds
from netsim.durations import NonFiniteTime
from netsim.physical import PhysicalSystem, channel_seeds
from netsim.trace import TRACE_FIELDS
from figures.results import INDEX_FILE, SUMMARY_FILE, folder_problem, index_text, read_summary
from scenarios import communication
from scenarios.errors import UsageError
from scenarios.health import training_flags
from scenarios.plugins import load_installed, origin
from scenarios.progress import Progress
from scenarios.registry import get_algorithm, get_scenario
from scenarios.log import LOGGER
from scenarios.provenance import provenance
from scenarios.results import check_output_dir, csv_text, json_text, number_cell, output_dir, staged_folder
from scenarios.scenario import Scenario
from scenarios.seeds import seed_streams
from scenarios.settings import NETWORK_SETTINGS, RUN_SETTINGS, SCENARIO_KNOBS, check_communication, check_training
from scenarios.systems import get_system

FORMAT_VERSION = 2  # 2: hash-named folders, checksums (now in the sealed checksums.json), empty cells for non-finite numbers


@dataclass(frozen=True)
class RunSpec:
    """One run: which scenario, algorithm (and its options), network system (and its timing,
    deadline and optional ``rho``/``t_min``/``inv_mu`` in place of the preset's), rounds,
    seed, evaluation period and participation (None: the scenario's)."""

    scenario: str
    algorithm: str
    system: str = "wireless-slow-ul"
    rounds: int | None = None  # None: the scenario's default
    seed: int = 0
    options: dict = field(default_factory=dict)
    mode: str = "pipelined"
    deadline: float | None = None
    evaluate_every: int = 1
    participation: float | None = None
    rho: float | None = None
    t_min: float | None = None
    inv_mu: float | None = None
    training: dict = field(default_factory=dict)  # overrides of the scenario's LocalTraining fields
    devices: int | None = None  # scenario knobs (None: the scenario's), where the scenario has them
    alpha: float | None = None
    radio: dict = field(default_factory=dict)  # overrides of a physical cell preset's parameters
    # communication (scenarios.communication): update codecs and the network's scheduler
    uplink_codec: str = "none"
    downlink_codec: str = "none"
    scheduler: str = "random"

    @property
    def label(self) -> str:
        """The algorithm's name, with what its options declare worth showing (``user-centric k=4``),
        and the communication settings that are not the defaults (``communication.label_suffix``)."""
        return self.algorithm_label + communication.label_suffix(self)

    @property
    def algorithm_label(self) -> str:
        try:
            options_type = get_algorithm(self.algorithm).Options
        except UsageError:
            return self.algorithm
        return options_type.label(self.algorithm, self.options)

    @property
    def prefix(self) -> str:
        """The readable part of the folder name (the hash of the config makes it unique)."""
        raw = f"{self.scenario}_{self.label}_{self.system}_s{self.seed}"
        return re.sub(r"[^A-Za-z0-9._-]+", "-", raw.replace(" k=", "_k"))


def checked_spec(spec: RunSpec) -> RunSpec:
    """``spec`` with every setting typed and range-checked (UsageError naming the key)."""
    load_installed()  # a run in a fresh process (the API, a Ray worker) knows the installed plugins too
    get_scenario(spec.scenario)
    get_algorithm(spec.algorithm)
    values = {key: RUN_SETTINGS[key].check(key.replace("_", "-"), getattr(spec, key)) for key in RUN_SETTINGS}
    values.update({key: NETWORK_SETTINGS[key].check(key.replace("_", "-"), getattr(spec, key)) for key in NETWORK_SETTINGS})
    scenario = get_scenario(spec.scenario)
    for key, setting in SCENARIO_KNOBS.items():
        values[key] = setting.check(key, getattr(spec, key))
        if values[key] is not None and key not in scenario.knobs:
            takes = ", ".join(scenario.knobs) or "none"
            raise UsageError(f"scenario {spec.scenario!r} has no {key} setting (its settings: {takes})")
    if not isinstance(spec.options, dict):
        raise UsageError(f"options must be a table of key = value, got {spec.options!r}")
    resolved = algorithm_options(spec, scenario)
    options = {key: getattr(resolved, key) for key in spec.options}  # typed
    values.update(check_communication({key: getattr(spec, key) for key in ("uplink_codec", "downlink_codec", "scheduler")}))
    spec = replace(spec, options=options, training=check_training(spec.training), **values)
    network_system(spec)
    return spec


def algorithm_options(spec: RunSpec, scenario: Scenario):
    """The run's algorithm options: the scenario's defaults for it overridden by the run's, checked
    against the algorithm's declared ``Options`` (UsageError naming the option)."""
    options_type = get_algorithm(spec.algorithm).Options
    return options_type.resolve(spec.options, scenario.algorithm_options.get(spec.algorithm, {}), owner=spec.algorithm)


def network_system(spec: RunSpec):
    """The spec's network: its preset, with ``rho``/``t_min``/``inv_mu`` where given."""
    system = get_system(spec.system, spec.mode, spec.deadline, spec.radio)
    overrides = {k: getattr(spec, k) for k in ("rho", "t_min", "inv_mu") if getattr(spec, k) is not None}
    if not overrides:
        return system
    if isinstance(system, PhysicalSystem):
        raise UsageError(f"--rho, --t-min and --inv-mu apply to the normalized systems, not to the cell {spec.system!r}")
    try:
        return replace(system, **overrides)
    except ValueError as error:
        raise UsageError(str(error)) from None
    except TypeError:
        raise UsageError(f"--rho, --t-min and --inv-mu apply to the normalized preset systems, not to {spec.system!r}") from None


def scenario_knobs(spec: RunSpec) -> dict:
    """The scenario's knobs for this run: its defaults with the run's values where given."""
    scenario = get_scenario(spec.scenario)
    return {key: (default if getattr(spec, key) is None else getattr(spec, key)) for key, (_, default) in scenario.knobs.items()}


@functools.lru_cache(maxsize=4)
def build_data(scenario_name: str, seed: int, data_dir: str | None, knobs: tuple = ()) -> FederatedData:
    """The scenario's federated data for a seed (cached: several runs of a command share it);
    ``knobs``: (name, value) pairs of the scenario's knobs."""
    scenario = get_scenario(scenario_name)
    data_seq, _, _ = seed_streams(seed)
    keywords = {scenario.knobs[name][0]: value for name, value in knobs}
    try:
        return scenario.build(np.random.default_rng(data_seq), Path(data_dir) if data_dir else None, **keywords)
    except ValueError as error:
        raise UsageError(f"scenario {scenario_name!r}: {error}") from None


def resolved_training(spec: RunSpec, scenario: Scenario) -> LocalTraining:
    """The scenario's training settings with the run's overrides, ``auto`` resolved for this
    machine (checked: UsageError)."""
    unknown = sorted(set(spec.training) - {f.name for f in fields(LocalTraining)})
    if unknown:
        raise UsageError(f"unknown training setting {', '.join(unknown)}; settings: {', '.join(f.name for f in fields(LocalTraining))}")
    try:
        return dataclasses.replace(scenario.training, **spec.training).resolved()
    except ValueError as error:
        raise UsageError(f"training: {error}") from None


def build_learner(spec: RunSpec, data: FederatedData, scenario: Scenario, multicast_airtime=None):
    """The algorithm's learner with the scenario's defaults overridden by the run's options (on
    a physical cell it can estimate a multicast's airtime, as a base station from channel reports)."""
    algorithm = get_algorithm(spec.algorithm)
    options = algorithm_options(spec, scenario)
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
        uplink_codec=spec.uplink_codec,
        downlink_codec=spec.downlink_codec,
    )
    try:
        return algorithm(setup)
    except ValueError as error:
        raise UsageError(f"{spec.algorithm}: {error}") from None


def resolved_config(spec: RunSpec, scenario: Scenario, system, learner, rounds: int, samples: np.ndarray) -> dict:
    return {
        "format_version": FORMAT_VERSION,
        "label": spec.label,
        "scenario": {"name": scenario.name, "version": scenario.version, "description": scenario.description,
                     "settings": scenario_knobs(spec)},
        "algorithm": spec.algorithm,
        "algorithm_options": learner.options.as_dict(),  # every option, defaults resolved
        "model": {"name": scenario.model_name, "kwargs": scenario.model_kwargs, "bits": learner.model_bits},
        "training": asdict(learner.setup.training),
        "participation": learner.setup.participation,
        "system": system_config(spec.system, system),
        "rounds": rounds,
        "seed": spec.seed,
        "evaluate_every": spec.evaluate_every,
        "num_devices": learner.num_devices,
        "device_samples_per_update": samples.tolist(),
        **plugin_record(spec, scenario),
        "provenance": provenance(),  # not hashed: see config_hash
    }


def plugin_record(spec: RunSpec, scenario: Scenario) -> dict:
    """``{"plugins": {kind: {"name", "module", "version", "sha256"}}}`` for what this run takes
    from plugins (nothing for a run of built-ins, so their folder names stay as they were)."""
    used = {"algorithm": spec.algorithm, "scenario": spec.scenario, "model": scenario.model_name, "system": spec.system}
    found = {kind: {"name": name, **origin(kind, name)} for kind, name in used.items() if origin(kind, name)}
    return {"plugins": found} if found else {}


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


def config_hash(config: dict) -> str:
    """SHA-256 of the canonical JSON of a resolved config (the identity of a run), its provenance
    (versions, commit, threads) left out: the same settings name the same folder on any machine."""
    settings = {key: value for key, value in config.items() if key != "provenance"}
    return hashlib.sha256(json_text(settings, indent=None).encode("utf-8")).hexdigest()


@dataclass
class PreparedRun:
    """A checked run, ready to simulate: its learner, network, resolved config and folder name."""

    spec: RunSpec
    learner: object
    system: object  # as named (NetworkSystem or PhysicalSystem)
    network: object  # what the engine drives (a physical system bound to its cell layout)
    channel_rng: object  # fading draws of a physical network (None for a normalized one)
    samples: np.ndarray
    rounds: int
    config: dict
    scheduler: object = None  # netsim.scheduling.Scheduler, None: the learner samples

    @property
    def name(self) -> str:
        return f"{self.spec.prefix}_{config_hash(self.config)[:12]}"


def prepare(spec: RunSpec, data_dir: str | None = None) -> PreparedRun:
    """Check ``spec`` and build what it needs (data, learner): every error a run can have
    from its inputs is raised here, before anything is written."""
    spec = checked_spec(spec)
    scenario = get_scenario(spec.scenario)
    rounds = scenario.rounds if spec.rounds is None else spec.rounds
    system = network_system(spec)
    data = build_data(spec.scenario, spec.seed, data_dir, tuple(sorted(scenario_knobs(spec).items())))
    check_labels(scenario, data)
    samples = samples_per_update(resolved_training(spec, scenario), data)
    _, _, network_seq = seed_streams(spec.seed)
    network, channel_rng = bind_network(system, network_seq, samples)
    airtime = network.multicast_airtime_s_per_bit if channel_rng is not None else None
    learner = build_learner(spec, data, scenario, airtime)
    config = _jsonable(communication.record(resolved_config(spec, scenario, system, learner, rounds, samples), spec))
    try:
        scheduler = communication.build_scheduler(spec, learner, system, network, channel_rng is not None)
    except ValueError as error:
        raise UsageError(str(error)) from None
    return PreparedRun(spec, learner, system, network, channel_rng, samples, rounds, config, scheduler)


def check_labels(scenario: Scenario, data: FederatedData) -> None:
    """UsageError unless every class label is one of the model's ``num_classes`` outputs (the
    dataset readers name the file; this catches what a scenario's shift made of them)."""
    classes = scenario.model_kwargs.get("num_classes")
    for device, d in enumerate(data.devices):
        for labels in (d.y_train, d.y_val):
            if classes is None or labels.numel() == 0 or labels.is_floating_point():
                continue
            low, high = int(labels.min()), int(labels.max())
            if low < 0 or high >= classes:
                raise UsageError(f"scenario {scenario.name!r}: device {device} has label {high if high >= classes else low}, "
                                 f"outside the model's {classes} classes 0..{classes - 1}")


def run_folder(prepared: PreparedRun, out_root: Path) -> Path:
    return Path(out_root) / prepared.name


def reusable(folder: Path, config: dict) -> str | None:
    """Why ``folder`` cannot be reused for ``config`` (None: it can)."""
    problem = folder_problem(folder)
    if problem is None:
        recorded = _read_json(folder / "config.json")
        version = recorded.get("provenance", {}).get("fl_cosim")
        if version != config["provenance"]["fl_cosim"]:
            problem = f"it was made by fl-cosim {version}, this is {config['provenance']['fl_cosim']}"
        elif config_hash(recorded) != config_hash(config):
            problem = "its config.json differs"
    return problem


def run_experiment(
    spec: RunSpec,
    out_root: Path,
    data_dir: str | None = None,
    progress: bool = False,
    reuse: bool = True,
) -> dict:
    """Run ``spec`` and write its folder under ``out_root``; returns the run's summary.

    Everything that can be checked is checked before any file or folder is created. With
    ``reuse``, a complete folder (every file matching its checksum) of the same config is not
    run again; a damaged one is run again and replaced, saying so on the ``fl_cosim`` logger.
    """
    prepared = prepare(spec, data_dir)
    check_output_dir(out_root)
    return run_prepared(prepared, out_root, progress, reuse)


def run_prepared(prepared: PreparedRun, out_root: Path, progress: bool = False, reuse: bool = True) -> dict:
    spec, learner, rounds = prepared.spec, prepared.learner, prepared.rounds
    final = run_folder(prepared, out_root)
    if reuse and final.exists():
        problem = reusable(final, prepared.config)
        if problem is None:
            return {**read_summary(final), "result_dir": str(final), "reused": True}
        LOGGER.warning("running %s again: %s", final.name, problem)
    physical = isinstance(prepared.system, PhysicalSystem)
    unit, unit_digits = ("s", 3) if physical else ("T_dl", 1)
    training = learner.trainer.config
    bar = Progress(f"{spec.label} ({training.backend}, {training.device})", rounds) if progress else None
    records: list[RoundRecord] = []
    has_validation = np.array([d.y_val.shape[0] > 0 for d in learner.data.devices])

    totals = np.zeros(3)  # downlink bits, uplink bits, joules so far

    def watch(record: RoundRecord) -> None:
        records.append(record)
        check_simulated(record, totals)
        check_finite(record, learner, has_validation)
        if bar is not None:
            note = ""
            if record.evaluation is not None:
                note = f"t={record.end:.{unit_digits}f} {unit}  mean acc {record.evaluation.mean_accuracy:.3f}"
            bar.update(record.server_round, note)

    _, _, network_seq = seed_streams(spec.seed)
    diverged = None
    try:
        with np.errstate(over="ignore", invalid="ignore"):  # what overflows is caught below, not warned about
            records_done, trace = run_cosimulation(
                learner, prepared.network, rounds, np.random.default_rng(network_seq), watch, spec.evaluate_every,
                channel_rng=prepared.channel_rng, scheduler=prepared.scheduler,
            )
        records = records_done
    except (Diverged, NonFiniteTime) as stop:
        if isinstance(stop, NonFiniteTime):  # a round's durations overflowed before it was recorded
            stop = Diverged(records[-1].server_round + 1 if records else 0, f"the simulated time is no longer a finite number ({stop})")
        diverged = {"round": stop.server_round, "reason": stop.reason}
        # the network does not depend on the learning: the recorded plans on the same draws give the trace
        network, channel_rng = bind_network(prepared.system, network_seq, prepared.samples)
        _, trace = simulate_rounds([r.plan for r in records], network, learner.model_bits,
                                   np.random.default_rng(network_seq), channel_rng=channel_rng)
    except ValueError as error:
        raise UsageError(f"{spec.label}: {error}") from None
    finally:
        learner.trainer.close()  # training worker processes, if the backend started any
        if bar is not None:
            bar.close()
    summary = summarize(spec, records, learner, trace if physical else None, diverged)
    texts = {
        "config.json": json_text(prepared.config),
        "rounds.csv": rounds_csv(records, learner.num_devices, physical, diverged["round"] if diverged else None),
        "devices.csv": devices_csv(records, learner.num_devices, diverged["round"] if diverged else None),
        "trace.csv": trace_csv(trace),
        "plans.jsonl": plans_jsonl(records),
    }
    summary["config_hash"] = config_hash(prepared.config)
    texts[SUMMARY_FILE] = json_text(summary)
    texts[INDEX_FILE] = index_text(texts)  # the sealed index, last: it covers the summary too
    with output_dir(out_root), staged_folder(final) as folder:
        for name, text in texts.items():
            (folder / name).write_bytes(text.encode("utf-8"))
    return {**read_summary(final), "result_dir": str(final), "reused": False}


class Diverged(Exception):
    """Raised from the round callback when the loss or the parameters stop being finite."""

    def __init__(self, server_round: int, reason: str):
        super().__init__(server_round, reason)  # SimPy re-raises it from these arguments
        self.server_round = server_round
        self.reason = reason

    def __str__(self) -> str:
        return f"diverged at round {self.server_round}: {self.reason}"


def check_simulated(record: RoundRecord, totals: np.ndarray) -> None:
    """Stop a run whose simulated time, bits or energy (of the round, or summed so far in
    ``totals``) stop being finite numbers: such a run is diverged, never finished."""
    with np.errstate(over="ignore", invalid="ignore"):
        totals += (record.downlink_bits, record.uplink_bits, sum((record.energy_j or {}).values()))
        numbers = {"simulated time": (record.start, record.end), "downlink bits": (record.downlink_bits, totals[0]),
                   "uplink bits": (record.uplink_bits, totals[1]), "energy": (totals[2],)}
    for name, values in numbers.items():
        if not np.isfinite(values).all():
            raise Diverged(record.server_round, f"the {name} is no longer a finite number")


def check_finite(record: RoundRecord, learner, has_validation: np.ndarray) -> None:
    """Stop a run whose validation loss or model parameters are NaN or infinite."""
    evaluation = record.evaluation
    if evaluation is not None:
        loss = np.asarray(evaluation.loss, dtype=float)[has_validation]
        bad = ~np.isfinite(loss)
        if bad.any():
            kind = "NaN" if np.isnan(loss[bad]).any() else "infinite"
            raise Diverged(record.server_round, f"validation loss is {kind} on {int(bad.sum())} of {loss.size} devices")
    theta = getattr(learner, "theta", None)
    if isinstance(theta, torch.Tensor) and not bool(torch.isfinite(theta).all()):
        raise Diverged(record.server_round, "model parameters are NaN or infinite")


def summarize(spec: RunSpec, records: list[RoundRecord], learner, trace: list[TraceEvent] | None = None,
              diverged: dict | None = None) -> dict:
    """The run's summary; on a physical network (``trace`` given) with its energy: totals by
    kind from the trace and per-device totals from the rounds. A diverged run has no final
    accuracy (null), its status and where it stopped."""
    last = records[-1]
    evaluated = [r for r in records if r.evaluation is not None]
    evaluation = evaluated[-1].evaluation if evaluated else None
    extras = dict(evaluation.extras) if evaluation is not None else {}
    sending = [r for r in records if r.server_round > 0 and r.num_streams > 0]
    summary = {
        "label": spec.label,
        "algorithm": spec.algorithm,
        "scenario": spec.scenario,
        "system": spec.system,
        "seed": spec.seed,
        "status": "diverged" if diverged else "finished",
        "rounds": last.server_round,
        # streams: what Algorithm 2 chose, else the last round that sent anything down
        "streams": int(extras.get("streams_chosen", sending[-1].num_streams if sending else 0)),
        "final_mean_accuracy": None if diverged else evaluation.mean_accuracy,
        "final_worst_accuracy": None if diverged else evaluation.worst_accuracy,
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
    summary["training_flags"] = run_flags(evaluated, learner.data, diverged["round"] if diverged else None)
    summary.update(communication.participation_summary(spec, records, learner.num_devices))
    if diverged:
        summary["diverged"] = diverged
    else:
        summary.update({k: v for k, v in extras.items() if k != "streams_chosen"})
    return summary


def run_flags(evaluated: list[RoundRecord], data, diverged_round: int | None) -> list[str]:
    """The training-failure signs of ``scenarios.health`` over the run's evaluations (a diverged
    round's evaluation measures nothing and is left out)."""
    kept = [r for r in evaluated if r.server_round != diverged_round]
    num_classes = None if data.task == "regression" else data.num_classes
    return training_flags([r.server_round for r in kept], [r.evaluation.mean_accuracy for r in kept],
                          [float(np.mean(r.evaluation.loss)) for r in kept], num_classes)


def dropped_counts(records: list[RoundRecord]) -> dict[str, int]:
    """How many device-rounds were dropped, by reason (deadline, downlink-outage, uplink-outage)."""
    counts: dict[str, int] = {}
    for r in records:
        for reason in (r.outcome.dropped.values() if r.outcome else ()):
            counts[reason] = counts.get(reason, 0) + 1
    return dict(sorted(counts.items()))


def rounds_csv(records: list[RoundRecord], num_devices: int, physical: bool = False, diverged_round: int | None = None) -> str:
    """One row per round; on a physical network also the round's energy, cumulative energy and
    each device's energy in the round (``energy_j_<d>``), in joules. Non-finite numbers are
    empty cells; the evaluation of a diverged round is left empty: its accuracies measure nothing."""
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
        row = [r.server_round, number_cell(r.end), number_cell(r.duration), number_cell(downlink), number_cell(uplink),
               r.num_streams, participants, received, computed, len(r.arrived)]
        if r.evaluation is None or r.server_round == diverged_round:
            row += [""] * (3 + num_devices)
        else:
            e = r.evaluation
            row += [number_cell(e.mean_accuracy), number_cell(e.worst_accuracy), number_cell(np.mean(e.loss))]
            row += [number_cell(a) for a in e.accuracy]
        if physical:
            per_device = [float((r.energy_j or {}).get(d, 0.0)) for d in range(num_devices)]
            spent += sum(per_device)
            row += [number_cell(sum(per_device)), number_cell(spent)] + [number_cell(j) for j in per_device]
        rows.append(row)
    return csv_text(header, rows)


def devices_csv(records: list[RoundRecord], num_devices: int, diverged_round: int | None = None) -> str:
    """The long table: one row per round and device (round, device, accuracy, loss, energy_j,
    scheduled, received, computed, arrived), as analysis tools expect. Empty cells as in rounds.csv."""
    header = ["round", "device", "accuracy", "loss", "energy_j", "scheduled", "received", "computed", "arrived"]
    rows = []
    for r in records:
        evaluated = r.evaluation is not None and r.server_round != diverged_round
        sets = [set(r.plan.participants) if r.plan else set(), set(r.outcome.received) if r.outcome else set(),
                set(r.outcome.computed) if r.outcome else set(), set(r.arrived)]
        for d in range(num_devices):
            energy = "" if r.energy_j is None else repr(float(r.energy_j.get(d, 0.0)))
            numbers = [number_cell(r.evaluation.accuracy[d]), number_cell(r.evaluation.loss[d])] if evaluated else ["", ""]
            rows.append([r.server_round, d, *numbers, energy, *(int(d in s) for s in sets)])
    return csv_text(header, rows)


def trace_csv(trace: list[TraceEvent]) -> str:
    return csv_text(TRACE_FIELDS, ([e.round, e.kind, e.entity, number_cell(e.start), number_cell(e.end), number_cell(e.bits),
                                    number_cell(e.energy_j), e.reason] for e in trace))


def plans_jsonl(records: list[RoundRecord]) -> str:
    return "".join(json.dumps({"round": r.server_round, "plan": r.plan.to_dict() if r.plan else None}, allow_nan=False) + "\n" for r in records)


def _read_json(path: Path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def _jsonable(data):
    return json.loads(json_text(data))

