"""The Trainer's loss is the per-sample negative log-likelihood, and its Fisher information
diagonal is the expected squared score (by hand and by a plain per-class loop)."""

import pytest
import torch

from learning.data import DeviceData
from learning.models import build_model
from learning.params import get_flat, set_flat
from learning.training import LocalJob, LocalTraining, Trainer


def scalar_trainer(noise_variance: float) -> Trainer:
    model = build_model("scalar-mean", torch.Generator().manual_seed(0))
    return Trainer(model, LocalTraining(lr=0.1, momentum=0.0, batch_size=100), "regression", noise_variance=noise_variance)


def test_regression_loss_is_the_gaussian_negative_log_likelihood():
    y, x = torch.tensor([1.0, 2.0, 4.0]), torch.zeros(3, 1)
    # at theta = 2: squared errors 1, 0, 4 -> mean 5/3; divided by 2 * 0.1
    assert scalar_trainer(0.1).evaluate(torch.tensor([2.0]), x, y)[1] == pytest.approx(5 / 3 / 0.2)
    assert scalar_trainer(0.5).evaluate(torch.tensor([2.0]), x, y)[1] == pytest.approx(5 / 3)  # plain squared error


def test_one_full_batch_step_on_the_mean_likelihood():
    """Gradient of the mean NLL: (theta - mean) / v^2, so one step of 0.1 from 0 at v^2 = 0.1 lands on the mean."""
    trainer = scalar_trainer(0.1)
    y = torch.tensor([1.0, 2.0, 6.0])
    data = DeviceData(torch.zeros(3, 1), y, torch.zeros(1, 1), y[:1])
    trained = trainer.train(LocalJob(torch.tensor([0.0]), data, torch.Generator().manual_seed(0), epochs=1))
    assert float(trained) == pytest.approx(3.0)


def test_gaussian_fisher_is_one_over_the_noise_variance():
    assert scalar_trainer(0.1).fisher_diagonal(torch.tensor([7.0]), torch.zeros(4, 1)).tolist() == pytest.approx([10.0])


def test_classification_fisher_is_the_expected_squared_score():
    model = build_model("logistic", torch.Generator().manual_seed(1), in_features=4, num_classes=3)
    trainer = Trainer(model, LocalTraining())
    params, x = get_flat(model), torch.randn(5, 4, generator=torch.Generator().manual_seed(2))
    expected = torch.zeros_like(params)
    for x_one in x:
        for c in range(3):
            set_flat(model, params)
            model.zero_grad()
            log_p = torch.log_softmax(model(x_one[None]), dim=-1)[0, c]
            log_p.backward()
            score = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
            expected += log_p.exp().detach() * score**2
    torch.testing.assert_close(trainer.fisher_diagonal(params, x), expected / 5)
