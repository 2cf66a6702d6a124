"""Every run records what produced it; a folder made by another fl-cosim version is run again,
never reused silently; provenance does not change a folder's name."""

import json
import subprocess
from importlib import metadata

import pytest

import scenarios.records.provenance
from scenarios.cli.main import main

RUN = ["run", "--algorithm", "local", "--system", "wired", "--rounds", "1", "--no-figure", "--quiet", "--json"]


def run_json(capsys, out, *extra):
    assert main([*extra, *RUN, "--out", str(out)]) == 0
    captured = capsys.readouterr()
    (run,) = json.loads(captured.out)["runs"]
    return run, captured.err


def test_config_records_versions_commit_and_threads(tmp_path, capsys):
    run, _ = run_json(capsys, tmp_path, "--threads", "2")
    recorded = json.loads((tmp_path / run["result_dir"].split("/")[-1] / "config.json").read_text())["provenance"]
    assert recorded["fl_cosim"] == metadata.version("fl-cosim") and recorded["torch"] == metadata.version("torch")
    assert recorded["numpy"] == metadata.version("numpy") and recorded["simpy"] == metadata.version("simpy")
    assert recorded["scikit_learn"] == metadata.version("scikit-learn") and recorded["torch_threads"] == 2
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                          cwd=scenarios.records.provenance.Path(scenarios.records.provenance.__file__).parents[1])
    if head.returncode == 0:
        assert recorded["commit"].removesuffix("-dirty") == head.stdout.strip()


def test_provenance_is_not_in_the_folder_name_and_another_version_runs_again(tmp_path, capsys, monkeypatch):
    first, _ = run_json(capsys, tmp_path, "--threads", "1")
    again, _ = run_json(capsys, tmp_path, "--threads", "2")  # other threads: the same run, reused
    assert again["result_dir"] == first["result_dir"]
    monkeypatch.setattr(scenarios.records.provenance, "fl_cosim_version", lambda: "999.0")
    newer, err = run_json(capsys, tmp_path)
    assert newer["result_dir"] == first["result_dir"]
    assert f"running {first['result_dir'].split('/')[-1]} again: it was made by fl-cosim {metadata.version('fl-cosim')}, this is 999.0" in err
    config = json.loads((tmp_path / first["result_dir"].split("/")[-1] / "config.json").read_text())
    assert config["provenance"]["fl_cosim"] == "999.0"


def test_version_flag(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"fl-cosim {metadata.version('fl-cosim')}"
