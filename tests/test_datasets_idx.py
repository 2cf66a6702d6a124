"""The idx reader: round trips in every element type, gzip detection, and one-line errors for bad files."""

import gzip

import numpy as np
import pytest

from scenarios.datasets.idx import read_idx, write_idx
from scenarios.errors import DatasetError


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.float32, np.float64])
@pytest.mark.parametrize("file_name", ["data-idx3-ubyte", "data-idx3-ubyte.gz"])
def test_round_trip_plain_and_gzip(tmp_path, dtype, file_name):
    array = (np.arange(2 * 3 * 4) - 7).astype(dtype).reshape(2, 3, 4)
    path = write_idx(tmp_path / file_name, array)
    assert (path.read_bytes()[:2] == b"\x1f\x8b") == file_name.endswith(".gz")
    back = read_idx(path)
    assert back.dtype == np.dtype(dtype) and back.dtype.isnative
    np.testing.assert_array_equal(back, array)
    back[0, 0, 0] = 1  # writable, so models may normalise in place


def test_gzip_is_detected_by_magic_not_name(tmp_path):
    labels = np.arange(10, dtype=np.uint8)
    gz_path = write_idx(tmp_path / "labels.gz", labels)
    misnamed = tmp_path / "labels-idx1-ubyte"
    misnamed.write_bytes(gz_path.read_bytes())
    np.testing.assert_array_equal(read_idx(misnamed), labels)


def test_truncated_file_is_a_dataset_error_naming_it(tmp_path):
    path = write_idx(tmp_path / "train-images-idx3-ubyte", np.zeros((5, 28, 28), np.uint8))
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(DatasetError, match=r"train-images-idx3-ubyte: truncated idx file") as err:
        read_idx(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_truncated_gzip_is_a_dataset_error_naming_it(tmp_path):
    path = write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", np.arange(5000, dtype=np.uint8) % 10)
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(DatasetError, match="t10k-labels-idx1-ubyte.gz: cannot read"):
        read_idx(path)


def test_truncated_header(tmp_path):
    path = tmp_path / "short"
    path.write_bytes(bytes([0, 0, 8, 3, 0, 0]))
    with pytest.raises(DatasetError, match="truncated idx header"):
        read_idx(path)


@pytest.mark.parametrize(
    "content, problem",
    [
        (b"", "bad magic"),
        (b"PK\x03\x04rest", "bad magic"),
        (bytes([0, 0, 0x42, 1, 0, 0, 0, 1, 7]), "unknown idx type code 0x42"),
        (bytes([0, 0, 8, 1, 0, 0, 0, 2, 7, 7, 7]), "1 unexpected bytes after"),
    ],
)
def test_malformed_files(tmp_path, content, problem):
    path = tmp_path / "bad-idx1-ubyte"
    path.write_bytes(content)
    with pytest.raises(DatasetError, match=problem):
        read_idx(path)


def test_corrupt_gzip_stream(tmp_path):
    path = tmp_path / "x.gz"
    good = gzip.compress(bytes([0, 0, 8, 1, 0, 0, 0, 1, 7]))
    path.write_bytes(good[:12] + b"\xff" * (len(good) - 12))
    with pytest.raises(DatasetError, match="x.gz: cannot read"):
        read_idx(path)


def test_writer_refuses_types_idx_cannot_hold(tmp_path):
    with pytest.raises(ValueError):
        write_idx(tmp_path / "x", np.zeros(3, dtype=np.uint64))
