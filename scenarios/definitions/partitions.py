"""Seeded partitions of a labelled data set across devices; each a plain, tested function.

Every function takes a ``numpy.random.Generator`` and returns index arrays (one per device)
or transformed copies; none touches global randomness.
"""

from __future__ import annotations

import numpy as np


def dirichlet_label_split(labels: np.ndarray, num_devices: int, alpha: float, rng: np.random.Generator, min_size: int = 2) -> list[np.ndarray]:
    """Label shift: each class is split across devices with proportions ``Dir(alpha)``
    (Hsu et al., as in journal V-A). Redrawn until every device has ``min_size`` points."""
    if alpha <= 0:
        raise ValueError(f"Dirichlet alpha must be > 0, got {alpha}")
    labels = np.asarray(labels)
    if labels.size < num_devices * min_size:
        raise ValueError(f"{labels.size} points cannot give {num_devices} devices {min_size} each")
    for _ in range(1000):
        parts: list[list[int]] = [[] for _ in range(num_devices)]
        for label in np.unique(labels):
            members = rng.permutation(np.flatnonzero(labels == label))
            cuts = (np.cumsum(rng.dirichlet(np.full(num_devices, alpha)))[:-1] * members.size).astype(int)
            for device, chunk in enumerate(np.split(members, cuts)):
                parts[device].extend(chunk.tolist())
        if min(len(p) for p in parts) >= min_size:
            return [rng.permutation(np.array(p, dtype=np.int64)) for p in parts]
    raise ValueError(f"Dirichlet alpha {alpha} left a device with fewer than {min_size} points after 1000 draws")


def equal_groups(num_devices: int, num_groups: int) -> np.ndarray:
    """Group of each device: consecutive, as equal as possible (device i -> i * G // m)."""
    if not 1 <= num_groups <= num_devices:
        raise ValueError(f"cannot split {num_devices} devices into {num_groups} groups")
    return (np.arange(num_devices) * num_groups) // num_devices


def rotate_images(images: np.ndarray, quarter_turns: int) -> np.ndarray:
    """Covariate shift: rotate (..., H, W) images by ``90 * quarter_turns`` degrees."""
    return np.ascontiguousarray(np.rot90(images, k=quarter_turns, axes=(-2, -1)))


def group_label_permutations(num_groups: int, num_classes: int, rng: np.random.Generator) -> np.ndarray:
    """Concept shift: a random label permutation per group (journal V-A); group 0 keeps identity."""
    perms = [np.arange(num_classes)] + [rng.permutation(num_classes) for _ in range(num_groups - 1)]
    return np.stack(perms)


