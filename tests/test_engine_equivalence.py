"""The batched engine against the reference loop, algorithm by algorithm: a few rounds with
backend ``batched`` give the same state (models, control variates, gradients, weights, Adam
moments) and the same evaluation as backend ``loop``, on unequal local sets (partial last
mini-batches) with partial participation, for SGD with momentum and for Adam (pFedMe and
Per-FedAvg run their own inner loops on the engine's gradients: no optimizer to vary).
The batched run never calls the loop's per-device methods, so the engine is what is compared."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from learning.algorithms import ALGORITHMS, LearnerSetup
from learning.data import DeviceData, FederatedData
from learning.training import LocalTraining, Trainer
from tiny_learners import tell_outcome

SIZES = (9, 14, 23, 30, 17, 40)  # with batch 8: last mini-batches of 1, 6, 7, 6, 1 and 8 samples
GROUPS = (0, 1, 0, 1, 0, 1)
ROUNDS = 3  # after the set-up round 0
FULL = {"cfl"}  # CFL examines a cluster only when all its members arrived: full participation
RTOL, ATOL = 1e-4, 1e-5

CASES = {
    "fedavg": ("fedavg", {}),
    "local": ("local", {}),
    "oracle": ("oracle", {}),
    "user-centric k=m": ("user-centric", {"variance_batch_size": 4}),
    "user-centric k=2": ("user-centric", {"streams": 2, "variance_batches": "reference"}),
    "fedprox": ("fedprox", {"mu": 0.5}),
    "scaffold": ("scaffold", {"local_epochs": 2}),
    "ditto": ("ditto", {"lam": 0.5, "personal_epochs": 2}),
    "cfl": ("cfl", {"eps1": 10.0, "eps2": 0.0}),  # splits whenever all arrive (FULL below)
    "fesem": ("fesem", {"k": 2}),
    "pfedlia": ("pfedlia", {"warmup_rounds": 1, "influence_epochs": 2, "influence_batch_size": 12, "min_samples": 2}),
    "fedfomo": ("fedfomo", {"M": 2}),
    "fedproto": ("fedproto", {"lam": 0.5}),  # the prototype term from round 2 on
    "self-fl": ("self-fl", {"max_local_steps": 5}),
    "parallel-user-centric": ("parallel-user-centric", {"streams": 2, "variance_batch_size": 4}),
    "pfedme": ("pfedme", {"R": 3, "K": 2, "batch_size": 6}),  # their own inner loops over batched gradients
    "per-fedavg": ("per-fedavg", {"adaptation_steps": 2}),
}


def tiny_data(image: tuple[int, ...] = (1, 8, 8)) -> FederatedData:
    generator = torch.Generator().manual_seed(0)
    devices = []
    for index, n in enumerate(SIZES):
        shift = float(GROUPS[index])  # the groups see different inputs
        x = torch.randn(n, *image, generator=generator) + shift
        y = torch.randint(0, 4, (n,), generator=generator)
        val = 3 + index % 3
        devices.append(DeviceData(x, y, torch.randn(val, *image, generator=generator) + shift, torch.randint(0, 4, (val,), generator=generator)))
    return FederatedData(tuple(devices), num_classes=4, groups=np.array(GROUPS))


def learner(algorithm, options, backend, optimizer, model="mlp", participation=0.5):
    data = tiny_data()
    kwargs = {"in_features": 64, "num_classes": 4, "hidden": 16} if model == "mlp" else {"num_classes": 4, "width": 4}
    lr = 0.05 if optimizer == "sgd" else 0.01
    training = LocalTraining(lr=lr, momentum=0.9, batch_size=8, optimizer=optimizer, backend=backend, device="cpu")
    setup = LearnerSetup(data, model, kwargs, training, np.random.SeedSequence(3), participation, options)
    return ALGORITHMS[algorithm](setup)


def run_rounds(learner, rounds=ROUNDS):
    """The protocol without the network: plan, local updates, aggregation, evaluation."""
    evaluations = []
    for server_round in range(rounds + 1):
        plan = learner.plan_round(server_round)
        devices = plan.participants if plan is not None else ()
        tell_outcome(learner, server_round, plan, devices)
        learner.local_update(server_round, devices)
        learner.aggregate(server_round, devices)
        evaluations.append(learner.evaluate(server_round))
    return evaluations


def refuse_the_loop(patch) -> None:
    """The loop's per-device training, evaluation and gradients fail: what runs is the engine."""
    for name in ("train", "evaluate", "mean_gradient"):
        patch.setattr(Trainer, name, lambda *a, **k: pytest.fail(f"the batched backend called Trainer.{name}"))


