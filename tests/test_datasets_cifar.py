"""CIFAR readers on generated pickles in the true format, and the restricted unpickler."""

import io
import os
import pickle
import tarfile

import numpy as np
import pytest

from scenarios.datasets import load_cifar
from scenarios.datasets.cifar import unpickle
from scenarios.datasets.fakes import write_fake_cifar
from scenarios.errors import DatasetError, UsageError


@pytest.mark.parametrize("as_tarball", [True, False])
@pytest.mark.parametrize("sub_folder", ["CIFAR100", ""])
@pytest.mark.parametrize("split", ["train", "test"])
def test_cifar100_fine_and_coarse(tmp_path, as_tarball, sub_folder, split):
    expected = write_fake_cifar(tmp_path / sub_folder, "cifar100", as_tarball=as_tarball)[split]
    images, fine = load_cifar("cifar100", tmp_path, split)
    _, coarse = load_cifar("cifar100", tmp_path, split, label_kind="coarse")
    assert images.dtype == np.uint8 and images.shape[1:] == (32, 32, 3) and images.flags.c_contiguous
    assert fine.dtype == coarse.dtype == np.int64
    np.testing.assert_array_equal(images, expected["images"])
    np.testing.assert_array_equal(fine, expected["fine"])
    np.testing.assert_array_equal(coarse, expected["coarse"])


@pytest.mark.parametrize("as_tarball", [True, False])
def test_cifar10_joins_its_five_train_batches_in_order(tmp_path, as_tarball):
    expected = write_fake_cifar(tmp_path / "CIFAR10", "cifar10", n_train=13, as_tarball=as_tarball)
    for split in ("train", "test"):
        images, labels = load_cifar("cifar10", tmp_path, split)
        np.testing.assert_array_equal(images, expected[split]["images"])
        np.testing.assert_array_equal(labels, expected[split]["fine"])


def test_channel_major_rows_become_hwc(tmp_path):
    expected = write_fake_cifar(tmp_path, "cifar100", n_train=1, as_tarball=False)
    batch_path = tmp_path / "cifar-100-python" / "train"
    with open(batch_path, "rb") as stream:
        row = pickle.load(stream, encoding="bytes")[b"data"][0]
    images, _ = load_cifar("cifar100", tmp_path, "train")
    red_plane = row[:1024].reshape(32, 32)
    np.testing.assert_array_equal(images[0, :, :, 0], red_plane)
    np.testing.assert_array_equal(images[0], expected["train"]["images"][0])


class _Exploit:
    """Pickles as a call to os.system, the classic malicious pickle."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def test_restricted_unpickler_refuses_code(tmp_path):
    marker = tmp_path / "pwned"
    folder = tmp_path / "cifar-100-python"
    folder.mkdir()
    (folder / "train").write_bytes(pickle.dumps({b"data": _Exploit(marker)}, protocol=2))
    with pytest.raises(DatasetError, match=r"train: refusing to unpickle: it references (posix|nt)\.system"):
        load_cifar("cifar100", tmp_path, "train")
    assert not marker.exists()


@pytest.mark.parametrize("payload", [pickle.dumps(print, protocol=2), pickle.dumps(io.BytesIO, protocol=4)])
def test_restricted_unpickler_refuses_other_globals(payload):
    with pytest.raises(DatasetError, match="refusing to unpickle"):
        unpickle(io.BytesIO(payload), "blob")


def test_garbage_pickle_is_a_dataset_error():
    with pytest.raises(DatasetError, match=r"blob: not a readable pickle"):
        unpickle(io.BytesIO(b"\x80\x02}q\x00(X"), "blob")


def test_truncated_tarball_names_it(tmp_path):
    write_fake_cifar(tmp_path, "cifar10", n_train=50)
    tarball = tmp_path / "cifar-10-python.tar.gz"
    tarball.write_bytes(tarball.read_bytes()[: tarball.stat().st_size // 2])
    with pytest.raises(DatasetError, match="cifar-10-python.tar.gz"):
        load_cifar("cifar10", tmp_path, "test")


def test_tarball_missing_a_member(tmp_path):
    with tarfile.open(tmp_path / "cifar-100-python.tar.gz", "w:gz") as tar:
        tar.addfile(tarfile.TarInfo("cifar-100-python/meta"), io.BytesIO(b""))
    with pytest.raises(DatasetError, match="tarball lacks cifar-100-python/test"):
        load_cifar("cifar100", tmp_path, "test")


def test_wrong_batch_content(tmp_path):
    folder = tmp_path / "cifar-100-python"
    folder.mkdir()
    (folder / "test").write_bytes(pickle.dumps({b"data": np.zeros((2, 10), np.uint8)}, protocol=2))
    with pytest.raises(DatasetError, match="'data' is not a uint8 array of rows of 3072 bytes"):
        load_cifar("cifar100", tmp_path, "test")


def test_label_out_of_range(tmp_path):
    folder = tmp_path / "cifar-100-python"
    folder.mkdir()
    batch = {b"data": np.zeros((2, 3072), np.uint8), b"fine_labels": [0, 100], b"coarse_labels": [0, 1]}
    (folder / "test").write_bytes(pickle.dumps(batch, protocol=2))
    with pytest.raises(DatasetError, match=r"labels outside 0\.\.99"):
        load_cifar("cifar100", tmp_path, "test")


def test_cifar10_has_no_coarse_labels(tmp_path):
    with pytest.raises(UsageError, match="no 'coarse' labels"):
        load_cifar("cifar10", tmp_path, "train", label_kind="coarse")


def test_missing_cifar_names_both_forms(tmp_path):
    with pytest.raises(DatasetError) as err:
        load_cifar("cifar10", tmp_path, "train")
    for expected in ("cifar-10-batches-py", "cifar-10-python.tar.gz", str(tmp_path / "CIFAR10"),
                     "fl-cosim datasets download cifar10"):
        assert expected in str(err.value)


def test_unit_float_gives_numpys_bits_for_every_pixel_value():
    """``unit_float`` converts through torch; every uint8 value, at every position of a vector
    loop and its tail, gets the bits of numpy's ``astype(float32) / float32(255)``."""
    from scenarios.library.sources import unit_float

    pixels = np.tile(np.arange(256, dtype=np.uint8), 37)[:-5].reshape(-1, 1)
    expected = pixels.astype(np.float32) / np.float32(255.0)
    got = unit_float(pixels)
    assert got.dtype == np.float32 and got.shape == pixels.shape
    assert np.array_equal(got.view(np.uint32), expected.view(np.uint32))
    strided = np.arange(256, dtype=np.uint8)[::3]  # not contiguous
    assert np.array_equal(unit_float(strided).view(np.uint32), (strided.astype(np.float32) / np.float32(255.0)).view(np.uint32))