def train_validation_split(indices: np.ndarray, validation_fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Split one device's points into train and its own validation set (at least one of each)."""
    if not 0 < validation_fraction < 1:
        raise ValueError(f"validation fraction must be in (0, 1), got {validation_fraction}")
    shuffled = rng.permutation(indices)
    num_val = min(max(1, int(round(validation_fraction * shuffled.size))), shuffled.size - 1)
    return shuffled[num_val:], shuffled[:num_val]


def iid_split(num_points: int, num_devices: int, rng: np.random.Generator) -> list[np.ndarray]:
    """A uniformly random split into ``num_devices`` parts of equal size (within one point)."""
    if not 1 <= num_devices <= num_points:
        raise ValueError(f"cannot split {num_points} points across {num_devices} devices")
    return np.array_split(rng.permutation(num_points), num_devices)


def label_holder_split(labels: np.ndarray, holders: dict[int, list[int]], num_devices: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Each label's points, shuffled, cut into equal shards, one per device that holds the label
    (pFedLIA IV-D: "sharded per label into equal sizes"); labels nobody holds are left out."""
    labels = np.asarray(labels)
    parts: list[list[np.ndarray]] = [[] for _ in range(num_devices)]
    for label, devices in holders.items():
        members = rng.permutation(np.flatnonzero(labels == label))
        if members.size < len(devices):
            raise ValueError(f"label {label} has {members.size} points for {len(devices)} devices")
        for device, shard in zip(devices, np.array_split(members, len(devices))):
            parts[device].append(shard)
    return [rng.permutation(np.concatenate(p)) if p else np.empty(0, dtype=np.int64) for p in parts]


def pathological_split(
    labels: np.ndarray,
    num_devices: int,
    num_clusters: int,
    rng: np.random.Generator,
    extra_labels: int = 0,
    extra_probability: float = 0.5,
) -> tuple[list[np.ndarray], np.ndarray]:
    """Pathological non-IID (pFedLIA IV-B): the labels, in random order, are dealt evenly to
    ``num_clusters`` clusters of consecutive devices; each label is owned by one cluster.

    Noisy non-IID (``extra_labels=1``): with probability ``extra_probability`` a device also
    holds ``extra_labels`` random labels owned by other clusters. Every holder of a label gets
    an equal shard of it. Returns (indices per device, cluster of each device).
    """
    if not 0 <= extra_probability <= 1:
        raise ValueError(f"extra-label probability must be in [0, 1], got {extra_probability}")
    classes = np.unique(labels)
    if not 1 <= num_clusters <= classes.size:
        raise ValueError(f"cannot give {num_clusters} clusters their own labels out of {classes.size}")
    groups = equal_groups(num_devices, num_clusters)
    owned = np.array_split(rng.permutation(classes), num_clusters)
    holders = {int(label): [int(d) for d in np.flatnonzero(groups == cluster)] for cluster, own in enumerate(owned) for label in own}
    if extra_labels:
        for device in range(num_devices):
            if rng.random() < extra_probability:
                others = np.setdiff1d(classes, owned[groups[device]])
                for label in rng.choice(others, size=min(extra_labels, others.size), replace=False):
                    holders[int(label)].append(device)
    return label_holder_split(labels, holders, num_devices, rng), groups


def fedprox_split(
    labels: np.ndarray,
    num_devices: int,
    rng: np.random.Generator,
    labels_per_device: int = 2,
    initial_per_label: int = 5,
    lognormal_sigma: float = 2.0,
) -> list[np.ndarray]:
    """FedProx's non-IID MNIST (used by Self-FL, 4.1): device d holds labels ``(d + j) mod C``
    for j < ``labels_per_device``; each of its labels first gives it ``initial_per_label``
    points, then the rest of every label is shared among its holders in proportions drawn
    log-normal(0, ``lognormal_sigma``), which makes the device sizes heavy-tailed (the
    "power law" of FedProx's generator). Rounding remainders are left out, as there.
    """
    labels = np.asarray(labels)
    classes = np.unique(labels)
    if not np.array_equal(classes, np.arange(classes.size)):
        raise ValueError("labels must be 0..C-1")
    slots: dict[int, list[int]] = {int(c): [] for c in classes}
    for device in range(num_devices):
        for j in range(labels_per_device):
            slots[(device + j) % classes.size].append(device)
    parts: list[list[np.ndarray]] = [[] for _ in range(num_devices)]
    for label, devices in slots.items():
        members = rng.permutation(np.flatnonzero(labels == label))
        remaining = members.size - initial_per_label * len(devices)
        if remaining < 0:
            raise ValueError(f"label {label} has {members.size} points, fewer than {initial_per_label} for each of {len(devices)} holders")
        shares = rng.lognormal(0.0, lognormal_sigma, len(devices))
        counts = initial_per_label + np.floor(remaining * shares / shares.sum()).astype(np.int64)
        for device, chunk in zip(devices, np.split(members, np.cumsum(counts))):  # last piece: the remainders
            parts[device].append(chunk)
    return [rng.permutation(np.concatenate(p)) for p in parts]


def two_level_gaussian(
    sample_sizes: np.ndarray,
    theta_0: float,
    inter_variance: float,
    intra_variance: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Self-FL's two-level Gaussian model (sec. 2.1, eq. 1): client means
    ``theta_m ~ N(theta_0, sigma_0^2)`` and scalar samples ``z ~ N(theta_m, sigma_m^2)``.

    Returns (theta_m per client, each client's ``sample_sizes[m]`` samples).
    """
    if inter_variance < 0 or not intra_variance > 0:
        raise ValueError(f"need sigma_0^2 >= 0 and sigma_m^2 > 0, got {inter_variance}, {intra_variance}")
    means = rng.normal(theta_0, np.sqrt(inter_variance), len(sample_sizes))
    samples = [rng.normal(mean, np.sqrt(intra_variance), int(size)) for mean, size in zip(means, sample_sizes)]
    return means, samples
