"""Ditto: FedAvg's global model plus personal models pulled towards it; personal models are evaluated."""

import numpy as np
import pytest

from tiny_learners import build, run_round, scalar_data, values

LR, LAM, PERSONAL_EPOCHS = 0.1, 1.0, 2
MEANS, SIZES = np.array([2.0, 5.0]), np.array([2.0, 4.0])


def test_personal_models_follow_the_regularized_local_objective():
    data = scalar_data([[1.0, 3.0], [5.0, 5.0, 5.0, 5.0]], val_values=[[2.0], [4.0]])
    ditto = build("ditto", data, lam=LAM, personal_epochs=PERSONAL_EPOCHS)
    w, v = 0.0, np.zeros(2)
    for server_round in (1, 2):
        run_round(ditto, server_round)
        for i in range(2):  # personal steps anchored at the global model received this round
            for _ in range(PERSONAL_EPOCHS):
                v[i] -= LR * (2 * (v[i] - MEANS[i]) + LAM * (v[i] - w))
        local = w - LR * 2 * (w - MEANS)  # the global model's one local step (E = 1)
        w = float(SIZES @ local / SIZES.sum())
        np.testing.assert_allclose(values(ditto.theta), [w, w], rtol=1e-6)
        np.testing.assert_allclose([values(ditto.personal_model(i))[0] for i in range(2)], v, rtol=1e-6)
    # round 1 by hand, device 0: v = 0 -> 0.4 -> 0.4 - 0.1 (2 (0.4 - 2) + 0.4) = 0.68
    evaluation = ditto.evaluate(2)
    np.testing.assert_allclose(evaluation.loss, (v - np.array([2.0, 4.0])) ** 2, rtol=1e-5)


def test_traffic_is_fedavgs_and_compute_is_two_updates():
    data = scalar_data([[1.0, 3.0], [5.0, 5.0], [0.0]])
    ditto, fedavg = build("ditto", data), build("fedavg", data)
    for server_round in (1, 2):
        plan, reference = run_round(ditto, server_round), run_round(fedavg, server_round)
        assert (plan.streams, plan.uplink_bits) == (reference.streams, reference.uplink_bits)
        assert plan.compute_scale == {0: 2.0, 1: 2.0, 2: 2.0}  # global + personal epoch


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="ditto"):
        build("ditto", scalar_data([[1.0]]), personal_epochs=0)
