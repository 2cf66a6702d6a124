"""Channel-aware stream formation (beyond the journal): form the k multicast streams from the
rows of W (eq. 11) and the channel together.

A multicast runs at its weakest member's rate, so one model per stream costs
``sum_c airtime(c)`` seconds per bit, ``airtime`` being the base station's estimate for a group
(``LearnerSetup.multicast_airtime``; the learner knows nothing else of the radio). Grouping
devices of similar channels saves airtime; grouping by similarity of W's rows (eq. 11) keeps
the personalization. Candidates: k-means on W's rows augmented by each device's standardized
log single-device airtime times ``gamma``, for a grid of ``gamma`` (0 is eq. 11); the best
of them admissible (silhouette on W's rows at most ``silhouette_loss`` below eq. 11's
clustering) is then improved by local search: single-device moves and pairwise swaps between
streams, each kept when it lowers the airtime and stays admissible, until none does.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from learning.single_thread import one_thread
from learning.weights import centroid_rows, kmeans_rows, relabel_in_order, rows_silhouette

GAMMAS = (0.0, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 100.0)

GroupAirtime = Callable[[Sequence[int]], float]


def streams_airtime(labels: np.ndarray, airtime: GroupAirtime) -> float:
    """Seconds per bit of one model sent on every stream: ``sum_c airtime(c)``."""
    return float(sum(airtime(tuple(int(d) for d in np.flatnonzero(labels == c))) for c in np.unique(labels)))


@dataclass(frozen=True)
class Formation:
    labels: np.ndarray
    gamma: float
    silhouette: float
    airtime_s_per_bit: float
    similarity_silhouette: float  # eq. 11's clustering (gamma = 0)
    similarity_airtime_s_per_bit: float


def channel_aware_clusters(weights: np.ndarray, k: int, airtime: GroupAirtime, seed: int,
                           silhouette_loss: float = 0.05) -> tuple[Formation, np.ndarray]:
    """(the chosen formation, W_k with every device on its cluster's centroid row)."""
    w = np.asarray(weights, dtype=np.float64)
    if silhouette_loss < 0:
        raise ValueError(f"silhouette_loss must be >= 0, got {silhouette_loss}")
    airtime = _memoized(airtime)
    base, _ = kmeans_rows(w, k, seed)
    base_silhouette = rows_silhouette(w, base)
    base_airtime = streams_airtime(base, airtime)
    best = Formation(base, 0.0, base_silhouette, base_airtime, base_silhouette, base_airtime)
    if 1 < k < w.shape[0]:
        from sklearn.cluster import KMeans

        alone = np.log([airtime((d,)) for d in range(w.shape[0])])
        z = (alone - alone.mean()) / alone.std() if alone.std() > 0 else np.zeros_like(alone)
        spread = float(np.sqrt(np.mean(np.sum((w - w.mean(axis=0)) ** 2, axis=1))))
        for gamma in GAMMAS[1:]:
            features = np.hstack([w, (gamma * spread * z)[:, None]])
            with warnings.catch_warnings(), one_thread():
                warnings.simplefilter("ignore")
                labels = relabel_in_order(KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(features))
            silhouette = rows_silhouette(w, labels)
            cost = streams_airtime(labels, airtime)
            if silhouette >= base_silhouette - silhouette_loss and cost < best.airtime_s_per_bit:
                best = Formation(labels, gamma, silhouette, cost, base_silhouette, base_airtime)
        labels, cost, silhouette = improve(w, best.labels, airtime, base_silhouette - silhouette_loss)
        if cost < best.airtime_s_per_bit:
            best = Formation(relabel_in_order(labels), best.gamma, silhouette, cost, base_silhouette, base_airtime)
    return best, centroid_rows(w, best.labels)


def _memoized(airtime: GroupAirtime) -> GroupAirtime:
    known: dict = {}

    def cached(devices: Sequence[int]) -> float:
        key = tuple(sorted(devices))
        if key not in known:
            known[key] = airtime(key)
        return known[key]

    return cached


def improve(weights: np.ndarray, labels: np.ndarray, airtime: GroupAirtime, min_silhouette: float) -> tuple[np.ndarray, float, float]:
    """Local search from ``labels``: the first move or swap that lowers the airtime with a
    silhouette of at least ``min_silhouette`` is taken, until none is left (no stream emptied)."""
    labels = np.array(labels)
    cost = streams_airtime(labels, airtime)
    silhouette = rows_silhouette(weights, labels)
    improved = True
    while improved:
        improved = False
        for candidate in _neighbours(labels):
            new_cost = streams_airtime(candidate, airtime)
            if new_cost < cost * (1 - 1e-9):
                new_silhouette = rows_silhouette(weights, candidate)
                if new_silhouette >= min_silhouette:
                    labels, cost, silhouette, improved = candidate, new_cost, new_silhouette, True
                    break
    return labels, cost, silhouette


def _neighbours(labels: np.ndarray):
    clusters = np.unique(labels)
    sizes = {c: int(np.sum(labels == c)) for c in clusters}
    for device in range(labels.size):  # moves
        if sizes[labels[device]] == 1:
            continue
        for c in clusters:
            if c != labels[device]:
                candidate = labels.copy()
                candidate[device] = c
                yield candidate
    for a in range(labels.size):  # swaps
        for b in range(a + 1, labels.size):
            if labels[a] != labels[b]:
                candidate = labels.copy()
                candidate[a], candidate[b] = labels[b], labels[a]
                yield candidate
