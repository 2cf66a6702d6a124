"""The journal's concept-shift scenario (V-A): CIFAR-10 over 20 devices in 4 groups, each group
relabelling the classes by its own random permutation; CIFAR-100 registered the same way.

As the authors' reference code (the paper is silent): the 50,000 training images split into 20
disjoint shares of 2,500 with no label skew, all of a share used for training, and every
device validating on the same first 1,000 test images, relabelled by its group's permutation.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from learning.data import FederatedData
import torch

from learning.data import DeviceData
from scenarios.library.journal import JOURNAL_TEXT_TRAINING, ROUNDS
from scenarios.library.sources import NUM_CLASSES, image_arrays, unit_float
from scenarios.definitions.partitions import equal_groups, group_label_permutations, iid_split
from scenarios.definitions.scenario import Scenario

NUM_DEVICES = 20
NUM_GROUPS = 4
SHARED_VALIDATION = 1_000  # the first test images, every device's validation set
# The eq. 10 mini-batch: 0.5 N, the batch of the reference configuration's divisor 2 (the text,
# V-F, says N/3: ``--option variance_batch_fraction=0.3333``). Each row of W then puts 0.78 of its
# mass on the device's own group (0.57 at N/3), user-centric k = 4 ends 1.4 points under Oracle
# as the paper's Table I has it (6.2 at N/3), and Fig. 5 still peaks at the 4 groups; from 0.6 N
# on it no longer does (docs/faithfulness.md has the runs and the curves).
EQ10 = {"variance_batch_fraction": 0.5}


def build_concept_shift(rng: np.random.Generator, data_dir=None, *, dataset: str, num_devices: int, num_groups: int) -> FederatedData:
    """All training images split uniformly at random into equal shares (as the authors' code);
    group g's labels are mapped through its permutation (group 0 keeps the original labels),
    on its training share and on the shared validation images."""
    images, labels = image_arrays(dataset, data_dir, "train")
    test_images, test_labels = image_arrays(dataset, data_dir, "test")
    x_val = torch.from_numpy(unit_float(test_images[:SHARED_VALIDATION]))
    groups = equal_groups(num_devices, num_groups)
    permutations = group_label_permutations(num_groups, NUM_CLASSES[dataset], rng)
    parts = iid_split(labels.size, num_devices, rng)
    devices = tuple(
        DeviceData(torch.from_numpy(unit_float(images[part])), torch.from_numpy(permutations[groups[d]][labels[part]]),
                   x_val, torch.from_numpy(permutations[groups[d]][test_labels[:SHARED_VALIDATION]]))
        for d, part in enumerate(parts)
    )
    return FederatedData(devices, num_classes=NUM_CLASSES[dataset], groups=groups, info={"dataset": dataset, "label_permutations": permutations})


def _concept_shift(name: str, dataset: str) -> Scenario:
    return Scenario(
        name=name,
        version=4,  # 4: eq. 10 batches of 0.5 N (3: the text's N/3; 2: the reference code's Adam, 0.6 N)
        description=(
            f"journal V-A concept shift on {dataset}: its 50,000 training images split equally over {NUM_DEVICES} devices "
            f"in {NUM_GROUPS} groups, a random label permutation per group; every device validates on the first "
            f"{SHARED_VALIDATION:,} test images relabelled by its group (as the authors' code); LeNet-5 (3x32x32), the "
            "network of the reference code's CIFAR-10 runs; trained as the paper's text says (SGD lr 0.01 momentum 0.9, "
            "with the reference code's Adam FedAvg collapses to one class and Oracle falls below user-centric); eq. 10 "
            "batches of 0.5 N, the reference configuration's (the text's N/3 leaves each row of W 0.57 on its own group "
            "and user-centric 6 points under Oracle; from 0.6 N on the silhouette no longer peaks at the 4 groups)"
        ),
        build=partial(build_concept_shift, dataset=dataset, num_devices=NUM_DEVICES, num_groups=NUM_GROUPS),
        model_name="lenet5",
        model_kwargs={"in_channels": 3, "image_size": 32, "num_classes": NUM_CLASSES[dataset]},
        # the text's SGD (lr 0.01, momentum 0.9): with the reference code's Adam (lr 0.01, state kept)
        # FedAvg collapses to one class and Oracle ends below user-centric (docs/faithfulness.md)
        training=JOURNAL_TEXT_TRAINING,
        rounds=ROUNDS,
        algorithm_options={name: EQ10 for name in ("user-centric", "parallel-user-centric")},
        datasets=(dataset,),
    )


SCENARIOS = (_concept_shift("cifar10-concept-shift", "cifar10"), _concept_shift("cifar100-concept-shift", "cifar100"))
