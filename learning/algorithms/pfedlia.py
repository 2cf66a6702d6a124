"""pFedLIA (Rokvic et al.): FedAvg warm-up, one lazy-influence exchange, then FedAvg per cluster.

Rounds. 1..W (``warmup_rounds``) are ordinary FedAvg rounds (IV-D). Round W + 1 is the
influence exchange (III-D), a round of its own: every device trains ``influence_epochs``
epochs from the warm-up model ``theta_0`` on a random batch of ``influence_batch_size`` of its
training points and uploads that partial model ``theta_j``; the server relays each partial
model to every device; device i scores device j by eq. 1,
``I(i, j) = sum_{z in Z_i^val} L(z, theta_0) - L(z, theta_j)``. The clustering happens once,
at the end of that round, and from round W + 2 on devices run FedAvg within their clusters.
So the paper's "till round 20 FedAvg, then within one communication round we form the
clusters" is W = 20 with the exchange in round 21 and clustered training from round 22:
every later round number is shifted by one against a count of training rounds.

Options: ``warmup_rounds`` (W, default 20, IV-D), ``influence_epochs`` (k, default 20, "we
only performed 20 epochs", III-D), ``influence_batch_size`` (points in Z_j, default 100, the
batch of Fig. 3a), ``mode`` and ``min_samples`` (below).

Clustering (III-F), option ``mode``:

- ``centralized`` (default): the server clusters the rows of the N x N influence matrix (row
  i: how much each peer helps device i) with scikit-learn's OPTICS, which needs no cluster
  count. ``min_samples`` is the smallest group OPTICS calls a cluster; default a tenth of the
  devices, at least 3 (the paper gives none). Too small, and OPTICS's steepness rule cuts
  true clusters into pieces; too large, and it calls whole clusters noise. Measured ARI:
  pathological digits (25 devices, 5 clusters of 5; 6 seeds): 2 gives 0.75-0.92, 3-5 give 1,
  7 or more find nothing; fmnist-pathological (100 devices, clusters of 20, seed 0): 3 gives
  0.22, 5 gives 0.53, 10-15 give 1; fmnist-noisy: 3 gives 0.20, 10 gives 0.74. Devices OPTICS
  leaves as noise form singleton clusters (they train alone). One multicast stream per
  cluster.
- ``peer-to-peer``: each device runs 2-means (scikit-learn KMeans) on its own influence
  vector and keeps the beneficial side (the cluster of higher mean score, itself always
  included); it then trains FedAvg over that set, its own aggregate (unicast; devices whose
  sets coincide get the same model and share a stream). ``cluster_labels`` groups devices
  whose sets coincide (the devices that receive the same model), so ``clustering_ari``
  compares the model sharing against the true groups.

Traffic of the influence round: the warm-up model to devices that lack it, then N
broadcasts (each partial model sent down to all); up, each device's partial model plus its
influence scores (centralized: N 32-bit scalars for the server's matrix; peer-to-peer: its
chosen set, N bits). Its compute scale is the influence training's steps over a regular
round's steps. The round's plan puts the relay on the downlink before the compute, so the
time axis counts every transmission but not their exact order inside the round. A device
whose influence upload did not arrive is never clustered nor abandoned: from then on it
receives FedAvg's model over the devices heard (its row of W is ``n_j / sum_heard n``), and
no one mixes its updates (it has no scores; the paper assumes every upload arrives).
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np
import torch

from contract import RoundPlan, Stream
from learning.algorithms.base import SCALAR_BITS, LearnerSetup, MixingLearner
from learning.data import DeviceData
from learning.single_thread import one_thread
from learning.weights import fedavg_weights
from learning.options import Options, option



def optics_clusters(influence: np.ndarray, min_samples: int) -> np.ndarray:
    """OPTICS over the rows of the influence matrix; noise points become singleton clusters."""
    from sklearn.cluster import OPTICS

    rows = np.asarray(influence, dtype=np.float64)
    if rows.shape[0] < 2:
        return np.zeros(rows.shape[0], dtype=int)
    with one_thread():
        labels = OPTICS(min_samples=min(min_samples, rows.shape[0])).fit_predict(rows)
    noise = labels < 0
    labels[noise] = labels.max() + 1 + np.arange(int(noise.sum()))
    return labels


def beneficial_peers(scores: np.ndarray, own: int, seed: int) -> np.ndarray:
    """Peer-to-peer pFedLIA: 2-means on one device's influence vector; the side of higher mean
    score is beneficial (a boolean mask, the device itself always in)."""
    from sklearn.cluster import KMeans

    values = np.asarray(scores, dtype=np.float64)
    keep = np.ones(values.size, dtype=bool)
    if np.ptp(values) > 0:
        with one_thread():
            labels = KMeans(n_clusters=2, n_init=10, random_state=seed).fit_predict(values[:, None])
        better = int(values[labels == 1].mean() > values[labels == 0].mean())
        keep = labels == better
    keep[own] = True
    return keep


def same_row_labels(weights: np.ndarray) -> np.ndarray:
    """Label devices by their row of W: equal rows (the same aggregate) share a label."""
    _, first, inverse = np.unique(weights, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))  # number the groups by first appearance
    return order[np.ravel(inverse)]


@dataclass(frozen=True)
class PFedLIAOptions(Options):
    warmup_rounds: int = option(20, "FedAvg rounds before the influence exchange", low=0)
    influence_epochs: int = option(20, "epochs of the influence estimation", low=1)
    influence_batch_size: int = option(100, "mini-batch size of the influence estimation", low=1)
    mode: Literal["centralized", "peer-to-peer"] = option("centralized", "where influences are computed")
    min_samples: int | None = option(None, "DBSCAN's min_samples (none: a tenth of the devices, at least 3)", low=2)


class PFedLIA(MixingLearner):
    name = "pfedlia"
    Options = PFedLIAOptions

    def __init__(self, setup: LearnerSetup):
        super().__init__(setup)
        given = self.options.min_samples
        self.min_samples = max(3, -(-self.num_devices // 10)) if given is None else given
        self.influence_round = self.options.warmup_rounds + 1
        self.weights = fedavg_weights(self.train_sizes)
        self.influence: np.ndarray | None = None  # eq. 1, rows: evaluating device; NaN where unknown
        self.labels: np.ndarray | None = None

    def mixing_matrix(self) -> np.ndarray:
        return self.weights

    # --- the influence exchange round --------------------------------------------------
    def plan_round(self, server_round: int) -> RoundPlan | None:
        if server_round != self.influence_round:
            return super().plan_round(server_round)
        everyone = tuple(range(self.num_devices))
        relay = tuple(Stream(everyone, self.model_bits) for _ in everyone)
        score_bits = self.num_devices * (SCALAR_BITS if self.options.mode == "centralized" else 1.0)
        uplink = {d: self.model_bits + score_bits for d in everyone}
        plan = RoundPlan(self.model_streams(everyone) + relay, uplink, everyone)
        return self.scale_compute(plan, lambda d: self.influence_steps(d) / self.standard_steps(d))

    def influence_batch(self, device: int) -> DeviceData:
        """A random batch of the device's training points (the ``Z_j`` of III-D)."""
        data = self.data.devices[device]
        index = torch.randperm(data.num_train, generator=self.generators[device])[: self.options.influence_batch_size]
        return DeviceData(data.x_train[index], data.y_train[index], data.x_val, data.y_val)

    def influence_steps(self, device: int) -> int:
        batch = min(self.options.influence_batch_size, self.data.devices[device].num_train)
        return self.options.influence_epochs * -(-batch // self.setup.training.batch_size)

    def local_update(self, server_round: int, devices: Sequence[int]) -> None:
        if server_round != self.influence_round:
            return super().local_update(server_round, devices)
        jobs = [dataclasses.replace(self.job(j, self.theta[j], "influence"), data=self.influence_batch(j),
                                    epochs=self.options.influence_epochs) for j in devices]
        partial = dict(zip(devices, self.trainer.train_many(jobs))) if jobs else {}
        self.influence = np.full((self.num_devices, self.num_devices), np.nan)
        if not devices:
            return
        partials = torch.stack([partial[j] for j in devices])
        for i in devices:
            data = self.data.devices[i]
            models = torch.cat([self.theta[i][None, :], partials])
            _, losses = self.trainer.evaluate_many(models, [data] * len(models))  # theta_0, then each theta_j, on Z_i^val
            self.influence[i, list(devices)] = data.y_val.shape[0] * (losses[0] - losses[1:])  # eq. 1: a sum over Z_i^val

    def aggregate(self, server_round: int, arrived: Sequence[int]) -> None:
        if server_round != self.influence_round:
            return super().aggregate(server_round, arrived)
        self.weights = self.cluster_weights(sorted(arrived))  # the models stay theta_0 this round
        self.labels = same_row_labels(self.weights)  # centralized: the clusters; peer-to-peer: equal sets

    def cluster_weights(self, arrived: list[int]) -> np.ndarray:
        """FedAvg weights within the found clusters; a device that did not arrive takes FedAvg's
        row over those that did (none did: FedAvg's over everyone)."""
        m = self.num_devices
        arrived_index = np.array(arrived, dtype=int)
        if arrived_index.size == 0:
            return fedavg_weights(self.train_sizes)
        if self.options.mode == "centralized":
            labels = np.arange(m) + m  # singletons unless clustered below
            scores = self.influence[np.ix_(arrived_index, arrived_index)]
            labels[arrived_index] = optics_clusters(scores, self.min_samples)
            members = labels[:, None] == labels[None, :]
        else:
            members = np.eye(m, dtype=bool)
            for position, i in enumerate(arrived_index):
                seed = int(self.rng.integers(2**31))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # fewer distinct scores than 2 clusters: accepted
                    keep = beneficial_peers(self.influence[i, arrived_index], position, seed)
                members[i, arrived_index] = keep
        unheard = np.setdiff1d(np.arange(m), arrived_index)
        members[unheard] = False
        members[np.ix_(unheard, arrived_index)] = True
        w = members * self.train_sizes[None, :]
        return w / w.sum(axis=1, keepdims=True)

    def cluster_labels(self) -> np.ndarray | None:
        return None if self.labels is None else self.labels.copy()

    def evaluation_extras(self) -> dict:
        extras = super().evaluation_extras()
        if self.labels is not None:
            extras["clusters_found"] = int(len(np.unique(self.labels)))
        return extras
