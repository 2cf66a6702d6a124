"""The Python API page's example runs as written and gives a DataFrame of the rounds."""

from pathlib import Path

import pytest

from doc_blocks import runnable_blocks

API_PAGE = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def readme_example() -> str:
    blocks = runnable_blocks(API_PAGE)
    assert blocks, "docs/api.md has no runnable example"
    return blocks[0]


def test_api_page_example_runs(tmp_path, monkeypatch, capsys):
    pytest.importorskip("pandas")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(readme_example(), str(API_PAGE), "exec"), namespace)
    rounds, result = namespace["rounds"], namespace["result"]
    assert list(rounds["round"]) == list(range(6)) and rounds["mean_accuracy"].dtype.kind == "f"
    assert result.folder.resolve().parent == tmp_path.resolve() / "results" and result.summary["status"] == "finished"
    assert result.config["training"]["epochs"] == 2 and result.config["algorithm_options"]["lam"] == 0.05
    assert rounds["time"].iloc[-1] == result.summary["simulated_time"]
    assert "mean_accuracy" in capsys.readouterr().out


def test_api_errors_are_usage_errors(tmp_path):
    from scenarios.api import RunSpec, UsageError, load, run

    with pytest.raises(UsageError, match="fedprox option mu must be a finite number >= 0, got nan"):
        run(RunSpec("digits-rotation", "fedprox", rounds=1, options={"mu": float("nan")}), out=tmp_path / "out")
    assert not (tmp_path / "out").exists()
    with pytest.raises(UsageError, match="not a complete result folder"):
        load(tmp_path)


def test_library_messages_go_to_the_fl_cosim_logger_not_stderr(tmp_path, capsys, caplog):
    from scenarios.api import RunSpec, run

    spec = RunSpec("digits-rotation", "local", system="wired", rounds=1)
    first = run(spec, out=tmp_path)
    with open(first.folder / "rounds.csv", "a") as handle:
        handle.write("\n")  # damaged: it must be run again, and the library says so
    with caplog.at_level("WARNING", logger="fl_cosim"):
        again = run(spec, out=tmp_path)
    assert again.folder == first.folder
    assert [r.name for r in caplog.records] == ["fl_cosim"]
    assert "running" in caplog.records[0].getMessage() and "again: rounds.csv does not match" in caplog.records[0].getMessage()
    assert capsys.readouterr().err == ""  # an API caller who configures no logging sees nothing


def test_compare_sweep_and_plot_from_python(tmp_path):
    pandas = pytest.importorskip("pandas")
    from scenarios.api import RunSpec, compare, plot, sweep

    specs = {label: [RunSpec("digits-rotation", label, system="wired", rounds=2, seed=seed) for seed in (0, 1)]
             for label in ("fedavg", "local")}
    result = compare(specs, out=tmp_path / "cmp")
    table = result.table()
    assert list(table["algorithm"]) == ["fedavg", "local"] and list(table["seeds"]) == [2, 2]
    finals = [pandas.read_csv(folder / "rounds.csv")["mean_accuracy"].iloc[-1] for folder in result.folders["fedavg"]]
    assert table["mean_accuracy"][0] == pytest.approx(sum(finals) / 2)
    config = tmp_path / "grid.toml"
    config.write_text('seeds = 2\n[settings]\nrounds = 2\nsystem = "wired"\n[[algorithm]]\nname = "fedavg"\n')
    done = sweep(config, out=tmp_path / "cmp")
    assert (done["runs"], done["ran"]) == (2, 0)  # the same runs as compare's: reused
    summary = pandas.read_csv(done["tables"][-2])
    assert len(summary) == 1 and summary["mean_accuracy"][0] == pytest.approx(table["mean_accuracy"][0])
    # what the file's [summary] takes: a fraction of the best, a budget (both seeds end before 1000 T_dl: censored)
    summary = pandas.read_csv(sweep(config, out=tmp_path / "cmp", target="0.5*best", budget="time=1000")["tables"][-2])
    assert summary["target"][0] == round(0.5 * table["mean_accuracy"][0], 4)
    assert summary["accuracy_within_time_1000"][0] == pytest.approx(table["mean_accuracy"][0])
    assert summary["censored_within_time_1000"][0] == 2
    figure = plot(result.folders["fedavg"] + result.folders["local"], tmp_path / "f.png", x=("time", "bits", "rounds"))
    assert figure.read_bytes().startswith(b"\x89PNG")


def test_compare_and_sweep_check_their_counts(tmp_path):
    from scenarios.api import RunSpec, UsageError, compare, sweep

    specs = {"fedavg": [RunSpec("digits-rotation", "fedavg", rounds=1)]}
    with pytest.raises(UsageError, match="jobs must be an integer in 1..256, got 0"):
        compare(specs, out=tmp_path / "out", jobs=0)
    with pytest.raises(UsageError, match=r"target must be a finite number in \(0, 1\]"):
        sweep(tmp_path / "none.toml", target=2.0)
    with pytest.raises(UsageError, match=r"target must be a mean accuracy in \(0, 1\] or a fraction of each group's best"):
        sweep(tmp_path / "none.toml", target="best")
    with pytest.raises(UsageError, match=r"budget must be AXIS=B1,B2,... with AXIS one of time"):
        sweep(tmp_path / "none.toml", budget="seconds=1")
    with pytest.raises(UsageError, match="a non-empty list of RunSpec"):
        compare({"fedavg": []})
    assert not (tmp_path / "out").exists()
