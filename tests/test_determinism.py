"""Same seed, identical result tables; another seed, other numbers."""

from pathlib import Path

from scenarios.runner import RunSpec, run_experiment


def table(tmp: Path, seed: int, algorithm="user-centric", options=None):
    spec = RunSpec("digits-rotation", algorithm, rounds=3, seed=seed, options=options or {"streams": "auto"})
    summary = run_experiment(spec, tmp, reuse=False)
    folder = Path(summary["result_dir"])
    return (folder / "rounds.csv").read_text(), (folder / "trace.csv").read_text()


def test_same_seed_same_tables(tmp_path):
    first = table(tmp_path / "a", 7)
    second = table(tmp_path / "b", 7)
    assert first == second


def test_other_seed_other_tables(tmp_path):
    assert table(tmp_path / "a", 1, "fedavg", {})[0] != table(tmp_path / "b", 2, "fedavg", {})[0]


def test_finished_run_is_reused(tmp_path):
    spec = RunSpec("digits-rotation", "fedavg", rounds=2, seed=0)
    first = run_experiment(spec, tmp_path)
    again = run_experiment(spec, tmp_path)
    assert not first["reused"] and again["reused"]
    assert {k: v for k, v in first.items() if k != "reused"} == {k: v for k, v in again.items() if k != "reused"}
