"""The guard against silent training failure (scenarios/health.py): hand-computed evaluation
sequences, and a real run forced to collapse by a learning rate far too high."""

import json
from pathlib import Path

import pytest

from scenarios.cli.main import main
from scenarios.health import training_flags


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_chance_is_judged_on_the_mean_of_the_last_three_evaluations_after_set_up():
    rounds = [0, 1, 2, 3, 4]
    # 10 classes: chance 0.1, flagged at a mean of at most 0.12; round 0 (the initial model) never counts
    assert training_flags(rounds, [0.10, 0.50, 0.124, 0.099, 0.096], [2.3] * 5, 10) == [
        "at chance: mean accuracy 0.124, 0.099, 0.096 at rounds 2, 3, 4 (chance 0.100)"]
    assert training_flags(rounds, [0.10, 0.10, 0.10, 0.13, 0.14], [2.3] * 5, 10) == []  # mean 0.123 > 0.12
    assert training_flags(rounds[:3], [0.1, 0.1, 0.1], [2.3] * 3, 10) == []  # two evaluations: not judged
    assert training_flags(rounds, [0.3] * 5, [1.0] * 5, 4) == [
        "at chance: mean accuracy 0.300, 0.300, 0.300 at rounds 2, 3, 4 (chance 0.250)"]
    assert training_flags(rounds, [0.0] * 5, [1.0] * 5, None) == []  # a regression has no chance level


def test_loss_rising_needs_three_rises_in_a_row_and_five_per_cent_in_all():
    rounds, accuracy = [0, 10, 20, 30, 40, 50], [0.1, 0.23, 0.24, 0.25, 0.24, 0.23]
    assert training_flags(rounds, accuracy, [2.3, 2.0, 2.0, 2.02, 2.06, 2.10], 10) == [
        "loss rising: mean validation loss 2.0000 at round 20 to 2.1000 at round 50, up at each of the last 3 evaluations"]
    assert training_flags(rounds, accuracy, [2.3, 2.0, 2.0, 2.02, 2.03, 2.04], 10) == []  # up 2%: noise
    assert training_flags(rounds, accuracy, [2.3, 2.0, 2.2, 2.1, 2.3, 2.5], 10) == []  # one fall among the last three
    # round 0 is left out: the rises must lie among the training rounds
    assert training_flags(rounds[:4], accuracy[:4], [1.0, 2.0, 2.2, 2.4], 10) == []
    both = training_flags(rounds, [0.1] * 6, [2.3, 2.3, 2.4, 2.5, 2.6, 2.7], 10)
    assert [f.split(":")[0] for f in both] == ["at chance", "loss rising"]


def test_a_run_forced_to_collapse_is_flagged_and_a_healthy_one_is_not(capsys, tmp_path):
    argv = ("--algorithm", "fedavg", "--rounds", "4", "--out", tmp_path, "--json", "--no-figure")
    code, out, err = cli(capsys, "run", "--lr", "50", *argv)  # the scenario's is 0.05
    assert code == 0  # flagged, not stopped: the run finishes and is written
    run = json.loads(out)["runs"][0]
    assert run["status"] == "finished"
    assert [f.split(":")[0] for f in run["training_flags"]] == ["at chance", "loss rising"]
    assert "fedavg flagged, at chance" in err
    summary = json.loads((Path(run["result_dir"]) / "summary.json").read_text())
    assert summary["training_flags"] == run["training_flags"]

    code, out, err = cli(capsys, "run", *argv)
    healthy = json.loads(out)["runs"][0]
    assert code == 0 and healthy["training_flags"] == [] and "flagged" not in err


@pytest.mark.parametrize("lr, flagged", [(50, 1), (0.05, 0)])
def test_compare_counts_flagged_runs_in_its_tables(capsys, tmp_path, lr, flagged):
    code, out, _ = cli(capsys, "compare", "--algorithm", "fedavg", "--lr", lr, "--seeds", "1", "--rounds", "3",
                       "--out", tmp_path, "--json", "--jobs", "1")
    assert code == 0
    data = json.loads(out)
    assert [r["flagged"] for r in data["rows"]] == [flagged]
    assert f"| {flagged}/1 |" in Path(data["markdown"]).read_text()
    per_run = Path(data["runs_csv"]).read_text().splitlines()
    assert per_run[0].split(",")[9] == "training_flags"
    assert ("at chance" in per_run[1]) == bool(flagged)