def state(learner) -> dict:
    """Every array of the learner (and its Adam states), by name."""
    out = {}
    for name, value in vars(learner).items():
        if isinstance(value, torch.Tensor):
            out[name] = value.detach().cpu().double().numpy()
        elif isinstance(value, np.ndarray) and value.dtype != object:
            out[name] = value
    for key, adam in learner.trainer.optimizer_states.items():
        out[f"adam {key}"] = (adam.exp_avg.cpu().double().numpy(), adam.exp_avg_sq.cpu().double().numpy(), adam.step)
    return out


def assert_same(reference: dict, batched: dict) -> None:
    assert reference.keys() == batched.keys()
    for name, value in reference.items():
        if isinstance(value, tuple):
            np.testing.assert_allclose(batched[name][0], value[0], rtol=RTOL, atol=ATOL, err_msg=name)
            np.testing.assert_allclose(batched[name][1], value[1], rtol=RTOL, atol=ATOL, err_msg=name)
            assert batched[name][2] == value[2], name
        else:
            np.testing.assert_allclose(batched[name], value, rtol=RTOL, atol=ATOL, err_msg=name)


OWN_LOOPS = {"pfedme", "per-fedavg"}  # no local optimizer: SGD only


@pytest.mark.parametrize("case, optimizer", [(case, optimizer) for case in sorted(CASES) for optimizer in ("sgd", "adam")
                                             if optimizer == "sgd" or case not in OWN_LOOPS])
def test_batched_engine_gives_the_loops_state(case, optimizer, monkeypatch):
    algorithm, options = CASES[case]
    participation = 1.0 if case in FULL else 0.5
    reference = learner(algorithm, options, "loop", optimizer, participation=participation)
    expected = run_rounds(reference)
    batched = learner(algorithm, options, "batched", optimizer, participation=participation)
    with monkeypatch.context() as patch:
        refuse_the_loop(patch)
        got = run_rounds(batched)
    assert_same(state(reference), state(batched))
    for a, b in zip(expected, got):
        np.testing.assert_allclose(b.loss, a.loss, rtol=RTOL, atol=ATOL)
        np.testing.assert_array_equal(b.accuracy, a.accuracy)
    if optimizer == "adam":
        assert reference.trainer.optimizer_states  # Adam's states were compared


@pytest.mark.parametrize("case", ["fedavg", "scaffold", "ditto"])
def test_batched_engine_on_a_convolutional_model(case, monkeypatch):
    algorithm, options = CASES[case]
    reference = learner(algorithm, options, "loop", "sgd", model="small-cnn")
    run_rounds(reference, 2)
    batched = learner(algorithm, options, "batched", "sgd", model="small-cnn")
    with monkeypatch.context() as patch:
        refuse_the_loop(patch)
        run_rounds(batched, 2)
    assert_same(state(reference), state(batched))


def test_fedproto_trains_on_the_loop_and_evaluates_through_the_engine():
    """FedProto's own loss stays on the loop; its evaluation through the engine is the loop's."""
    runs = []
    for backend in ("loop", "batched"):
        fedproto = learner("fedproto", {}, backend, "sgd")
        runs.append((run_rounds(fedproto, 2), state(fedproto)))
    assert_same(runs[0][1], runs[1][1])
    for a, b in zip(runs[0][0], runs[1][0]):
        np.testing.assert_allclose(b.loss, a.loss, rtol=RTOL, atol=ATOL)
