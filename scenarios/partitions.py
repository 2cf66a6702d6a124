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
