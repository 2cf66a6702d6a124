"""Same seed, identical result tables; another seed, other numbers."""

from pathlib import Path

from scenarios.execution.runner import RunSpec, run_experiment


def table(tmp: Path, seed: int, algorithm="user-centric", options=None):
    spec = RunSpec("digits-rotation", algorithm, rounds=3, seed=seed, options={"streams": "auto"} if options is None else options)
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


def test_recorded_plans_retime_to_the_same_clock(tmp_path):
    """Re-timing needs no retraining: the recorded plans on the same network give the same times."""
    import numpy as np

    from netsim import retime_plans
    from scenarios.definitions.seeds import seed_streams
    from scenarios.definitions.systems import get_system
    from scenarios.records.result_folder import read_config, read_plans

    summary = run_experiment(RunSpec("digits-rotation", "user-centric", rounds=3, seed=4, options={"streams": 4}), tmp_path)
    plans = read_plans(summary["result_dir"])
    model_bits = read_config(summary["result_dir"])["model"]["bits"]
    ends = retime_plans(plans, get_system("wireless-slow-ul"), model_bits, np.random.default_rng(seed_streams(4)[2]))
    assert ends[-1] == summary["simulated_time"]
    wired = retime_plans(plans, get_system("wired"), model_bits, np.random.default_rng(0))
    assert wired[-1] < ends[-1]
