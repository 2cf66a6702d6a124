"""MNIST, Fashion-MNIST and EMNIST from their idx files, in the flat or torchvision layouts."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scenarios.datasets.catalog import check_split, get_dataset
from scenarios.datasets.idx import read_idx
from scenarios.datasets.layout import locate
from scenarios.errors import DatasetError

IMAGE_SIDE_PX = 28
# classes of each dataset's labels (EMNIST letters numbers its 26 letters from 1: class 0 is unused)
CLASSES = {"mnist": 10, "fashion-mnist": 10, "emnist-byclass": 62, "emnist-bymerge": 47, "emnist-balanced": 47,
           "emnist-letters": 27, "emnist-digits": 10, "emnist-mnist": 10}

def load_idx_dataset(name: str, data_dir: str | Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    """Images uint8 [N, 28, 28] (row-major, upright) and labels int64 [N] of one split.

    name: "mnist", "fashion-mnist" or "emnist-<byclass|bymerge|balanced|letters|digits|mnist>";
    split: "train" or "test". EMNIST stores every image transposed; it is turned back here so
    all three datasets come out the same way up. EMNIST letters keeps its labels 1..26.
    """
    info = get_dataset(name, kind="idx")
    check_split(split)
    image_file, label_file = info.file(f"{split}-images"), info.file(f"{split}-labels")
    image_path, label_path = locate(info, data_dir, [image_file.read_order, label_file.read_order])
    images, labels = read_idx(image_path), read_idx(label_path)
    if images.dtype != np.uint8 or images.shape[1:] != (IMAGE_SIDE_PX, IMAGE_SIDE_PX):
        raise DatasetError(f"{image_path}: expected uint8 images N x 28 x 28, got {images.dtype} {images.shape}")
    if labels.dtype != np.uint8 or labels.ndim != 1:
        raise DatasetError(f"{label_path}: expected a uint8 label vector, got {labels.dtype} {labels.shape}")
    if len(images) != len(labels):
        raise DatasetError(f"{label_path}: {len(labels)} labels for {len(images)} images in {image_path.name}")
    if labels.size and int(labels.max()) >= CLASSES[name]:
        raise DatasetError(f"{label_path}: label {int(labels.max())} outside the {CLASSES[name]} classes 0..{CLASSES[name] - 1} "
                           f"of {name} (a damaged or foreign file)")
    if name.startswith("emnist-"):
        images = np.ascontiguousarray(images.transpose(0, 2, 1))
    return images, labels.astype(np.int64)
