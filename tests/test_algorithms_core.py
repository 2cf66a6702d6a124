"""The weight-matrix algorithms on hand-computed cases: aggregation, plans and streams."""

import torch

from tiny_learners import build, scalar_data


def test_fedavg_one_step_is_the_weighted_mean_of_local_steps():
    data = scalar_data([[1.0, 1.0], [4.0, 4.0, 4.0, 4.0]])
    fed = build("fedavg", data)
    start = float(fed.theta0[0])
    fed.local_update(1, [0, 1])
    fed.aggregate(1, [0, 1])
    # one full-batch step of mse: theta - lr * 2 (theta - mean)
    local = [start - 0.1 * 2 * (start - 1.0), start - 0.1 * 2 * (start - 4.0)]
    expected = (2 * local[0] + 4 * local[1]) / 6
    assert torch.allclose(fed.theta[:, 0], torch.tensor([expected, expected]))


def test_fedavg_broadcasts_once_then_all_upload():
    fed = build("fedavg", scalar_data([[1.0], [2.0], [3.0]]))
    assert fed.plan_round(0) is None
    plan = fed.plan_round(1)
    assert [s.devices for s in plan.streams] == [(0, 1, 2)]
    assert plan.uplink_bits == {0: 32.0, 1: 32.0, 2: 32.0}


def test_local_sends_nothing():
    local = build("local", scalar_data([[1.0], [2.0]]))
    for r in (1, 2):
        plan = local.plan_round(r)
        assert plan.streams == () and plan.uplink_bits == {}
        local.local_update(r, [0, 1])
        local.aggregate(r, [0, 1])


def test_oracle_streams_are_the_groups():
    oracle = build("oracle", scalar_data([[1.0], [2.0], [3.0], [4.0]], groups=[0, 1, 0, 1]))
    oracle.plan_round(1)
    oracle.local_update(1, range(4))
    oracle.aggregate(1, range(4))
    assert sorted(s.devices for s in oracle.plan_round(2).streams) == [(0, 2), (1, 3)]
    assert torch.equal(oracle.theta[0], oracle.theta[2]) and not torch.equal(oracle.theta[0], oracle.theta[1])


def test_user_centric_setup_round_then_streams_from_distinct_rows():
    data = scalar_data([[1.0, 1.1, 0.9], [1.0, 1.2, 0.8], [9.0, 9.1, 8.9], [9.0, 8.8, 9.2]], groups=[0, 0, 1, 1])
    uc = build("user-centric", data, streams=2, variance_batch_size=1)
    setup = uc.plan_round(0)
    assert [s.devices for s in setup.streams] == [(0, 1, 2, 3)]
    assert setup.uplink_bits[0] == 32.0 + 32.0  # gradient (one model) + sigma^2
    uc.local_update(0, range(4))
    uc.aggregate(0, range(4))
    assert uc.stream_count == 2 and list(uc.cluster_labels()) == [0, 0, 1, 1]
    assert uc.plan_round(1).streams == ()  # everyone already holds theta^0
    uc.local_update(1, range(4))
    uc.aggregate(1, range(4))
    assert sorted(s.devices for s in uc.plan_round(2).streams) == [(0, 1), (2, 3)]
    assert uc.evaluate(2).extras["clustering_ari"] == 1.0


def test_dropped_device_keeps_receiving_personalized_model():
    fed = build("fedavg", scalar_data([[1.0], [2.0], [3.0]]))
    fed.plan_round(1)
    fed.local_update(1, [0, 2])
    fed.aggregate(1, [0, 2])  # device 1 missed the deadline: not mixed in, still gets the new model
    assert torch.equal(fed.theta[1], fed.theta[0])
    assert [s.devices for s in fed.plan_round(2).streams] == [(0, 1, 2)]


def test_a_device_that_missed_its_stream_still_needs_its_model():
    """Downlink outage: devices 2 and 3 did not receive round 1's streams; nothing of their group
    arrived, so their models are unchanged on the server, yet they must be sent again."""
    from contract import RoundOutcome

    oracle = build("oracle", scalar_data([[1.0], [2.0], [3.0], [4.0]], groups=[0, 0, 1, 1]))
    assert [s.devices for s in oracle.plan_round(1).streams] == [(0, 1, 2, 3)]  # the initial model
    oracle.round_outcome(1, RoundOutcome(received=(0, 1), computed=(0, 1), arrived=(0, 1)))
    oracle.local_update(1, (0, 1))
    oracle.aggregate(1, (0, 1))
    assert sorted(s.devices for s in oracle.plan_round(2).streams) == [(0, 1), (2, 3)]
    # had they received it, only the group whose model changed would get a stream
    again = build("oracle", scalar_data([[1.0], [2.0], [3.0], [4.0]], groups=[0, 0, 1, 1]))
    again.plan_round(1)
    again.round_outcome(1, RoundOutcome(received=(0, 1, 2, 3), computed=(0, 1), arrived=(0, 1)))
    again.local_update(1, (0, 1))
    again.aggregate(1, (0, 1))
    assert [s.devices for s in again.plan_round(2).streams] == [(0, 1)]


def test_user_centric_gives_an_unheard_device_the_broadcast_and_hears_it_later():
    """Device 3's set-up upload does not arrive: its row of W is FedAvg's over the heard (sizes
    3, 3, 3 of device 0, 1, 2: a third each), no row mixes it, it is asked for its statistics
    again, and once they arrive it joins its cluster (as if it had been heard at set-up)."""
    import numpy as np

    data = scalar_data([[1.0, 1.1, 0.9], [1.0, 1.2, 0.8], [9.0, 9.1, 8.9], [9.0, 8.8, 9.2]], groups=[0, 0, 1, 1])
    uc = build("user-centric", data, streams=2, variance_batch_size=1)
    uc.plan_round(0)
    uc.local_update(0, (0, 1, 2))
    uc.aggregate(0, (0, 1, 2))
    np.testing.assert_allclose(uc.weights[3], [1 / 3, 1 / 3, 1 / 3, 0.0])
    assert not uc.weights[:, 3].any() and uc.stream_count == 3  # two clusters and the broadcast of the heard
    assert list(uc.cluster_labels()) == [0, 0, 1, 2]
    plan = uc.plan_round(1)
    assert plan.uplink_bits[3] == 32.0 + 32.0 and plan.uplink_bits[0] == 32.0  # statistics again, updates
    uc.local_update(1, range(4))
    uc.aggregate(1, range(4))
    assert uc.heard.all() and uc.stream_count == 2 and list(uc.cluster_labels()) == [0, 0, 1, 1]
    np.testing.assert_array_equal(uc.weights[3], uc.weights[2])
    assert uc.weights[3, 3] > 0.4
    assert uc.plan_round(2).uplink_bits[3] == 32.0
