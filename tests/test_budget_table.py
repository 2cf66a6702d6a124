"""Accuracy within a budget (``scenarios.reports.budgets``): the last evaluation within it, and
a run that ended before spending it marked censored."""

import pytest

from scenarios.errors import UsageError
from scenarios.records.result_folder import RunCurve
from scenarios.reports.budgets import budget_numbers, budget_table, parse_budgets, within


def curve(times, accuracies, end):
    n = len(times)
    return RunCurve("fedavg", list(range(n)), times, accuracies, accuracies, [0.0] * n, [0.0] * n,
                    {"simulated_time": end, "status": "finished", "downlink_bits": 0.0, "uplink_bits": 0.0}, {})


def test_the_accuracy_within_a_budget_is_the_last_evaluation_at_or_below_it():
    run = curve([0.0, 4.0, 9.0, 12.0], [0.1, 0.4, 0.6, 0.7], end=12.0)
    assert within(run, "time", 9.0).accuracy == 0.6 and not within(run, "time", 9.0).censored
    assert within(run, "time", 8.9).accuracy == 0.4
    assert within(run, "time", 20.0).accuracy == 0.7 and within(run, "time", 20.0).censored  # it ended at 12


def test_the_table_marks_a_budget_some_seed_did_not_spend():
    curves = {"fedavg": [curve([0.0, 5.0, 10.0], [0.2, 0.5, 0.7], 10.0), curve([0.0, 5.0, 20.0], [0.2, 0.3, 0.9], 20.0)]}
    header, rows = budget_table(curves, "time", (5.0, 15.0))
    assert header == ["algorithm", "acc % within time 5", "acc % within time 15"]
    assert rows[0][1] == "40.0 (±14.1)" and rows[0][2].startswith(">= 50.0")
    assert [r["censored"] for r in budget_numbers(curves, "time", (5.0, 15.0))] == [0, 1]


@pytest.mark.parametrize("text", ["rounds=3", "time=", "time=-1", "time=nan", "time=a,b"])
def test_a_bad_budget_is_refused(text):
    with pytest.raises(UsageError):
        parse_budgets(text)


def test_a_budget_reads_sorted_and_once():
    assert parse_budgets("time=20,5,10,5") == ("time", (5.0, 10.0, 20.0))


# --- issue 57: a budget's result is what the budget bought; a censored seed counts at its horizon ---
def test_a_run_past_a_bits_budget_reports_its_last_evaluation_within_it():
    """Hand-made rounds of 3 bits each under a budget of 7: the run stops after round 3 (9 bits,
    the first to reach 7), so its result is round 2's evaluation (6 bits) and round 3 is named."""
    from types import SimpleNamespace

    from netsim.clock.budget import Budget
    from scenarios.execution.runner import within_budget

    def record(r, accuracy):
        return SimpleNamespace(server_round=r, downlink_bits=0.0, uplink_bits=0.0 if r == 0 else 3.0, energy_j=None,
                               evaluation=SimpleNamespace(mean_accuracy=accuracy, worst_accuracy=accuracy / 2))

    records = [record(0, 0.1), record(1, 0.2), record(2, 0.3), record(3, 0.4)]
    budget = Budget({"uplink_bits": 7.0})
    assert [budget.spend(r) for r in records] == [False, False, False, True]
    found = within_budget(records, budget)
    assert (found["final_mean_accuracy"], found["final_worst_accuracy"], found["final_round"]) == (0.3, 0.15, 2)
    assert found["budget_overshoot"] == {"round": 3, "budget": "uplink_bits", "limit": 7.0, "spent": 9.0,
                                         "mean_accuracy": 0.4, "worst_accuracy": 0.2}
    exact = Budget({"uplink_bits": 9.0})
    assert [exact.spend(r) for r in records][-1] and within_budget(records, exact) == {}  # spent exactly: no overshoot
    records[2] = SimpleNamespace(**{**vars(records[2]), "evaluation": None})  # an unevaluated round within it
    assert within_budget(records, budget)["final_round"] == 1


def test_a_run_stopped_by_an_uplink_budget_summarizes_within_it(tmp_path):
    """A real run: wired FedAvg uploads 3,078,400 bits a round, so --until uplink_bits=1e7 stops
    after round 4 (12,313,600 bits); its result is round 3's evaluation (9,235,200 bits)."""
    import csv
    import json

    from scenarios.cli.main import main

    assert main(["run", "--algorithm", "fedavg", "--system", "wired", "--rounds", "6", "--until", "uplink_bits=1e7",
                 "--out", str(tmp_path), "--no-figure", "--quiet", "--json"]) == 0
    folder = next(tmp_path.iterdir())
    summary = json.loads((folder / "summary.json").read_text())
    rows = {int(r["round"]): r for r in csv.DictReader((folder / "rounds.csv").open())}
    assert summary["rounds"] == 4 and summary["uplink_bits"] == 12313600.0 and float(rows[3]["uplink_bits"]) == 9235200.0
    assert summary["final_round"] == 3 and summary["final_mean_accuracy"] == float(rows[3]["mean_accuracy"])
    assert summary["final_worst_accuracy"] == float(rows[3]["worst_accuracy"])
    assert summary["budget_overshoot"]["round"] == 4 and summary["budget_overshoot"]["spent"] == 12313600.0
    assert summary["budget_overshoot"]["mean_accuracy"] == float(rows[4]["mean_accuracy"])


def test_a_censored_seed_counts_at_its_horizon_not_its_last_evaluation():
    """Evaluated at 0, 4 and 9 T_dl, the run's horizon at 10 (a time budget, or an evaluation
    period): a seed that never reaches the target counts 10, not 9."""
    from scenarios.execution.compare import label_row

    never = RunCurve("fedavg", [0, 1, 2], [0.0, 4.0, 9.0], [0.1, 0.2, 0.3], [0.1, 0.2, 0.3], [0.0, 1.0, 2.0], [0.0, 3.0, 6.0],
                     {"simulated_time": 10.0, "status": "finished", "downlink_bits": 2.5, "uplink_bits": 7.5,
                      "final_mean_accuracy": 0.3, "final_worst_accuracy": 0.3, "streams": 1}, {"seed": 0})
    reached = RunCurve("fedavg", [0, 1], [0.0, 6.0], [0.1, 0.9], [0.1, 0.9], [0.0, 1.0], [0.0, 3.0],
                       {"simulated_time": 6.0, "status": "finished", "downlink_bits": 1.0, "uplink_bits": 3.0,
                        "final_mean_accuracy": 0.9, "final_worst_accuracy": 0.9, "streams": 1}, {"seed": 1})
    row = label_row("fedavg", [never, reached], 0.8)
    assert (row.time_to_target.mean, row.time_to_target.reached, row.time_to_target.seeds) == (8.0, 1, 2)  # (10 + 6) / 2
    assert row.bits_to_target.mean == (10.0 + 4.0) / 2  # the bits spent by its end, not by its last evaluation (8)
