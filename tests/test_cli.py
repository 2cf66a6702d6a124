"""The command line: machine-readable output, one-line errors with exit status 2, no partial folders."""

import json
import os

import pytest

from scenarios.cli.main import main


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_json(capsys):
    code, out, _ = run_cli(capsys, "list", "--json")
    data = json.loads(out)
    assert code == 0
    assert {"fedavg", "local", "oracle", "user-centric"} <= set(data["algorithms"])
    assert "digits-rotation" in data["scenarios"]
    assert data["systems"] == ["wireless-slow-ul", "wireless-fast-ul", "wired", "umi-3.5ghz", "uma-3.5ghz", "uma-2.1ghz"]
    assert data["algorithm_options"]["fedprox"] == {"mu": 0.1}


def test_list_names_only_the_sweep_keys_sweeps_take(capsys):
    """Each run setting's line says the [settings] key a sweep takes for it, and only keys that
    ``sweep`` accepts (it listed ``--algorithm (algorithm)``, a key sweeps refuse)."""
    import re

    from scenarios.definitions.settings import SWEEP_KEYS

    code, out, _ = run_cli(capsys, "list")
    section = out[out.index("run settings"):out.index("systems (normalized")].splitlines()[1:]
    named = {line.split()[0]: re.match(r"\s*\S+ \(([^)]*)\)", line).group(1) for line in section}
    keys = [words.split()[1] for words in named.values() if words.startswith("[settings] ")]
    assert code == 0 and keys and set(keys) <= set(SWEEP_KEYS)
    assert named["--algorithm"] == "not a [settings] key; a sweep file's [[algorithm]] name"
    assert named["--seed"] == "not a [settings] key; a sweep file's top-level seeds"
    assert named["--lr"] == "[settings] training = { lr = ... }"


def test_round_time_json_matches_closed_form(capsys):
    code, out, _ = run_cli(capsys, "round-time", "--devices", "20", "--streams", "4", "--rho", "4", "--t-min", "1",
                           "--inv-mu", "1", "--mode", "barrier", "--rounds", "5000", "--json")
    data = json.loads(out)
    assert code == 0 and data["rounds"] == 5000
    assert abs(data["simulated_mean"] - data["closed_form"]) / data["closed_form"] < 0.01


def test_round_time_defaults_to_the_default_system(capsys):
    code, out, _ = run_cli(capsys, "round-time", "--devices", "20", "--streams", "4", "--rounds", "50", "--json")
    default = json.loads(out)
    code, out, _ = run_cli(capsys, "round-time", "--devices", "20", "--streams", "4", "--rounds", "50", "--json",
                           "--system", "wireless-slow-ul")
    assert code == 0 and json.loads(out) == default
    code, out, _ = run_cli(capsys, "round-time", "--devices", "20", "--streams", "4", "--rounds", "50", "--json",
                           "--rho", "4", "--t-min", "1", "--inv-mu", "1")  # the default system's parameters
    assert json.loads(out) == default


