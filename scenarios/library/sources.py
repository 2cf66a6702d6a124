"""The real datasets as the scenarios use them: read once per process, converted per device.

Raw arrays stay uint8 in a per-process cache (several runs of one command reuse them); each
scenario converts only the images it hands to devices, to float32 in [0, 1] (pixel / 255,
no standardization), NCHW. A missing dataset raises the readers' DatasetError.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Callable

import numpy as np

from learning.data import DeviceData
from scenarios.datasets import build_vocabulary, encode, load_cifar, load_idx_dataset, load_stackoverflow, resolve_data_dir
from scenarios.definitions.scenario import devices_from_indices

NUM_CLASSES = {"mnist": 10, "fashion-mnist": 10, "emnist-byclass": 62, "cifar10": 10, "cifar100": 100}
Shift = Callable[[int, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def data_path(data_dir: Path | str | None) -> Path:
    """The data directory: as given, else $FL_COSIM_DATA, else the per-user cache."""
    return resolve_data_dir(None if data_dir is None else str(data_dir))


def image_arrays(name: str, data_dir: Path | str | None, split: str) -> tuple[np.ndarray, np.ndarray]:
    """Read-only uint8 images [N, C, H, W] and int64 labels of one split (cached per process)."""
    return _image_arrays(name, data_path(data_dir), split)


@functools.lru_cache(maxsize=8)
def _image_arrays(name: str, data_dir: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    if name.startswith("cifar"):
        images, labels = load_cifar(name, data_dir, split)
        images = np.ascontiguousarray(images.transpose(0, 3, 1, 2))  # HWC -> CHW
    else:
        images, labels = load_idx_dataset(name, data_dir, split)
        images = images[:, None, :, :]
    images.flags.writeable = False
    labels.flags.writeable = False
    return images, labels


def unit_float(images: np.ndarray) -> np.ndarray:
    """uint8 pixels -> float32 in [0, 1]."""
    return images.astype(np.float32) / np.float32(255.0)


def image_devices(
    images: np.ndarray,
    labels: np.ndarray,
    device_indices: list[np.ndarray],
    validation_fraction: float,
    rng: np.random.Generator,
    shift: Shift | None = None,
) -> tuple[DeviceData, ...]:
    """Per-device train/validation tensors; ``shift`` (a rotation, a relabelling) is applied
    to the uint8 images, which are then scaled to [0, 1] device by device."""

    def convert(device, xs, ys):
        if shift is not None:
            xs, ys = shift(device, xs, ys)
        return unit_float(xs), ys

    return devices_from_indices(images, labels, device_indices, validation_fraction, rng, convert)


def stackoverflow_tokens(data_dir: Path | str | None) -> tuple[np.ndarray, np.ndarray]:
    """All 16k posts (upstream train then test split) as int64 word ids [16000, 200], and tags.

    The 10k-word vocabulary is built on the upstream train split only (as the journal's
    TensorFlow pipeline adapts it); ids 0 pad and 1 mark unknown words. Cached per process.
    """
    return _stackoverflow_tokens(data_path(data_dir))


@functools.lru_cache(maxsize=2)
def _stackoverflow_tokens(data_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    train_texts, train_labels = load_stackoverflow(data_dir, "train")
    test_texts, test_labels = load_stackoverflow(data_dir, "test")
    tokens = encode(train_texts + test_texts, build_vocabulary(train_texts))
    labels = np.concatenate([train_labels, test_labels])
    tokens.flags.writeable = False
    labels.flags.writeable = False
    return tokens, labels
