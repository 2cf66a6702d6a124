"""pFedLIA: FedAvg warm-up, the lazy-influence round (eq. 1) and its traffic, clustering in
both modes, and the clusters found on pathological digits."""

import numpy as np
import pytest

from learning.algorithms import ALGORITHMS, LearnerSetup
from learning.data import FederatedData
from learning.training import LocalTraining
from netsim import NetworkSystem, RunOptions, run_cosimulation
from scenarios.definitions.partitions import pathological_split
from scenarios.definitions.scenario import devices_from_indices
from tiny_learners import build, run_round, scalar_data

LR, INFLUENCE_EPOCHS = 0.1, 2
TRAIN = [[1.0, 1.0], [1.2, 1.2], [5.0, 5.0], [5.2, 5.2], [5.1, 4.9]]
VAL = [[1.0, 0.8], [1.3], [5.0, 5.4], [5.0], [5.1]]
GROUPS = [0, 0, 1, 1, 1]


def influence_learner(mode="centralized"):
    data = scalar_data(TRAIN, VAL, groups=GROUPS)
    return build("pfedlia", data, warmup_rounds=1, influence_epochs=INFLUENCE_EPOCHS, mode=mode, min_samples=2)


def test_influence_is_eq_1_by_hand():
    """Round 1 is FedAvg (one full-batch step from 0: ``0.2 z``); in round 2 each device takes 2
    steps from the warm model g, ``z + 0.8^2 (g - z)``, and I(i, j) is i's validation-loss drop."""
    pfedlia = influence_learner()
    run_round(pfedlia, 1)
    z = np.array([np.mean(v) for v in TRAIN])
    n = np.array([len(v) for v in TRAIN], dtype=float)
    g = float(n @ (2 * LR * z) / n.sum())
    run_round(pfedlia, 2)
    partial = z + (1 - 2 * LR) ** INFLUENCE_EPOCHS * (g - z)
    expected = np.array([[sum((g - y) ** 2 - (partial[j] - y) ** 2 for y in VAL[i]) for j in range(5)] for i in range(5)])
    np.testing.assert_allclose(pfedlia.influence, expected, rtol=1e-4, atol=1e-5)
    assert expected[0, 1] > 0 > expected[0, 2]  # a group peer helps device 0, the other group hurts it


def test_influence_round_traffic_and_round_numbering():
    pfedlia = influence_learner()
    fedavg = build("fedavg", scalar_data(TRAIN, VAL))
    assert run_round(pfedlia, 1) == run_round(fedavg, 1)  # warm-up rounds are FedAvg's
    plan = run_round(pfedlia, 2)  # round W + 1: the exchange
    everyone = (0, 1, 2, 3, 4)
    assert [(s.devices, s.bits) for s in plan.streams] == [(everyone, 32.0)] * (1 + 5)  # warm model, then 5 relays
    assert plan.uplink_bits == {d: 32.0 + 5 * 32.0 for d in everyone}  # partial model + 5 influence scores
    assert plan.compute_scale == {d: float(INFLUENCE_EPOCHS) for d in everyone}  # 2 epochs of 1 step vs E = 1
    assert run_round(pfedlia, 3).streams == ()  # everyone holds the warm model: nothing to send
    assert sorted(s.devices for s in run_round(pfedlia, 4).streams) == [(0, 1), (2, 3, 4)]  # one stream per cluster


def test_centralized_clusters_and_fedavg_within_them():
    pfedlia = influence_learner()
    assert pfedlia.cluster_labels() is None
    for server_round in (1, 2, 3):
        run_round(pfedlia, server_round)
    assert list(pfedlia.cluster_labels()) == GROUPS
    theta = pfedlia.theta[:, 0].numpy()
    assert theta[0] == theta[1] and theta[2] == theta[3] == theta[4] and theta[0] != theta[2]
    assert pfedlia.evaluate(3).extras["clustering_ari"] == 1.0


@pytest.mark.parametrize("mode", ["centralized", "peer-to-peer"])
def test_a_device_unheard_in_the_influence_round_gets_fedavg_over_the_heard(mode):
    """Device 4's influence upload does not arrive: its row is FedAvg's over devices 0-3 (two
    points each), and no row mixes its updates."""
    pfedlia = influence_learner(mode)
    run_round(pfedlia, 1)
    run_round(pfedlia, 2, arrived=(0, 1, 2, 3))
    np.testing.assert_allclose(pfedlia.weights[4], [0.25, 0.25, 0.25, 0.25, 0.0])
    assert not pfedlia.weights[:4, 4].any()


def test_peer_to_peer_keeps_the_beneficial_side():
    pfedlia = influence_learner("peer-to-peer")
    run_round(pfedlia, 1)
    plan = run_round(pfedlia, 2)
    assert plan.uplink_bits[0] == 32.0 + 5  # partial model + its chosen set, one bit per device
    same_group = np.equal.outer(GROUPS, GROUPS)
    np.testing.assert_array_equal(pfedlia.weights > 0, same_group)  # 2-means on each row: its own group
    assert list(pfedlia.cluster_labels()) == GROUPS


def test_min_samples_default_is_a_tenth_of_the_devices_at_least_3():
    assert build("pfedlia", scalar_data([[1.0]] * 25)).min_samples == 3
    assert build("pfedlia", scalar_data([[1.0]] * 100)).min_samples == 10


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="mode"):
        build("pfedlia", scalar_data(TRAIN), mode="ring")
    with pytest.raises(ValueError, match="pfedlia"):
        build("pfedlia", scalar_data(TRAIN), influence_epochs=0)


# --- pathological non-IID digits: 25 devices, 5 clusters owning 2 labels each ----------
ROUNDS = 40  # 20 warm-up, the exchange in round 21, 19 clustered rounds
TRAINING = LocalTraining(lr=0.05, momentum=0.9, batch_size=16, epochs=1)


def digits_pathological(seed: int) -> FederatedData:
    from sklearn.datasets import load_digits

    digits = load_digits()
    x, y = (digits.data / 16.0).astype(np.float32), digits.target.astype(np.int64)
    rng = np.random.default_rng(seed)
    parts, groups = pathological_split(y, 25, 5, rng)
    return FederatedData(devices_from_indices(x, y, parts, 0.25, rng), num_classes=10, groups=groups)


def final_evaluation(name: str, data: FederatedData, **options):
    setup = LearnerSetup(data, "mlp", {"in_features": 64, "num_classes": 10, "hidden": 32}, TRAINING,
                         np.random.SeedSequence(1), options=options)
    records, _ = run_cosimulation(ALGORITHMS[name](setup), NetworkSystem(rho=1, t_min=1, inv_mu=0), ROUNDS,
                                  np.random.default_rng(0), RunOptions(evaluate_every=ROUNDS))
    return records[-1].evaluation


def test_centralized_pfedlia_finds_the_clusters_and_matches_oracle():
    """Measured over seeds 0-5: ARI 1.0 every time; accuracy 0.980-0.996, at most 0.005 below
    Oracle; FedAvg 0.89-0.91 (with min_samples 2 OPTICS cut clusters in pairs: ARI 0.75-0.92)."""
    data = digits_pathological(0)
    pfedlia = final_evaluation("pfedlia", data)
    oracle = final_evaluation("oracle", data)
    fedavg = final_evaluation("fedavg", data)
    assert pfedlia.extras["clustering_ari"] >= 0.9
    assert pfedlia.mean_accuracy >= oracle.mean_accuracy - 0.01
    assert pfedlia.mean_accuracy >= fedavg.mean_accuracy + 0.05
