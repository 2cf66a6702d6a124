"""FedProx: FedAvg whose local steps add the gradient ``mu (w - w^t)`` of the proximal term."""

import numpy as np
import pytest

from tiny_learners import build, run_round, scalar_data, values

LR, MU, STEPS = 0.1, 0.5, 3


def proximal_steps(start, mean, anchor):
    w = start
    for _ in range(STEPS):
        w -= LR * (2 * (w - mean) + MU * (w - anchor))
    return w


def test_local_steps_are_pulled_towards_the_received_model_then_fedavg():
    data = scalar_data([[1.0, 3.0], [5.0, 5.0, 5.0, 5.0]])  # means 2 and 5, sizes 2 and 4
    prox = build("fedprox", data, {"epochs": STEPS}, mu=MU)
    global_model = 0.0
    for server_round in (1, 2):
        run_round(prox, server_round)
        local = [proximal_steps(global_model, 2.0, global_model), proximal_steps(global_model, 5.0, global_model)]
        global_model = (2 * local[0] + 4 * local[1]) / 6
        np.testing.assert_allclose(values(prox.theta), [global_model, global_model], rtol=1e-6)
    # by hand, round 1 on device 0: 0 -> 0.4 -> 0.7 -> 0.925 (plain SGD would reach 0.976)
    assert proximal_steps(0.0, 2.0, 0.0) == pytest.approx(0.925)


def test_mu_zero_is_fedavg_and_traffic_is_fedavg():
    data = scalar_data([[1.0, 3.0], [5.0, 5.0, 5.0, 5.0], [-2.0]])
    prox, fedavg = build("fedprox", data, {"epochs": 2}, mu=0.0), build("fedavg", data, {"epochs": 2})
    for server_round in (1, 2):
        assert run_round(prox, server_round) == run_round(fedavg, server_round)
    np.testing.assert_allclose(values(prox.theta), values(fedavg.theta), rtol=1e-6)


def test_negative_mu_is_refused():
    with pytest.raises(ValueError, match="mu"):
        build("fedprox", scalar_data([[1.0]]), mu=-1.0)
