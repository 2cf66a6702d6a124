"""Training settings as named choices: the initialization schemes' bounds by hand, Adam's
per-device state kept across rounds by hand, the reference eq. 10 mini-batches, and the
settings recorded in (and refused by) the command line."""

import json
import math

import numpy as np
import pytest
import torch

from learning.engine import resolve_training
from learning.models import build_model, fans
from learning.training import ADAM_BETAS, ADAM_EPS, LocalTraining
from scenarios.cli.main import main
from tiny_learners import build, run_round, scalar_data, values


def test_fans_of_dense_and_convolution_kernels():
    assert fans(torch.empty(120, 400)) == (400, 120)
    assert fans(torch.empty(16, 6, 5, 5)) == (150, 400)


@pytest.mark.parametrize("init", ["keras", "torch"])
def test_lenet5_initialization_bounds(init):
    model = build_model("lenet5", torch.Generator().manual_seed(0), init)
    conv1, conv2 = model.features[0], model.features[3]
    dense1, dense3 = model.classifier[1], model.classifier[5]
    if init == "keras":  # He-uniform conv sqrt(6 / fan_in), Glorot-uniform dense sqrt(6 / (in + out)), zero biases
        expected = {conv1: math.sqrt(6 / 25), conv2: math.sqrt(6 / 150), dense1: math.sqrt(6 / (400 + 120)),
                    dense3: math.sqrt(6 / (84 + 10))}
        for layer in expected:
            assert torch.all(layer.bias == 0)
    else:  # Kaiming-uniform with a = sqrt(5): 1 / sqrt(fan_in), biases the same bound
        expected = {conv1: 1 / 5, conv2: 1 / math.sqrt(150), dense1: 1 / 20, dense3: 1 / math.sqrt(84)}
        for layer, bound in expected.items():
            assert 0 < float(layer.bias.detach().abs().max()) <= bound
    for layer, bound in expected.items():
        largest = float(layer.weight.detach().abs().max())
        assert 0.9 * bound < largest <= bound  # hundreds of uniform draws come close to the bound


def test_keras_embedding_is_he_uniform_over_the_vocabulary():
    model = build_model("text-mean-pool", torch.Generator().manual_seed(0), "keras", vocab_size=600)
    largest = float(model.embedding.weight.detach().abs().max())
    assert 0.9 * math.sqrt(6 / 600) < largest <= math.sqrt(6 / 600)


def adam_step(theta, m, v, t, gradient, lr):
    m = ADAM_BETAS[0] * m + (1 - ADAM_BETAS[0]) * gradient
    v = ADAM_BETAS[1] * v + (1 - ADAM_BETAS[1]) * gradient**2
    m_hat, v_hat = m / (1 - ADAM_BETAS[0] ** t), v / (1 - ADAM_BETAS[1] ** t)
    return theta - lr * m_hat / (math.sqrt(v_hat) + ADAM_EPS), m, v


def test_adam_keeps_each_devices_moments_across_rounds():
    """FedAvg on two scalar devices (means 2 and 5, sizes 2 and 4), one full-batch Adam step
    per round; the squared-error gradient is 2 (theta - mean). Round 2 continues each device's
    moments and step count from round 1 (t = 2), from the averaged model."""
    data = scalar_data([[1.0, 3.0], [5.0, 5.0, 5.0, 5.0]])
    learner = build("fedavg", data, {"optimizer": "adam", "lr": 0.1})
    means, weights = (2.0, 5.0), (2 / 6, 4 / 6)
    theta, moments = 0.0, [(0.0, 0.0), (0.0, 0.0)]
    for t in (1, 2):
        run_round(learner, t)
        local = []
        for device in (0, 1):
            step, m, v = adam_step(theta, *moments[device], t, 2 * (theta - means[device]), 0.1)
            local.append(step)
            moments[device] = (m, v)
        theta = weights[0] * local[0] + weights[1] * local[1]
        np.testing.assert_allclose(values(learner.theta), [theta, theta], rtol=1e-6)
    # with fresh moments every round, round 2 would be a full step of lr from the average
    state = learner.trainer.optimizer_states[("model", 1)]
    assert state.step == 2 and float(state.exp_avg) == pytest.approx(moments[1][0], rel=1e-6)


