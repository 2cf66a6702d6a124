"""Every run's drops by each reason and its rounds' duration (mean, median): in summary.json,
compare's tables (text, CSV, --json) and sweep's grid summary; by hand from round records, and
a tiny run on a cell with batteries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contract import RoundOutcome
from contract.plan import DROP_REASONS
from netsim import RoundRecord
from scenarios.cli.main import main
from scenarios.execution.compare import label_row, numeric_rows, table_rows
from scenarios.execution.runner import drop_fields, duration_fields
from scenarios.records.result_folder import RunCurve
from scenarios.reports.tables import DROP_COLUMNS, ROUND_COLUMNS, run_columns, run_row


def record(server_round: int, start: float, end: float, dropped: dict[int, str]) -> RoundRecord:
    outcome = RoundOutcome((), (), (), dropped)
    return RoundRecord(server_round, start, end, 0.0, 0.0, 0, (), None, outcome=outcome)


def test_drops_by_every_reason_and_round_durations_by_hand():
    """Rounds 1-3 last 2, 1 and 6 (the set-up round's 4 left out): mean 3, median 2; every
    reason has its column, 0 where nothing dropped for it."""
    records = [record(0, 0.0, 4.0, {}), record(1, 4.0, 6.0, {0: "battery", 1: "unavailable"}),
               record(2, 6.0, 7.0, {0: "battery", 2: "downlink-outage"}), record(3, 7.0, 13.0, {1: "out-of-coverage"})]
    assert duration_fields(records) == {"round_duration_mean": 3.0, "round_duration_median": 2.0}
    assert drop_fields(records) == {"dropped_downlink_outage": 1, "dropped_uplink_outage": 0, "dropped_deadline": 0,
                                    "dropped_unavailable": 1, "dropped_battery": 2, "dropped_out_of_coverage": 1,
                                    "dropped_stale": 0}
    assert tuple(drop_fields(records)) == DROP_COLUMNS and len(DROP_COLUMNS) == len(DROP_REASONS)
    assert duration_fields(records[:1]) == {"round_duration_mean": None, "round_duration_median": None}


def curve(seed: int, battery: int, duration: float) -> RunCurve:
    numbers = {**{name: 0 for name in DROP_COLUMNS}, "dropped_battery": battery,
               "round_duration_mean": duration, "round_duration_median": duration - 1}
    return RunCurve(label="fedavg", rounds=[0, 1], time=[0.0, 1.0], mean_accuracy=[0.1, 0.5], worst_accuracy=[0.1, 0.4],
                    downlink_bits=[0.0, 1.0], uplink_bits=[0.0, 1.0],
                    summary={"final_mean_accuracy": 0.5, "final_worst_accuracy": 0.4, "streams": 1, "downlink_bits": 1.0,
                             "uplink_bits": 1.0, "seed": seed, **numbers},
                    config={"num_devices": 4}, time_unit="T_dl")


def test_compare_rows_average_them_over_seeds():
    row = label_row("fedavg", [curve(0, 2, 3.0), curve(1, 4, 5.0)], None)
    assert row.rounds["dropped_battery"] == (3.0, pytest.approx(2**0.5))
    assert row.rounds["round_duration_mean"][0] == 4.0 and row.rounds["round_duration_median"][0] == 3.0
    header, body = numeric_rows([row])
    cells = dict(zip(header, body[0]))
    assert all(name in cells and f"{name}_std" in cells for name in ROUND_COLUMNS)  # every reason, 0 included
    assert float(cells["dropped_battery"]) == 3.0 and float(cells["dropped_unavailable"]) == 0.0
    text_header, _ = table_rows([row])
    assert "dropped: battery" in text_header and "round duration: median" in text_header
    assert "dropped: unavailable" not in text_header  # the text shows a reason only where some row dropped for it


def test_run_tables_have_the_columns():
    summary = {**curve(0, 2, 3.0).summary, "scenario": "s", "algorithm": "fedavg", "label": "fedavg", "system": "x",
               "rounds": 1}
    columns = run_columns([summary])
    assert set(ROUND_COLUMNS) <= set(columns) and len(columns) == len(set(columns))
    assert run_row(summary)["dropped_battery"] == 2


def test_compare_on_a_cell_with_batteries_counts_its_flat_devices(capsys, tmp_path):
    assert main(["compare", "--system", "uma-3.5ghz", "--radio", "battery_j=2", "--algorithm", "fedavg", "--seeds", "1",
                 "--rounds", "3", "--out", str(tmp_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    summary = json.loads(next(p for p in Path(tmp_path).iterdir() if p.is_dir()).joinpath("summary.json").read_text())
    assert summary["dropped_battery"] == summary["dropped"]["battery"] > 0
    rounds = data["rows"][0]["rounds"]
    assert rounds["dropped_battery"][0] == summary["dropped_battery"]
    assert rounds["round_duration_mean"][0] == pytest.approx(summary["round_duration_mean"])
    assert set(rounds) == set(ROUND_COLUMNS)
