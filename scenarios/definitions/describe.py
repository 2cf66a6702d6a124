"""What a scenario is made of for one seed: devices, groups, per-device data, model size."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from learning.data import DeviceData, FederatedData
from learning.models import build_model
from learning.params import model_bits
from scenarios.definitions.registry import get_scenario
from scenarios.execution.build import scenario_data


def label_histogram(labels: torch.Tensor) -> dict[int, int]:
    """label -> count, for the labels present."""
    values, counts = np.unique(labels.numpy(), return_counts=True)
    return {int(v): int(c) for v, c in zip(values, counts)}


def describe_device(device: int, data: DeviceData, federated: FederatedData) -> dict:
    """One device's group, sample counts and (classification) label histograms."""
    row = {
        "device": device,
        "group": None if federated.groups is None else int(federated.groups[device]),
        "train": data.num_train,
        "validation": int(data.y_val.shape[0]),
    }
    if federated.task == "classification":
        row["train_labels"] = label_histogram(data.y_train)
        row["validation_labels"] = label_histogram(data.y_val)
    truth = federated.info.get("true_parameters")
    if truth is not None:
        row["true_parameters"] = np.asarray(truth[device]).tolist()
    return row


def describe_scenario(name: str, data_dir: Path | str | None, seed: int) -> dict:
    """The scenario's registry entry (training defaults, rounds, options, model and its size)
    and its data as built for ``seed`` (the partition a run of that seed uses). Without its data
    files, the registry entry alone, with ``data`` saying what is missing and ``needs`` which
    files it would read, where and how to get them."""
    from scenarios.datasets import dataset_status, resolve_data_dir

    scenario = get_scenario(name)
    model = build_model(scenario.model_name, torch.Generator().manual_seed(seed), **scenario.model_kwargs)
    entry = {
        "name": scenario.name,
        "version": scenario.version,
        "description": scenario.description,
        "seed": seed,
        "datasets": list(scenario.datasets),
        "model": scenario.model_name,
        "model_kwargs": dict(scenario.model_kwargs),
        "parameters": sum(p.numel() for p in model.parameters()),
        "model_bits": model_bits(model),
        "training": asdict(scenario.training),
        "rounds": scenario.rounds,
        "participation": scenario.participation,
        "algorithm_options": scenario.algorithm_options,
    }
    missing = [row for row in dataset_status(resolve_data_dir(None if data_dir is None else str(data_dir)), verify=False)
               if row["name"] in scenario.datasets and not row["found"]]
    if missing:  # present but damaged files are read below, and refused there
        return {**entry, "data": "not found: " + ", ".join(row["name"] for row in missing),
                "needs": needed_files([row["name"] for row in missing], data_dir)}
    data = scenario_data(name, seed, None if data_dir is None else str(data_dir))
    groups = None if data.groups is None else np.asarray(data.groups)
    return {
        **entry,
        "task": data.task,
        "num_classes": data.num_classes,
        "devices": data.num_devices,
        "groups": None if groups is None else int(np.unique(groups).size),
        "group_sizes": None if groups is None else {int(g): int(c) for g, c in zip(*np.unique(groups, return_counts=True))},
        "train_samples": int(data.train_sizes.sum()),
        "validation_samples": int(sum(d.y_val.shape[0] for d in data.devices)),
        "per_device": [describe_device(d, device, data) for d, device in enumerate(data.devices)],
    }


def needed_files(datasets, data_dir: Path | str | None) -> list[str]:
    """Per dataset, the files a scenario reads, the folders they are looked for in, how to get them."""
    from scenarios.datasets import DATASETS

    root = "DATA_DIR" if data_dir is None else str(data_dir)
    lines = []
    for name in datasets:
        info = DATASETS.get(name)
        if info is None:  # a plugin's own data: its loader says what it needs
            continue
        folders = ", ".join(f"{root}/{folder}" if folder else root for folder in info.folders)
        lines.append(f"{name}: {', '.join(f.name for f in info.files)} (or unpacked) in one of {folders}; {info.how_to_get}")
    return lines
