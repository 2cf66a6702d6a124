"""User-centric FL (journal Algorithms 1 and 2).

Round 0 (set-up): the server broadcasts ``theta^0``; each device uploads its full local
gradient at ``theta^0`` and ``sigma_i^2`` (eq. 10); the server computes W (eq. 9) and, for a
limited stream count, clusters its rows with k-means (eq. 11), the count given or chosen by
``argmax_k s_k - lambda k`` (Algorithm 2, eq. 12). Then every round is eq. 8 with that W.

A device whose set-up statistics did not arrive (an outage, a deadline) is never abandoned:
eq. 9 and the clustering run over the devices heard, and an unheard device's row of W is
FedAvg's over them (``n_j / sum_heard n``: the broadcast of everyone heard, a stream of its own;
no one mixes its updates). In every later round it is asked again for its statistics (at
``theta^0``, in place of its update); when they arrive, W and its clusters are computed again
with it, so it joins its cluster from the next round. The paper assumes every set-up upload
arrives, where this rule gives the same W and clusters.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np
import torch

from contract import RoundPlan
from learning.algorithms.base import SCALAR_BITS, LearnerSetup, MixingLearner
from learning.reuse import reuse
from learning.stream_formation import channel_aware_clusters
from learning.user_centric_options import UserCentricOptions
from learning.weights import choose_stream_count, gradient_variance, kmeans_rows, silhouette_curve, user_centric_weights


def variance_batch_sizes(train_sizes: np.ndarray, size: int | None, fraction: float) -> np.ndarray:
    """Each device's eq. 10 mini-batch size: ``size`` for all, or ``fraction`` of its own set;
    always below the local set size, so there is at least one batch and a nonzero variance."""
    n = np.asarray(train_sizes).astype(int)
    if size is not None:
        if size >= n.min():
            raise ValueError(f"variance_batch_size must be in 1..{n.min() - 1} (below the smallest local data set), got {size}")
        return np.full(n.size, int(size))
    return np.clip(np.round(fraction * n).astype(int), 1, np.maximum(n - 1, 1))


class UserCentric(MixingLearner):
    """Options: ``streams`` (an int k, ``"auto"`` for Algorithm 2, or None for k = m),
    ``lam`` (lambda of eq. 12, default 0: the silhouette maximum), and the eq. 10 mini-batches,
    ``variance_batches``:

    - ``disjoint`` (the paper's text): the local set split at random into disjoint mini-batches
      of ``n_k`` points, ``n_k`` = ``variance_batch_fraction`` of the local set (default 1/3, the
      paper's ``N/3`` for covariate and concept shift, V-F) or, when given, the absolute
      ``variance_batch_size`` (the paper's 100 for label shift);
    - ``reference`` (the authors' code): ``floor(d)`` mini-batches of ``floor(n_i / d)`` points,
      each drawn independently without replacement (they may overlap), ``d`` =
      ``variance_divisor`` (the code's 2.5: two batches of 0.4 n_i).

    Larger mini-batches: smaller variances, sharper weights (towards Local); smaller: softer
    (towards FedAvg).

    ``formation``: ``similarity`` (eq. 11: k-means on W's rows) or ``channel`` (on a physical
    cell: the k streams of least downlink airtime whose silhouette is at most
    ``silhouette_loss`` below eq. 11's, ``learning.stream_formation``)."""

    name = "user-centric"
    Options = UserCentricOptions
    accepts_codecs = True

    def __init__(self, setup: LearnerSetup):
        super().__init__(setup)
        o = self.options
        if isinstance(o.streams, int) and o.streams > self.num_devices:
            raise ValueError(f"streams must be in 1..{self.num_devices}, got {o.streams}")
        if o.variance_batches == "reference":
            if o.variance_divisor > self.train_sizes.min():
                raise ValueError(f"variance_divisor must be in 1..{int(self.train_sizes.min())} (the smallest local set), "
                                 f"got {o.variance_divisor}")
            self.variance_batch_sizes = np.floor(self.train_sizes / o.variance_divisor).astype(int)
        else:
            self.variance_batch_sizes = variance_batch_sizes(self.train_sizes, o.variance_batch_size, o.variance_batch_fraction)
        if o.formation == "channel" and setup.multicast_airtime is None:
            raise ValueError("formation=channel needs a physical cell (the multicast airtimes); choose a cell system")
        self.formed = None
        self.gradients = np.zeros((self.num_devices, self.theta.shape[1]))
        self.variances = np.zeros(self.num_devices)
        self.heard = np.zeros(self.num_devices, dtype=bool)  # whose set-up statistics arrived
        self.full_weights: np.ndarray | None = None
        self.weights: np.ndarray | None = None
        self.silhouette: dict[int, float] = {}
        self.clusters: np.ndarray | None = None

    @property
    def statistics_bits(self) -> float:
        """A set-up upload: the full gradient and ``sigma^2``."""
        return self.model_bits + SCALAR_BITS

    def plan_round(self, server_round: int) -> RoundPlan | None:
        if server_round > 0:
            plan = super().plan_round(server_round)
            unheard = [d for d in plan.participants if not self.heard[d]]
            if not unheard:
                return plan
            return dataclasses.replace(plan, uplink_bits={**plan.uplink_bits, **{d: self.statistics_bits for d in unheard}})
        everyone = tuple(range(self.num_devices))
        uplink = {d: self.statistics_bits for d in everyone}  # gradient + sigma^2
        return RoundPlan(self.model_streams(everyone), uplink, everyone)

    @classmethod
    def setup_epochs(cls, options) -> float:
        return 2.0  # each device's full gradient, and eq. 10's mini-batches, which hold at most its whole set

    def local_update(self, server_round: int, devices: Sequence[int]) -> None:
        """Round 0, and later an unheard device: its set-up statistics (in place of an update)."""
        statistics = [d for d in devices if not self.heard[d]]
        for device, (full, variance) in zip(statistics, self.gradient_statistics(statistics) if statistics else ()):
            self.gradients[device], self.variances[device] = full, variance
        if server_round > 0:
            super().local_update(server_round, [d for d in devices if self.heard[d]])

    def gradient_statistics(self, devices: Sequence[int]) -> list[tuple[np.ndarray, float]]:
        """Each device's full local gradient at ``theta^0`` and eq. 10 over its
        ``variance_batches`` mini-batches (all gradients of all devices in one call)."""
        datas, batches, spans = [], [], []
        for device in devices:
            mini_batches = self.variance_mini_batches(device)
            spans.append((len(datas), len(mini_batches)))
            datas += [self.data.devices[device]] * (1 + len(mini_batches))
            batches += [None] + [torch.from_numpy(np.asarray(b, dtype=np.int64)) for b in mini_batches]
        def compute() -> tuple[np.ndarray, np.ndarray]:
            gradients = self.trainer.mean_gradients(self.theta0.expand(len(datas), -1), datas, batches).numpy()
            return (np.stack([gradients[first] for first, _ in spans]),
                    np.array([gradient_variance(gradients[first + 1 : first + 1 + count], gradients[first]) for first, count in spans]))

        # the other user-centric runs of a command and its silhouette curve take the same set-up: kept (learning.reuse)
        full, variances = reuse("set-up statistics", self.trainer, self.theta0, datas, batches, compute)
        return [(full[i], float(variances[i])) for i in range(len(spans))]

    def variance_mini_batches(self, device: int) -> list[np.ndarray]:
        """The eq. 10 mini-batches of ``device`` (indices into its training set)."""
        n, size = self.data.devices[device].num_train, int(self.variance_batch_sizes[device])
        if self.options.variance_batches == "reference":
            return [self.rng.choice(n, size, replace=False) for _ in range(int(self.options.variance_divisor))]
        order = self.rng.permutation(n)
        return [order[k : k + size] for k in range(0, n - size + 1, size)]

    def aggregate(self, server_round: int, arrived: Sequence[int]) -> None:
        newly_heard = [d for d in arrived if not self.heard[d]]
        if server_round > 0:
            super().aggregate(server_round, arrived)  # an unheard device's column of W is 0: its statistics mix nowhere
        self.heard[newly_heard] = True
        if server_round == 0 or newly_heard:
            self.form_weights()
        if server_round == 0:
            for device in range(self.num_devices):
                self.model_key[device] = ("init",)  # everyone holds theta^0 from the set-up broadcast

    def form_weights(self) -> None:
        """W (eq. 9) and its clusters over the devices heard; an unheard device's row is FedAvg's
        over the heard (none heard: over everyone)."""
        heard = np.flatnonzero(self.heard)
        m = self.num_devices
        sizes = self.train_sizes.astype(float)
        if heard.size == 0:
            self.full_weights = self.weights = np.tile(sizes / sizes.sum(), (m, 1))
            self.clusters = np.zeros(m, dtype=int) if self.options.streams is not None else None
            return
        broadcast = np.zeros(m)
        broadcast[heard] = sizes[heard] / sizes[heard].sum()
        full = np.tile(broadcast, (m, 1))
        full[np.ix_(heard, heard)] = user_centric_weights(self.gradients[heard], self.variances[heard], sizes[heard])
        self.full_weights = full
        clustered, labels = self.limit_streams(full[np.ix_(heard, heard)], heard)
        self.weights = full.copy()
        self.weights[np.ix_(heard, heard)] = clustered
        if labels is None:
            self.clusters = None
        else:
            self.clusters = np.full(m, labels.max() + 1)  # the unheard: a cluster of their own
            self.clusters[heard] = labels

    def limit_streams(self, weights: np.ndarray, devices: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """(rows limited to the stream count, cluster labels or None) of ``weights``, W among
        ``devices`` (the heard): eq. 11, Algorithm 2 or the channel-aware formation."""
        seed = int(self.rng.integers(2**31))
        k = self.options.streams
        count = len(devices)
        if k == "auto":
            self.silhouette = silhouette_curve(weights, seed)
            k = choose_stream_count(self.silhouette, self.options.lam)
        if k is None or k >= count:
            return weights, None
        if self.options.formation == "channel":
            airtime, loss = self.setup.multicast_airtime, self.options.silhouette_loss
            group_airtime = lambda group: airtime([int(devices[g]) for g in group])  # noqa: E731
            self.formed, clustered = channel_aware_clusters(weights, int(k), group_airtime, seed, loss)
            return clustered, self.formed.labels
        labels, clustered = kmeans_rows(weights, int(k), seed)
        return clustered, labels

    def mixing_matrix(self) -> np.ndarray:
        return self.weights

    @property
    def stream_count(self) -> int:
        return len(np.unique(self.weights, axis=0)) if self.weights is not None else 0

    def cluster_labels(self) -> np.ndarray | None:
        return self.clusters

    def evaluation_extras(self) -> dict:
        extras = {**super().evaluation_extras(), "streams_chosen": self.stream_count}
        if self.formed is not None:
            f = self.formed
            extras.update({"formation_gamma": f.gamma, "formation_silhouette": f.silhouette,
                           "similarity_silhouette": f.similarity_silhouette,
                           # mean-rate airtime of one model per stream, channel-aware over eq. 11's
                           "formation_airtime_ratio": f.airtime_s_per_bit / f.similarity_airtime_s_per_bit})
        return extras