@pytest.mark.parametrize("argv,needle", [
    (["run", "--scenario", "nope"], "unknown scenario 'nope'"),
    (["run", "--algorithm", "fedsgd"], "unknown algorithm 'fedsgd'"),
    (["run", "--rounds", "0"], "rounds must be an integer in 1..100000"),
    (["run", "--system", "satellite"], "unknown system"),
    (["run", "--algorithm", "user-centric", "--streams", "21", "--rounds", "1"], "streams must be in 1..20"),
    (["run", "--streams", "-3"], "option streams must be an integer in 1..100000 or 'auto', got -3"),
    (["round-time", "--devices", "5", "--streams", "2", "--rho", "-1", "--t-min", "1", "--inv-mu", "0"], "--rho must be a finite number in (0, 100000]"),
    (["round-time", "--devices", "5", "--streams", "9", "--rho", "1", "--t-min", "1", "--inv-mu", "0"], "--streams must be in 1..5"),
    (["round-time", "--streams", "2"], "the following arguments are required: --devices"),
    (["plot", "/nonexistent/folder"], "not a complete result folder: no such folder"),
    (["streams", "--lambda", "-1"], "--lambda must be a finite number >= 0"),
    (["run", "--algorithm", "fedavg", "--option", "mu=1"], "no algorithm of this run takes option 'mu'"),
    (["run", "--algorithm", "fedprox", "--option", "mu=-1", "--rounds", "1"], "fedprox option mu must be a finite number >= 0"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, monkeypatch, argv, needle):
    monkeypatch.chdir(tmp_path)  # and back: a later import (or fork server) must not look for the project here
    code, out, err = run_cli(capsys, *argv, *(["--out", str(tmp_path / "r")] if argv[0] == "run" else []))
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_unwritable_output_dir(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    code, _, err = run_cli(capsys, "run", "--algorithm", "fedavg", "--rounds", "1", "--out", str(blocker / "sub"))
    assert code == 2 and "cannot write to output folder" in err and len(err.strip().splitlines()) == 1


def test_run_json_writes_folders_and_figure_and_plot_reads_them(capsys, tmp_path):
    out_dir = tmp_path / "results"
    code, out, _ = run_cli(capsys, "run", "--algorithm", "fedavg", "user-centric", "--streams", "auto", "--rounds", "2",
                           "--out", str(out_dir), "--json")
    assert code == 0
    data = json.loads(out)
    assert [r["label"] for r in data["runs"]] == ["fedavg", "user-centric k=auto"]
    for run in data["runs"]:
        assert set(run) >= {"algorithm", "streams", "final_mean_accuracy", "final_worst_accuracy", "simulated_time",
                            "downlink_bits", "uplink_bits", "result_dir"}
        folder = out_dir / os.path.basename(run["result_dir"])
        assert sorted(p.name for p in folder.iterdir()) == ["checksums.json", "config.json", "devices.csv", "plans.jsonl", "rounds.csv",
                                                         "summary.json", "trace.csv"]
    assert data["runs"][0]["streams"] == 1 and "clustering_ari" in data["runs"][1]
    assert os.path.exists(data["figure"])
    assert not [p for p in out_dir.iterdir() if p.name.startswith(".")]  # no staging leftovers
    figure = tmp_path / "fig.pdf"
    code, out, _ = run_cli(capsys, "plot", *[r["result_dir"] for r in data["runs"]], "--out", str(figure), "--json")
    assert code == 0 and figure.read_bytes().startswith(b"%PDF")


def test_streams_json_curve_and_monotone_choice(capsys):
    code, out, _ = run_cli(capsys, "streams", "--lambda", "0", "0.01", "0.05", "1", "--json")
    data = json.loads(out)
    silhouette = {int(k): v for k, v in data["silhouette"].items()}
    assert code == 0 and sorted(silhouette) == list(range(1, 21))
    chosen = [data["chosen"][k] for k in ("0.0", "0.01", "0.05", "1.0")]
    assert chosen[0] == max(silhouette, key=lambda k: (silhouette[k], -k))
    assert chosen == sorted(chosen, reverse=True) and chosen[-1] == 1


def test_compare_writes_tables_and_reuses_runs(capsys, tmp_path):
    argv = ["compare", "--algorithm", "fedavg", "oracle", "--seeds", "2", "--rounds", "2", "--out", str(tmp_path), "--json", "--jobs", "2"]
    code, out, _ = run_cli(capsys, *argv)
    data = json.loads(out)
    assert code == 0 and [r["label"] for r in data["rows"]] == ["fedavg", "oracle"]
    assert all(r["seeds"] == 2 and 0 <= r["mean_accuracy"][0] <= 1 for r in data["rows"])
    assert "Table I" in open(data["markdown"]).read() and open(data["csv"]).read().startswith("algorithm,")
    assert len([p for p in tmp_path.iterdir() if p.is_dir()]) == 4
    code, again, _ = run_cli(capsys, *argv)
    assert json.loads(again)["rows"] == data["rows"]
    serial = [a if a != str(tmp_path) else str(tmp_path / "serial") for a in argv[:-1]] + ["1"]  # --jobs 1
    code, alone, _ = run_cli(capsys, *serial)
    assert json.loads(alone)["rows"] == data["rows"]  # worker processes change no number


def test_plot_retimes_one_run_on_three_systems(capsys, tmp_path):
    from scenarios.records.result_folder import read_run
    from scenarios.reports.retime import retimed_curve
    from scenarios.definitions.seeds import seed_streams
    from scenarios.definitions.systems import get_system
    import numpy as np

    code, out, _ = run_cli(capsys, "run", "--algorithm", "fedavg", "--rounds", "3", "--seed", "5", "--out", str(tmp_path), "--json", "--no-figure")
    folder = json.loads(out)["runs"][0]["result_dir"]
    same = retimed_curve(folder, get_system("wireless-slow-ul"), np.random.default_rng(seed_streams(5)[2]))
    assert same.time == read_run(folder).time
    wired = retimed_curve(folder, get_system("wired"), np.random.default_rng(0))
    assert wired.mean_accuracy == same.mean_accuracy and wired.time[-1] < same.time[-1]
    figure = tmp_path / "fig6.png"
    code, _, _ = run_cli(capsys, "plot", folder, "--systems", "wireless-slow-ul", "wireless-fast-ul", "wired", "--out", str(figure))
    assert code == 0 and figure.read_bytes().startswith(b"\x89PNG")


def test_usage_errors_have_one_prefix(capsys):
    assert main(["run", "--frobnicate"]) == 2
    assert capsys.readouterr().err.strip() == "fl-cosim: error: unrecognized arguments: --frobnicate (see fl-cosim --help)"
    assert main(["run", "--mode", "warp"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("fl-cosim: error: argument --mode: invalid choice: 'warp'") and err.endswith("(see fl-cosim run --help)")


def test_an_internal_error_is_one_line_exit_3_and_its_traceback_is_saved(capsys, monkeypatch):
    from scenarios.cli import listing

    def broken(args):
        raise RuntimeError("a bug\nwith a second line")

    monkeypatch.setattr(listing, "execute", broken)
    assert main(["list"]) == 3
    err = capsys.readouterr().err.strip()
    assert err.startswith("fl-cosim: internal error (RuntimeError: a bug); the traceback is in ") and "\n" not in err
    saved = err.split("the traceback is in ")[1].split(";")[0]
    text = open(saved).read()
    assert "Traceback" in text and "RuntimeError: a bug" in text
    os.unlink(saved)


def test_scenario_prints_its_training_defaults_and_works_without_its_data(capsys, tmp_path):
    from scenarios.definitions.registry import get_scenario

    code, out, _ = run_cli(capsys, "scenario", "digits-rotation")
    training = get_scenario("digits-rotation").training
    assert code == 0 and f"training: lr={training.lr}, momentum={training.momentum}" in out and "rounds: 60" in out
    code, out, _ = run_cli(capsys, "scenario", "mnist-rotation", "--data-dir", str(tmp_path))  # an empty data folder
    assert code == 0 and "rounds: 100" in out and "training: lr=" in out and "data: not found" in out
    assert f"mnist: train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz" in out and str(tmp_path / "MNIST") in out
    code, out, _ = run_cli(capsys, "scenario", "mnist-rotation", "--data-dir", str(tmp_path), "--json")
    data = json.loads(out)
    assert data["training"]["optimizer"] == "adam" and len(data["needs"]) == 1 and "per_device" not in data
