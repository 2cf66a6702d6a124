"""Runs on a physical cell: energy per device in rounds.csv, summary.json and run --json equal
the sums over the event trace; outages recorded with their reasons; re-timing on a cell."""

import csv
import json

import numpy as np
import pytest

from scenarios.cli.main import main
from tests.shannon_link import SHANNON_SHARED_ARGS


def run_json(capsys, *argv):
    code = main(["run", *argv, "--json", "--no-figure"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def read_csv(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def test_energy_totals_equal_the_sums_over_the_trace(capsys, tmp_path):
    data = run_json(capsys, "--system", "uma-3.5ghz", "--algorithm", "fedavg", "user-centric", "--streams", "4",
                    "--rounds", "3", "--radio", "receive_power_w=0.1", "--radio", "uplink_access=fdma",
                    *SHANNON_SHARED_ARGS, "--out", str(tmp_path))  # nr-harq serves TDMA and PF grants
    for run in data["runs"]:
        folder = run["result_dir"]
        trace = read_csv(f"{folder}/trace.csv")
        rounds = read_csv(f"{folder}/rounds.csv")
        summary = json.load(open(f"{folder}/summary.json"))
        devices = len(run["device_energy_j"])
        from_trace = np.zeros(devices)
        by_kind = {}
        for e in trace:
            if e["kind"] != "downlink":
                from_trace[int(e["entity"])] += float(e["energy_j"])
                by_kind[e["kind"]] = by_kind.get(e["kind"], 0.0) + float(e["energy_j"])
        np.testing.assert_allclose(run["device_energy_j"], from_trace, rtol=1e-12)
        np.testing.assert_allclose(summary["device_energy_j"], from_trace, rtol=1e-12)
        from_rounds = np.array([[float(r[f"energy_j_{d}"]) for d in range(devices)] for r in rounds]).sum(axis=0)
        np.testing.assert_allclose(from_rounds, from_trace, rtol=1e-9)
        assert float(rounds[-1]["energy_j"]) == pytest.approx(from_trace.sum())
        assert run["energy_j"] == pytest.approx(from_trace.sum())
        assert summary["receive_energy_j"] == pytest.approx(by_kind["receive"]) and by_kind["receive"] > 0
        assert summary["compute_energy_j"] == pytest.approx(by_kind["compute"]) and by_kind["compute"] > 0
        assert summary["transmit_energy_j"] == pytest.approx(by_kind["uplink"] + by_kind.get("dropped", 0.0))
        assert run["time_unit"] == "s"
        config = json.load(open(f"{folder}/config.json"))
        assert config["system"]["kind"] == "physical" and config["system"]["uplink_access"] == "fdma"
        # who was dropped and why, round by round, agrees with the counts
        reasons = [e["reason"] for e in trace if e["kind"] == "dropped"]
        assert summary["dropped"] == {r: reasons.count(r) for r in set(reasons)}
        for reason in ("downlink-outage", "uplink-outage", "deadline"):
            assert summary[f"dropped_{reason.replace('-', '_')}"] == reasons.count(reason)
        arrivals = np.zeros(devices)
        heard = np.zeros(devices, dtype=bool)
        for e in trace:
            if e["kind"] == "uplink":
                heard[int(e["entity"])] = True
                arrivals[int(e["entity"])] += int(e["round"]) > 0
        assert summary["never_heard_devices"] == np.flatnonzero(~heard).tolist()
        assert summary["never_heard"] == int((~heard).sum())
        assert summary["jain_fairness_arrived"] == pytest.approx(arrivals.sum() ** 2 / (devices * (arrivals ** 2).sum()))
        assert any("never heard" in note for note in summary["training_notes"]) == bool(summary["never_heard"])
        for r in rounds[1:]:
            assert int(r["arrived"]) <= int(r["computed"]) <= int(r["received"]) <= int(r["participants"])


def test_the_same_seed_gives_the_same_physical_run(capsys, tmp_path):
    argv = ["--system", "umi-3.5ghz", "--algorithm", "fedavg", "--rounds", "2", "--force"]
    first = run_json(capsys, *argv, "--out", str(tmp_path / "a"))["runs"][0]
    second = run_json(capsys, *argv, "--out", str(tmp_path / "b"))["runs"][0]
    for name in ("rounds.csv", "trace.csv"):
        assert open(f"{first['result_dir']}/{name}").read() == open(f"{second['result_dir']}/{name}").read()


def test_retiming_on_the_cell_it_ran_on_reproduces_its_times(capsys, tmp_path):
    """Without outages the learning does not depend on the channel, so re-timing the recorded
    plans on the same cell with the run's network seed gives back its clock and its energy."""
    from scenarios.records.result_folder import read_run
    from scenarios.reports.retime import retimed_curve
    from scenarios.definitions.cells import get_cell_system
    from scenarios.definitions.seeds import seed_streams

    data = run_json(capsys, "--system", "uma-3.5ghz", "--radio", "min_bps_per_hz=none", "--algorithm", "user-centric",
                    "--streams", "4", "--rounds", "3", "--seed", "2", "--out", str(tmp_path))
    folder = data["runs"][0]["result_dir"]
    network_seq = seed_streams(2)[2]
    again = retimed_curve(folder, get_cell_system("uma-3.5ghz"), np.random.default_rng(network_seq), network_seq)
    recorded = read_run(folder)
    np.testing.assert_allclose(again.time, recorded.time, rtol=1e-12)
    np.testing.assert_allclose(again.energy_j, recorded.energy_j, rtol=1e-12)
    figure = tmp_path / "cells.png"
    assert main(["plot", folder, "--systems", "wireless-slow-ul", "umi-3.5ghz", "--out", str(figure)]) == 0
    assert figure.read_bytes().startswith(b"\x89PNG")


def test_penalty_report(capsys, tmp_path):
    data = run_json(capsys, "--system", "uma-3.5ghz", "--radio", "fading=rayleigh", "--radio", "subbands=1",
                    "--radio", "max_bps_per_hz=none", "--algorithm", "fedavg", "--rounds", "2", "--out", str(tmp_path))
    folder = data["runs"][0]["result_dir"]
    assert main(["penalty", folder, "--json"]) == 0
    report = json.loads(capsys.readouterr()[0])["runs"][0]
    assert report["models_per_round"] == 1.0 and report["streams"] == 1
    # one broadcast to 20 devices runs at the weakest of 20 flat Rayleigh fades: slower than a typical
    # unicast (without the rate cap, which at 49 dBm would hold most links, the weakest included)
    assert report["penalty"] > 1.0
    assert report["normalized_downlink_s_per_round"] == pytest.approx(report["t_dl_s"])
    trace = [e for e in read_csv(f"{folder}/trace.csv") if e["kind"] == "downlink" and e["round"] != "0"]
    assert report["downlink_s_per_round"] == pytest.approx(sum(float(e["end"]) - float(e["start"]) for e in trace) / 2)
    normalized = run_json(capsys, "--algorithm", "fedavg", "--rounds", "1", "--out", str(tmp_path / "n"))["runs"][0]
    assert main(["penalty", normalized["result_dir"]]) == 2
    _, err = capsys.readouterr()
    assert "did not run on a physical cell" in err and len(err.strip().splitlines()) == 1


def test_an_infinite_t_dl_leaves_the_penalty_undefined(capsys, tmp_path):
    """umi-3.5ghz seed 3 places device 2 where it is in downlink outage on every one of the base
    station's 1,000 fading samples: its unicast airtime, and T_dl (the mean over devices), are
    infinite. The normalized downlink and the penalty are then undefined ("-" with the reason,
    null in --json), not inf and 0 (measured / inf) as they were."""
    data = run_json(capsys, "--scenario", "digits-rotation", "--system", "umi-3.5ghz", "--seed", "3",
                    "--algorithm", "fedavg", "--rounds", "1", "--out", str(tmp_path))
    folder = data["runs"][0]["result_dir"]
    assert main(["penalty", folder, "--json"]) == 0
    report = json.loads(capsys.readouterr()[0])["runs"][0]
    assert report["downlink_s_per_round"] > 0 and report["broadcast_s"] > 0  # the broadcast leaves device 2 out
    assert report["t_dl_s"] is None and report["normalized_downlink_s_per_round"] is None and report["penalty"] is None
    assert report["undefined_why"] == ("T_dl undefined: device 2 in downlink outage on every one of the base station's "
                                       "1,000 fading samples (an infinite unicast airtime)")
    assert main(["penalty", folder]) == 0
    lines = capsys.readouterr()[0].splitlines()
    assert lines[2].split()[6:8] == ["-", "-"]  # normalized ms/round, penalty
    assert lines[-1].startswith("umi-3.5ghz seed 3: T_dl undefined: device 2 in downlink outage")


def test_penalty_rows_are_told_apart_without_json():
    """Rows name each run by label, system and seed (and formation where a run has one); where
    these leave two rows alike (two runs of one seed on one cell: a moving and a static one), its
    folder too (the table showed "fedavg" twice, told apart only with --json)."""
    from scenarios.cli.penalty import run_names

    row = {"label": "fedavg", "system": "umi-3.5ghz", "seed": 0, "formation": None, "result_dir": "out/a_static"}
    header, cells = run_names([row, {**row, "seed": 1, "result_dir": "out/b"}])
    assert header == ["run", "system", "seed"] and cells == [["fedavg", "umi-3.5ghz", "0"], ["fedavg", "umi-3.5ghz", "1"]]
    header, cells = run_names([row, {**row, "result_dir": "out/a_moving"}, {**row, "label": "user-centric k=2", "formation": "kmeans"}])
    assert header == ["run", "system", "seed", "formation", "folder"]
    assert cells == [["fedavg", "umi-3.5ghz", "0", "-", "a_static"], ["fedavg", "umi-3.5ghz", "0", "-", "a_moving"],
                     ["user-centric k=2", "umi-3.5ghz", "0", "kmeans", "a_static"]]
