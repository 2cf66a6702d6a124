"""FeSEM (Xie, Long et al., Multi-center federated learning): k centers fitted by one
stochastic EM step per round.

Each device trains from its center's model; then, for the devices whose update arrived, the
E-step assigns each to the center nearest to its local model in L2 distance, and the M-step
sets every center to the average of its members' local models (FedAvg's data-size weights).
A center with no arrived member keeps its model. The centers start, after the first round's
local updates, from k-means++ seeding of those models (Xie et al. initialize at random;
k-means++ picks well-separated models at random, so no two centers start in one group).

Option ``k`` (number of centers): default the scenario's number of true groups where it has
them (pFedLIA IV-C runs FeSEM with the correct k), else 4. Downlink: one multicast stream per
center; uplink: one model per device. ``cluster_labels`` returns the assignment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from learning.algorithms.base import LearnerSetup, MixingLearner
from learning.single_thread import one_thread
from learning.weights import oracle_weights
from learning.options import Options, option

DEFAULT_CENTERS = 4


def kmeans_plusplus_seeds(models: torch.Tensor, k: int, seed: int) -> torch.Tensor:
    """k rows of ``models`` chosen by k-means++ seeding (scikit-learn)."""
    from sklearn.cluster import kmeans_plusplus

    with one_thread():
        _, index = kmeans_plusplus(models.double().numpy(), n_clusters=k, random_state=seed)
    return models[torch.from_numpy(index)].clone()


def nearest_center(models: torch.Tensor, centers: torch.Tensor) -> np.ndarray:
    """E-step: index of the center at the smallest L2 distance from each model."""
    return torch.cdist(models.double(), centers.double()).argmin(dim=1).numpy()


@dataclass(frozen=True)
class FeSEMOptions(Options):
    k: int | None = option(None, "cluster centers (none: the number of true groups, else 4)", low=1)


class FeSEM(MixingLearner):
    name = "fesem"
    Options = FeSEMOptions

    def __init__(self, setup: LearnerSetup):
        super().__init__(setup)
        groups = setup.data.groups
        default = int(len(np.unique(groups))) if groups is not None else DEFAULT_CENTERS
        self.k = int(min(default, self.num_devices) if self.options.k is None else self.options.k)
        if self.k > self.num_devices:
            raise ValueError(f"fesem needs k in 1..{self.num_devices}, got {self.k}")
        self.assignment = np.zeros(self.num_devices, dtype=int)
        self.centers: torch.Tensor | None = None

    def mixing_matrix(self) -> np.ndarray:
        return oracle_weights(self.train_sizes, self.assignment)

    def aggregate(self, server_round: int, arrived: Sequence[int]) -> None:
        index = sorted(arrived)
        if not index:
            return
        local = self.theta_half[index]
        if self.centers is None:
            self.centers = kmeans_plusplus_seeds(local, min(self.k, len(index)), int(self.rng.integers(2**31)))
        self.assignment[index] = nearest_center(local, self.centers)  # E-step
        super().aggregate(server_round, arrived)  # M-step: every member takes its center
        for center in np.unique(self.assignment[index]):
            member = index[int(np.flatnonzero(self.assignment[index] == center)[0])]
            self.centers[center] = self.theta[member]

    def cluster_labels(self) -> np.ndarray | None:
        return None if self.centers is None else self.assignment.copy()
