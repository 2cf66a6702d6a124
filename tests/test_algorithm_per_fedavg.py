"""Per-FedAvg (FO-MAML): local meta-steps, FedAvg aggregation, personal models adapted from the
global one; traffic is FedAvg's with twice the compute."""

import dataclasses

import numpy as np
import pytest

from tiny_learners import build, run_round, scalar_data, values

ALPHA, BETA = 0.2, 0.1
TRAIN = [[1.0, 3.0], [5.0, 5.0, 5.0, 5.0]]
VAL = [[2.5], [4.0]]


def test_meta_steps_and_adaptation_by_hand():
    """Full batches, E = 1 (one step): ``w_tmp = w - alpha 2 (w - z)``, ``w <- w - beta 2 (w_tmp - z)``;
    the personal model is ``k`` steps ``w <- w - alpha 2 (w - z)`` from the global one."""
    per = build("per-fedavg", scalar_data(TRAIN, VAL), alpha=ALPHA, beta=BETA, adaptation_steps=2)
    z, n = np.array([2.0, 5.0]), np.array([2.0, 4.0])
    w = 0.0
    for server_round in (1, 2, 3):
        run_round(per, server_round)
        inner = w - ALPHA * 2 * (w - z)
        local = w - BETA * 2 * (inner - z)
        w = float(n @ local / n.sum())
        np.testing.assert_allclose(values(per.theta), [w, w], rtol=1e-6)
        personal = np.full(2, w)
        for _ in range(2):
            personal = personal - ALPHA * 2 * (personal - z)
        np.testing.assert_allclose([values(per.personal_model(d))[0] for d in range(2)], personal, rtol=1e-6)
    evaluation = per.evaluate(3)  # the personal models are evaluated
    np.testing.assert_allclose(evaluation.loss, (personal - np.array([2.5, 4.0])) ** 2, rtol=1e-5)


def test_traffic_is_fedavgs_with_twice_the_compute():
    data = scalar_data(TRAIN + [[0.0]])
    per, fedavg = build("per-fedavg", data), build("fedavg", data)
    assert per.plan_round(0) is None
    for server_round in (1, 2):
        plan, reference = run_round(per, server_round), run_round(fedavg, server_round)
        assert plan == dataclasses.replace(reference, compute_scale={0: 2.0, 1: 2.0, 2: 2.0})


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="per-fedavg"):
        build("per-fedavg", scalar_data(TRAIN), alpha=0.0)
