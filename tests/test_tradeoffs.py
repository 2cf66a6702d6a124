"""The trade-off studies' report (``python -m scenarios.reports.tradeoffs``): the fairness it
computes from ``plans.jsonl`` and ``trace.csv`` is the summary's own, one table row per run
beside the figure, and a missing folder is one line."""

import json
from pathlib import Path

import pytest

from scenarios.execution.runner import RunSpec, run_experiment
from scenarios.records.result_folder import read_run
from scenarios.reports.tradeoffs import fairness, main


@pytest.fixture(scope="module")
def scheduled(tmp_path_factory):
    """Age-based scheduling of 3 of 6 devices with a deadline that leaves some uploads unheard."""
    out = tmp_path_factory.mktemp("scheduling")
    spec = RunSpec("digits-rotation", "fedavg", "umi-3.5ghz", rounds=3, devices=6, participation=0.5, scheduler="age-based",
                   deadline=0.06, training={"backend": "loop"})
    return out, run_experiment(spec, out)


def test_fairness_from_the_plans_and_the_trace_is_the_summarys(scheduled):
    _, summary = scheduled
    never, jain, unheard, jain_arrived = fairness(read_run(summary["result_dir"]))
    assert (never, unheard) == (summary["never_scheduled"], summary["never_arrived"]) and unheard > never
    assert (jain, jain_arrived) == (pytest.approx(summary["jain_fairness_scheduled"], rel=1e-12),
                                    pytest.approx(summary["jain_fairness_arrived"], rel=1e-12))


def test_the_scheduling_study_draws_its_figure_and_prints_a_row_per_run(scheduled, tmp_path, capsys):
    out, summary = scheduled
    assert main(["scheduling", str(out), str(tmp_path / "s.png")]) == 0
    assert (tmp_path / "s.png").read_bytes().startswith(b"\x89PNG")
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| fedavg")]
    assert len(rows) == 1 and rows[0].endswith(f"| {summary['never_arrived']} | {summary['jain_fairness_arrived']:.3f} |")


def test_nobody_scheduled_leaves_jains_index_undefined(tmp_path, capsys):
    """The study's deadline-aware run on UMa seed 3 (docs/tradeoffs.md): no device fits the 0.02 s
    deadline, nobody is scheduled, and Jain's index of the all-zero counts is null (was 1)."""
    spec = RunSpec("digits-rotation", "fedavg", "uma-3.5ghz", rounds=2, seed=3, participation=0.25, scheduler="deadline-aware",
                   deadline=0.02, training={"backend": "loop"})
    summary = run_experiment(spec, tmp_path / "runs")
    written = json.loads((Path(summary["result_dir"]) / "summary.json").read_text())
    assert (written["never_scheduled"], written["never_arrived"], written["simulated_time"]) == (20, 20, 0.0)
    assert written["jain_fairness_scheduled"] is None and written["jain_fairness_arrived"] is None
    assert fairness(read_run(summary["result_dir"])) == (20, None, 20, None)
    assert main(["scheduling", str(tmp_path / "runs"), str(tmp_path / "s.png")]) == 0
    (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| fedavg")]
    assert row.endswith("| 20 | - (nobody scheduled) | 20 | - (nothing arrived) |")


def test_a_missing_folder_is_one_line(tmp_path, capsys):
    assert main(["codecs", str(tmp_path / "none"), str(tmp_path / "c.png")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and not (tmp_path / "c.png").exists()


def test_accuracy_at_equal_time_and_time_to_target_by_hand():
    """The quickest run ends at 1: the other's first evaluation (its set-up round) comes at 2,
    so it has no accuracy by then; each reaches 0.75 at its first evaluation at or above it."""
    from scenarios.records.result_folder import RunCurve
    from scenarios.reports.tradeoffs import table

    def curve(label, times, accuracies):
        summary = {"system": "wired", "simulated_time": times[-1], "final_mean_accuracy": accuracies[-1],
                   "final_worst_accuracy": accuracies[-1], "uplink_bits": 2e6, "downlink_bits": 1e6}
        return RunCurve(label, list(range(len(times))), times, accuracies, accuracies, [0.0] * len(times), [0.0] * len(times),
                        summary, {"system": {}})

    rows = table([curve("quick", [0.0, 1.0], [0.1, 0.8]), curve("slow", [2.0, 3.0, 4.0], [0.2, 0.75, 0.9])]).splitlines()[2:]
    assert rows[0] == "| quick | wired | 0.800 | 0.800 | 0.800 at 1 | 1 | 1 T_dl | 2.00 | 1.00 | - |"
    assert rows[1] == "| slow | wired | 0.900 | 0.900 | - at 1 | 3 | 4 T_dl | 2.00 | 1.00 | - |"


def test_the_table_reads_every_time_in_the_curves_unit():
    """A system whose T_dl is 2 s of the recorded clock: a run recorded as ending at 8 ends at
    4 T_dl, as its curve's times are (2 T_dl at its second evaluation), not at 8."""
    from scenarios.records.result_folder import RunCurve
    from scenarios.reports.tradeoffs import table

    summary = {"system": "slow", "simulated_time": 8.0, "final_mean_accuracy": 0.8, "final_worst_accuracy": 0.8,
               "uplink_bits": 2e6, "downlink_bits": 1e6}
    run = RunCurve("quick", [0, 1, 2], [0.0, 2.0, 4.0], [0.1, 0.8, 0.8], [0.1, 0.8, 0.8], [0.0] * 3, [0.0] * 3, summary,
                   {"system": {}}, time_scale=2.0)
    assert run.end_time == 4.0
    assert table([run]).splitlines()[2] == "| quick | slow | 0.800 | 0.800 | 0.800 at 4 | 2 | 4 T_dl | 2.00 | 1.00 | - |"
