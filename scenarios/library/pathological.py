"""pFedLIA's label-space heterogeneity (IV-B, IV-D): 100 devices in 5 clusters, each label
owned by one cluster (pathological), optionally one extra random label per device with
probability 1/2 (noisy); 10% of the devices per round, 3:1 train/validation.

Substitutions: LeNet-5 trained from scratch instead of the paper's pretrained ResNet-18;
local training uses FL-bench's defaults (the framework the paper ran its baselines in:
SGD lr 0.01, no momentum, batch 32, 5 local epochs, PyTorch's default initialization), which
the paper does not restate.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from learning.data import FederatedData
from learning.training import LocalTraining
from scenarios.library.sources import NUM_CLASSES, image_arrays, image_devices
from scenarios.definitions.partitions import pathological_split
from scenarios.definitions.scenario import Scenario

NUM_DEVICES = 100
NUM_CLUSTERS = 5
PARTICIPATION = 0.1
VALIDATION_FRACTION = 0.25  # 3 : 1
FL_BENCH_TRAINING = LocalTraining(lr=0.01, momentum=0.0, batch_size=32, epochs=5, init="torch")  # FL-bench is PyTorch
# pFedLIA: FedAvg warm-up for 20 rounds, then each client trains the warm model for 20
# epochs (the lazy influence updates, III-D), then FedAvg within each cluster
PFEDLIA_OPTIONS = {"warmup_rounds": 20, "influence_epochs": 20}
MODEL_KWARGS = {
    "fashion-mnist": {"in_channels": 1, "image_size": 28, "num_classes": 10},
    "cifar10": {"in_channels": 3, "image_size": 32, "num_classes": 10},
}


def build_pathological(rng: np.random.Generator, data_dir=None, *, dataset: str, extra_labels: int) -> FederatedData:
    """All training images, each label sharded equally among the devices that hold it; the
    owning cluster is each device's true group."""
    images, labels = image_arrays(dataset, data_dir, "train")
    parts, groups = pathological_split(labels, NUM_DEVICES, NUM_CLUSTERS, rng, extra_labels=extra_labels)
    devices = image_devices(images, labels, parts, VALIDATION_FRACTION, rng)
    return FederatedData(devices, num_classes=NUM_CLASSES[dataset], groups=groups, info={"dataset": dataset})


def _scenario(name: str, dataset: str, noisy: bool) -> Scenario:
    setting = "noisy non-IID (plus one random foreign label with probability 1/2)" if noisy else "pathological non-IID"
    return Scenario(
        name=name,
        version=1,
        description=(
            f"pFedLIA IV-B {setting} on {dataset}: {NUM_DEVICES} devices in {NUM_CLUSTERS} clusters, each "
            f"label owned by one cluster, participation {PARTICIPATION}, 3:1 train/validation; LeNet-5 instead "
            "of a pretrained ResNet-18, FL-bench local training (lr 0.01, batch 32, 5 epochs)"
        ),
        build=partial(build_pathological, dataset=dataset, extra_labels=1 if noisy else 0),
        model_name="lenet5",
        model_kwargs=MODEL_KWARGS[dataset],
        training=FL_BENCH_TRAINING,
        rounds=100,  # FL-bench's default; the paper does not state it
        participation=PARTICIPATION,
        algorithm_options={"pfedlia": dict(PFEDLIA_OPTIONS)},
        datasets=(dataset,),
    )


SCENARIOS = (
    _scenario("fmnist-pathological", "fashion-mnist", noisy=False),
    _scenario("fmnist-noisy", "fashion-mnist", noisy=True),
    _scenario("cifar10-pathological", "cifar10", noisy=False),
    _scenario("cifar10-noisy", "cifar10", noisy=True),
)
