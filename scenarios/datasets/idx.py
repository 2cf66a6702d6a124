"""Reader and writer for the idx format of MNIST, Fashion-MNIST and EMNIST (gzip or plain).

Every malformed file raises DatasetError naming the file, so a bad download never turns
into a silently wrong array.
"""

from __future__ import annotations

import gzip
import math
import struct
import zlib
from pathlib import Path

import numpy as np

from scenarios.errors import DatasetError

GZIP_MAGIC = b"\x1f\x8b"

# idx type code (third magic byte) -> big-endian element dtype, as in LeCun's format note.
_DTYPE_BY_CODE = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
_CODE_BY_KIND = {(dt.kind, dt.itemsize): code for code, dt in _DTYPE_BY_CODE.items()}


def _read_bytes(path: Path) -> bytes:
    """The file's content, decompressed when it starts with the gzip magic.

    The magic decides, not the extension: torchvision keeps both forms side by side and
    hand-made copies are sometimes misnamed.
    """
    try:
        raw = path.read_bytes()
        if raw[:2] == GZIP_MAGIC:
            raw = gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as exc:
        raise DatasetError(f"{path}: cannot read (corrupt or truncated gzip data?): {exc}") from exc
    return raw


def read_idx(path: str | Path) -> np.ndarray:
    """The array stored in an idx file, in native byte order, after checking its header.

    Checks the magic (two zero bytes, a known type code, the number of dimensions) and that
    the payload holds exactly the number of elements the dimensions promise.
    """
    path = Path(path)
    raw = _read_bytes(path)
    if len(raw) < 4 or raw[:2] != b"\x00\x00":
        raise DatasetError(f"{path}: not an idx file (bad magic {raw[:4].hex() or 'empty'})")
    type_code, n_dims = raw[2], raw[3]
    dtype = _DTYPE_BY_CODE.get(type_code)
    if dtype is None:
        raise DatasetError(f"{path}: unknown idx type code 0x{type_code:02x}")
    header_bytes = 4 + 4 * n_dims
    if len(raw) < header_bytes:
        raise DatasetError(f"{path}: truncated idx header ({len(raw)} of {header_bytes} bytes)")
    dims = struct.unpack(f">{n_dims}I", raw[4:header_bytes])
    n_elements = math.prod(dims)
    payload_bytes = len(raw) - header_bytes
    expected_bytes = n_elements * dtype.itemsize
    if payload_bytes < expected_bytes:
        raise DatasetError(
            f"{path}: truncated idx file: {payload_bytes} payload bytes, shape {dims} needs {expected_bytes}"
        )
    if payload_bytes > expected_bytes:
        raise DatasetError(
            f"{path}: {payload_bytes - expected_bytes} unexpected bytes after the idx payload of shape {dims}"
        )
    array = np.frombuffer(raw, dtype=dtype, count=n_elements, offset=header_bytes).reshape(dims)
    return array.astype(dtype.newbyteorder("="))  # a writable native-order copy


def write_idx(path: str | Path, array: np.ndarray) -> Path:
    """Write an array as an idx file (gzip-compressed when the name ends in .gz)."""
    path = Path(path)
    array = np.asarray(array)
    code = _CODE_BY_KIND.get((array.dtype.kind, array.dtype.itemsize))
    if code is None or array.ndim > 255:
        raise ValueError(f"idx cannot store dtype {array.dtype} with {array.ndim} dimensions")
    header = bytes([0, 0, code, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    content = header + array.astype(_DTYPE_BY_CODE[code]).tobytes()
    if path.suffix == ".gz":
        content = gzip.compress(content, compresslevel=6, mtime=0)
    path.write_bytes(content)
    return path
