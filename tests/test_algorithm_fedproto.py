"""FedProto: prototypes (mean embeddings per class) averaged by class counts, the prototype
term of the local loss, personal models never averaged, and its tiny traffic."""

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from learning.algorithms import ALGORITHMS, LearnerSetup
from learning.data import DeviceData, FederatedData
from learning.training import LocalTraining
from tiny_learners import run_round, scalar_data

LR, LAM = 0.1, 0.5
X = [torch.tensor([[1.0, 0.0], [3.0, 2.0], [0.0, 4.0]]), torch.tensor([[2.0, 2.0], [4.0, 0.0], [1.0, 1.0], [5.0, 5.0]])]
Y = [torch.tensor([0, 0, 1]), torch.tensor([1, 2, 2, 1])]


def classification_data(xs=X, ys=Y, num_classes=3) -> FederatedData:
    return FederatedData(tuple(DeviceData(x, y, x, y) for x, y in zip(xs, ys)), num_classes=num_classes)


def learner(name, data, model="logistic", model_kwargs=None, batch_size=100, **options):
    kwargs = {"in_features": 2, "num_classes": data.num_classes} if model_kwargs is None else model_kwargs
    setup = LearnerSetup(data, model, kwargs, LocalTraining(lr=LR, momentum=0.0, batch_size=batch_size, epochs=1),
                         np.random.SeedSequence(0), options=options)
    return ALGORITHMS[name](setup)


def test_prototypes_are_count_weighted_class_means():
    """Logistic regression: the embedding (input of the last Linear) is x itself, so the local
    prototypes are class means of x, whatever the training did."""
    proto = learner("fedproto", classification_data())
    run_round(proto, 1)
    expected_local = torch.tensor([[[2.0, 1.0], [0.0, 4.0], [0.0, 0.0]], [[0.0, 0.0], [3.5, 3.5], [2.5, 0.5]]])
    torch.testing.assert_close(proto.local_prototypes, expected_local)
    # class 1: device 0 holds one point (0, 4), device 1 two with mean (3.5, 3.5)
    expected_global = torch.tensor([[2.0, 1.0], [(0.0 + 2 * 3.5) / 3, (4.0 + 2 * 3.5) / 3], [2.5, 0.5]])
    torch.testing.assert_close(proto.global_prototypes, expected_global)
    assert proto.has_global.tolist() == [True, True, True]


def test_local_loss_adds_the_prototype_term():
    """One full-batch SGD step of an MLP on ``CE + lam * mean_batch ||h(x) - C_y||^2``; only
    class 0 has a global prototype, so class-1 samples add no prototype term."""
    data = classification_data(X[:1], Y[:1], num_classes=2)
    kwargs = {"in_features": 2, "num_classes": 2, "hidden": 3}
    proto = learner("fedproto", data, "mlp", kwargs, lam=LAM)
    target = torch.tensor([[0.5, -1.0, 2.0], [0.0, 0.0, 0.0]])
    proto.global_prototypes[:] = target
    proto.has_global[:] = torch.tensor([True, False])
    start = proto.theta[0].clone()
    proto.local_update(1, [0])
    params = start.clone().requires_grad_(True)
    w1, b1, w2, b2 = params[:6].view(3, 2), params[6:9], params[9:15].view(2, 3), params[15:17]
    h = torch.relu(X[0] @ w1.T + b1)
    loss = F.cross_entropy(h @ w2.T + b2, Y[0]) + LAM * ((h[Y[0] == 0] - target[0]) ** 2).sum() / 3
    (gradient,) = torch.autograd.grad(loss, params)
    torch.testing.assert_close(proto.theta[0], start - LR * gradient)


def test_without_the_prototype_term_it_is_local_training():
    data = classification_data()
    kwargs = {"in_features": 2, "num_classes": 3, "hidden": 4}
    proto = learner("fedproto", data, "mlp", kwargs, batch_size=2, lam=0.0)
    local = learner("local", data, "mlp", kwargs, batch_size=2)
    for server_round in (1, 2, 3):
        run_round(proto, server_round)
        run_round(local, server_round)
    torch.testing.assert_close(proto.theta, local.theta)  # personal models, never averaged
    assert not torch.equal(proto.theta[0], proto.theta[1])


def test_traffic_is_prototypes_only():
    """LeNet-5 (61,706 parameters; embedding: the 84 inputs of its last layer), 10 classes: a
    prototype is 84 x 32 bits (and its 32-bit class count on the uplink)."""
    rng = np.random.default_rng(0)
    xs = [torch.as_tensor(rng.random((6, 1, 28, 28)), dtype=torch.float32) for _ in range(4)]
    ys = [torch.as_tensor(rng.permutation(np.resize(classes, 6))) for classes in ([0, 1], [2, 3, 4], [5], [6, 7, 8, 9])]
    data = classification_data(xs, ys, num_classes=10)
    kwargs = {"in_channels": 1, "image_size": 28, "num_classes": 10}
    proto, fedavg = learner("fedproto", data, "lenet5", kwargs), learner("fedavg", data, "lenet5", kwargs)
    held = [2, 3, 1, 4]
    first = run_round(proto, 1)
    assert first.streams == ()  # no global prototypes yet
    assert first.uplink_bits == {d: held[d] * (84 + 1) * 32.0 for d in range(4)}
    second = run_round(proto, 2)
    assert [(s.devices, s.bits) for s in second.streams] == [((0, 1, 2, 3), 10 * 84 * 32.0)]
    reference = run_round(fedavg, 1)
    proto_bits = second.downlink_bits + second.total_uplink_bits
    fedavg_bits = reference.downlink_bits + reference.total_uplink_bits
    assert proto_bits < 0.01 * fedavg_bits  # 54,080 bits against 9,872,960 (0.55%)


def test_needs_classes_and_a_linear_output_layer():
    with pytest.raises(ValueError, match="classification"):
        learner("fedproto", scalar_data([[1.0]]), "scalar-mean", {})
    one_class = FederatedData((DeviceData(torch.zeros(2, 1), torch.zeros(2, dtype=torch.long), torch.zeros(1, 1), torch.zeros(1, dtype=torch.long)),), 1)
    with pytest.raises(ValueError, match="Linear"):
        learner("fedproto", one_class, "scalar-mean", {})
