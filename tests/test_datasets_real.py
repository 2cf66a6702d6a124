"""Known facts about the real data sets, read from the data dir in $FL_COSIM_DATA.

Each test skips, saying why, when that variable is unset or the dataset is not there.
Every dataset is loaded once per module.
"""

import os

import numpy as np
import pytest

from scenarios.datasets import build_vocabulary, dataset_status, load_cifar, load_idx_dataset, load_stackoverflow


@pytest.fixture(scope="module")
def status():
    """name -> status row (md5-verified) of the data dir in $FL_COSIM_DATA; skips when it is unset."""
    data_dir = os.environ.get("FL_COSIM_DATA")
    if not data_dir:
        pytest.skip("FL_COSIM_DATA is not set: no real data dir to test against")
    return {row["name"]: row for row in dataset_status(data_dir, verify=True)}


def _require(status, name):
    """The data dir, or a skip saying the dataset is absent there."""
    if not status[name]["found"]:
        pytest.skip(f"{name} is not in $FL_COSIM_DATA: {status[name]['detail']}")
    return os.environ["FL_COSIM_DATA"]


def _load_both(loader, *args):
    return {split: loader(*args, split) for split in ("train", "test")}


@pytest.fixture(scope="module")
def mnist(status):
    return _load_both(load_idx_dataset, "mnist", _require(status, "mnist"))


@pytest.fixture(scope="module")
def fashion(status):
    return _load_both(load_idx_dataset, "fashion-mnist", _require(status, "fashion-mnist"))


@pytest.fixture(scope="module")
def cifar10(status):
    return _load_both(load_cifar, "cifar10", _require(status, "cifar10"))


@pytest.fixture(scope="module")
def stackoverflow(status):
    return _load_both(load_stackoverflow, _require(status, "stackoverflow"))


def test_mnist(mnist):
    (train_images, train_labels), (test_images, test_labels) = mnist["train"], mnist["test"]
    assert train_images.shape == (60000, 28, 28) and test_images.shape == (10000, 28, 28)
    assert len(train_labels) == 60000 and len(test_labels) == 10000
    assert train_labels[:10].tolist() == [5, 0, 4, 1, 9, 2, 1, 3, 1, 4]
    assert train_images.mean() == pytest.approx(0.1307 * 255, abs=0.02)  # 33.32, the usual normalisation mean


def test_fashion_mnist(fashion):
    (train_images, train_labels), (test_images, test_labels) = fashion["train"], fashion["test"]
    assert train_images.shape == (60000, 28, 28) and test_images.shape == (10000, 28, 28)
    assert np.bincount(train_labels).tolist() == [6000] * 10
    assert np.bincount(test_labels).tolist() == [1000] * 10
    assert train_labels[:10].tolist() == [9, 0, 0, 3, 0, 2, 7, 2, 5, 5]


def test_cifar10(cifar10):
    (train_images, train_labels), (test_images, test_labels) = cifar10["train"], cifar10["test"]
    assert train_images.shape == (50000, 32, 32, 3) and test_images.shape == (10000, 32, 32, 3)
    assert np.bincount(train_labels).tolist() == [5000] * 10
    assert np.bincount(test_labels).tolist() == [1000] * 10
    assert train_labels[:10].tolist() == [6, 9, 9, 4, 1, 1, 2, 7, 8, 3]
    assert test_labels[:10].tolist() == [3, 8, 8, 0, 6, 6, 1, 6, 3, 1]
    assert np.bincount(train_labels[:10000]).tolist() == [1005, 974, 1032, 1016, 999, 937, 1030, 1001, 1025, 981]
    channel_means = train_images.reshape(-1, 3).mean(axis=0) / 255
    np.testing.assert_allclose(channel_means, [0.4914, 0.4822, 0.4465], atol=1e-4)


def test_stackoverflow(stackoverflow):
    for split in ("train", "test"):
        texts, labels = stackoverflow[split]
        assert len(texts) == 8000 and np.bincount(labels).tolist() == [2000] * 4
    vocabulary = build_vocabulary(stackoverflow["train"][0])
    assert len(vocabulary) == 10000 and sorted(vocabulary.values()) == list(range(2, 10002))


@pytest.mark.parametrize("name", ["mnist", "fashion-mnist", "cifar10", "stackoverflow"])
def test_status_found_and_verified(status, name):
    _require(status, name)
    row = status[name]
    assert row["verified"] is True, row["detail"]
    if name == "cifar10":
        assert "known-good lossless repack" in row["detail"] or "published tarball" in row["detail"]
