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
    """All devices' data; ``groups`` is the true group of each device where the scenario has one.

    Regression data are postulated Gaussian, ``y ~ N(f(x), noise_variance)``: the training loss
    is that negative log-likelihood per sample, ``(y - f(x))^2 / (2 noise_variance)`` (Self-FL
    eq. 5), which is the plain squared error at the default 1/2.
    """

    devices: tuple[DeviceData, ...]
    num_classes: int
    groups: np.ndarray | None = None
    task: str = "classification"  # or "regression" (scalar data, Gaussian negative log-likelihood)
    info: dict = field(default_factory=dict)
    noise_variance: float = 0.5  # regression only

    @property
    def num_devices(self) -> int:
        return len(self.devices)

    @property
    def train_sizes(self) -> np.ndarray:
        return np.array([d.num_train for d in self.devices], dtype=np.float64)
