"""Hand-computed weight matrices (journal eq. 8-12)."""

import numpy as np
import pytest

from learning.weights import (
    choose_stream_count, fedavg_weights, gradient_distances, gradient_variance, kmeans_rows, local_weights, mix,
    oracle_weights, silhouette_curve, user_centric_weights,
)


def test_fedavg_local_oracle():
    n = np.array([1.0, 3.0, 2.0, 2.0])
    assert np.allclose(fedavg_weights(n), np.tile([1 / 8, 3 / 8, 2 / 8, 2 / 8], (4, 1)))
    assert np.array_equal(local_weights(3), np.eye(3))
    expected = np.array([[1 / 4, 3 / 4, 0, 0], [1 / 4, 3 / 4, 0, 0], [0, 0, 1 / 2, 1 / 2], [0, 0, 1 / 2, 1 / 2]])
    assert np.allclose(oracle_weights(n, np.array([0, 0, 1, 1])), expected)


def test_homogeneous_devices_fall_back_to_fedavg():
    gradients = np.tile([0.3, -1.0, 2.0], (4, 1))
    n = np.array([10.0, 20.0, 30.0, 40.0])
    assert np.allclose(user_centric_weights(gradients, np.full(4, 0.5), n), fedavg_weights(n))


def test_eq9_on_a_tiny_case():
    # g = (0, 1, 3) in one dimension, sigma^2 = (1, 1, 4), n = (1, 2, 1)
    gradients = np.array([[0.0], [1.0], [3.0]])
    sigma = np.array([1.0, 1.0, 2.0])
    n = np.array([1.0, 2.0, 1.0])
    assert np.allclose(gradient_distances(gradients), [[0, 1, 9], [1, 0, 4], [9, 4, 0]])
    w = user_centric_weights(gradients, sigma**2, n)
    row0 = np.array([1 * np.exp(0), 2 * np.exp(-1 / 2), 1 * np.exp(-9 / 4)])
    row2 = np.array([1 * np.exp(-9 / 4), 2 * np.exp(-4 / 4), 1 * np.exp(0)])
    assert np.allclose(w[0], row0 / row0.sum())
    assert np.allclose(w[2], row2 / row2.sum())
    assert np.allclose(w.sum(axis=1), 1)


def test_zero_variance_is_local_training():
    w = user_centric_weights(np.array([[0.0], [1.0]]), np.zeros(2), np.ones(2))
    assert np.allclose(w, np.eye(2))


def test_eq10_variance():
    full = np.array([1.0, 1.0])
    batches = np.array([[2.0, 1.0], [1.0, -1.0]])
    assert gradient_variance(batches, full) == pytest.approx((1 + 4) / 2)


def two_blocks():
    a = np.array([0.45, 0.45, 0.05, 0.05])
    b = np.array([0.05, 0.05, 0.45, 0.45])
    return np.array([a, a + [0.01, -0.01, 0, 0], b, b + [0, 0, 0.02, -0.02]])


def test_k_streams_are_the_distinct_rows():
    w = two_blocks()
    labels, clustered = kmeans_rows(w, 2, seed=0)
    assert list(labels) == [0, 0, 1, 1]
    assert len(np.unique(clustered, axis=0)) == 2
    assert np.allclose(clustered[0], w[:2].mean(axis=0)) and np.allclose(clustered.sum(axis=1), 1)
    assert len(np.unique(kmeans_rows(w, 4, seed=0)[1], axis=0)) == 4
    with pytest.raises(ValueError):
        kmeans_rows(w, 5, seed=0)


def test_silhouette_convention_and_choice():
    curve = silhouette_curve(two_blocks(), seed=0)
    assert curve[1] == 0.0 and curve[4] == 0.0
    assert curve[2] > 0.8
    assert choose_stream_count(curve, 0.0) == 2
    picks = [choose_stream_count(curve, lam) for lam in (0, 0.1, 0.5, 1, 10)]
    assert picks == sorted(picks, reverse=True) and picks[-1] == 1


def test_larger_lambda_never_picks_more_streams():
    rng = np.random.default_rng(0)
    for _ in range(50):
        curve = {k: float(s) for k, s in enumerate(rng.uniform(-0.2, 1, 12), start=1)}
        picks = [choose_stream_count(curve, lam) for lam in np.linspace(0, 0.5, 40)]
        assert all(a >= b for a, b in zip(picks, picks[1:]))
        assert picks[0] == max(curve, key=lambda k: (curve[k], -k))


def test_mix_renormalizes_over_arrivals():
    w = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5], [0.0, 0.0, 1.0]])
    effective = mix(w, np.array([True, False, True]))
    assert np.allclose(effective, [[1, 0, 0], [2 / 7, 0, 5 / 7], [0, 0, 1]])
    assert not mix(np.eye(2), np.array([False, True]))[0].any()


def test_the_curve_does_not_depend_on_the_callers_threads():
    """scikit-learn runs on one BLAS and OpenMP thread (learning.single_thread): the curve's
    digits are the same whatever threads the caller's libraries have (with two BLAS threads
    a 100-row silhouette differs from one thread's in its last bits)."""
    from threadpoolctl import threadpool_limits

    from benchmarks.clustering_threads import collaboration_matrix
    from learning.single_thread import native_threads, one_thread

    w = collaboration_matrix(100)
    curves = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads):
            curves.append(silhouette_curve(w, seed=1, max_k=12))
            with one_thread():
                assert {i["num_threads"] for i in native_threads().info()} == {1}
    assert curves[0] == curves[1]
