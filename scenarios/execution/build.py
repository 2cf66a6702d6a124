"""A resolved run built once: its data, its network (a cell bound to its layout), its learner,
its scheduler, its config record and its folder name. Every error a run can have from its
inputs is raised here (UsageError), before anything is written."""

from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from learning.algorithms import LearnerSetup
from learning.data import FederatedData
from scenarios.definitions import clock, communication
from scenarios.errors import UsageError
from scenarios.execution.spec import ResolvedRun
from scenarios.plugins import executed_files, origin
from scenarios.records.provenance import provenance
from scenarios.records.result_folder import FORMAT_VERSION, config_hash, json_text
from scenarios.definitions.scenario import Scenario
from scenarios.definitions.seeds import seed_streams
from scenarios.definitions.settings import MAX_COMPUTE_TIME


@dataclass
class PreparedRun:
    """A run built and ready to simulate."""

    run: ResolvedRun
    learner: object
    network: object  # what the engine drives (a cell bound to its layout; a normalized system itself)
    channel_rng: object  # fading draws of a cell (None for a normalized system)
    samples: np.ndarray  # training samples per device in one local update
    config: dict  # the config record (``config.json``)
    scheduler: object = None  # a netsim.scheduling.Policy, None: the learner samples
    orchestration: tuple = ()  # (the Orchestrator, the learner it drives, its settings): clock.orchestrate

    @property
    def name(self) -> str:
        return f"{self.run.prefix}_{config_hash(self.config)[:12]}"


def prepare(run: ResolvedRun, data_dir: str | None = None) -> PreparedRun:
    """Build ``run``: data, network, learner, scheduler, orchestrator and config."""
    clock.check(run)
    data = build_data(run, data_dir)
    run, backend_choice = choose_backend(run, data)
    samples = run.training.epochs * np.asarray(data.train_sizes, dtype=float)
    try:
        run.system.check_compute(samples, MAX_COMPUTE_TIME)
        network, channel_rng = run.system.bind(samples, run.seeds.network)
    except ValueError as error:
        raise UsageError(str(error)) from None
    check_unreached(run, network)
    learner = build_learner(run, data, network.multicast_airtime_s_per_bit)
    record = {**config_record(run, learner, samples, read_digest(data, data_dir), backend_choice), **input_record(network)}
    config = json.loads(json_text(clock.record(communication.record(record, run.spec), run.spec)))
    try:
        scheduler = communication.build_scheduler(run.spec, learner, network)
        orchestration = clock.orchestrate(run.spec, learner, network)
    except ValueError as error:
        raise UsageError(str(error)) from None
    return PreparedRun(run, learner, network, channel_rng, samples, config, scheduler, orchestration)


def check_unreached(run: ResolvedRun, network) -> None:
    """UsageError for ``--unreached excluded`` where no model can miss a device (so it would
    change nothing): a network without outages or a cell in time (a normalized system, a static
    cell without an outage threshold), and the orchestrators that drive the learner by messages
    (``Orchestrator.by_messages``: buffered, tiered), which report no misses."""
    from scenarios.definitions.orchestrators import get_orchestrator

    spec = run.spec
    if spec.unreached == "held":
        return
    if get_orchestrator(spec.orchestrator).by_messages:
        raise UsageError(f"--unreached {spec.unreached}: --orchestrator {spec.orchestrator} reports no missed models; "
                         "it takes synchronous rounds (--orchestrator sync)")
    if not (network.has_outages or getattr(network, "dynamics", None) is not None):
        raise UsageError(f"--unreached {spec.unreached}: on {spec.system} every model reaches its device (no outage "
                         "threshold, availability, battery or motion), so it would change nothing")


def scenario_data(scenario_name: str, seed: int, data_dir: str | None = None, knobs: tuple = ()) -> FederatedData:
    """A scenario's federated data for a seed (cached: several runs of a command share it, the
    very objects, which ``learning.reuse`` keys on); ``knobs``: (name, value) pairs of the scenario's knobs."""
    return _scenario_data(scenario_name, int(seed), None if data_dir is None else str(data_dir), tuple(knobs))


