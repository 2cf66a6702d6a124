"""Aggregation weights as plain functions: each rule is a row-stochastic matrix ``W`` and
the personalized models are ``Theta <- W @ Theta`` (journal eq. 8)."""

from __future__ import annotations

import warnings

import numpy as np

from learning.single_thread import blas_one_thread, one_thread


def fedavg_weights(train_sizes: np.ndarray) -> np.ndarray:
    """Every row is ``n / sum(n)`` (journal eq. 1): one global model."""
    n = np.asarray(train_sizes, dtype=np.float64)
    return np.tile(n / n.sum(), (n.size, 1))


def local_weights(num_devices: int) -> np.ndarray:
    """``W = I``: every device keeps its own model."""
    return np.eye(num_devices)


def oracle_weights(train_sizes: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """FedAvg within each true group: block-diagonal ``W``."""
    n = np.asarray(train_sizes, dtype=np.float64)
    groups = np.asarray(groups)
    same = groups[:, None] == groups[None, :]
    w = same * n[None, :]
    return w / w.sum(axis=1, keepdims=True)


def gradient_distances(gradients: np.ndarray) -> np.ndarray:
    """``Delta_ij = ||g_i - g_j||^2`` between full local gradients at the common model (IV-A).

    The Gram matrix ``g g^T`` on one BLAS thread (``learning.single_thread.blas_one_thread``):
    tens of rows, where OpenBLAS's threads cost more than they save, the same bits."""
    g = np.asarray(gradients, dtype=np.float64)
    sq = (g * g).sum(axis=1)
    with blas_one_thread():
        twice_gram = 2.0 * g @ g.T
    delta = sq[:, None] + sq[None, :] - twice_gram
    np.fill_diagonal(delta, 0.0)
    return np.maximum(delta, 0.0)


def gradient_variance(batch_gradients: np.ndarray, full_gradient: np.ndarray) -> float:
    """``sigma_i^2 = 1/K sum_k ||g_i^k - g_i||^2`` over K disjoint mini-batches (journal eq. 10)."""
    diff = np.asarray(batch_gradients, dtype=np.float64) - np.asarray(full_gradient, dtype=np.float64)[None, :]
    return float((diff * diff).sum(axis=1).mean())


def user_centric_weights(gradients: np.ndarray, variances: np.ndarray, train_sizes: np.ndarray) -> np.ndarray:
    """``w_ij ∝ (n_j / n_i) exp(-Delta_ij / (2 sigma_i sigma_j))``, rows normalized (journal eq. 9).

    Computed in the log domain, so tiny variances give the Local limit instead of 0/0.
    Homogeneous devices (equal gradients) give FedAvg's weights exactly.
    """
    sigma = np.sqrt(np.asarray(variances, dtype=np.float64))
    n = np.asarray(train_sizes, dtype=np.float64)
    delta = gradient_distances(gradients)
    scale = 2.0 * np.outer(sigma, sigma)
    with np.errstate(divide="ignore", invalid="ignore"):
        exponent = np.where(delta == 0.0, 0.0, -delta / scale)
    log_w = np.log(n)[None, :] + exponent  # n_i cancels in the normalization
    log_w -= log_w.max(axis=1, keepdims=True)
    w = np.exp(log_w)
    return w / w.sum(axis=1, keepdims=True)


def kmeans_rows(weights: np.ndarray, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """k-means over the collaboration vectors (rows of W), journal eq. 11 (scikit-learn, on one
    thread: ``learning.single_thread``).

    Returns (labels, W_k): every device takes its cluster's centroid as its row, so the
    distinct rows of W_k, and thus the downlink streams, number k.
    """
    from sklearn.cluster import KMeans

    w = np.asarray(weights, dtype=np.float64)
    m = w.shape[0]
    if not 1 <= k <= m:
        raise ValueError(f"stream count k must be in 1..{m}, got {k}")
    if k == m:
        return np.arange(m), w.copy()
    with warnings.catch_warnings(), one_thread():
        warnings.simplefilter("ignore")  # fewer distinct points than k: scikit-learn warns, we accept
        labels = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(w)
    labels = relabel_in_order(labels)
    return labels, centroid_rows(w, labels)


def centroid_rows(weights: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Every device's row replaced by its cluster's centroid, renormalized (row-stochastic)."""
    w = np.asarray(weights, dtype=np.float64)
    labels = relabel_in_order(np.asarray(labels))
    centroids = np.stack([w[labels == c].mean(axis=0) for c in range(labels.max() + 1)])
    centroids /= centroids.sum(axis=1, keepdims=True)
    return centroids[labels]


def relabel_in_order(labels: np.ndarray) -> np.ndarray:
    """Cluster ids by first appearance, so results do not depend on k-means' label numbering."""
    _, first = np.unique(labels, return_index=True)
    order = labels[np.sort(first)]
    mapping = {old: new for new, old in enumerate(order)}
    return np.array([mapping[x] for x in labels])


def rows_silhouette(weights: np.ndarray, labels: np.ndarray) -> float:
    """Silhouette of a clustering of W's rows (scikit-learn, on one thread); 0 where it is
    undefined (one cluster, or only singletons: Rousseeuw's value for a point alone)."""
    from sklearn.metrics import silhouette_score

    distinct = len(np.unique(labels))
    if not 2 <= distinct <= len(labels) - 1:
        return 0.0
    with one_thread():
        return float(silhouette_score(weights, labels))


def silhouette_curve(weights: np.ndarray, seed: int, max_k: int | None = None) -> dict[int, float]:
    """Silhouette score ``s_k`` of the k-means clustering of W's rows for k = 1..m (IV-C).

    Convention: the silhouette is undefined for k = 1 (no other cluster) and k = m (only
    singletons); both get 0, Rousseeuw's value for a point alone in its cluster. So a
    clustering is chosen over these extremes only when its score is positive.
    """
    w = np.asarray(weights, dtype=np.float64)
    m = w.shape[0]
    top = m if max_k is None else min(max_k, m)
    return {k: 0.0 if k in (1, m) else rows_silhouette(w, kmeans_rows(w, k, seed)[0]) for k in range(1, top + 1)}


def choose_stream_count(silhouette: dict[int, float], lam: float) -> int:
    """Algorithm 2 with journal eq. 12: ``k* = argmax_k s_k - lambda k``; ties go to fewer streams.

    For lambda >= 0, a larger lambda never picks more streams.
    """
    if lam < 0:
        raise ValueError(f"lambda must be >= 0, got {lam}")
    return max(sorted(silhouette), key=lambda k: (silhouette[k] - lam * k, -k))


def mix(weights: np.ndarray, arrived: np.ndarray) -> np.ndarray:
    """Rows of ``W`` renormalized over the devices whose update arrived (eq. 8 with drop-outs).

    A row with no weight on any arrived device is all zeros: that device keeps its model.
    """
    w = np.asarray(weights, dtype=np.float64) * np.asarray(arrived, dtype=bool)[None, :]
    mass = w.sum(axis=1, keepdims=True)
    return np.divide(w, mass, out=np.zeros_like(w), where=mass > 0)
