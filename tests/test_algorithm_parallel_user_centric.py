"""Parallel user-centric FL (journal eq. 13): every device trains every stream model; the
server mixes each stream's updates with that stream's row of W."""

import numpy as np
import pytest

from tiny_learners import build, run_round, scalar_data, values

DATA = [[1.0, 1.1, 0.9], [1.0, 1.2, 0.8], [9.0, 9.1, 8.9], [9.0, 8.8, 9.2]]
MEANS = np.array([1.0, 1.0, 9.0, 9.0])
# overlapping devices of unequal sizes: eq. 9 gives four distinct rows
OVERLAPPING = [[1.0, 2.0, 0.0], [1.5, 2.5, 0.5, 1.0], [3.0, 4.0, 2.0], [6.0, 5.0, 7.0]]


@pytest.mark.parametrize("data, streams, count", [(DATA, 2, 2), (OVERLAPPING, None, 4)])
def test_each_stream_mixes_all_devices_updates_of_it(data, streams, count):
    parallel = build("parallel-user-centric", scalar_data(data, groups=[0, 0, 1, 1]), streams=streams, variance_batch_size=1)
    run_round(parallel, 0)  # set-up: W from gradients (eq. 9), k-means rows (eq. 11)
    rows = parallel.stream_weights
    assert len(rows) == count  # in DATA's rows the other group's weights are exactly 0: skipped
    means = np.array([np.mean(values) for values in data])
    phi = np.zeros(len(rows))
    for server_round in (1, 2):
        run_round(parallel, server_round)
        # eq. 13: device j's one step on stream s is phi_s - 0.2 (phi_s - m_j); mix with row s
        updates = phi[:, None] - 0.2 * (phi[:, None] - means[None, :])
        phi = (rows * updates).sum(axis=1)
        np.testing.assert_allclose(values(parallel.stream_models), phi, rtol=1e-5)
        for device in range(4):
            assert values(parallel.personal_model(device))[0] == pytest.approx(phi[parallel.stream_of[device]], rel=1e-5)
    if streams == 2:
        assert list(parallel.cluster_labels()) == [0, 0, 1, 1]


def test_dropped_devices_leave_the_mix_renormalized():
    parallel = build("parallel-user-centric", scalar_data(DATA), streams=2, variance_batch_size=1)
    run_round(parallel, 0)
    run_round(parallel, 1, arrived=[0, 2])
    rows = parallel.stream_weights[:, [0, 2]]
    rows = rows / rows.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(values(parallel.stream_models), rows @ (0.2 * MEANS[[0, 2]]), rtol=1e-5)


def test_every_device_gets_every_stream_and_uploads_one_model_per_stream():
    parallel = build("parallel-user-centric", scalar_data(DATA), streams=2, variance_batch_size=1)
    setup = run_round(parallel, 0)
    assert setup == build("user-centric", scalar_data(DATA), streams=2, variance_batch_size=1).plan_round(0)
    for server_round in (1, 2):
        plan = run_round(parallel, server_round)
        assert [s.devices for s in plan.streams] == [(0, 1, 2, 3)] * 2
        assert plan.uplink_bits == {d: 2 * parallel.model_bits for d in range(4)}
        assert plan.compute_scale == {d: 2.0 for d in range(4)}