@functools.lru_cache(maxsize=4)
def _scenario_data(scenario_name: str, seed: int, data_dir: str | None, knobs: tuple) -> FederatedData:
    """``scenario_data``, its arguments in one form (however a caller passes them, one cache entry)."""
    from scenarios.definitions.registry import get_scenario

    scenario = get_scenario(scenario_name)
    keywords = {scenario.knobs[name][0]: value for name, value in knobs}
    try:
        return scenario.build(np.random.default_rng(seed_streams(seed).data), Path(data_dir) if data_dir else None, **keywords)
    except ValueError as error:
        raise UsageError(f"scenario {scenario_name!r}: {error}") from None


def build_data(run: ResolvedRun, data_dir: str | None = None) -> FederatedData:
    """The run's federated data, its labels checked against the model's classes."""
    data = scenario_data(run.scenario.name, run.spec.seed, data_dir, tuple(sorted(run.knobs.items())))
    check_labels(run.scenario, data)
    return data


def choose_backend(run: ResolvedRun, data: FederatedData) -> tuple[ResolvedRun, str]:
    """The run with ``auto``'s choices made by the work it trains (``learning.engine.auto``): on a
    machine with CUDA, the CPU for a run smaller than CUDA's start, where the device is ``auto``
    too; on the CPU, the loop where worker processes would cost more to start than they save. And why."""
    asked = run.spec.training.get("backend", run.scenario.training.backend)
    device_by_auto = run.spec.training.get("device", run.scenario.training.device) == "auto"
    on_cuda = run.training.device.startswith("cuda")
    if asked != "auto" or (on_cuda and not device_by_auto):
        return run, f"{asked}: {run.training.backend}" if asked == "auto" else f"{asked} (given)"
    from learning.engine import auto

    estimated_s = estimated_training_s(run, data)
    if estimated_s is None:
        return run, f"auto: {run.training.backend} (no training data to size)"
    device_why = ""
    if on_cuda:
        device, device_why = auto.choose_device(estimated_s)
        if device == "cuda":
            return run, device_why
        device_why += "; "
    backend, why = auto.choose_cpu_backend(estimated_s)
    return dataclasses.replace(run, training=dataclasses.replace(run.training, device="cpu", backend=backend)), device_why + why


