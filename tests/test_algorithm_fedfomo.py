"""FedFomo: first-order weights on the validation split, epsilon-greedy downloads by
affinity, M unicast models per device, and the rate-limited exchange."""

import numpy as np
import pytest

from learning.algorithms.fedfomo import fomo_weights
from tiny_learners import build, run_round, scalar_data, values

# one full-batch step of lr 0.1 from 0 moves device i to 0.2 * mean: 0, 1, -1, 3
TRAIN = [[0.0], [5.0], [-5.0], [15.0]]
VALIDATION = [[2.0], [0.0], [0.0], [0.0]]


def test_weights_clip_negatives_and_normalize():
    np.testing.assert_allclose(fomo_weights([3.0, -5.0, 1.0]), [0.75, 0.0, 0.25])
    np.testing.assert_array_equal(fomo_weights([-1.0, 0.0]), [0.0, 0.0])


def test_device_mixes_in_the_peers_that_lower_its_validation_loss():
    fomo = build("fedfomo", scalar_data(TRAIN, VALIDATION), M=3, epsilon=0.0)
    run_round(fomo, 1)  # everyone trains once from 0 and uploads
    np.testing.assert_allclose(values(fomo.uploaded), [0.0, 1.0, -1.0, 3.0], rtol=1e-6)
    plan = run_round(fomo, 2)
    assert sorted(fomo.offered[0]) == [1, 2, 3]
    # device 0 (theta 0, validation point 2, loss 4) weighs peer 1 (loss 1, distance 1): 3,
    # peer 2 (loss 9): -5 -> 0, peer 3 (loss 1, distance 3): 1; normalized 3/4, 0, 1/4
    # -> theta = 0.75 * 1 + 0.25 * 3 = 1.5, then one step towards its mean 0: 1.5 - 0.2 * 1.5
    assert float(fomo.theta[0, 0]) == pytest.approx(1.2, rel=1e-6)
    row = dict(zip(fomo.offered[0].tolist(), fomo.affinity[0, fomo.offered[0]]))
    assert row == pytest.approx({1: 3.0, 2: -5.0, 3: 1.0})
    assert float(fomo.uploaded[0, 0]) == pytest.approx(1.2, rel=1e-6)
    assert plan.uplink_bits[0] == 32.0 + 3 * 32.0  # the model and the three weights


def test_greedy_choice_takes_the_highest_affinity():
    fomo = build("fedfomo", scalar_data([[0.0]] * 5), M=2, epsilon=0.0)
    fomo.affinity[0] = [0.0, 0.5, -1.0, 2.0, 1.0]
    assert list(fomo.choose_models(0)) == [3, 4]
    explorer = build("fedfomo", scalar_data([[0.0]] * 5), M=2, epsilon=1.0)
    explorer.affinity[0] = fomo.affinity[0]
    draws = {tuple(explorer.choose_models(0)) for _ in range(50)}
    assert len(draws) > 1 and all(0 not in d for d in draws)


def test_downlink_is_m_unicast_models_per_device():
    fomo = build("fedfomo", scalar_data([[float(i)] for i in range(6)]), M=2)
    assert fomo.plan_round(0) is None
    first = run_round(fomo, 1)
    assert [s.devices for s in first.streams] == [tuple(range(6))]  # the initial model, once
    for server_round in (2, 3):
        plan = run_round(fomo, server_round)
        assert len(plan.streams) == 2 * 6 and all(len(s.devices) == 1 for s in plan.streams)
        assert sorted(s.devices[0] for s in plan.streams) == sorted(list(range(6)) * 2)
        assert plan.downlink_bits == 2 * 6 * fomo.model_bits


def test_rate_limit_exchanges_every_r_rounds():
    fomo = build("fedfomo", scalar_data([[float(i)] for i in range(4)]), M=2, rate_limit=3)
    traffic = []
    for server_round in range(1, 8):
        plan = run_round(fomo, server_round)
        traffic.append((len(plan.streams), sum(plan.uplink_bits.values())))
    # uploads in rounds 3 and 6, downloads (and the weights going up) in rounds 4 and 7
    assert traffic == [(1, 0.0), (0, 0.0), (0, 4 * 32.0), (8, 4 * 64.0), (0, 0.0), (0, 4 * 32.0), (8, 4 * 64.0)]


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="M must be"):
        build("fedfomo", scalar_data([[0.0]] * 3), M=3)
