"""Numbers over seeds: the sample standard deviation, time (bits, energy) to target with the
seeds that never reach it censored at their run's end, and compare's rows by hand; on a
physical cell over two seeds, compare's energy, energy-to-target, never-scheduled and Jain
columns."""

import json
from pathlib import Path

import numpy as np
import pytest

from scenarios.cli.main import main
from scenarios.execution.compare import label_row, numeric_rows, summarize, table_rows
from scenarios.reports.over_seeds import ToTarget, mean_std, target_cell, to_target
from scenarios.records.result_folder import RunCurve


def test_mean_and_sample_std():
    assert mean_std([1.0, 2.0, 6.0]) == (3.0, pytest.approx(np.sqrt(7.0)))  # ((4 + 1 + 9) / 2) ** 0.5
    assert mean_std([0.5]) == (0.5, None)  # one seed: no spread
    assert mean_std([None, float("nan")]) == (None, None)


def test_censored_seeds_count_at_their_runs_end():
    value = to_target([2.0, None, 4.0], [9.0, 10.0, 8.0])
    assert value == ToTarget(pytest.approx(16 / 3), pytest.approx(np.std([2, 10, 4], ddof=1)), 2, 3)
    assert value.censored == 1 and target_cell(value, ".2f") == ">= 5.33 (±4.16)"
    assert target_cell(to_target([2.0, 4.0], [9.0, 8.0]), ".1f") == "3.0 (±1.4)"


def curve(seed: int, accuracy: list[float], energy: list[float] | None, **summary) -> RunCurve:
    return RunCurve(
        label="fedavg", rounds=[0, 1, 2, 3], time=[0.0, 1.0, 2.5, 4.0], mean_accuracy=accuracy, worst_accuracy=accuracy,
        downlink_bits=[0.0, 10.0, 20.0, 30.0], uplink_bits=[0.0, 5.0, 10.0, 15.0],
        summary={"final_mean_accuracy": accuracy[-1], "final_worst_accuracy": accuracy[-1], "streams": 1,
                 "downlink_bits": 30.0, "uplink_bits": 15.0, "simulated_time": 4.0, "seed": seed, **summary},
        config={"num_devices": 4}, time_unit="s" if energy else "T_dl", energy_j=energy)


def test_compare_row_by_hand():
    cell = dict(energy_j=8.0, never_scheduled=1)
    runs = [curve(0, [0.1, 0.6, 0.7, 0.8], [0.0, 2.0, 5.0, 8.0], jain_fairness_scheduled=0.5, **cell),
            curve(1, [0.1, 0.2, 0.3, 0.4], [0.0, 2.0, 5.0, 8.0], jain_fairness_scheduled=0.7, **cell),  # never reaches 0.5
            curve(2, [0.1, 0.2, 0.5, 0.9], [0.0, 2.0, 5.0, 8.0], jain_fairness_scheduled=0.6, jain_fairness_arrived=0.9, **cell)]
    row = label_row("fedavg", runs, 0.5)
    assert row.mean_accuracy == (pytest.approx(0.7), pytest.approx(np.std([0.8, 0.4, 0.9], ddof=1)))
    # reached at t = 1.0 and 2.5; seed 1 counted at its end, 4.0
    assert row.time_to_target == ToTarget(pytest.approx(7.5 / 3), pytest.approx(np.std([1.0, 4.0, 2.5], ddof=1)), 2, 3)
    assert row.bits_to_target.mean == pytest.approx((15 + 45 + 30) / 3)
    assert row.energy_to_target_j.mean == pytest.approx((2 + 8 + 5) / 3) and row.energy_j == (8.0, 0.0)
    assert row.never_scheduled == (1.0, 0.0) and row.reached == 2
    # every Jain field the summaries hold, by name; a field one seed lacks is averaged over those that have it
    assert row.jain == {"jain_fairness_arrived": (0.9, None), "jain_fairness_scheduled": (pytest.approx(0.6), pytest.approx(0.1))}
    header, body = table_rows([row])
    cells = dict(zip(header, body[0]))
    assert cells["time to target (s)"] == ">= 2.500 (±1.500)" and cells["reached"] == "2/3"
    assert cells["energy (J): total / per device"] == "8 (±0) / 2"
    assert cells["energy to target (J): total / per device"] == ">= 5 (±3) / 1.25"
    assert cells["Jain's index, scheduled rounds"] == "0.600 (±0.100)" and cells["Jain's index, arrived uploads"] == "0.900"
    numbers = dict(zip(*(lambda h, b: (h, b[0]))(*numeric_rows([row]))))
    assert numbers["censored"] == 1 and numbers["energy_to_target_per_device_j"] == repr(1.25)


