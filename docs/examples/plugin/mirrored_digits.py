"""Mirrored digits: scikit-learn's handwritten digits over 8 devices, half of them seeing the
images mirrored left to right; a two-layer perceptron of its own."""

from __future__ import annotations

import numpy as np
from torch import nn

from learning.data import FederatedData
from learning.training import LocalTraining
from scenarios.definitions.partitions import dirichlet_label_split
from scenarios.definitions.scenario import Scenario, devices_from_indices

__version__ = "1.0"


def build_mirrored_digits(rng: np.random.Generator, data_dir=None, num_devices: int = 8) -> FederatedData:
    """``num_devices`` devices, labels split by a Dirichlet(10) label shift; the odd devices'
    images mirrored. ``rng`` is the run's data stream: the same seed gives the same devices."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    y = digits.target.astype(np.int64)
    groups = np.arange(num_devices) % 2
    parts = dirichlet_label_split(y, num_devices, 10.0, rng, min_size=20)

    def mirror(device, xs, ys):
        return (xs[..., ::-1] if groups[device] else xs), ys

    devices = devices_from_indices(x, y, parts, 0.25, rng, mirror)
    return FederatedData(devices, num_classes=10, groups=groups, info={"dataset": "sklearn-digits"})


def two_layer_perceptron(in_features: int, num_classes: int, hidden: int) -> nn.Module:
    return nn.Sequential(nn.Flatten(), nn.Linear(in_features, hidden), nn.Tanh(), nn.Linear(hidden, num_classes))


MODELS = {"two-layer-perceptron": two_layer_perceptron}

SCENARIOS = [
    Scenario(
        name="mirrored-digits",
        version=1,
        description="scikit-learn digits over 8 devices, the odd ones mirrored; Dirichlet alpha=10, 25% validation",
        build=build_mirrored_digits,
        model_name="two-layer-perceptron",
        model_kwargs={"in_features": 64, "num_classes": 10, "hidden": 32},
        training=LocalTraining(lr=0.05, momentum=0.9, batch_size=16, epochs=1),
        rounds=5,
        knobs={"devices": ("num_devices", 8)},
        small=True,
    )
]
