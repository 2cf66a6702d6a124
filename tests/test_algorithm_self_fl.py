"""Self-FL: Algorithm 1 by hand (eq. 8, 10, 11, 13, 14, 19 and the 4.1 smoothing), its traffic,
its Fisher variances and targets, and personalized estimates on the two-level Gaussian model of
section 2."""

import json
import math

import numpy as np
import pytest
import torch

from learning.algorithms import ALGORITHMS, LearnerSetup
from learning.algorithms.self_fl import local_steps, online_variance, variance_weights
from learning.data import DeviceData, FederatedData
from learning.training import LocalTraining
from netsim import NetworkSystem, RunOptions, run_cosimulation
from scenarios.cli.main import main
from tiny_learners import build, run_round, scalar_data, values

LR, MAX_STEPS = 0.1, 8
TRAIN = [[1.0, 3.0], [5.0, 5.0, 5.0, 5.0], [0.0, 1.0, 2.0]]


def test_online_variance_is_the_empirical_trace_variance():
    points = torch.tensor([[0.0, 1.0], [2.0, -1.0], [4.0, 3.0], [-1.0, 0.5]])
    count, mean, variance = 0, torch.zeros(2), 0.0
    for t, x in enumerate(points, start=1):
        count, mean, variance = online_variance(count, mean, variance, x)
        assert count == t
        assert variance == pytest.approx(float(np.var(points[:t].numpy(), axis=0).sum()), rel=1e-6)  # eq. 18


def test_local_steps_solve_eq_8():
    # (1 - 0.01/0.1)^l = 10 / (1/0.1 + 10) = 1/2  ->  l = log 0.5 / log 0.9 = 6.58 -> 7
    assert local_steps(0.01, 0.1, 10.0, 40) == 7
    assert local_steps(0.01, 0.1, 10.0, 5) == 5  # the l_max cap
    assert local_steps(0.2, 0.1, 10.0, 40) == 1  # eta >= sigma_m^2: one step passes the optimum


def test_variance_weights_are_eq_11():
    np.testing.assert_allclose(variance_weights(1.0, [0.0, 1.0, 3.0]), [4 / 7, 2 / 7, 1 / 7])
    np.testing.assert_allclose(variance_weights(0.0, [0.0, 0.5, 0.0]), [0.5, 0.0, 0.5])  # infinite precision
    np.testing.assert_allclose(variance_weights(1.0, [math.inf, 1.0, 3.0]), [0.0, 2 / 3, 1 / 3])  # no information
    np.testing.assert_allclose(variance_weights(1.0, [math.inf, math.inf]), [0.5, 0.5])


def test_rounds_follow_algorithm_1_by_hand():
    """Full-batch steps on mean squared error: l steps from s give ``z + (1 - 2 lr)^l (s - z)``."""
    self_fl = build("self-fl", scalar_data(TRAIN), max_local_steps=MAX_STEPS)
    z = np.array([np.mean(v) for v in TRAIN])
    n = np.array([len(v) for v in TRAIN], dtype=float)
    contraction = 1 - 2 * LR
    g, inter, personal = 0.0, 0.0, np.zeros(3)
    history: list[list[float]] = [[], [], []]
    for server_round in range(1, 6):
        plan = run_round(self_fl, server_round)
        steps = {}
        variances = [np.var(h) if h else 0.0 for h in history]  # eq. 13 / 18, before this round
        for m in range(3):
            if len(history[m]) < 2:  # sigma_m^2 not estimable yet: warm start
                start, steps[m] = g, MAX_STEPS
            else:
                intra = variances[m]
                others = sum(1 / (inter + variances[k]) for k in range(3) if k != m)
                start = g + (1 / (inter + intra)) / others * (g - personal[m])  # eq. 10
                ratio, eta = others / (1 / intra + others), LR / n[m]
                steps[m] = 1 if eta >= intra else min(MAX_STEPS, max(1, round(math.log(ratio) / math.log(1 - eta / intra))))  # eq. 8
            personal[m] = z[m] + contraction ** steps[m] * (start - z[m])
            history[m].append(personal[m])
        inter = np.var(personal)  # eq. 14
        weights = 1 / (inter + np.array([np.var(h) for h in history]))
        g = float(weights @ personal / weights.sum())  # eq. 11, C = 1
        assert plan.compute_scale == {m: float(steps[m]) for m in range(3)}
        np.testing.assert_allclose(values(self_fl.theta), personal, rtol=1e-5)
        assert float(self_fl.global_model) == pytest.approx(g, rel=1e-5)
    assert len(set(steps.values())) > 1  # the rule was exercised: the steps differ between clients


