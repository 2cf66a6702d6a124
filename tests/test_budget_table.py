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
