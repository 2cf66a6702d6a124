"""FeSEM: E-step (nearest center in L2), M-step (data-size weighted mean of the members),
one multicast stream per center, the assignment as the clustering."""

import numpy as np
import pytest

from tiny_learners import build, run_round, scalar_data, values

TRAIN = [[1.0], [1.0, 1.4, 1.8], [9.0, 9.0], [10.0, 9.2]]
GROUPS = [0, 0, 1, 1]


def test_em_steps_by_hand():
    """One full-batch step from the center: ``c + 0.2 (z - c)``; centers are the n-weighted means."""
    fesem = build("fesem", scalar_data(TRAIN, groups=GROUPS))
    assert fesem.k == 2  # the data's true group count
    z = np.array([np.mean(v) for v in TRAIN])
    n = np.array([len(v) for v in TRAIN], dtype=float)
    start = np.zeros(4)
    for server_round in (1, 2, 3):
        run_round(fesem, server_round)
        local = start + 0.2 * (z - start)
        centers = [n[:2] @ local[:2] / n[:2].sum(), n[2:] @ local[2:] / n[2:].sum()]
        start = np.repeat(centers, 2)
        np.testing.assert_allclose(values(fesem.theta), start, rtol=1e-6)
        labels = fesem.cluster_labels()
        assert labels[0] == labels[1] != labels[2] == labels[3]
    assert fesem.evaluate(3).extras["clustering_ari"] == 1.0


def test_one_stream_per_center():
    fesem = build("fesem", scalar_data(TRAIN, groups=GROUPS))
    plan = run_round(fesem, 1)
    assert [s.devices for s in plan.streams] == [(0, 1, 2, 3)]  # everyone starts from theta^0
    plan = run_round(fesem, 2)
    assert sorted((s.devices, s.bits) for s in plan.streams) == [((0, 1), 32.0), ((2, 3), 32.0)]
    assert plan.uplink_bits == {d: 32.0 for d in range(4)}


def test_a_center_without_arrivals_keeps_its_model():
    fesem = build("fesem", scalar_data(TRAIN, groups=GROUPS))
    run_round(fesem, 1)
    before = values(fesem.theta).copy()
    run_round(fesem, 2, arrived=[0])  # only device 0 arrived: its center moves, device 1 gets it too
    after = values(fesem.theta)
    expected = before[0] + 0.2 * (1.0 - before[0])  # device 0's local model alone
    np.testing.assert_allclose(after[:2], [expected, expected], rtol=1e-6)
    np.testing.assert_allclose(after[2:], before[2:])


def test_default_and_bad_k():
    assert build("fesem", scalar_data([[1.0]] * 6)).k == 4  # no true groups
    for k in (0, 5):
        with pytest.raises(ValueError, match="fesem"):
            build("fesem", scalar_data(TRAIN), k=k)
    with pytest.raises(ValueError, match="no option"):
        build("fesem", scalar_data(TRAIN), centers=2)