def test_fisher_variances_and_the_hierarchical_target_by_hand():
    """intra_variance=fisher: sigma_m^2 = 1 / (N_m F) with F = 1 / v^2 = 2 (sec. 3.1), known after
    one activation; target=hierarchical: eq. 8 with the prior precision (sigma_0^2 + 1/S_-m)^-1."""
    self_fl = build("self-fl", scalar_data(TRAIN), max_local_steps=MAX_STEPS, intra_variance="fisher", target="hierarchical")
    z = np.array([np.mean(v) for v in TRAIN])
    n = np.array([len(v) for v in TRAIN], dtype=float)
    intra = 1 / (2 * n)
    g, inter, personal, known = 0.0, 0.0, np.zeros(3), False
    for server_round in range(1, 5):
        plan = run_round(self_fl, server_round)
        steps = {}
        for m in range(3):
            if not known:  # first activation: warm start
                start, steps[m] = g, MAX_STEPS
            else:
                others = sum(1 / (inter + intra[k]) for k in range(3) if k != m)
                start = g + (1 / (inter + intra[m])) / others * (g - personal[m])  # eq. 10
                prior = 1 / (inter + 1 / others)
                ratio = prior / (1 / intra[m] + prior)
                steps[m] = min(MAX_STEPS, max(1, round(math.log(ratio) / math.log(1 - 2 * LR))))  # eq. 8, eta / sigma_m^2 = 2 lr
            personal[m] = z[m] + (1 - 2 * LR) ** steps[m] * (start - z[m])
        known = True
        inter = np.var(personal)
        weights = 1 / (inter + intra)
        g = float(weights @ personal / weights.sum())
        np.testing.assert_allclose(self_fl.intra, intra, rtol=1e-6)
        assert plan.compute_scale == {m: float(steps[m]) for m in range(3)}
        np.testing.assert_allclose(values(self_fl.theta), personal, rtol=1e-5)
        assert float(self_fl.global_model) == pytest.approx(g, rel=1e-5)


def test_unknown_estimator_or_target_is_refused():
    with pytest.raises(ValueError, match="intra_variance"):
        build("self-fl", scalar_data(TRAIN), intra_variance="bootstrap")
    with pytest.raises(ValueError, match="target"):
        build("self-fl", scalar_data(TRAIN), target="bayes")


def test_smoothing_with_the_activity_rate():
    """C = 1/2: two of four clients; theta^1 = (1 - C) theta^0 + C * (their eq. 11 average)."""
    data = scalar_data([[1.0], [2.0], [3.0], [4.0]])
    setup = LearnerSetup(data, "scalar-mean", {}, LocalTraining(lr=LR, momentum=0.0, batch_size=100, epochs=1),
                         np.random.SeedSequence(0), participation=0.5, options={"max_local_steps": 3})
    self_fl = ALGORITHMS["self-fl"](setup)
    plan = run_round(self_fl, 1)
    assert len(plan.participants) == 2
    local = [(1 - (1 - 2 * LR) ** 3) * (d + 1.0) for d in plan.participants]  # from theta^0 = 0
    assert float(self_fl.global_model) == pytest.approx(0.5 * np.mean(local), rel=1e-5)  # equal weights: sigma_m^2 = 0


def test_traffic_is_one_broadcast_of_the_model_and_two_scalars():
    self_fl = build("self-fl", scalar_data(TRAIN))
    assert self_fl.plan_round(0) is None
    plan = self_fl.plan_round(1)
    assert [(s.devices, s.bits) for s in plan.streams] == [((0, 1, 2), 32.0 + 64.0)]  # theta, sigma_0^2, precision
    assert plan.uplink_bits == {0: 64.0, 1: 64.0, 2: 64.0}  # theta_m, sigma_m^2


