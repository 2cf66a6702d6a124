"""pFedMe: K inner steps on the Moreau envelope, the local w step, the server's beta step."""

import numpy as np
import pytest

from tiny_learners import build, run_round, scalar_data, values

LAM, K, PERSONAL_LR, LR, R, BETA = 2.0, 2, 0.1, 0.2, 2, 0.5
MEANS, SIZES = np.array([2.0, 5.0]), np.array([2.0, 4.0])


def client(w_global, mean):
    """Dinh et al. Alg. 1 on ``(theta - mean)^2`` with full batches."""
    w = theta = w_global
    for _ in range(R):
        for _ in range(K):
            theta -= PERSONAL_LR * (2 * (theta - mean) + LAM * (theta - w))
        w -= LR * LAM * (w - theta)
    return w, theta


def test_two_rounds_match_algorithm_one_by_hand():
    data = scalar_data([[1.0, 3.0], [5.0, 5.0, 5.0, 5.0]])
    pfedme = build("pfedme", data, lam=LAM, K=K, personal_lr=PERSONAL_LR, lr=LR, R=R, beta=BETA, batch_size=100)
    x = 0.0
    for server_round in (1, 2):
        run_round(pfedme, server_round)
        local, personal = zip(*(client(x, m) for m in MEANS))
        x = (1 - BETA) * x + BETA * float(SIZES @ np.array(local) / SIZES.sum())
        np.testing.assert_allclose(values(pfedme.theta), [x, x], rtol=1e-5)
        np.testing.assert_allclose([values(pfedme.personal_model(i))[0] for i in range(2)], personal, rtol=1e-5)


def test_reference_matches_the_hand_computation():
    """Device 0, round 1: theta 0 -> 0.4 -> 0.64, w 0 -> 0.256; theta -> 0.8352 -> 0.95232,
    w -> 0.256 + 0.4 (0.95232 - 0.256) = 0.534528."""
    w, theta = client(0.0, 2.0)
    assert theta == pytest.approx(0.95232) and w == pytest.approx(0.534528)


def test_mini_batches_are_drawn_from_the_device_generator():
    data = scalar_data([[float(v) for v in range(12)]])
    first = build("pfedme", data, batch_size=3, R=4)
    second = build("pfedme", data, batch_size=3, R=4)
    run_round(first, 1)
    run_round(second, 1)
    assert np.array_equal(values(first.personal_model(0)), values(second.personal_model(0)))
    full = build("pfedme", data, batch_size=12, R=4)
    run_round(full, 1)
    assert not np.array_equal(values(first.personal_model(0)), values(full.personal_model(0)))


def test_traffic_is_fedavgs_and_bad_options_are_refused():
    data = scalar_data([[1.0, 3.0], [5.0, 5.0]])
    plan, reference = run_round(build("pfedme", data, R=3), 1), run_round(build("fedavg", data), 1)
    assert (plan.streams, plan.uplink_bits) == (reference.streams, reference.uplink_bits)
    assert plan.compute_scale == {0: 15.0, 1: 15.0}  # R K = 15 steps against one full-batch step
    with pytest.raises(ValueError, match="pfedme"):
        build("pfedme", data, K=0)
