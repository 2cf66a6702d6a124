"""Properties of the seeded partitions: sizes, label ownership, heavy tails, determinism."""

import numpy as np
import pytest

from scenarios.definitions.partitions import (
    dirichlet_label_split,
    equal_groups,
    fedprox_split,
    iid_split,
    label_holder_split,
    pathological_split,
    two_level_gaussian,
)

LABELS = np.repeat(np.arange(10), 600)  # 10 balanced classes, 6,000 points


def rng(seed=0):
    return np.random.default_rng(seed)


def assert_disjoint(parts, total=None):
    joined = np.concatenate(parts)
    assert np.unique(joined).size == joined.size, "a point went to two devices"
    if total is not None:
        assert joined.size == total


def same_parts(a, b):
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def test_iid_split_equal_sizes_and_seeded():
    parts = iid_split(1003, 20, rng())
    assert_disjoint(parts, 1003)
    assert {p.size for p in parts} == {50, 51}
    assert same_parts(parts, iid_split(1003, 20, rng()))
    assert not same_parts(parts, iid_split(1003, 20, rng(1)))
    with pytest.raises(ValueError):
        iid_split(5, 6, rng())


def test_dirichlet_split_respects_min_size_and_seed():
    parts = dirichlet_label_split(LABELS, 20, 0.4, rng(), min_size=100)
    assert_disjoint(parts, LABELS.size)
    assert min(p.size for p in parts) >= 100
    assert same_parts(parts, dirichlet_label_split(LABELS, 20, 0.4, rng(), min_size=100))
    assert not same_parts(parts, dirichlet_label_split(LABELS, 20, 0.4, rng(1), min_size=100))


def test_label_holder_split_gives_equal_shards():
    parts = label_holder_split(LABELS, {0: [0, 1, 2], 1: [2]}, 4, rng())
    assert [p.size for p in parts] == [200, 200, 800, 0]
    assert set(LABELS[parts[2]]) == {0, 1}
    assert_disjoint(parts, 1200)


def test_pathological_each_label_owned_by_one_cluster():
    parts, groups = pathological_split(LABELS, 100, 5, rng())
    assert np.array_equal(groups, equal_groups(100, 5))
    assert_disjoint(parts, LABELS.size)  # all data distributed, no overlap
    owner = {}
    for device, part in enumerate(parts):
        device_labels = set(LABELS[part].tolist())
        assert len(device_labels) == 2  # 10 labels over 5 clusters: 2 each
        for label in device_labels:
            assert owner.setdefault(label, groups[device]) == groups[device], f"label {label} in two clusters"
    assert sorted(owner) == list(range(10))
    assert {p.size for p in parts} == {60}  # 600 points of a label over a cluster's 20 devices, twice


def test_pathological_assignment_is_seeded():
    a, _ = pathological_split(LABELS, 100, 5, rng())
    assert same_parts(a, pathological_split(LABELS, 100, 5, rng())[0])
    assert not same_parts(a, pathological_split(LABELS, 100, 5, rng(1))[0])


def test_noisy_adds_one_foreign_label_to_about_half_the_devices():
    parts, groups = pathological_split(LABELS, 100, 5, rng(), extra_labels=1)
    assert_disjoint(parts, LABELS.size)
    holders = {}  # (cluster, label) -> how many of the cluster's 20 devices hold the label
    for device, part in enumerate(parts):
        for label in set(LABELS[part].tolist()):
            holders[groups[device], label] = holders.get((groups[device], label), 0) + 1
    own = {c: {label for (g, label), n in holders.items() if g == c and n == 20} for c in range(5)}
    assert sorted(len(labels) for labels in own.values()) == [2] * 5
    extra_counts = []
    for device, part in enumerate(parts):
        device_labels = set(LABELS[part].tolist())
        assert own[groups[device]] <= device_labels
        extra_counts.append(len(device_labels - own[groups[device]]))
    assert set(extra_counts) <= {0, 1}
    assert 35 <= sum(extra_counts) <= 65  # Binomial(100, 1/2): far inside 3 standard deviations
    assert not same_parts(parts, pathological_split(LABELS, 100, 5, rng(1), extra_labels=1)[0])


def test_pathological_rejects_more_clusters_than_labels():
    with pytest.raises(ValueError):
        pathological_split(LABELS, 100, 11, rng())


def mnist_like_labels():
    return np.repeat(np.arange(10), 7000)


def test_fedprox_two_labels_per_device_and_minimum_size():
    labels = mnist_like_labels()
    parts = fedprox_split(labels, 1000, rng())
    assert_disjoint(parts)
    for device, part in enumerate(parts):
        assert set(labels[part].tolist()) == {device % 10, (device + 1) % 10}
        assert part.size >= 10  # 5 of each of its two labels come first
    assert sum(p.size for p in parts) >= labels.size - 2000  # only rounding remainders are left out


def test_fedprox_sizes_are_heavy_tailed():
    sizes = np.array([p.size for p in fedprox_split(mnist_like_labels(), 1000, rng())])
    top_tenth = np.sort(sizes)[-100:].sum() / sizes.sum()
    assert top_tenth > 0.5  # equal sizes would give 0.1
    assert sizes.max() > 20 * np.median(sizes)


def test_fedprox_is_seeded():
    labels = mnist_like_labels()
    a = fedprox_split(labels, 1000, rng())
    assert same_parts(a, fedprox_split(labels, 1000, rng()))
    assert not same_parts(a, fedprox_split(labels, 1000, rng(1)))


def test_two_level_gaussian_moments():
    sizes = np.full(400, 2000)
    means, samples = two_level_gaussian(sizes, theta_0=1.6, inter_variance=1.0, intra_variance=0.1, rng=rng())
    assert [s.size for s in samples] == sizes.tolist()
    assert means.mean() == pytest.approx(1.6, abs=0.2)  # 400 means of sd 1: se 0.05
    assert means.var() == pytest.approx(1.0, rel=0.25)
    assert np.mean([s.var() for s in samples]) == pytest.approx(0.1, rel=0.05)
    assert np.max(np.abs([s.mean() for s in samples] - means)) < 0.05  # se of a mean of 2000: 0.007


def test_two_level_gaussian_homogeneous_and_seeded():
    means, _ = two_level_gaussian(np.full(50, 10), 1.6, 0.001, 0.1, rng())
    assert np.all(np.abs(means - 1.6) < 0.2)  # sigma_0 = 0.032
    again, _ = two_level_gaussian(np.full(50, 10), 1.6, 0.001, 0.1, rng())
    other, _ = two_level_gaussian(np.full(50, 10), 1.6, 0.001, 0.1, rng(1))
    assert np.array_equal(means, again) and not np.array_equal(means, other)
    with pytest.raises(ValueError):
        two_level_gaussian(np.full(3, 10), 1.6, 0.001, 0.0, rng())