# --- the two-level Gaussian model (sec. 2.1) -----------------------------------------
# Samples have variance 1/2, so the Trainer's mean squared error is the per-sample negative
# log-likelihood and eq. 8's eta = lr / n_m is exact. The paper's G.1 uses variance 0.1; its
# cases are the ratios sigma_0^2 / 0.1 = 0.01 (case 1) and 10 (case 2).
NOISE_VARIANCE = 0.5
THETA_0 = 1.6 * math.sqrt(NOISE_VARIANCE / 0.1)
ROUNDS = 20
GAUSSIAN_TRAINING = LocalTraining(lr=0.1, momentum=0.0, batch_size=256, epochs=5)


def two_level_gaussian(seed: int, devices: int, inter_variance: float, sizes: tuple[int, int]) -> FederatedData:
    """theta_m ~ N(THETA_0, sigma_0^2); N_m ~ U{sizes} samples ~ N(theta_m, 1/2), plus 5 for validation."""
    rng = np.random.default_rng(seed)
    n = rng.integers(sizes[0], sizes[1], size=devices, endpoint=True)
    means = THETA_0 + math.sqrt(inter_variance) * rng.standard_normal(devices)
    parts = []
    for m in range(devices):
        y = torch.as_tensor(means[m] + math.sqrt(NOISE_VARIANCE) * rng.standard_normal(n[m] + 5), dtype=torch.float32)
        x = torch.zeros(n[m] + 5, 1)
        parts.append(DeviceData(x[: n[m]], y[: n[m]], x[n[m] :], y[n[m] :]))
    return FederatedData(tuple(parts), num_classes=1, task="regression", info={"true_parameters": means.reshape(-1, 1)})


def estimation_error(name: str, data: FederatedData, **options) -> float:
    setup = LearnerSetup(data, "scalar-mean", {}, GAUSSIAN_TRAINING, np.random.SeedSequence(1), options=options)
    learner = ALGORITHMS[name](setup)
    records, _ = run_cosimulation(learner, NetworkSystem(rho=1, t_min=1, inv_mu=0), ROUNDS, np.random.default_rng(0),
                                  RunOptions(evaluate_every=ROUNDS))
    return records[-1].evaluation.extras["estimation_error"]


def target_estimates(data: FederatedData, inter_variance: float, target: str) -> np.ndarray:
    """Self-FL's targets with the true variances, ``(z_m / s_m + P_m loo_m) / (1 / s_m + P_m)``
    with loo_m the others' precision-weighted mean: eq. 3 has ``P_m = S_-m = sum_{k != m}
    (sigma_0^2 + s_k)^-1``; the posterior mean under the two-level model ``(sigma_0^2 + 1/S_-m)^-1``."""
    z = np.array([float(d.y_train.double().mean()) for d in data.devices])
    s = NOISE_VARIANCE / data.train_sizes
    w = 1 / (inter_variance + s)
    others = w.sum() - w
    leave_one_out = (w @ z - w * z) / others
    prior = others if target == "paper" else 1 / (inter_variance + 1 / others)
    return (z / s + prior * leave_one_out) / (1 / s + prior)


@pytest.mark.parametrize("sizes", [(10, 20), (5, 40)], ids=["similar-sizes", "unequal-sizes"])
def test_personal_estimates_beat_fedavg_and_local_when_clients_differ_less_than_their_noise(sizes):
    """sigma_0^2 = 0.02 (the true means differ by less than a client's sampling error, 0.5 / N_m):
    Self-FL's personal estimates are closer to the true theta_m than FedAvg's global model and
    than local estimates (60 clients, so one draw decides; measured over 6 draws: 0.0141 vs
    0.0198 vs 0.0375 for similar sizes, 0.0134 vs 0.0194 vs 0.0301 for sizes 5..40)."""
    data = two_level_gaussian(0, 60, 0.02, sizes)
    self_fl = estimation_error("self-fl", data, max_local_steps=40)
    fedavg = estimation_error("fedavg", data)
    local = estimation_error("local", data)
    assert self_fl < 0.9 * fedavg and self_fl < 0.9 * local, (self_fl, fedavg, local)


