"""The real datasets as the scenarios use them: parsed once per machine, read once per process,
converted per device.

Parsed arrays are kept on disk (``scenarios.datasets.prepared``: keyed by the dataset files'
digest and the parser's version), so a second run reads them instead of the files. Raw arrays
stay uint8 in a per-process cache (several runs of one command reuse them); each
scenario converts only the images it hands to devices, to float32 in [0, 1] (pixel / 255,
no standardization), NCHW. A missing dataset raises the readers' DatasetError.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from learning.data import DeviceData
from scenarios.datasets import build_vocabulary, encode, load_cifar, load_idx_dataset, load_stackoverflow, resolve_data_dir
from scenarios.datasets.catalog import get_dataset
from scenarios.datasets.layout import data_digest, locate
from scenarios.datasets.prepared import prepared_arrays
from scenarios.errors import DatasetError
from scenarios.definitions.scenario import devices_from_indices

NUM_CLASSES = {"mnist": 10, "fashion-mnist": 10, "emnist-byclass": 62, "cifar10": 10, "cifar100": 100}
Shift = Callable[[int, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def data_path(data_dir: Path | str | None) -> Path:
    """The data directory: as given, else $FL_COSIM_DATA, else the per-user cache."""
    return resolve_data_dir(None if data_dir is None else str(data_dir))


def image_arrays(name: str, data_dir: Path | str | None, split: str) -> tuple[np.ndarray, np.ndarray]:
    """Read-only uint8 images [N, C, H, W] and int64 labels of one split (cached per process)."""
    return _image_arrays(name, data_path(data_dir), split)


IMAGES_VERSION = 1  # of _parse_images: a change to what it makes takes a new number
STACKOVERFLOW_VERSION = 1  # of _parse_stackoverflow, likewise


@functools.lru_cache(maxsize=8)
def _image_arrays(name: str, data_dir: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    return prepared_arrays(f"{name}-{split}", IMAGES_VERSION, functools.partial(_digest, name, data_dir),
                           functools.partial(_parse_images, name, data_dir, split))


def _parse_images(name: str, data_dir: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    if name.startswith("cifar"):
        images, labels = load_cifar(name, data_dir, split)
        return np.ascontiguousarray(images.transpose(0, 3, 1, 2)), labels  # HWC -> CHW
    images, labels = load_idx_dataset(name, data_dir, split)
    return images[:, None, :, :], labels


def _digest(name: str, data_dir: Path) -> str | None:
    """The digest of dataset ``name``'s files: those its reader read in this process, else the
    first folder that holds them all (None: none does; the reader says what is missing)."""
    info = get_dataset(name)
    if data_digest(info, data_dir) is None:
        try:
            locate(info, data_dir, [f.read_order for f in info.files])
        except DatasetError:
            return None
    return data_digest(info, data_dir)


def unit_float(images: np.ndarray) -> np.ndarray:
    """uint8 pixels -> float32 in [0, 1] (divided in place: one array of floats, not two), the
    same bits as numpy's ``images.astype(np.float32) / np.float32(255)``. Made by torch: numpy
    asks the kernel for transparent huge pages for an array this large, which on a host with
    fragmented memory made CIFAR-10's training images take 1.4 s to convert instead of 0.4 s."""
    scaled = torch.empty(images.shape, dtype=torch.float32)
    scaled.numpy()[...] = images
    return scaled.div_(255.0).numpy()


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
    return prepared_arrays("stackoverflow-tokens", STACKOVERFLOW_VERSION, functools.partial(_digest, "stackoverflow", data_dir),
                           functools.partial(_parse_stackoverflow, data_dir))


def _parse_stackoverflow(data_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    train_texts, train_labels = load_stackoverflow(data_dir, "train")
    test_texts, test_labels = load_stackoverflow(data_dir, "test")
    tokens = encode(train_texts + test_texts, build_vocabulary(train_texts))
    return tokens, np.concatenate([train_labels, test_labels])


DIGITS_VERSION = 1  # of _parse_digits


@functools.lru_cache(maxsize=1)
def digits_arrays() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled digits: float64 images [1797, 8, 8] (0..16) and int64 labels, as
    ``sklearn.datasets.load_digits`` reads them (kept on disk by the file's digest, so a second
    run reads the arrays without importing scikit-learn)."""
    return prepared_arrays("sklearn-digits", DIGITS_VERSION, _digits_digest, _parse_digits)


def _digits_digest() -> str | None:
    spec = importlib.util.find_spec("sklearn")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]) / "datasets" / "data" / "digits.csv.gz"
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _parse_digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    digits = load_digits()
    return digits.images, digits.target.astype(np.int64)
