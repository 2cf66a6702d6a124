"""Small datasets written in the true on-disk formats, for tests and demos without the real files.

Each writer returns the arrays a reader should give back, so a test can compare exactly.
"""

from __future__ import annotations

import io
import pickle
import tarfile
from pathlib import Path

import numpy as np

from scenarios.datasets.catalog import get_dataset
from scenarios.datasets.idx import write_idx
from scenarios.datasets.stackoverflow import ROOT_FOLDER, TAGS

_CIFAR_FOLDERS = {"cifar10": "cifar-10-batches-py", "cifar100": "cifar-100-python"}
_CIFAR10_TRAIN_BATCHES = 5


def write_fake_idx_dataset(folder: str | Path, name: str = "mnist", n_train: int = 12, n_test: int = 6,
                           seed: int = 0, compress: bool = True) -> dict[str, np.ndarray]:
    """Write the four idx files of `name` into folder; returns {"train-images": ..., ...} as a reader returns them.

    EMNIST images are written transposed, as the real files store them.
    """
    info = get_dataset(name, kind="idx")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    expected = {}
    for split, n in (("train", n_train), ("test", n_test)):
        images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, size=n, dtype=np.uint8)
        stored = images.transpose(0, 2, 1) if name.startswith("emnist-") else images
        for part, array in ((f"{split}-images", stored), (f"{split}-labels", labels)):
            data_file = info.file(part)
            write_idx(folder / (data_file.name if compress else data_file.stand_ins[0]), array)
        expected[f"{split}-images"], expected[f"{split}-labels"] = images, labels.astype(np.int64)
    return expected


def _add_to_tar(tar: tarfile.TarFile, name: str, content: bytes) -> None:
    entry = tarfile.TarInfo(name)
    entry.size = len(content)
    tar.addfile(entry, io.BytesIO(content))


def _write_members(folder: Path, root: str, members: dict[str, bytes], tarball: str | None) -> Path:
    """Write members under root/, either as files in folder/root or into folder/tarball; returns what was written."""
    folder.mkdir(parents=True, exist_ok=True)
    if tarball is None:
        for name, content in members.items():
            (folder / root / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / root / name).write_bytes(content)
        return folder / root
    with tarfile.open(folder / tarball, "w:gz") as tar:
        for name, content in members.items():
            _add_to_tar(tar, f"{root}/{name}", content)
    return folder / tarball


def _cifar_pickle(images_hwc: np.ndarray, labels: dict[str, np.ndarray], batch_label: str) -> bytes:
    """One batch as the CIFAR pickles hold it: bytes keys, channel-major uint8 rows, label lists, protocol 2."""
    batch = {
        b"batch_label": batch_label.encode(),
        b"data": images_hwc.transpose(0, 3, 1, 2).reshape(len(images_hwc), -1),
        b"filenames": [f"fake_{i:05d}.png".encode() for i in range(len(images_hwc))],
        **{key.encode(): [int(label) for label in values] for key, values in labels.items()},
    }
    return pickle.dumps(batch, protocol=2)


def write_fake_cifar(folder: str | Path, name: str = "cifar100", n_train: int = 10, n_test: int = 5,
                     seed: int = 0, as_tarball: bool = True) -> dict[str, dict[str, np.ndarray]]:
    """Write a CIFAR-10 or CIFAR-100 tarball (or extracted folder) into folder.

    Returns {split: {"images": HWC uint8, "fine": labels, "coarse": labels (CIFAR-100 only)}}.
    CIFAR-10's train split is spread over its five batch files like the real one.
    """
    info = get_dataset(name, kind="cifar")
    rng = np.random.default_rng(seed)
    expected, members = {}, {}
    for split, n in (("train", n_train), ("test", n_test)):
        images = rng.integers(0, 256, size=(n, 32, 32, 3), dtype=np.uint8)
        if name == "cifar100":
            fine = rng.integers(0, 100, size=n)
            coarse = fine // 5  # any 0..19 mapping will do for a fake
            expected[split] = {"images": images, "fine": fine, "coarse": coarse}
            members[split] = _cifar_pickle(images, {"fine_labels": fine, "coarse_labels": coarse}, f"{split} batch")
            continue
        labels = rng.integers(0, 10, size=n)
        expected[split] = {"images": images, "fine": labels}
        if split == "test":
            members["test_batch"] = _cifar_pickle(images, {"labels": labels}, "testing batch 1 of 1")
            continue
        for index, rows in enumerate(np.array_split(np.arange(n), _CIFAR10_TRAIN_BATCHES), start=1):
            batch_label = f"training batch {index} of {_CIFAR10_TRAIN_BATCHES}"
            members[f"data_batch_{index}"] = _cifar_pickle(images[rows], {"labels": labels[rows]}, batch_label)
    tarball = info.files[0].name if as_tarball else None
    _write_members(Path(folder), _CIFAR_FOLDERS[name], members, tarball)
    return expected


def write_fake_stackoverflow(folder: str | Path, posts_per_tag: int = 3, as_tarball: bool = True) -> Path:
    """Write a tiny stack_overflow_16k tarball (or folder) into folder; post n of tag t reads "how ... t n"."""
    members = {"README.md": b"fake extract for tests\n"}
    for split in ("train", "test"):
        for tag in TAGS:
            for number in range(posts_per_tag):
                text = f'"how do I sort a list in {tag}? {split} post {number}, thanks!"\n'
                members[f"{split}/{tag}/{number}.txt"] = text.encode()
    tarball = get_dataset("stackoverflow").files[0].name if as_tarball else None
    return _write_members(Path(folder), ROOT_FOLDER, members, tarball)
