"""The journal's concept-shift scenario (V-A): CIFAR-10 over 20 devices in 4 groups, each group
relabelling the classes by its own random permutation; CIFAR-100 registered the same way."""

from __future__ import annotations

from functools import partial

import numpy as np

from learning.data import FederatedData
from scenarios.library.journal import JOURNAL_TRAINING, ROUNDS, VALIDATION_FRACTION
from scenarios.library.sources import NUM_CLASSES, image_arrays, image_devices
from scenarios.partitions import equal_groups, group_label_permutations, iid_split
from scenarios.scenario import Scenario

NUM_DEVICES = 20
NUM_GROUPS = 4


def build_concept_shift(rng: np.random.Generator, data_dir=None, *, dataset: str, num_devices: int, num_groups: int) -> FederatedData:
    """All training images split uniformly at random into equal shares (as the authors' code);
    group g's labels are mapped through its permutation (group 0 keeps the original labels)."""
    images, labels = image_arrays(dataset, data_dir, "train")
    groups = equal_groups(num_devices, num_groups)
    permutations = group_label_permutations(num_groups, NUM_CLASSES[dataset], rng)
    parts = iid_split(labels.size, num_devices, rng)

    def relabel(device, xs, ys):
        return xs, permutations[groups[device]][ys]

    devices = image_devices(images, labels, parts, VALIDATION_FRACTION, rng, relabel)
    return FederatedData(devices, num_classes=NUM_CLASSES[dataset], groups=groups, info={"dataset": dataset, "label_permutations": permutations})


def _concept_shift(name: str, dataset: str) -> Scenario:
    return Scenario(
        name=name,
        version=1,
        description=(
            f"journal V-A concept shift on {dataset}: its 50,000 training images split equally over {NUM_DEVICES} devices "
            f"in {NUM_GROUPS} groups, a random label permutation per group, {VALIDATION_FRACTION:.0%} validation "
            "per device, LeNet-5 (3x32x32)"
        ),
        build=partial(build_concept_shift, dataset=dataset, num_devices=NUM_DEVICES, num_groups=NUM_GROUPS),
        model_name="lenet5",
        model_kwargs={"in_channels": 3, "image_size": 32, "num_classes": NUM_CLASSES[dataset]},
        training=JOURNAL_TRAINING,
        rounds=ROUNDS,
        # user-centric's eq. 10 batch is N/3 here (V-F): its default, a third of each local set
        datasets=(dataset,),
    )


SCENARIOS = (_concept_shift("cifar10-concept-shift", "cifar10"), _concept_shift("cifar100-concept-shift", "cifar100"))
