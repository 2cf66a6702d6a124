"""SCAFFOLD: corrected local steps, option II control variates, server step, double traffic."""

import numpy as np
import pytest

from learning.algorithms.scaffold import momentum_step_count
from tiny_learners import build, run_round, scalar_data, values

LR, EPOCHS = 0.1, 2
MEANS, SIZES = np.array([2.0, 6.0, -1.0]), np.array([2.0, 2.0, 4.0])
DATA = [[1.0, 3.0], [5.0, 7.0], [-1.0, -1.0, -1.0, -1.0]]


def reference(rounds, global_lr, arrived_per_round):
    """Karimireddy et al. Alg. 1, option II, written out with plain SGD on ``(theta - m_i)^2``."""
    x, c, c_i = 0.0, 0.0, np.zeros(3)
    for arrived in arrived_per_round[:rounds]:
        y, delta = {}, {}
        for i in arrived:
            w = x
            for _ in range(EPOCHS):  # one full-batch step per epoch
                w -= LR * (2 * (w - MEANS[i]) + c - c_i[i])
            new = c_i[i] - c + (x - w) / (EPOCHS * LR)
            y[i], delta[i] = w, new - c_i[i]
            c_i[i] = new
        share = SIZES[arrived] / SIZES[arrived].sum()
        x = x + global_lr * (sum(s * y[i] for s, i in zip(share, arrived)) - x)
        c += sum(delta.values()) / 3
    return x, c, c_i


@pytest.mark.parametrize("global_lr", [1.0, 0.5])
def test_three_rounds_match_option_two_by_hand(global_lr):
    scaffold = build("scaffold", scalar_data(DATA), local_epochs=EPOCHS, global_lr=global_lr)
    arrived = [[0, 1, 2], [0, 2], [0, 1, 2]]  # device 1 misses round 2
    for server_round, devices in enumerate(arrived, start=1):
        run_round(scaffold, server_round, devices)
        x, c, c_i = reference(server_round, global_lr, arrived)
        np.testing.assert_allclose(values(scaffold.theta), [x] * 3, rtol=1e-5)
        np.testing.assert_allclose(values(scaffold.server_control), [c], rtol=1e-5)
        np.testing.assert_allclose(values(scaffold.controls), c_i, rtol=1e-5)


def test_first_round_control_is_the_mean_local_gradient():
    # device 0 (mean 2) from x = 0: steps 0 -> 0.4 -> 0.72, gradients -4 and -3.2: c_0 = -3.6
    scaffold = build("scaffold", scalar_data(DATA), local_epochs=EPOCHS)
    run_round(scaffold, 1)
    assert float(scaffold.controls[0, 0]) == pytest.approx(-3.6)


def test_momentum_control_is_the_weighted_mean_of_gradients():
    """With momentum beta, x - y = lr (g0 (1 + beta) + g1) for two steps: c = that / (lr (2 + beta))."""
    beta = 0.5
    assert momentum_step_count(2, 0.0) == 2 and momentum_step_count(2, beta) == pytest.approx(2.5)
    scaffold = build("scaffold", scalar_data([[2.0, 2.0]]), {"momentum": beta}, local_epochs=2)
    run_round(scaffold, 1)
    g0 = 2 * (0.0 - 2.0)
    w1 = -LR * g0
    g1 = 2 * (w1 - 2.0)
    assert float(scaffold.controls[0, 0]) == pytest.approx(((1 + beta) * g0 + g1) / 2.5, rel=1e-6)


def test_each_round_sends_twice_fedavgs_bits_both_ways():
    data = scalar_data(DATA)
    scaffold, fedavg = build("scaffold", data, local_epochs=1), build("fedavg", data)
    assert scaffold.plan_round(0) is None
    for server_round in (1, 2, 3):
        ours, theirs = run_round(scaffold, server_round), run_round(fedavg, server_round)
        assert [s.devices for s in ours.streams] == [s.devices for s in theirs.streams] == [(0, 1, 2)]
        assert ours.downlink_bits == 2 * theirs.downlink_bits == 2 * 32.0
        assert ours.uplink_bits == {d: 2 * b for d, b in theirs.uplink_bits.items()}
        assert ours.compute_scale == {}  # E = 1 like FedAvg's


def test_more_local_epochs_take_longer_on_the_clock():
    plan = build("scaffold", scalar_data(DATA), local_epochs=5).plan_round(1)
    assert plan.compute_scale == {0: 5.0, 1: 5.0, 2: 5.0}


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="scaffold"):
        build("scaffold", scalar_data(DATA), local_epochs=0)
