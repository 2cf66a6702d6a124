"""benchmarks/async_study's options: checked before anything trains (one line on stderr, exit 2,
nothing written); its table cell, mean +- sample std [min-max] of each seed's accuracy within
the budget, by hand."""

import pytest

from benchmarks.async_study import budget_spread, main
from scenarios.records.result_folder import RunCurve


@pytest.mark.parametrize("argv, says", [(["--seeds", "0"], "--seeds is the number of seeds, at least 1, not 0"),
                                        (["--seeds", "2", "--seeds", "3"], "--seeds")])
def test_a_bad_option_is_one_line_exit_2_nothing_written(argv, says, tmp_path, capsys):
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--out", str(out), "--figures", str(tmp_path / "img")])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and len(err.strip().splitlines()) == 1 and says in err and "Traceback" not in err
    assert not out.exists() and not (tmp_path / "img").exists()


def curve(accuracy: list[float], end_time: float, status: str = "finished") -> RunCurve:
    return RunCurve(label="fedbuff", rounds=[0, 1, 2], time=[0.0, 4.0, 9.0], mean_accuracy=accuracy, worst_accuracy=accuracy,
                    downlink_bits=[0.0] * 3, uplink_bits=[0.0] * 3, config={}, time_unit="s", energy_j=None,
                    summary={"status": status, "simulated_time": end_time, "final_mean_accuracy": accuracy[-1]})


def test_each_seeds_accuracy_within_the_budget_spread_over_the_seeds():
    runs = [curve([0.1, 0.5, 0.7], 12.0), curve([0.1, 0.3, 0.6], 12.0), curve([0.1, 0.4, 0.5], 9.0)]  # the last ends before 10
    header, (row,) = budget_spread({"fedbuff": runs}, "time", (5.0, 10.0))
    assert header == ["algorithm", "acc % within time 5", "acc % within time 10"]
    # within 5: 50, 30, 40 (mean 40, std 10); within 10: 70, 60, 50, the third censored at its end
    assert row == ["fedbuff", "40.0 +- 10.0 [30.0-50.0]", ">= 60.0 +- 10.0 [50.0-70.0]"]
    diverged = budget_spread({"fedbuff": runs[:2] + [curve([0.1, 0.9, 0.9], 12.0, status="diverged")]}, "time", (5.0,))[1][0]
    assert diverged == ["fedbuff", "40.0 +- 14.1 [30.0-50.0] (2 of 3 seeds)"]
