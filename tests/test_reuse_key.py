"""What determines a result is in its reuse key: a folder made from other dataset bytes or by
other code (the package's sources; a plugin's helper modules: tests/test_plugins.py) is run
again, and the command says why in one line on stderr; a run reading another availability
trace's bytes is another run."""

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import scenarios.records.provenance
from scenarios.cli.main import main

MNIST = ["run", "--scenario", "mnist-rotation", "--devices", "4", "--algorithm", "fedavg", "--rounds", "1",
         "--backend", "loop", "--no-figure", "--quiet", "--json"]


@pytest.fixture(scope="module")
def data_dirs(tmp_path_factory):
    """A small MNIST in the true format, and a copy whose training images are all zero (the
    same labels, so the same partition and config: only the bytes differ)."""
    from scenarios.datasets.fakes import write_fake_idx_dataset
    from scenarios.datasets.idx import read_idx, write_idx

    root = tmp_path_factory.mktemp("data")
    write_fake_idx_dataset(root / "real" / "MNIST", "mnist", n_train=200)
    shutil.copytree(root / "real", root / "blank")
    images = root / "blank" / "MNIST" / "train-images-idx3-ubyte.gz"
    write_idx(images, np.zeros_like(read_idx(images)))
    return root / "real", root / "blank"


def run(capsys, out, *argv):
    code = main([*MNIST, "--out", str(out), *map(str, argv)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    (summary,) = json.loads(captured.out)["runs"]
    return summary, captured.err


def provenance_of(summary) -> dict:
    return json.loads((Path(summary["result_dir"]) / "config.json").read_text())["provenance"]


def test_a_dataset_change_runs_again_and_says_why(capsys, tmp_path, data_dirs):
    real, blank = data_dirs
    first, _ = run(capsys, tmp_path, "--data-dir", real)
    then = provenance_of(first)["data"][:12]
    again, err = run(capsys, tmp_path, "--data-dir", real)
    assert err == "" and again["final_mean_accuracy"] == first["final_mean_accuracy"]
    on_blank, err = run(capsys, tmp_path, "--data-dir", blank)
    assert on_blank["result_dir"] == first["result_dir"]  # the same settings name the same folder
    name = Path(first["result_dir"]).name
    now = provenance_of(on_blank)["data"][:12]
    assert then != now
    assert err.splitlines() == [f"fl-cosim: running {name} again: its dataset files differ (digest {then} then, {now} now)"]
    back, err = run(capsys, tmp_path, "--data-dir", real)  # and back: not the blank run's number
    assert "its dataset files differ" in err and back["final_mean_accuracy"] == first["final_mean_accuracy"]


def test_the_data_digest_is_of_the_bytes_not_the_folder(capsys, tmp_path, data_dirs):
    real, _ = data_dirs
    moved = tmp_path / "moved"
    shutil.copytree(real, moved)
    first, _ = run(capsys, tmp_path / "out", "--data-dir", real)
    again, err = run(capsys, tmp_path / "out", "--data-dir", moved)
    assert err == "" and provenance_of(again)["data"] == provenance_of(first)["data"]


def test_a_run_of_generated_data_records_no_data_digest(capsys, tmp_path):
    code = main(["run", "--algorithm", "local", "--system", "wired", "--rounds", "1", "--no-figure", "--quiet", "--json",
                 "--out", str(tmp_path)])
    summary = json.loads(capsys.readouterr().out)["runs"][0]
    assert code == 0 and provenance_of(summary)["data"] is None


LOCAL = ["run", "--algorithm", "local", "--system", "wired", "--rounds", "1", "--no-figure", "--quiet", "--json"]


def test_a_code_edit_runs_again_and_says_why(capsys, tmp_path, monkeypatch):
    """Another package digest (what an edited source gives, committed or not) runs again."""
    assert main([*LOCAL, "--out", str(tmp_path)]) == 0
    first = json.loads(capsys.readouterr().out)["runs"][0]
    then = provenance_of(first)["code"][:12]
    monkeypatch.setattr(scenarios.records.provenance, "package_digest", lambda: "0" * 64)
    assert main([*LOCAL, "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert err.splitlines() == [f"fl-cosim: running {Path(first['result_dir']).name} again: its code differ "
                                f"(digest {then} then, 000000000000 now)"]


def test_the_package_digest_covers_every_source_file(tmp_path):
    from scenarios.records.provenance import files_digest

    files = [tmp_path / "a.py", tmp_path / "b.py"]
    for path in files:
        path.write_text("x = 1\n")
    before = files_digest(files, tmp_path)
    files[1].write_text("x = 2\n")
    assert files_digest(files, tmp_path) != before
    files[1].write_text("x = 1\n")
    assert files_digest(files, tmp_path) == before
    assert scenarios.records.provenance.package_digest() == scenarios.records.provenance.package_digest()  # stable within a process


def test_the_package_digest_reads_every_package_of_the_project():
    from scenarios.records.provenance import PACKAGES, package_folders

    folders = package_folders()
    assert [folder.name for folder in folders] == list(PACKAGES)
    assert all((folder / "__init__.py").is_file() for folder in folders)  # a moved module cannot point it elsewhere


def trace_bytes(finish_time: int) -> bytes:
    return json.dumps({"devices": {str(d): {"active": [0], "inactive": [5], "finish_time": finish_time}
                                   for d in range(4)}}).encode()


def test_an_availability_trace_is_in_the_reuse_key_by_its_bytes(capsys, tmp_path, monkeypatch):
    """The same relative path in another folder, and the same file edited, are other runs (the
    path alone was the key: both reused the first); the first bytes again are the first run."""
    argv = ["run", "--scenario", "digits-rotation", "--devices", "4", "--system", "umi-3.5ghz", "--algorithm", "fedavg",
            "--rounds", "1", "--backend", "loop", "--no-figure", "--quiet", "--json", "--out", str(tmp_path / "out"),
            "--radio", "availability_trace=t.json"]
    for name, finish_time in (("a", 10), ("b", 20)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "t.json").write_bytes(trace_bytes(finish_time))

    def folder_in(name: str) -> Path:
        monkeypatch.chdir(tmp_path / name)
        assert main(argv) == 0
        (summary,) = json.loads(capsys.readouterr().out)["runs"]
        folder = Path(summary["result_dir"])
        digest = json.loads((folder / "config.json").read_text())["inputs"]["availability_trace_sha256"]
        assert digest == hashlib.sha256((tmp_path / name / "t.json").read_bytes()).hexdigest()
        return folder

    first, second = folder_in("a"), folder_in("b")
    assert second != first
    (tmp_path / "a" / "t.json").write_bytes(trace_bytes(30))
    assert folder_in("a") not in (first, second)
    (tmp_path / "a" / "t.json").write_bytes(trace_bytes(10))
    assert folder_in("a") == first
    assert len(list((tmp_path / "out").iterdir())) == 3