def test_strong_heterogeneity_beats_fedavg_but_the_papers_target_loses_to_local():
    """G.1 case 2 (sigma_0^2 = 10 x the sample variance, N_m ~ U{10..200}, M = 20): Self-FL is
    far closer than FedAvg. It is not closer than local training (measured: 0.0116 vs 0.0084
    over 6 draws): the paper's own target, eq. 3, pulls each client towards the others' mean
    about M s_m / sigma_0^2, much more than the posterior mean does, and over 10 draws it is
    farther than local even with the true variances, while the posterior mean is closer (by
    a few per cent only: with sigma_0^2 this large each client nearly learns on its own)."""
    inter = 10 * NOISE_VARIANCE
    errors = {"paper": [], "hierarchical": [], "local": []}
    for seed in range(10):
        data = two_level_gaussian(seed, 20, inter, (10, 200))
        truth = data.info["true_parameters"].ravel()
        errors["local"].append(np.mean((np.array([float(d.y_train.double().mean()) for d in data.devices]) - truth) ** 2))
        for target in ("paper", "hierarchical"):
            errors[target].append(np.mean((target_estimates(data, inter, target) - truth) ** 2))
    mean = {name: np.mean(values) for name, values in errors.items()}
    assert mean["hierarchical"] < mean["local"] < mean["paper"], mean
    data = two_level_gaussian(0, 20, inter, (10, 200))
    self_fl = estimation_error("self-fl", data, max_local_steps=40)
    assert self_fl < 0.01 * estimation_error("fedavg", data)


@pytest.mark.parametrize("target", ["paper", "hierarchical"])
def test_fisher_variances_lead_algorithm_1_to_its_target(target):
    """G.1 case 2 with intra_variance=fisher (sigma_m^2 = 0.5 / N_m, exact here): the personal
    estimates settle on the declared target, eq. 3 (prior precision S_-m) or the posterior mean
    (prior precision (sigma_0^2 + 1/S_-m)^-1), with the server's own sigma_0^2: their distance to
    it is under 15% of the local estimates' (measured: 5-9%; integer step counts leave the rest)."""
    data = two_level_gaussian(0, 20, 10 * NOISE_VARIANCE, (10, 200))
    setup = LearnerSetup(data, "scalar-mean", {}, GAUSSIAN_TRAINING, np.random.SeedSequence(1),
                         options={"max_local_steps": 40, "intra_variance": "fisher", "target": target})
    learner = ALGORITHMS["self-fl"](setup)
    run_cosimulation(learner, NetworkSystem(rho=1, t_min=1, inv_mu=0), ROUNDS, np.random.default_rng(0), RunOptions(evaluate_every=ROUNDS))
    expected = target_estimates(data, learner.inter, target)
    z = np.array([float(d.y_train.double().mean()) for d in data.devices])
    personal = values(learner.theta)
    assert np.sqrt(np.mean((personal - expected) ** 2)) < 0.15 * np.sqrt(np.mean((z - expected) ** 2))


@pytest.mark.parametrize("scenario", ["synthetic-gaussian", "synthetic-gaussian-heterogeneous"])
def test_registered_g1_scenarios_through_the_cli(scenario, tmp_path, capsys):
    """Both G.1 cases, 10 rounds (the estimates have settled by then: self-fl 0.000821 vs FedAvg
    0.000843 homogeneous, 0.00217 vs local 0.00221 heterogeneous, the order 20 rounds give), seed 0:
    with the posterior-mean target Self-FL's estimates are closer to the true parameters than
    FedAvg's and than local training's. Measured over 6 seeds at 200 rounds (mean squared error):
    homogeneous 0.00132 vs FedAvg 0.00141 vs local 0.00597 (5 and 6 of 6 draws),
    heterogeneous 0.00192 vs FedAvg 1.0 vs local 0.00197 (6 and 5 of 6); the paper's target
    gives 0.00144 and 0.00363."""
    code = main(["run", "--scenario", scenario, "--algorithm", "self-fl", "fedavg", "local", "--option", "target=hierarchical",
                 "--rounds", "10", "--eval-every", "10", "--out", str(tmp_path), "--no-figure", "--json",
                 "--backend", "batched", "--device", "cpu"])  # up to 2,000 steps a device a round: the batched engine
    assert code == 0
    error = {run["algorithm"]: run["estimation_error"] for run in json.loads(capsys.readouterr().out)["runs"]}
    assert error["self-fl"] < error["fedavg"] and error["self-fl"] < error["local"], error
