"""download_dataset against a loopback HTTP server: success, md5 mismatch, HTTP and network errors, EMNIST zip."""

import dataclasses
import functools
import http.server
import socket
import threading
import zipfile

import pytest

from scenarios.datasets import DATASETS, download_dataset, load_idx_dataset
from scenarios.datasets.catalog import file_md5
from scenarios.datasets.fakes import write_fake_idx_dataset
from scenarios.errors import DatasetError


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    """Loopback requests must not be sent to a proxy configured in the environment."""
    monkeypatch.setenv("no_proxy", "*")
    monkeypatch.setenv("NO_PROXY", "*")


@pytest.fixture
def server(tmp_path):
    """(served folder, base URL) of a threading HTTP server on a free loopback port."""
    served = tmp_path / "served"
    served.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(served))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield served, f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()
    thread.join()


def _trust_served_files(monkeypatch, name, served):
    """Make the registry's md5s those of the served files, as if they had been published."""
    info = DATASETS[name]
    files = tuple(dataclasses.replace(f, md5s={file_md5(served / f.name): "test table"}) for f in info.files)
    monkeypatch.setitem(DATASETS, name, dataclasses.replace(info, files=files))


def test_download_success_then_kept(tmp_path, server, monkeypatch):
    served, base_url = server
    expected = write_fake_idx_dataset(served, "mnist")
    _trust_served_files(monkeypatch, "mnist", served)
    data_dir = tmp_path / "data"
    lines = []
    paths = download_dataset("mnist", data_dir, base_url=base_url, report=lines.append)
    assert paths == [data_dir / "MNIST" / f.name for f in DATASETS["mnist"].files]
    assert sorted(p.name for p in (data_dir / "MNIST").iterdir()) == sorted(p.name for p in paths)
    assert sum(line.startswith("fetching http://127.0.0.1") for line in lines) == 4
    images, labels = load_idx_dataset("mnist", data_dir, "test")
    assert (images == expected["test-images"]).all() and (labels == expected["test-labels"]).all()
    for served_file in served.iterdir():
        served_file.unlink()  # a second run must not need the server
    lines.clear()
    download_dataset("mnist", data_dir, base_url=base_url, report=lines.append)
    assert len(lines) == 4 and all(line.endswith("already in place") for line in lines)


def test_checksum_mismatch_leaves_nothing(tmp_path, server):
    served, base_url = server
    write_fake_idx_dataset(served, "mnist")  # random data: cannot match the published md5s
    data_dir = tmp_path / "data"
    with pytest.raises(DatasetError) as err:
        download_dataset("mnist", data_dir, base_url=base_url)
    message = str(err.value)
    assert f"download of {base_url}train-images-idx3-ubyte.gz failed: md5" in message
    assert "f68b3c2dcbeaaa9fbdd348bbdeb94873" in message and "\n" not in message
    assert not (data_dir / "MNIST").exists()  # a failed first download leaves no folder either


def test_http_error_names_url_and_status(tmp_path, server, monkeypatch):
    served, base_url = server
    write_fake_idx_dataset(served, "fashion-mnist")
    _trust_served_files(monkeypatch, "fashion-mnist", served)
    (served / "t10k-labels-idx1-ubyte.gz").unlink()
    url_pattern = r"http://127\.0\.0\.1:\d+/t10k-labels-idx1-ubyte\.gz"
    with pytest.raises(DatasetError, match=rf"download of {url_pattern} failed: HTTP 404"):
        download_dataset("fashion-mnist", tmp_path, base_url=base_url)
    left = sorted(p.name for p in (tmp_path / "FashionMNIST").iterdir())
    assert left == sorted(f.name for f in DATASETS["fashion-mnist"].files[:3])  # whole, verified files only


def test_no_route_names_url_and_leaves_no_folder_it_made(tmp_path):
    """Without a network the data dir and its parents that the download created go too (the
    dataset's folder alone went: ``~/.cache/fl-cosim/datasets`` stayed)."""
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url_pattern = rf"http://127\.0\.0\.1:{port}/cifar-10-python\.tar\.gz"
    with pytest.raises(DatasetError, match=rf"download of {url_pattern} failed: cannot connect"):
        download_dataset("cifar10", tmp_path / "cache" / "datasets", base_url=f"http://127.0.0.1:{port}", timeout_s=5)
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "kept").mkdir()  # a data dir that was there stays, empty or not
    with pytest.raises(DatasetError):
        download_dataset("cifar10", tmp_path / "kept", base_url=f"http://127.0.0.1:{port}", timeout_s=5)
    assert list(tmp_path.iterdir()) == [tmp_path / "kept"] and list((tmp_path / "kept").iterdir()) == []


def test_no_canonical_url(tmp_path):
    with pytest.raises(DatasetError, match="stackoverflow: cannot download: .*no canonical single-file download URL"):
        download_dataset("stackoverflow", tmp_path)
    assert not (tmp_path / "stack_overflow").exists()


def test_emnist_split_is_taken_from_the_zip(tmp_path, server, monkeypatch):
    served, base_url = server
    staging = tmp_path / "staging"
    expected = write_fake_idx_dataset(staging, "emnist-balanced")
    write_fake_idx_dataset(staging, "emnist-letters")
    with zipfile.ZipFile(served / "gzip.zip", "w") as archive:
        for file in sorted(staging.iterdir()):
            archive.write(file, f"gzip/{file.name}")
    _trust_served_files(monkeypatch, "emnist-balanced", staging)
    info = DATASETS["emnist-balanced"]
    archive_info = dataclasses.replace(info.archive, md5s={file_md5(served / "gzip.zip"): "test table"})
    monkeypatch.setitem(DATASETS, "emnist-balanced", dataclasses.replace(info, archive=archive_info))
    download_dataset("emnist-balanced", tmp_path / "data", base_url=base_url)
    folder = tmp_path / "data" / "EMNIST"
    assert sorted(p.name for p in folder.iterdir()) == sorted(f.name for f in info.files)  # zip removed
    images, _ = load_idx_dataset("emnist-balanced", tmp_path / "data", "train")
    assert (images == expected["train-images"]).all()


def test_emnist_zip_with_wrong_md5_is_removed(tmp_path, server):
    served, base_url = server
    with zipfile.ZipFile(served / "gzip.zip", "w") as archive:
        archive.writestr("gzip/readme.txt", "not the real archive")
    with pytest.raises(DatasetError, match=r"gzip\.zip failed: md5 .*\(58c8d27c78d21e728a6bc7b3cc06412e\)"):
        download_dataset("emnist-byclass", tmp_path, base_url=base_url)
    assert not (tmp_path / "EMNIST").exists()  # a failed first download leaves no folder either
