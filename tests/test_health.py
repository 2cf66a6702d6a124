"""The guard against silent training failure (scenarios/records/health.py): hand-computed evaluation
sequences, and a real run forced to collapse by a learning rate far too high."""

import json
from pathlib import Path

import pytest

from scenarios.cli.main import main
from scenarios.records.health import training_health


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def flags(*args, **kwargs) -> list[str]:
    return training_health(*args, **kwargs).flags


def test_chance_is_judged_on_the_mean_of_the_last_three_evaluations_after_set_up():
    rounds = [0, 1, 2, 3, 4]
    # 10 classes: chance 0.1, flagged at a mean of at most 0.12; round 0 (the initial model) never counts
    assert flags(rounds, [0.10, 0.50, 0.124, 0.099, 0.096], [2.3] * 5, 10) == [
        "at chance: mean accuracy 0.124, 0.099, 0.096 at rounds 2, 3, 4 (chance 0.100)",
        "collapsed: mean accuracy 0.096 at round 4, against its best 0.500 at round 1 (chance 0.100)"]
    assert flags(rounds, [0.10, 0.10, 0.10, 0.13, 0.14], [2.3] * 5, 10) == []  # mean 0.123 > 0.12
    assert flags(rounds[:3], [0.1, 0.1, 0.1], [2.3] * 3, 10) == []  # two evaluations: not judged
    assert flags(rounds, [0.3] * 5, [1.0] * 5, 4) == [
        "at chance: mean accuracy 0.300, 0.300, 0.300 at rounds 2, 3, 4 (chance 0.250)"]
    assert flags(rounds, [0.0] * 5, [1.0] * 5, None) == []  # a regression has no chance level


def test_collapsed_is_a_final_accuracy_below_half_its_best_gain_over_chance():
    rounds, loss = [0, 5, 10, 15, 20], [2.3, 1.0, 0.8, 1.2, 1.4]
    # best 0.8 at round 10: gain 0.7 over chance 0.1, so flagged below 0.1 + 0.35 = 0.45
    assert flags(rounds, [0.1, 0.6, 0.8, 0.5, 0.44], loss, 10) == [
        "collapsed: mean accuracy 0.440 at round 20, against its best 0.800 at round 10 (chance 0.100)"]
    assert flags(rounds, [0.1, 0.6, 0.8, 0.5, 0.46], loss, 10) == []
    assert flags(rounds, [0.0, 0.6, 0.8, 0.5, 0.1], loss, None) == []  # no chance level: not judged
    assert flags(rounds[:3], [0.1, 0.8, 0.2], loss[:3], 10) == []  # two evaluations: not judged


def test_a_loss_above_the_untrained_models_over_the_last_three_evaluations_is_flagged():
    rounds, accuracy = [0, 5, 10, 15, 20], [0.1, 0.5, 0.6, 0.6, 0.6]
    assert flags(rounds, accuracy, [2.4, 1.5, 2.5, 2.6, 2.41], 10) == [
        "loss above untrained: mean validation loss 2.5000, 2.6000, 2.4100 at rounds 10, 15, 20, the untrained model's 2.4000"]
    assert flags(rounds, accuracy, [2.4, 1.5, 2.5, 2.39, 2.6], 10) == []  # one of the last three below
    assert flags(rounds[:3], accuracy[:3], [2.4, 2.5, 2.6], 10) == []  # two evaluations: not judged
    assert flags(rounds[1:], accuracy[1:], [1.5, 2.0, 9.0, 9.0], 10) == []  # no set-up evaluation: no untrained loss
    assert flags(rounds, [0.0] * 5, [1.0, 0.5, 1.1, 1.2, 1.3], None) == [  # regressions too
        "loss above untrained: mean validation loss 1.1000, 1.2000, 1.3000 at rounds 10, 15, 20, the untrained model's 1.0000"]


def test_a_diverged_run_is_flagged():
    assert flags([0, 5], [0.1, 0.9], [2.3, 0.3], 10, "model parameters are NaN at round 7") == [
        "diverged: model parameters are NaN at round 7"]


# Healthy runs whose validation loss rises while their accuracy holds (overfitting): measured
# curves (mnist-label-shift, 30 rounds, seed 0: FedAvg and Local; docs/faithfulness.md), and the
# shape of the runs that the old rule flagged (FedAvg on label shift at 0.974-0.980).
HEALTHY = {
    "local, mnist-label-shift": ([0.123, 0.887, 0.922, 0.928, 0.929, 0.929, 0.929], [2.400, 0.446, 0.408, 0.471, 0.512, 0.533, 0.542], 10),
    "fedavg, label shift, loss rising": ([0.123, 0.921, 0.965, 0.976, 0.978, 0.977, 0.974], [2.400, 0.28, 0.12, 0.09, 0.10, 0.11, 0.12], 10),
    "stack overflow, 4 tags": ([0.25, 0.716, 0.823, 0.842, 0.853, 0.851, 0.850], [1.386, 0.70, 0.48, 0.45, 0.47, 0.50, 0.53], 4),
}


@pytest.mark.parametrize("name", HEALTHY)
def test_overfitting_is_noted_never_flagged(name):
    accuracy, loss, classes = HEALTHY[name]
    health = training_health([0, 5, 10, 15, 20, 25, 30], accuracy, loss, classes)
    assert health.flags == []
    assert len(health.notes) == 1 and health.notes[0].startswith("overfitting: mean validation loss")
    assert health.notes[0].endswith(f"accuracy held ({accuracy[-1]:.3f}, best {max(accuracy[1:]):.3f})")


def test_overfitting_needs_three_rises_in_a_row_and_five_per_cent_in_all():
    rounds, accuracy = [0, 10, 20, 30, 40, 50], [0.1, 0.23, 0.24, 0.25, 0.24, 0.23]
    assert training_health(rounds, accuracy, [2.3, 2.0, 2.0, 2.02, 2.06, 2.10], 10).notes == [
        "overfitting: mean validation loss 2.0000 at round 20 to 2.1000 at round 50, up at each of the last 3 "
        "evaluations, accuracy held (0.230, best 0.250)"]
    assert training_health(rounds, accuracy, [2.3, 2.0, 2.0, 2.02, 2.03, 2.04], 10).notes == []  # up 2%: noise
    assert training_health(rounds, accuracy, [2.3, 2.0, 2.2, 2.1, 2.3, 2.5], 10).notes == []  # one fall
    # a failed run is flagged, not noted
    failed = training_health(rounds, [0.1] * 6, [2.3, 2.3, 2.4, 2.5, 2.6, 2.7], 10)
    assert [f.split(":")[0] for f in failed.flags] == ["at chance", "loss above untrained"] and failed.notes == []


def test_a_run_forced_to_collapse_is_flagged_and_a_healthy_one_is_not(capsys, tmp_path):
    argv = ("--algorithm", "fedavg", "--rounds", "4", "--out", tmp_path, "--json", "--no-figure")
    code, out, err = cli(capsys, "run", "--lr", "50", *argv)  # the scenario's is 0.05
    assert code == 0  # flagged, not stopped: the run finishes and is written
    run = json.loads(out)["runs"][0]
    assert run["status"] == "finished"
    assert [f.split(":")[0] for f in run["training_flags"]] == ["at chance", "loss above untrained"]
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
