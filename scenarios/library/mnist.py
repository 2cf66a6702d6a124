"""The journal's handwritten-character scenarios (V-A): label shift, and label plus covariate
(rotation) shift. The paper uses EMNIST (byclass, 62 classes, as its authors' code); MNIST
stands in where EMNIST is not available (10 classes; its 60,000 training images instead of the
reference code's 125k), and both are registered. Each class is split over the devices with
Dirichlet proportions (per class, as the reference code); 80/20 train/validation per device."""

from __future__ import annotations

from functools import partial

import numpy as np

from learning.data import FederatedData
from scenarios.library.journal import JOURNAL_TRAINING, ROUNDS, VALIDATION_FRACTION
from scenarios.library.sources import NUM_CLASSES, image_arrays, image_devices
from scenarios.definitions.partitions import dirichlet_label_split, equal_groups, rotate_images
from scenarios.definitions.scenario import Scenario

LABEL_SHIFT = {"num_devices": 20, "num_points": 10_000, "alpha": 0.4}
ROTATION = {"num_devices": 100, "num_points": 100_000, "num_groups": 4, "alpha": 8.0}
# eq. 10 mini-batches of n_k = 100 in the paper's label-shift runs (V-F): every device needs more
# training points than that, so partitions are redrawn until each has 150 (112 for training)
LABEL_SHIFT_MIN_POINTS = 150
# n_k per data set: the text's 100 on EMNIST; on MNIST's 10 classes 100 leaves W within 7% of Local
# (own mass 0.93) and user-centric k = m below FedAvg, 12 puts it above (docs/faithfulness.md)
LABEL_SHIFT_EQ10_BATCH = {"mnist": 12, "emnist-byclass": 100}
ROTATION_MIN_POINTS = 20


def _subset(labels: np.ndarray, num_points: int, rng: np.random.Generator) -> np.ndarray:
    """``num_points`` random indices (all of them, shuffled, when the split is smaller)."""
    return rng.choice(labels.size, size=min(num_points, labels.size), replace=False)


def build_label_shift(rng: np.random.Generator, data_dir=None, *, dataset: str, num_devices: int, num_points: int, alpha: float) -> FederatedData:
    """``num_points`` training images split by labels with proportions Dir(alpha) (no groups)."""
    images, labels = image_arrays(dataset, data_dir, "train")
    subset = _subset(labels, num_points, rng)
    parts = [subset[p] for p in dirichlet_label_split(labels[subset], num_devices, alpha, rng, min_size=LABEL_SHIFT_MIN_POINTS)]
    devices = image_devices(images, labels, parts, VALIDATION_FRACTION, rng)
    return FederatedData(devices, num_classes=NUM_CLASSES[dataset], info={"dataset": dataset})


def build_rotation(
    rng: np.random.Generator, data_dir=None, *, dataset: str, num_devices: int, num_points: int, num_groups: int, alpha: float
) -> FederatedData:
    """Dir(alpha) label shift, and group g's images rotated by ``90 g`` degrees (covariate shift)."""
    images, labels = image_arrays(dataset, data_dir, "train")
    subset = _subset(labels, num_points, rng)
    groups = equal_groups(num_devices, num_groups)
    parts = [subset[p] for p in dirichlet_label_split(labels[subset], num_devices, alpha, rng, min_size=ROTATION_MIN_POINTS)]

    def rotate(device, xs, ys):
        return rotate_images(xs, int(groups[device])), ys

    devices = image_devices(images, labels, parts, VALIDATION_FRACTION, rng, rotate)
    return FederatedData(devices, num_classes=NUM_CLASSES[dataset], groups=groups, info={"dataset": dataset})


def _label_shift(name: str, dataset: str, note: str) -> Scenario:
    batch = LABEL_SHIFT_EQ10_BATCH[dataset]
    why = "the paper's text (V-F)" if batch == 100 else (
        "chosen by measurement: the text's 100 makes W nearly Local on 10 classes (V-F: tuned to the data)")
    return Scenario(
        name=name,
        version=3,
        description=(
            f"journal V-A label shift on {dataset}{note}: {LABEL_SHIFT['num_points']} training images over "
            f"{LABEL_SHIFT['num_devices']} devices, Dirichlet alpha={LABEL_SHIFT['alpha']}, no groups, "
            f"{VALIDATION_FRACTION:.0%} validation per device, LeNet-5; eq. 10 batches of n_k = {batch} points, {why}"
        ),
        build=partial(build_label_shift, dataset=dataset, **LABEL_SHIFT),
        knobs={"devices": ("num_devices", LABEL_SHIFT["num_devices"]), "alpha": ("alpha", LABEL_SHIFT["alpha"])},
        model_name="lenet5",
        model_kwargs={"in_channels": 1, "image_size": 28, "num_classes": NUM_CLASSES[dataset]},
        training=JOURNAL_TRAINING,
        rounds=ROUNDS,
        algorithm_options={a: {"variance_batch_size": batch} for a in ("user-centric", "parallel-user-centric")},
        datasets=(dataset,),
    )


def _rotation(name: str, dataset: str, note: str) -> Scenario:
    return Scenario(
        name=name,
        version=2,
        description=(
            f"journal V-A label and covariate shift on {dataset}{note}: {ROTATION['num_devices']} devices in "
            f"{ROTATION['num_groups']} groups rotated 0/90/180/270 degrees, Dirichlet alpha={ROTATION['alpha']}, "
            f"{VALIDATION_FRACTION:.0%} validation per device, LeNet-5"
        ),
        build=partial(build_rotation, dataset=dataset, **ROTATION),
        knobs={"devices": ("num_devices", ROTATION["num_devices"]), "alpha": ("alpha", ROTATION["alpha"])},
        model_name="lenet5",
        model_kwargs={"in_channels": 1, "image_size": 28, "num_classes": NUM_CLASSES[dataset]},
        training=JOURNAL_TRAINING,
        rounds=ROUNDS,
        # user-centric's eq. 10 batch is N/3 here (V-F): its default, a third of each local set
        datasets=(dataset,),
    )


SCENARIOS = (
    _label_shift("mnist-label-shift", "mnist", " (MNIST stands in for the paper's EMNIST)"),
    _rotation("mnist-rotation", "mnist", " (MNIST stands in for EMNIST: its 60,000 training images instead of 100k)"),
    _label_shift("emnist-label-shift", "emnist-byclass", " (62 classes, as the paper)"),
    _rotation("emnist-rotation", "emnist-byclass", " (62 classes, as the paper)"),
)
