"""``fl-cosim export``: the TensorBoard event files hold the numbers of rounds.csv, read back with
TensorBoard's own reader; folders only, never replaced silently, damaged folders refused."""

import csv
import json

import pytest

from scenarios.cli.main import main

pytest.importorskip("tensorboard", reason="tensorboard is not installed (pip install 'fl-cosim[tracking]')")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    assert main(["run", "--algorithm", "fedavg", "--system", "wired", "--rounds", "3", "--out", str(out),
                 "--no-figure", "--quiet"]) == 0
    (folder,) = [path for path in out.iterdir() if path.is_dir()]
    return folder


def scalars(log_dir):
    events = EventAccumulator(str(log_dir))
    events.Reload()
    return {tag: [(event.step, event.value) for event in events.Scalars(tag)] for tag in events.Tags()["scalars"]}


def test_event_files_hold_the_rounds_csv_numbers(finished_run, tmp_path, capsys):
    assert main(["export", str(finished_run), "--tensorboard", str(tmp_path / "tb"), "--json"]) == 0
    (written,) = json.loads(capsys.readouterr().out)["tensorboard"]
    logged = scalars(written)
    with open(finished_run / "rounds.csv", newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row["mean_accuracy"] != ""]
    t_dl = json.loads((finished_run / "config.json").read_text())["system"]["t_dl"]
    expected = {
        "accuracy/mean": [(int(r["round"]), float(r["mean_accuracy"])) for r in rows],
        "accuracy/worst": [(int(r["round"]), float(r["worst_accuracy"])) for r in rows],
        "network/time": [(int(r["round"]), float(r["time"]) / t_dl) for r in rows],
        "network/downlink_bits": [(int(r["round"]), float(r["downlink_bits"])) for r in rows],
        "network/uplink_bits": [(int(r["round"]), float(r["uplink_bits"])) for r in rows],
    }
    assert set(logged) == set(expected)
    for tag, points in expected.items():  # event files store float32
        assert [step for step, _ in logged[tag]] == [step for step, _ in points]
        assert [value for _, value in logged[tag]] == pytest.approx([value for _, value in points], rel=1e-6)
    assert len(rows) == 4  # the set-up round and three training rounds


def test_an_export_is_not_replaced_without_force(finished_run, tmp_path, capsys):
    args = ["export", str(finished_run), "--tensorboard", str(tmp_path / "tb")]
    assert main(args) == 0
    before = sorted(path.name for path in (tmp_path / "tb" / finished_run.name).rglob("*"))
    assert main(args) == 2
    assert "exists; give another --tensorboard or --force" in capsys.readouterr().err
    assert sorted(path.name for path in (tmp_path / "tb" / finished_run.name).rglob("*")) == before
    assert main(args + ["--force"]) == 0


def test_a_damaged_folder_is_refused_and_nothing_is_written(finished_run, tmp_path, capsys):
    damaged = tmp_path / finished_run.name
    damaged.mkdir()
    for path in finished_run.iterdir():
        (damaged / path.name).write_bytes(path.read_bytes())
    with open(damaged / "rounds.csv", "a") as handle:
        handle.write("\n")
    assert main(["export", str(damaged), "--tensorboard", str(tmp_path / "tb")]) == 2
    err = capsys.readouterr().err
    assert "does not match its checksum" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "tb").exists()


def test_mlflow_runs_hold_the_same_series(finished_run, tmp_path, capsys, monkeypatch):
    mlflow = pytest.importorskip("mlflow", reason="mlflow is not installed (pip install mlflow)")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # a local file store: no server in a test
    uri = (tmp_path / "mlruns").as_uri()
    assert main(["export", str(finished_run), "--tensorboard", str(tmp_path / "tb"), "--mlflow", uri, "--json"]) == 0
    (run_id,) = json.loads(capsys.readouterr().out)["mlflow_runs"]
    client = mlflow.tracking.MlflowClient(tracking_uri=uri)
    history = client.get_metric_history(run_id, "accuracy_mean")
    logged = scalars(tmp_path / "tb" / finished_run.name)["accuracy/mean"]
    assert [(m.step, m.value) for m in history] == [(step, pytest.approx(value, rel=1e-6)) for step, value in logged]
    assert client.get_run(run_id).data.params["algorithm"] == "fedavg"


def test_accuracy_against_simulated_time_bits_and_energy_as_integer_steps(finished_run, tmp_path, capsys):
    assert main(["export", str(finished_run), "--tensorboard", str(tmp_path / "tb"), "--step", "round", "time", "bits",
                 "--json"]) == 0  # --step energy off a cell is refused (tests/test_hostile_input.py)
    (written,) = json.loads(capsys.readouterr().out)["tensorboard"]
    logged = scalars(written)
    with open(finished_run / "rounds.csv", newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row["mean_accuracy"] != ""]
    t_dl = json.loads((finished_run / "config.json").read_text())["system"]["t_dl"]
    mean = [float(r["mean_accuracy"]) for r in rows]
    expected = {
        "accuracy_vs_time_mTdl/mean": [round(1000 * float(r["time"]) / t_dl) for r in rows],  # thousandths of T_dl
        "accuracy_vs_bits/mean": [round(float(r["downlink_bits"]) + float(r["uplink_bits"])) for r in rows],
    }
    for tag, steps in expected.items():
        assert [step for step, _ in logged[tag]] == steps
        assert [value for _, value in logged[tag]] == pytest.approx(mean, rel=1e-6)
    assert "accuracy/mean" in logged and not any("energy" in tag for tag in logged)  # no energy off a cell


def test_step_time_adds_to_the_per_round_series_with_units_and_simulated_wall_times(finished_run, tmp_path, capsys):
    assert main(["export", str(finished_run), "--tensorboard", str(tmp_path / "tb"), "--step", "time", "--json"]) == 0
    (written,) = json.loads(capsys.readouterr().out)["tensorboard"]
    events = EventAccumulator(str(written))
    events.Reload()
    with open(finished_run / "rounds.csv", newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row["mean_accuracy"] != ""]
    t_dl = json.loads((finished_run / "config.json").read_text())["system"]["t_dl"]
    mean = [float(r["mean_accuracy"]) for r in rows]
    per_round, against_time = events.Scalars("accuracy/mean"), events.Scalars("accuracy_vs_time_mTdl/mean")
    assert [e.step for e in per_round] == [int(r["round"]) for r in rows]  # kept: --step adds, never replaces
    assert [e.step for e in against_time] == [round(1000 * float(r["time"]) / t_dl) for r in rows]
    for series in (per_round, against_time):
        assert [e.value for e in series] == pytest.approx(mean, rel=1e-6)
        assert [e.wall_time for e in series] == pytest.approx([float(r["time"]) / t_dl for r in rows])  # simulated time
    # the units, in the custom-scalars layout TensorBoard's Custom Scalars tab shows
    from tensorboard.plugins.custom_scalar import layout_pb2, metadata

    tensor = events.Tensors(metadata.CONFIG_SUMMARY_TAG)[0].tensor_proto
    shown = layout_pb2.Layout.FromString(tensor.string_val[0])
    titles = {category.title: [chart.title for chart in category.chart] for category in shown.category}
    assert titles["against round"][:2] == ["accuracy/mean [fraction]", "accuracy/worst [fraction]"]
    assert "network/time [T_dl]" in titles["against round"]
    assert titles["against time (thousandths of T_dl)"] == ["accuracy_vs_time_mTdl/mean [mean accuracy (fraction)]",
                                                             "accuracy_vs_time_mTdl/worst [worst accuracy (fraction)]"]