def test_a_jain_index_null_in_some_seeds_is_left_out_of_the_mean_and_counted():
    runs = [curve(0, [0.1, 0.2, 0.3, 0.4], None, jain_fairness_scheduled=0.5, jain_fairness_arrived=None),
            curve(1, [0.1, 0.2, 0.3, 0.4], None, jain_fairness_scheduled=None, jain_fairness_arrived=None),  # nobody scheduled
            curve(2, [0.1, 0.2, 0.3, 0.4], None, jain_fairness_scheduled=0.7, jain_fairness_arrived=None)]
    row = label_row("fedavg", runs, 0.5)
    assert row.jain == {"jain_fairness_arrived": (None, None), "jain_fairness_scheduled": (pytest.approx(0.6), pytest.approx(np.sqrt(0.02)))}
    assert row.jain_undefined == {"jain_fairness_arrived": 3, "jain_fairness_scheduled": 1}
    cells = dict(zip(*(lambda h, b: (h, b[0]))(*table_rows([row]))))
    assert cells["Jain's index, scheduled rounds"] == "0.600 (±0.141) (undefined in 1 seed: all counts 0)"
    assert cells["Jain's index, arrived uploads"] == "- (undefined in 3 seeds: all counts 0)"
    numbers = dict(zip(*(lambda h, b: (h, b[0]))(*numeric_rows([row]))))
    assert (numbers["jain_fairness_scheduled"], numbers["jain_fairness_scheduled_undefined"]) == (repr(0.6), 1)
    assert (numbers["jain_fairness_arrived"], numbers["jain_fairness_arrived_std"], numbers["jain_fairness_arrived_undefined"]) == ("", "", 3)


def test_rows_without_wireless_numbers_have_no_wireless_columns():
    rows, target = summarize({"fedavg": [curve(0, [0.1, 0.6, 0.7, 0.8], None)]}, None)
    assert target == pytest.approx(0.72)  # 90% of the best mean final accuracy
    header, _ = table_rows(rows)
    assert "time to target / T_dl" in header and not any("energy" in h or "Jain" in h for h in header)


def test_compare_on_a_cell_over_two_seeds_has_the_wireless_columns(capsys, tmp_path):
    code = main(["compare", "--system", "uma-3.5ghz", "--algorithm", "fedavg", "--seeds", "2", "--rounds", "2",
                 "--scheduler", "proportional-fair", "--participation", "0.5", "--out", str(tmp_path), "--jobs", "2",
                 "--quiet"])
    text = capsys.readouterr().out
    assert code == 0
    for column in ("time to target (s)", "energy (J): total / per device", "energy to target (J): total / per device",
                   "never scheduled", "Jain's index, scheduled rounds", "Jain's index, arrived uploads", "sample std over seeds",
                   "censored", "never heard", "dropped: uplink outage", "dropped: downlink outage", "dropped: deadline",
                   "energy (J): uplink", "energy (J): downlink", "energy (J): compute"):
        assert column in text
    table = next(Path(tmp_path).glob("compare_*seeds_??????????.csv")).read_text().splitlines()
    header = table[0].split(",")
    assert {"energy_j", "energy_to_target_j", "energy_per_device_j", "jain_fairness_scheduled", "jain_fairness_arrived",
            "never_scheduled", "censored"} <= set(header)
    runs = [json.loads((p / "summary.json").read_text()) for p in Path(tmp_path).iterdir() if p.is_dir()]
    row = dict(zip(header, table[1].split(",")))
    assert float(row["energy_j"]) == pytest.approx(np.mean([r["energy_j"] for r in runs]))
    assert float(row["energy_per_device_j"]) == pytest.approx(float(row["energy_j"]) / 20)
    for name in ("jain_fairness_scheduled", "jain_fairness_arrived", "never_heard", "dropped_uplink_outage",
                 "dropped_downlink_outage", "dropped_deadline", "transmit_energy_j", "receive_energy_j", "compute_energy_j"):
        assert float(row[name]) == pytest.approx(np.mean([r[name] for r in runs]))
    per_run = next(Path(tmp_path).glob("compare_*seeds_??????????_runs.csv")).read_text().splitlines()[0].split(",")
    assert {"never_heard", "dropped_uplink_outage", "dropped_downlink_outage", "dropped_deadline", "transmit_energy_j",
            "receive_energy_j", "compute_energy_j"} <= set(per_run)


def test_streams_over_seeds_reports_the_mean_curve_and_each_seeds_choice(capsys):
    assert main(["streams", "--seeds", "2", "--lambda", "0", "0.1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    one = {}
    for seed in (0, 1):
        assert main(["streams", "--seed", str(seed), "--lambda", "0", "0.1", "--json"]) == 0
        one[seed] = json.loads(capsys.readouterr().out)
    assert data["seeds"] == [0, 1] and data["spread"] == "sample std over seeds"
    for k, mean in data["silhouette"].items():
        pair = [one[seed]["silhouette"][k] for seed in (0, 1)]
        assert mean == pytest.approx(np.mean(pair)) and data["silhouette_std"][k] == pytest.approx(np.std(pair, ddof=1))
    assert data["chosen_per_seed"] == {lam: {str(seed): one[seed]["chosen"][lam] for seed in (0, 1)} for lam in ("0.0", "0.1")}
