"""A named, versioned scenario: how to build the devices' data, which model, which defaults."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from learning.data import DeviceData, FederatedData
from learning.training import LocalTraining
from scenarios.definitions.partitions import train_validation_split

DataBuilder = Callable[[np.random.Generator, "Path | None"], FederatedData]


@dataclass(frozen=True)
class Scenario:
    """``build(rng, data_dir)`` makes the federated data; the rest are the paper's defaults.

    ``algorithm_options`` are defaults per algorithm name (e.g. user-centric's variance
    mini-batch size); ``datasets`` names the files it needs, for clear errors and skips;
    ``knobs`` the settings a run may change (``build`` takes them as keywords).
    """

    name: str
    version: int
    description: str
    build: DataBuilder
    model_name: str
    model_kwargs: dict
    training: LocalTraining = LocalTraining()
    rounds: int = 50
    participation: float = 1.0
    algorithm_options: dict = field(default_factory=dict)
    datasets: tuple[str, ...] = ()
    small: bool = False  # cheap enough for the conformance test
    # settings a run may change (``devices``, ``alpha``): name -> (keyword of ``build``, default)
    knobs: dict = field(default_factory=dict)

    @property
    def versioned_name(self) -> str:
        return f"{self.name}-v{self.version}"


def devices_from_indices(
    x: np.ndarray,
    y: np.ndarray,
    device_indices: list[np.ndarray],
    validation_fraction: float,
    rng: np.random.Generator,
    transform: Callable[[int, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None,
    x_dtype=torch.float32,
) -> tuple[DeviceData, ...]:
    """Per-device train/validation tensors; ``transform(device, x, y)`` applies a group shift."""
    devices = []
    for device, indices in enumerate(device_indices):
        train, val = train_validation_split(indices, validation_fraction, rng)
        xs, ys = x[np.concatenate([train, val])], y[np.concatenate([train, val])]
        if transform is not None:
            xs, ys = transform(device, xs, ys)
        xt = torch.as_tensor(np.ascontiguousarray(xs), dtype=x_dtype)
        yt = torch.as_tensor(np.ascontiguousarray(ys))
        devices.append(DeviceData(xt[: train.size], yt[: train.size], xt[train.size :], yt[train.size :]))
    return tuple(devices)
