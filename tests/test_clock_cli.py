"""The orchestrator and the budget from the command line: a run stops at its horizon and says
why; asynchronous runs write their folders; what the orchestrator cannot take is refused."""

import json
import os

import pytest

from scenarios.cli.main import main


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_cell_run_stops_at_its_time_budget_and_says_why(capsys, tmp_path):
    code, out, _ = run_cli(capsys, "run", "--algorithm", "fedavg", "--system", "umi-3.5ghz", "--until", "time=10", "--rounds", "50",
                           "--out", str(tmp_path), "--no-figure", "--json", "--quiet")
    assert code == 0
    run = json.loads(out)["runs"][0]
    summary = json.loads((tmp_path / os.path.basename(run["result_dir"]) / "summary.json").read_text())
    assert summary["simulated_time"] == 10.0 and summary["stopped"] == {"reason": "budget", "budget": "time", "limit": 10.0, "spent": 10.0}
    assert 0 < summary["rounds"] < 50 and summary["final_mean_accuracy"] is not None
    # the energy by state counts the rounds energy_j counts, not the round the budget cut short
    split = sum(summary[f"{state}_energy_j"] for state in ("transmit", "receive", "compute", "idle"))
    assert split == pytest.approx(summary["energy_j"], rel=1e-9)
    trace = (tmp_path / os.path.basename(run["result_dir"]) / "trace.csv").read_text().splitlines()
    assert any(int(line.split(",")[0]) > summary["rounds"] for line in trace[1:])  # the cut round's events are in the trace
    code, out, _ = run_cli(capsys, "plot", run["result_dir"], "--out", str(tmp_path / "f.png"), "--budget", "time=2,5,20", "--json")
    cells = {(row["budget"], row["censored"]) for row in json.loads(out)["within_budget"]}
    assert code == 0 and cells == {(2.0, 0), (5.0, 0), (20.0, 1)}  # it spent 10 s: 20 s is beyond its end


def test_fedbuff_runs_on_a_cell_and_reports_its_staleness(capsys, tmp_path):
    code, out, _ = run_cli(capsys, "run", "--algorithm", "fedavg", "--orchestrator", "fedbuff", "--buffer-k", "3", "--concurrency", "6",
                           "--system", "umi-3.5ghz", "--rounds", "4", "--out", str(tmp_path), "--no-figure", "--json", "--quiet")
    assert code == 0
    run = json.loads(out)["runs"][0]
    summary = json.loads((tmp_path / os.path.basename(run["result_dir"]) / "summary.json").read_text())
    assert summary["orchestrator"] == "fedbuff" and summary["rounds"] == 4 and summary["updates"] == 12
    assert summary["stopped"] == {"reason": "rounds"} and summary["energy_j"] > 0 and summary["staleness_max"] >= 1
    folder = tmp_path / os.path.basename(run["result_dir"])
    first = {name: (folder / name).read_text() for name in ("rounds.csv", "trace.csv")}
    code, _, _ = run_cli(capsys, "run", "--algorithm", "fedavg", "--orchestrator", "fedbuff", "--buffer-k", "3", "--concurrency", "6",
                         "--system", "umi-3.5ghz", "--rounds", "4", "--out", str(tmp_path), "--no-figure", "--quiet", "--force")
    assert code == 0 and {name: (folder / name).read_text() for name in first} == first  # same seed, same numbers


def test_fedat_runs_on_a_cell_each_version_made_by_one_tier(capsys, tmp_path):
    code, out, _ = run_cli(capsys, "run", "--algorithm", "fedavg", "--orchestrator", "fedat", "--tiers", "3", "--system", "umi-3.5ghz",
                           "--rounds", "4", "--out", str(tmp_path), "--no-figure", "--json", "--quiet")
    assert code == 0
    run = json.loads(out)["runs"][0]
    folder = tmp_path / os.path.basename(run["result_dir"])
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["orchestrator"] == "fedat" and summary["rounds"] == 4 and summary["stopped"] == {"reason": "rounds"}
    assert json.loads((folder / "config.json").read_text())["clock"] == {"orchestrator": "fedat", "tiers": 3, "until": {}}


@pytest.mark.parametrize("argv,needle", [
    (["--algorithm", "ditto", "--orchestrator", "fedasync"], "ditto is not one"),
    (["--algorithm", "fedavg", "--buffer-k", "3"], "--buffer-k has an effect only with --orchestrator fedbuff (this run has --orchestrator sync)"),
    (["--algorithm", "fedavg", "--orchestrator", "fedasync", "--buffer-k", "3"], "--buffer-k has an effect only with --orchestrator fedbuff (this run has --orchestrator fedasync)"),
    (["--algorithm", "fedavg", "--orchestrator", "fedbuff", "--concurrency", "500"], "concurrency must be in 1..20"),
    (["--algorithm", "fedavg", "--orchestrator", "fedbuff", "--deadline", "5"], "--deadline has an effect only with --orchestrator sync (this run has --orchestrator fedbuff)"),
    (["--algorithm", "fedavg", "--orchestrator", "fedbuff", "--idle-choice", "fifo"], "at concurrency 20 (every device) every idle"),
    (["--algorithm", "fedavg", "--max-staleness", "2"], "--max-staleness has an effect only with --orchestrator fedbuff or fedasync (this run has --orchestrator sync)"),
    (["--algorithm", "fedavg", "--orchestrator", "fedat", "--concurrency", "4"], "--concurrency has an effect only with --orchestrator fedbuff or fedasync (this run has --orchestrator fedat)"),
    (["--algorithm", "fedavg", "--orchestrator", "fedbuff", "--tiers", "3"], "--tiers has an effect only with --orchestrator fedat (this run has --orchestrator fedbuff)"),
    (["--algorithm", "fedavg", "--orchestrator", "fedat", "--tiers", "21"], "tiers must be in 1..20 (the devices), got 21"),
    (["--algorithm", "ditto", "--orchestrator", "fedat"], "ditto is not one"),
    (["--algorithm", "fedavg", "--orchestrator", "fedbuff", "--max-staleness", "-1"], "max-staleness"),
    (["--algorithm", "fedavg", "--until", "rounds=3"], "unknown budget 'rounds'"),
    (["--algorithm", "fedavg", "--until", "time=0"], "budget time must be a finite number > 0"),
    (["--algorithm", "fedavg", "--until", "energy_j=1"], "needs a system that records energy"),
    (["--algorithm", "fedavg", "--orchestrator", "fedbuff", "--uplink-codec", "qsgd:bits=4"], "takes no codecs"),
])
def test_what_the_orchestrator_cannot_take_is_one_line_and_exit_2(capsys, tmp_path, argv, needle):
    code, out, err = run_cli(capsys, "run", *argv, "--rounds", "1", "--out", str(tmp_path / "r"))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())
