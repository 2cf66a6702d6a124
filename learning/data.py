"""Per-device data held as tensors, and the federated data set of a scenario."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch


@dataclass(frozen=True)
class DeviceData:
    """One device's local training set and its own validation split."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_val: torch.Tensor
    y_val: torch.Tensor

    @property
    def num_train(self) -> int:
        return int(self.y_train.shape[0])


@dataclass(frozen=True)
class FederatedData:
    """All devices' data; ``groups`` is the true group of each device where the scenario has one."""

    devices: tuple[DeviceData, ...]
    num_classes: int
    groups: np.ndarray | None = None
    task: str = "classification"  # or "regression" (scalar data, squared loss)
    info: dict = field(default_factory=dict)

    @property
    def num_devices(self) -> int:
        return len(self.devices)

    @property
    def train_sizes(self) -> np.ndarray:
        return np.array([d.num_train for d in self.devices], dtype=np.float64)