def estimated_training_s(run: ResolvedRun, data: FederatedData) -> float | None:
    """Seconds ``run`` would train on ``data`` in the loop at one torch thread, by
    ``learning.engine.auto``'s rule on its work size (None: no training data to size it by)."""
    import torch

    from learning.engine import auto
    from learning.models import MODELS

    sample = next((d.x_train[:1] for d in data.devices if d.num_train), None)
    if sample is None:
        return None
    with torch.random.fork_rng(devices=[]):  # building the model draws from torch's global generator: put it back
        macs = auto.forward_macs(MODELS[run.scenario.model_name](**run.scenario.model_kwargs), sample)
    every = run.spec.evaluate_every or 1
    training = run.training
    standard_steps = [training.epochs * -(-int(n) // training.batch_size) for n in data.train_sizes]
    return auto.estimated_training_s(macs, auto.RunWork(
        data.train_sizes, [d.y_val.shape[0] for d in data.devices], training.batch_size, training.epochs,
        run.participation, run.rounds, run.rounds // every + 1,
        update_work=[run.algorithm.update_work(run.options, training, max(steps, 1)) for steps in standard_steps],
        setup_epochs=run.algorithm.setup_epochs(run.options)))


def build_learner(run: ResolvedRun, data: FederatedData, multicast_airtime=None):
    """The algorithm's learner with the run's options (on a cell it can estimate a multicast's
    airtime, as a base station from channel reports)."""
    spec = run.spec
    setup = LearnerSetup(
        data=data,
        model_name=run.scenario.model_name,
        model_kwargs=run.scenario.model_kwargs,
        training=run.training,
        seed_sequence=run.seeds.learner,
        participation=run.participation,
        options=run.options,
        multicast_airtime=multicast_airtime,
        uplink_codec=run.uplink_codec,
        downlink_codec=run.downlink_codec,
        unreached=spec.unreached,
    )
    try:
        return run.algorithm(setup)
    except ValueError as error:
        raise UsageError(f"{spec.algorithm}: {error}") from None


def read_digest(data: FederatedData, data_dir: str | None) -> str | None:
    """The digest of the dataset files the run's data came from (None: none was read)."""
    from scenarios.datasets.catalog import DATASETS, resolve_data_dir
    from scenarios.datasets.layout import data_digest

    info = DATASETS.get(data.info.get("dataset")) if isinstance(data.info.get("dataset"), str) else None
    return data_digest(info, resolve_data_dir(data_dir)) if info is not None else None


def config_record(run: ResolvedRun, learner, samples: np.ndarray, data_digest: str | None = None,
                  backend_choice: str | None = None) -> dict:
    """What ``config.json`` records (and, but for ``provenance``, what the folder's hash covers)."""
    spec, scenario = run.spec, run.scenario
    return {
        "format_version": FORMAT_VERSION,
        "label": run.label,
        "scenario": {"name": scenario.name, "version": scenario.version, "description": scenario.description,
                     "settings": run.knobs},
        "algorithm": spec.algorithm,
        "algorithm_options": run.options.as_dict(),  # every option, defaults resolved
        "model": {"name": scenario.model_name, "kwargs": scenario.model_kwargs, "bits": learner.model_bits},
        "training": asdict(run.training),
        "participation": run.participation,
        "system": run.system.record(spec.system),
        "rounds": run.rounds,
        "seed": spec.seed,
        "evaluate_every": spec.evaluate_every,
        "num_devices": learner.num_devices,
        "device_samples_per_update": samples.tolist(),
        **({"unreached": spec.unreached} if spec.unreached != "held" else {}),  # at its default not recorded: folders keep their names
        **plugin_record(run),
        # not hashed: see config_hash; backend_choice: why this backend trains it (the same numbers either way)
        "provenance": {**provenance(data_digest, executed_files()), **({"backend_choice": backend_choice} if backend_choice else {})},
    }


def input_record(network) -> dict:
    """``{"inputs": {"availability_trace_sha256": ...}}``: the digest of the bytes of the input
    files the run's network read (its availability trace, ``netsim.dynamics.availability``), part
    of the folder's hash: an edited trace, or another folder's file under the same path, is
    another run. Nothing for a run that reads none, so its folder name stays as it was."""
    availability = getattr(getattr(network, "dynamics", None), "availability", None)
    digest = getattr(availability, "sha256", None)
    return {"inputs": {"availability_trace_sha256": digest}} if digest is not None else {}


def plugin_record(run: ResolvedRun) -> dict:
    """``{"plugins": {use: {"name", "module", "version", "sha256"}}}`` for what this run takes
    from plugins, by its use (its kind; a codec by its link, ``uplink_codec``/``downlink_codec``):
    nothing for a run of built-ins, so their folder names stay as they were."""
    spec = run.spec
    used = {"algorithm": ("algorithm", spec.algorithm), "scenario": ("scenario", spec.scenario),
            "model": ("model", run.scenario.model_name), "system": ("system", spec.system),
            "scheduler": ("scheduler", spec.scheduler), "orchestrator": ("orchestrator", spec.orchestrator),
            **{link: ("codec", getattr(spec, link).partition(":")[0]) for link in ("uplink_codec", "downlink_codec")}}
    found = {use: {"name": name, **origin(kind, name)} for use, (kind, name) in used.items() if origin(kind, name)}
    return {"plugins": found} if found else {}


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
