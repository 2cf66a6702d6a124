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
