"""CIFAR-10 and CIFAR-100 from their python pickles, read from the tarball or the extracted folder.

The tarball is streamed member by member (nothing is extracted to disk), and every pickle is
loaded by an unpickler that resolves only the handful of globals the format uses, so a
tampered file cannot run code.
"""

from __future__ import annotations

import builtins
import codecs
import pickle
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np

from scenarios.datasets.catalog import check_split, get_dataset
from scenarios.datasets.layout import locate
from scenarios.errors import DatasetError, UsageError
from scenarios.records.reading import gunzipped, open_regular

try:
    from numpy._core.multiarray import _reconstruct
except ImportError:  # numpy < 2
    from numpy.core.multiarray import _reconstruct

IMAGE_SIDE_PX = 32
CHANNELS = 3


@dataclass(frozen=True)
class _Format:
    """Where one CIFAR variant keeps each split and its labels."""

    folder: str  # folder inside the tarball, and name of the extracted folder
    members: dict[str, tuple[str, ...]]  # split -> pickle files, in order
    label_keys: dict[str, str]  # label_kind -> key in each pickle
    n_classes: dict[str, int]  # label_kind -> number of classes


_FORMATS = {
    "cifar10": _Format(
        folder="cifar-10-batches-py",
        members={"train": tuple(f"data_batch_{i}" for i in range(1, 6)), "test": ("test_batch",)},
        label_keys={"fine": "labels"},
        n_classes={"fine": 10},
    ),
    "cifar100": _Format(
        folder="cifar-100-python",
        members={"train": ("train",), "test": ("test",)},
        label_keys={"fine": "fine_labels", "coarse": "coarse_labels"},
        n_classes={"fine": 100, "coarse": 20},
    ),
}


class RestrictedUnpickler(pickle.Unpickler):
    """Unpickler that resolves only what CIFAR pickles reference; anything else is a DatasetError.

    Allowed: numpy's array reconstruction (under its numpy 1 and numpy 2 module names), ndarray,
    dtype, and what protocol-2 pickles written by Python 3 use for bytes (_codecs.encode, and
    bytes/bytearray, named "__builtin__" or "builtins"). Dicts and lists need no global at all.
    """

    _ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"): _reconstruct,
        ("numpy._core.multiarray", "_reconstruct"): _reconstruct,
        ("numpy", "ndarray"): np.ndarray,
        ("numpy", "dtype"): np.dtype,
        ("_codecs", "encode"): codecs.encode,
        **{(module, name): getattr(builtins, name)
           for module in ("builtins", "__builtin__") for name in ("bytes", "bytearray")},
    }

    def __init__(self, stream: IO[bytes], source: str):
        super().__init__(stream, encoding="bytes")
        self.source = source

    def find_class(self, module: str, name: str):
        try:
            return self._ALLOWED[(module, name)]
        except KeyError:
            raise DatasetError(
                f"{self.source}: refusing to unpickle: it references {module}.{name}, which CIFAR data never needs"
            ) from None


def unpickle(stream: IO[bytes], source: str) -> object:
    """The object in a pickle stream, loaded with RestrictedUnpickler; source names it in errors."""
    try:
        return RestrictedUnpickler(stream, source).load()
    except DatasetError:
        raise
    except Exception as exc:  # a corrupt pickle can fail in almost any way
        raise DatasetError(f"{source}: not a readable pickle: {type(exc).__name__}: {exc}") from exc


def _read_pickles(path: Path, folder: str, members: tuple[str, ...]) -> dict[str, tuple[str, object]]:
    """member -> (source, unpickled object), from an extracted folder or by streaming a tarball."""
    if path.is_dir():
        found = {}
        for member in members:
            file = path / member
            if not file.is_file():
                raise DatasetError(f"{file}: missing from the extracted folder {path}")
            with open_regular(file) as stream:
                found[member] = (str(file), unpickle(stream, str(file)))
        return found
    wanted = {f"{folder}/{member}": member for member in members}
    found = {}
    try:
        with open_regular(path) as stream, tarfile.open(fileobj=gunzipped(stream), mode="r|*") as tar:  # one pass, stops once all are read
            for entry in tar:
                member = wanted.get(entry.name.removeprefix("./"))
                if member is not None and entry.isfile():
                    source = f"{path}:{entry.name}"
                    found[member] = (source, unpickle(tar.extractfile(entry), source))
                    if len(found) == len(wanted):
                        break
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise DatasetError(f"{path}: cannot read the tarball: {exc}") from exc
    missing = [name for name, member in wanted.items() if member not in found]
    if missing:
        raise DatasetError(f"{path}: tarball lacks {', '.join(missing)}")
    return found


def _batch_arrays(batch: object, label_key: str, n_classes: int, source: str) -> tuple[np.ndarray, np.ndarray]:
    """(data uint8 [n, 3072], labels int64 [n]) of one unpickled batch, after checking them."""
    if not isinstance(batch, dict):
        raise DatasetError(f"{source}: expected a dict, found {type(batch).__name__}")
    batch = {key.decode("latin1") if isinstance(key, bytes) else key: value for key, value in batch.items()}
    data, labels = batch.get("data"), batch.get(label_key)
    row_bytes = CHANNELS * IMAGE_SIDE_PX * IMAGE_SIDE_PX
    if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != row_bytes:
        raise DatasetError(f"{source}: 'data' is not a uint8 array of rows of {row_bytes} bytes")
    if labels is None:
        raise DatasetError(f"{source}: no '{label_key}' entry")
    labels = np.asarray(labels, dtype=np.int64)
    if labels.shape != (len(data),):
        raise DatasetError(f"{source}: {labels.size} labels for {len(data)} images")
    if labels.size and (labels.min() < 0 or labels.max() >= n_classes):
        raise DatasetError(f"{source}: labels outside 0..{n_classes - 1}")
    return data, labels


def load_cifar(name: str, data_dir: str | Path, split: str, label_kind: str = "fine") -> tuple[np.ndarray, np.ndarray]:
    """Images uint8 [N, 32, 32, 3] (HWC, RGB) and labels int64 [N] of one split.

    name: "cifar10" or "cifar100"; split: "train" or "test"; label_kind: "fine" (the 100
    classes, and the only kind of CIFAR-10) or "coarse" (CIFAR-100's 20 superclasses).
    The extracted folder is preferred to the tarball when both are present: it needs no gunzip.
    """
    info = get_dataset(name, kind="cifar")
    check_split(split)
    fmt = _FORMATS[name]
    if label_kind not in fmt.label_keys:
        raise UsageError(f"{name} has no {label_kind!r} labels; use one of: {', '.join(fmt.label_keys)}")
    (path,) = locate(info, data_dir, [info.files[0].read_order])
    pickles = _read_pickles(path, fmt.folder, fmt.members[split])
    arrays = [
        _batch_arrays(batch, fmt.label_keys[label_kind], fmt.n_classes[label_kind], source)
        for source, batch in (pickles[member] for member in fmt.members[split])
    ]
    rows = np.concatenate([data for data, _ in arrays])
    images = rows.reshape(-1, CHANNELS, IMAGE_SIDE_PX, IMAGE_SIDE_PX).transpose(0, 2, 3, 1)
    return np.ascontiguousarray(images), np.concatenate([labels for _, labels in arrays])
