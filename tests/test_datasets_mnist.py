"""MNIST-like readers on generated idx files: every accepted layout, EMNIST orientation, and clear errors."""

import numpy as np
import pytest

from scenarios.datasets import load_idx_dataset
from scenarios.datasets.fakes import write_fake_idx_dataset
from scenarios.datasets.idx import write_idx
from scenarios.errors import DatasetError, UsageError


def _check(expected, images, labels, split):
    assert images.dtype == np.uint8 and images.shape[1:] == (28, 28)
    assert labels.dtype == np.int64
    np.testing.assert_array_equal(images, expected[f"{split}-images"])
    np.testing.assert_array_equal(labels, expected[f"{split}-labels"])


@pytest.mark.parametrize(
    "name, sub_folder, compress",
    [
        ("mnist", "MNIST", True),  # flat folder, as in the shared data dir
        ("mnist", "", True),  # files directly in the data dir
        ("mnist", "MNIST/raw", False),  # torchvision layout (it unpacks the .gz files)
        ("fashion-mnist", "FashionMNIST", True),
        ("fashion-mnist", "FashionMNIST/raw", False),
        ("emnist-balanced", "EMNIST/raw", False),
        ("emnist-byclass", "EMNIST", True),
        ("emnist-letters", "gzip", True),  # the folder inside the official gzip.zip
    ],
)
@pytest.mark.parametrize("split", ["train", "test"])
def test_layouts_are_found_and_read(tmp_path, name, sub_folder, compress, split):
    expected = write_fake_idx_dataset(tmp_path / sub_folder, name, compress=compress)
    _check(expected, *load_idx_dataset(name, tmp_path, split), split)


def test_emnist_images_are_transposed_back(tmp_path):
    upright = np.zeros((1, 28, 28), np.uint8)
    upright[0, 0, :] = 255  # a bar along the top row
    write_fake_idx_dataset(tmp_path / "EMNIST", "emnist-digits")
    write_idx(tmp_path / "EMNIST" / "emnist-digits-train-images-idx3-ubyte.gz", upright.transpose(0, 2, 1))
    write_idx(tmp_path / "EMNIST" / "emnist-digits-train-labels-idx1-ubyte.gz", np.array([3], np.uint8))
    images, labels = load_idx_dataset("emnist-digits", tmp_path, "train")
    assert images[0, 0, :].min() == 255 and images[0, 1:, :].max() == 0
    assert images.flags.c_contiguous and labels.tolist() == [3]


def test_plain_files_are_preferred_to_gzip_when_both_exist(tmp_path):
    folder = tmp_path / "MNIST" / "raw"
    expected = write_fake_idx_dataset(folder, compress=False)
    write_fake_idx_dataset(folder, seed=1, compress=True)
    _check(expected, *load_idx_dataset("mnist", tmp_path, "train"), "train")


def test_missing_dataset_names_files_folders_and_remedy(tmp_path):
    with pytest.raises(DatasetError) as err:
        load_idx_dataset("fashion-mnist", tmp_path, "test")
    message = str(err.value)
    assert "\n" not in message
    for expected in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte", str(tmp_path / "FashionMNIST"),
                     str(tmp_path / "FashionMNIST" / "raw"), "fl-cosim datasets download fashion-mnist"):
        assert expected in message


def test_images_and_labels_must_share_a_folder(tmp_path):
    write_fake_idx_dataset(tmp_path / "MNIST")
    (tmp_path / "MNIST" / "train-labels-idx1-ubyte.gz").rename(tmp_path / "train-labels-idx1-ubyte.gz")
    with pytest.raises(DatasetError, match="data not found"):
        load_idx_dataset("mnist", tmp_path, "train")


def test_count_mismatch_names_the_label_file(tmp_path):
    write_fake_idx_dataset(tmp_path)
    write_idx(tmp_path / "train-labels-idx1-ubyte.gz", np.zeros(3, np.uint8))
    with pytest.raises(DatasetError, match=r"train-labels-idx1-ubyte.gz: 3 labels for 12 images"):
        load_idx_dataset("mnist", tmp_path, "train")


def test_wrong_image_shape_names_the_image_file(tmp_path):
    write_fake_idx_dataset(tmp_path)
    write_idx(tmp_path / "train-images-idx3-ubyte.gz", np.zeros((12, 32, 32), np.uint8))
    with pytest.raises(DatasetError, match="train-images-idx3-ubyte.gz: expected uint8 images"):
        load_idx_dataset("mnist", tmp_path, "train")


@pytest.mark.parametrize("name, split", [("cifar10", "train"), ("emnist-nope", "train"), ("mnist", "valid")])
def test_bad_names_are_usage_errors(tmp_path, name, split):
    with pytest.raises(UsageError) as err:
        load_idx_dataset(name, tmp_path, split)
    assert not isinstance(err.value, DatasetError)
