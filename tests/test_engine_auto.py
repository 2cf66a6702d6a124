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
    assert auto.estimated_training_s(macs, [100, 28], [10, 20], 64, 2, 0.5, rounds, 2) == pytest.approx(expected, rel=1e-12)


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
