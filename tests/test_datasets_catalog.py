"""The dataset registry, data-directory resolution and the status report, on generated files."""

import dataclasses
import re
from pathlib import Path

from scenarios.datasets import DATASETS, dataset_status, resolve_data_dir
from scenarios.datasets.catalog import file_md5
from scenarios.datasets.fakes import write_fake_cifar, write_fake_idx_dataset, write_fake_stackoverflow


def test_registry_covers_the_datasets_with_sane_entries():
    for name in ("mnist", "fashion-mnist", "emnist-balanced", "emnist-byclass", "cifar10", "cifar100", "stackoverflow"):
        assert name in DATASETS
    for name, info in DATASETS.items():
        assert info.name == name and info.kind in {"idx", "cifar", "text"} and info.files
        for data_file in (*info.files, *([info.archive] if info.archive else [])):
            assert all(re.fullmatch(r"[0-9a-f]{32}", md5) for md5 in data_file.md5s)
    assert set(DATASETS["cifar10"].files[0].md5s) == {"c58f30108f718f92721af3b95e74349a",
                                                      "13efbcca55d4010206664466b6fb7b23"}
    assert DATASETS["mnist"].base_url == "https://ossci-datasets.s3.amazonaws.com/mnist/"
    assert DATASETS["emnist-balanced"].archive.name == "gzip.zip"
    assert DATASETS["stackoverflow"].base_url is None


def test_resolve_data_dir_order(monkeypatch, tmp_path):
    monkeypatch.setenv("FL_COSIM_DATA", str(tmp_path / "from-env"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert resolve_data_dir(str(tmp_path / "explicit")) == tmp_path / "explicit"
    assert resolve_data_dir(None) == tmp_path / "from-env"
    monkeypatch.delenv("FL_COSIM_DATA")
    assert resolve_data_dir(None) == tmp_path / "xdg" / "fl-cosim" / "datasets"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # the XDG spec says to ignore it
    assert resolve_data_dir(None) == Path.home() / ".cache" / "fl-cosim" / "datasets"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert resolve_data_dir("") == Path.home() / ".cache" / "fl-cosim" / "datasets"
    assert resolve_data_dir("~/data") == Path.home() / "data"


def _rows(data_dir, verify=True):
    return {row["name"]: row for row in dataset_status(data_dir, verify=verify)}


def test_status_of_an_empty_dir(tmp_path):
    rows = dataset_status(tmp_path)
    assert [row["name"] for row in rows] == list(DATASETS)
    for row in rows:
        assert set(row) == {"name", "found", "path", "verified", "detail"}
        assert row["found"] is False and row["path"] is None and row["verified"] is None
        assert str(tmp_path) in row["detail"] and "\n" not in row["detail"]


def test_status_reports_md5_mismatch_match_and_unpacked_forms(tmp_path, monkeypatch):
    write_fake_idx_dataset(tmp_path / "MNIST")  # random bytes: md5s cannot match the published ones
    write_fake_idx_dataset(tmp_path / "FashionMNIST" / "raw", "fashion-mnist", compress=False)
    write_fake_cifar(tmp_path / "CIFAR100", "cifar100")
    write_fake_stackoverflow(tmp_path / "stack_overflow", as_tarball=False)
    tarball = tmp_path / "CIFAR100" / "cifar-100-python.tar.gz"
    info = DATASETS["cifar100"]
    known = dataclasses.replace(info.files[0], md5s={file_md5(tarball): "test table"})
    monkeypatch.setitem(DATASETS, "cifar100", dataclasses.replace(info, files=(known,)))
    rows = _rows(tmp_path)
    assert rows["mnist"]["found"] and rows["mnist"]["path"] == str(tmp_path / "MNIST")
    assert rows["mnist"]["verified"] is False and "matches no known md5" in rows["mnist"]["detail"]
    assert rows["fashion-mnist"]["verified"] is None and "unpacked form" in rows["fashion-mnist"]["detail"]
    assert rows["cifar100"]["verified"] is True and "test table" in rows["cifar100"]["detail"]
    assert rows["stackoverflow"]["found"] and rows["stackoverflow"]["verified"] is None
    assert not rows["cifar10"]["found"]
    unchecked = _rows(tmp_path, verify=False)
    assert unchecked["mnist"]["found"] and unchecked["mnist"]["verified"] is None
    assert "not checked" in unchecked["mnist"]["detail"]
