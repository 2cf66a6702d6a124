"""Reader and writer for the idx format of MNIST, Fashion-MNIST and EMNIST (gzip or plain).

Every malformed file raises DatasetError naming the file, so a bad download never turns
into a silently wrong array.
"""

from __future__ import annotations

import gzip
import io
import math
import struct
import zlib
from pathlib import Path

import numpy as np

from scenarios.errors import DatasetError
from scenarios.records.reading import ReadError, read_bytes

GZIP_MAGIC = b"\x1f\x8b"
MAX_FILE_BYTES = 4 << 30  # an idx file, inflated (EMNIST byclass train images: 547 MB)

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
    """The file's content (a regular file), decompressed when it starts with the gzip magic.

    The magic decides, not the extension: torchvision keeps both forms side by side and
    hand-made copies are sometimes misnamed. Gzip data is inflated only as far as its idx
    header promises (and one byte more, to see trailing bytes): a small file that inflates to
    gigabytes is refused before it is.
    """
    try:
        raw = read_bytes(path, MAX_FILE_BYTES)
    except ReadError as error:
        raise DatasetError(str(error)) from None
    if raw[:2] != GZIP_MAGIC:
        return raw
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as stream:
            head = stream.read(4)
            head += stream.read(4 * head[3]) if len(head) == 4 else b""
            size = _promised_bytes(head)
            if size > MAX_FILE_BYTES:
                raise DatasetError(f"{path}: its idx header promises {size:,} bytes, above the {MAX_FILE_BYTES:,} read")
            return head + stream.read(size - len(head) + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise DatasetError(f"{path}: cannot read (corrupt or truncated gzip data?): {exc}") from exc


def _promised_bytes(head: bytes) -> int:
    """Header and payload bytes an idx header promises (the header's length when it is not one)."""
    dtype = _DTYPE_BY_CODE.get(head[2]) if len(head) >= 4 else None
    if dtype is None or head[:2] != b"\x00\x00" or len(head) < 4 + 4 * head[3]:
        return len(head)
    return len(head) + math.prod(struct.unpack(f">{head[3]}I", head[4:])) * dtype.itemsize


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
