"""``auto`` on the CPU picks worker processes only where they save more than their start
(``learning.engine.auto``), from the work size alone, and the run's config records the choice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch import nn

from learning.engine import auto
from scenarios.execution.runner import RunSpec, run_experiment


def test_forward_macs_counts_dense_and_convolution_layers():
    mlp = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    assert auto.forward_macs(mlp, torch.zeros(1, 64)) == 64 * 64 + 64 * 10
    conv = nn.Sequential(nn.Conv2d(1, 6, 5), nn.Flatten(), nn.Linear(6 * 24 * 24, 10))
    assert auto.forward_macs(conv, torch.zeros(1, 1, 28, 28)) == 1 * 5 * 5 * (6 * 24 * 24) + 6 * 24 * 24 * 10


def test_the_estimate_by_hand():
    """Two devices of 100 and 28 samples, batch 64: 2 + 1 steps a round; one evaluation of 30."""
    macs, rounds = 1000, 4
    expected = rounds * 2 * 0.5 * (3 * auto.STEP_S + 3 * 128 * macs / auto.MACS_PER_S) + 2 * 30 * macs / auto.MACS_PER_S
    assert auto.estimated_training_s(macs, auto.RunWork([100, 28], [10, 20], 64, 2, 0.5, rounds, 2)) == pytest.approx(expected, rel=1e-12)


def test_workers_only_where_they_save_more_than_their_start():
    threshold = auto.WORKER_START_S * auto.POOL_WORKERS / (auto.POOL_WORKERS - 1)
    assert auto.choose_cpu_backend(threshold * 0.99)[0] == "loop"
    assert auto.choose_cpu_backend(threshold * 1.01)[0] == "processes"


@pytest.mark.parametrize(("rounds", "backend"), [(1, "loop"), (400, "processes")])
def test_the_choice_by_the_work_size(rounds, backend):
    """A 1-round digits run trains in this process; 400 rounds of it (estimated, never run: the
    choice is made before training) on workers. Given backends are kept as given."""
    from scenarios.execution.build import build_data, choose_backend
    from scenarios.execution.spec import resolve

    run = resolve(RunSpec("digits-rotation", "fedavg", rounds=rounds, training={"device": "cpu"}))
    chosen, why = choose_backend(run, build_data(run))
    assert chosen.training.backend == backend and why.startswith(f"auto: {backend} (about ")
    given = resolve(RunSpec("digits-rotation", "fedavg", rounds=rounds, training={"backend": "processes"}))
    assert choose_backend(given, build_data(given)) == (given, "processes (given)")


def test_the_config_records_the_backend_choice(tmp_path):
    folder = Path(run_experiment(RunSpec("digits-rotation", "fedavg", rounds=1, training={"device": "cpu"}), tmp_path)["result_dir"])
    config = json.loads((folder / "config.json").read_text())
    assert config["training"]["backend"] == "loop"
    assert config["provenance"]["backend_choice"].startswith("auto: loop (about ")


def test_the_estimate_counts_the_algorithms_work_and_set_up_by_hand():
    """Two devices of 100 and 28 samples, batch 64: the first computes 2 standard updates a
    round, the second half of one; 3 gradient passes over both sets before round 1."""
    macs, rounds = 1000, 4
    pass_s = 3 * macs / auto.MACS_PER_S
    expected = (rounds * 2 * 0.5 * (2 * (2 * auto.STEP_S + 100 * pass_s) + 0.5 * (auto.STEP_S + 28 * pass_s))
                + 3 * 128 * pass_s + 2 * 30 * macs / auto.MACS_PER_S)
    got = auto.estimated_training_s(macs, auto.RunWork([100, 28], [10, 20], 64, 2, 0.5, rounds, 2, update_work=[2.0, 0.5], setup_epochs=3))
    assert got == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(("algorithm", "options"), [("pfedme", {"R": 7, "K": 3}), ("ditto", {"personal_epochs": 3}),
                                                    ("per-fedavg", {}), ("scaffold", {"local_epochs": 4}), ("fedavg", {})])
def test_the_work_auto_sizes_is_the_compute_the_clock_charges(algorithm, options):
    """``update_work`` is each participant's compute scale in the round's plan (1: none)."""
    from scenarios.execution.build import build_data, build_learner
    from scenarios.execution.spec import resolve

    run = resolve(RunSpec("digits-rotation", algorithm, rounds=2, options=options, training={"device": "cpu", "epochs": 2}))
    learner = build_learner(run, build_data(run))
    plan = learner.plan_round(1)
    for device in plan.participants:
        work = learner.update_work(learner.options, run.training, learner.standard_steps(device))
        assert plan.compute_scale.get(device, 1.0) == work
    assert algorithm == "fedavg" or work != 1.0


def test_the_user_centric_set_up_is_in_the_estimate():
    from scenarios.execution.build import build_data, choose_backend
    from scenarios.execution.spec import resolve

    def estimate(algorithm: str) -> float:
        run = resolve(RunSpec("digits-rotation", algorithm, rounds=1, training={"device": "cpu"}))
        return float(choose_backend(run, build_data(run))[1].split("about ")[1].split(" s")[0])

    samples = sum(build_data(resolve(RunSpec("digits-rotation", "fedavg"))).train_sizes)
    set_up = 2 * 3 * samples * auto.forward_macs(nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)), torch.zeros(1, 64))
    assert estimate("user-centric") - estimate("fedavg") == pytest.approx(set_up / auto.MACS_PER_S, rel=0.01)


@pytest.mark.parametrize(("rounds", "device", "asked"), [(1, "cpu", {}), (400, "cuda", {}), (1, "cuda", {"device": "cuda"})])
def test_with_cuda_auto_gives_a_run_smaller_than_cudas_start_the_cpu(monkeypatch, rounds, device, asked):
    """On a machine with CUDA (stood in for: the choice is made before anything touches the
    GPU), a 1-round digits run trains on the CPU and 400 rounds of it on the GPU; a device
    given is kept."""
    from scenarios.execution.build import build_data, choose_backend
    from scenarios.execution.spec import resolve

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    run = resolve(RunSpec("digits-rotation", "fedavg", rounds=rounds, training=asked))
    assert (run.training.device, run.training.backend) == ("cuda", "batched")
    chosen, why = choose_backend(run, build_data(run))
    assert (chosen.training.device, chosen.training.backend) == ((device, "loop") if device == "cpu" else ("cuda", "batched"))
    if asked:
        assert (chosen, why) == (run, "auto: batched")
    else:
        assert why.startswith(f"auto: {device} (about " if device == "cpu" else "auto: cuda, batched (about ")


def test_the_device_rule_by_hand():
    assert auto.choose_device(auto.CUDA_START_S * 0.99)[0] == "cpu"  # on one thread
    on_workers = 2 * (auto.CUDA_START_S - auto.WORKER_START_S)  # where two workers end at CUDA's start
    assert auto.choose_device(on_workers * 0.99)[0] == "cpu" and auto.choose_device(on_workers * 1.01)[0] == "cuda"