def test_sgd_starts_its_momentum_afresh_every_round():
    data = scalar_data([[1.0, 3.0]])
    learner = build("local", data, {"momentum": 0.5})
    run_round(learner, 1)
    run_round(learner, 2)  # one step each round: 0 -> 0.4 -> 0.4 + 0.1 * 2 * 1.6 (no momentum carried)
    assert float(learner.theta[0]) == pytest.approx(0.72)
    assert learner.trainer.optimizer_states == {}


def test_reference_variance_batches_are_two_overlapping_draws_of_0_4_n():
    """d = 2.5 on 10 points: floor(2.5) = 2 batches of floor(10 / 2.5) = 4, each without
    replacement, independent of each other."""
    data = scalar_data([list(np.arange(10.0)), list(np.arange(5.0))])
    learner = build("user-centric", data, variance_batches="reference")
    batches = learner.variance_mini_batches(0)
    assert [len(b) for b in batches] == [4, 4] and all(len(set(b)) == 4 for b in batches)
    assert [len(b) for b in learner.variance_mini_batches(1)] == [2, 2]
    disjoint = build("user-centric", data, variance_batch_fraction=0.3)
    batches = disjoint.variance_mini_batches(0)
    assert [len(b) for b in batches] == [3, 3, 3] and len(set(np.concatenate(batches))) == 9
    with pytest.raises(ValueError, match="variance_batches"):
        build("user-centric", data, variance_batches="overlapping")


def test_training_settings_are_recorded_in_the_config(tmp_path, capsys):
    args = ["run", "--algorithm", "fedavg", "--rounds", "1", "--out", str(tmp_path), "--no-figure", "--json",
            "--optimizer", "adam", "--init", "torch", "--lr", "0.02", "--batch-size", "8", "--epochs", "2", "--device", "auto"]
    assert main(args) == 0
    run_dir = json.loads(capsys.readouterr().out)["runs"][0]["result_dir"]
    training = json.loads(open(f"{run_dir}/config.json").read())["training"]
    assert training == {"optimizer": "adam", "init": "torch", "lr": 0.02, "momentum": 0.9, "batch_size": 8, "epochs": 2,
                        # auto: one small round costs less than starting workers, or CUDA (learning/engine/auto.py)
                        "backend": "loop", "device": "cpu"}


@pytest.mark.parametrize("flags, message", [
    (["--lr", "0"], "training lr must be a finite number > 0, got 0.0"),
    (["--lr", "nan"], "training lr must be a finite number > 0, got nan"),
    (["--momentum", "1"], "training momentum must be a finite number in [0, 1), got 1.0"),
    (["--batch-size", "0"], "training batch_size must be an integer in 1..10000"),
    (["--epochs", "-1"], "training epochs must be an integer in 1..10000"),
    (["--optimizer", "rmsprop"], "invalid choice"),
    (["--init", "xavier"], "invalid choice"),
    (["--device", "tpu"], "training device must be auto, cpu, cuda or cuda:N"),
])
def test_bad_training_settings_get_one_line_and_nothing_written(tmp_path, capsys, flags, message):
    out = tmp_path / "out"
    assert main(["run", "--algorithm", "fedavg", "--rounds", "1", "--out", str(out)] + flags) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not any(out.glob("*/config.json"))


def test_auto_device_and_backend_resolve_to_this_machine():
    cuda = torch.cuda.is_available()
    resolved = resolve_training(LocalTraining())
    assert (resolved.device, resolved.backend) == (("cuda", "batched") if cuda else ("cpu", "processes"))
    assert resolve_training(LocalTraining(backend="loop")).device == "cpu"  # a CPU backend keeps auto on the CPU
    assert resolve_training(LocalTraining(backend="batched", device="cpu")).backend == "batched"
    with pytest.raises(ValueError, match="backend loop trains on the CPU; on cuda:1 use backend batched"):
        LocalTraining(backend="loop", device="cuda:1")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a machine without CUDA")
def test_cuda_without_a_gpu_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["run", "--algorithm", "fedavg", "--rounds", "1", "--out", str(tmp_path / "out"), "--device", "cuda"]) == 2
    err = capsys.readouterr().err.strip()
    assert "device cuda: no CUDA device on this machine" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists()
