"""CFL: FedAvg inside clusters; a stalled cluster is bi-partitioned by update similarity;
one multicast stream per cluster."""

import numpy as np
import pytest
import torch

from learning.algorithms.cfl import bipartition, cosine_similarities
from tiny_learners import build, run_round, scalar_data, values


def test_cosine_bipartition_separates_opposite_directions():
    updates = torch.tensor([[1.0, 0.1], [0.9, 0.0], [-1.0, 0.2], [-0.8, -0.1], [1.0, -0.2]])
    similarities = cosine_similarities(updates)
    assert similarities[0, 0] == pytest.approx(1.0) and similarities[0, 2] < 0
    assert list(bipartition(similarities)) == [0, 0, 1, 1, 0]


def test_a_stalled_cluster_splits_and_each_part_averages_its_own_updates():
    # means +5, +5, -5, -5: first updates +-1 (one step of lr 0.1 from 0), mean update 0, max 1
    data = scalar_data([[5.0], [5.0], [-5.0], [-5.0]], groups=[0, 0, 1, 1])
    cfl = build("cfl", data, eps1=0.1, eps2=0.5)
    assert len(run_round(cfl, 1).streams) == 1  # one cluster: one broadcast
    assert list(cfl.cluster_labels()) == [0, 0, 1, 1]
    np.testing.assert_allclose(values(cfl.theta), [1.0, 1.0, -1.0, -1.0], rtol=1e-6)
    assert cfl.evaluate(1).extras["clustering_ari"] == 1.0
    # clusters of two are never split again; the next steps are FedAvg inside each
    assert sorted(s.devices for s in run_round(cfl, 2).streams) == [(0, 1), (2, 3)]
    np.testing.assert_allclose(values(cfl.theta), [1.8, 1.8, -1.8, -1.8], rtol=1e-6)


def test_no_split_while_the_cluster_still_moves_together():
    data = scalar_data([[5.0], [5.0], [4.0], [-5.0]])  # mean update 0.45 >= eps1
    cfl = build("cfl", data, eps1=0.4, eps2=0.5)
    run_round(cfl, 1)
    assert list(cfl.cluster_labels()) == [0, 0, 0, 0]
    np.testing.assert_allclose(values(cfl.theta), [0.45] * 4, rtol=1e-6)


def test_stream_count_follows_the_cluster_count():
    """Six devices, two directions: one stream (one cluster) in round 1, then two; clusters of
    three whose updates agree are not split again."""
    data = scalar_data([[5.0], [6.0], [7.0], [-5.0], [-6.0], [-7.0]])
    cfl = build("cfl", data, eps1=0.1, eps2=0.5)
    counts = []
    for server_round in range(1, 5):
        clusters_before = len(np.unique(cfl.cluster_labels()))
        counts.append((len(run_round(cfl, server_round).streams), clusters_before))
    assert counts == [(1, 1), (2, 2), (2, 2), (2, 2)]
    assert list(cfl.cluster_labels()) == [0, 0, 0, 1, 1, 1]


def test_only_clusters_whose_members_all_arrived_are_examined():
    data = scalar_data([[5.0], [5.0], [-5.0], [-5.0]])
    cfl = build("cfl", data, eps1=0.1, eps2=0.5)
    run_round(cfl, 1, arrived=[0, 2, 3])
    assert list(cfl.cluster_labels()) == [0, 0, 0, 0]


def test_a_singleton_cluster_needs_no_stream():
    """Its device's own update is its cluster model: it already holds it."""
    data = scalar_data([[5.0], [5.0], [5.0], [-5.0]])  # mean update 0.5, max 1
    cfl = build("cfl", data, eps1=0.6, eps2=0.5)
    run_round(cfl, 1)
    assert list(cfl.cluster_labels()) == [0, 0, 0, 1]
    assert [s.devices for s in run_round(cfl, 2).streams] == [(0, 1, 2)]
