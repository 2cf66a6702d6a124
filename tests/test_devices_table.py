"""devices.csv, the long per-device table, says what rounds.csv says, one row per round and device."""

import csv

from scenarios.cli.main import main


def read(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def test_devices_table_matches_rounds_csv(tmp_path):
    assert main(["run", "--algorithm", "fedavg", "--system", "wireless-slow-ul", "--participation", "0.5",
                 "--deadline", "60", "--rounds", "3", "--out", str(tmp_path), "--no-figure", "--quiet"]) == 0
    (folder,) = [path for path in tmp_path.iterdir() if path.is_dir()]
    rounds, devices = read(folder / "rounds.csv"), read(folder / "devices.csv")
    num_devices = sum(1 for key in rounds[0] if key.startswith("accuracy_"))
    assert len(devices) == len(rounds) * num_devices
    for row in rounds:
        mine = [d for d in devices if d["round"] == row["round"]]
        assert [int(d["device"]) for d in mine] == list(range(num_devices))
        assert [d["accuracy"] for d in mine] == [row[f"accuracy_{i}"] for i in range(num_devices)]
        for column, total in (("scheduled", "participants"), ("received", "received"), ("computed", "computed"),
                              ("arrived", "arrived")):
            assert sum(int(d[column]) for d in mine) == int(row[total]), (row["round"], column)
        assert all(d["energy_j"] == "" for d in mine)  # no energy on a normalized system
