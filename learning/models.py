"""The models of the papers, built by name so scenarios and result configs stay plain data."""

from __future__ import annotations

import math
from typing import Callable

import torch
from torch import nn

from learning.local_training import INIT_SCHEMES
from learning.pooling import MaxPool2x2


def output_layer(model: nn.Module) -> nn.Linear:
    """The model's output layer: its last registered ``nn.Linear``. Its input is the model's
    embedding (the penultimate representation; for logistic regression, the input itself)."""
    layers = [m for m in model.modules() if isinstance(m, nn.Linear)]
    if not layers:
        raise ValueError("the model has no nn.Linear output layer")
    return layers[-1]


class LeNet5(nn.Module):
    """LeNet-5 as in the journal paper (V-A): conv6-5x5, pool, conv16-5x5, pool, 120, 84, classes.

    Works for 1x28x28 (padding 2 on the first conv, the classic 32x32 geometry) and 3x32x32.
    Each block pools before its ReLU: ``relu(maxpool(z)) = maxpool(relu(z))``, values and
    gradients alike, and the ReLU runs on a quarter of the entries.
    """

    def __init__(self, in_channels: int = 1, image_size: int = 28, num_classes: int = 10):
        super().__init__()
        pad = 2 if image_size == 28 else 0
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 6, 5, padding=pad), MaxPool2x2(), nn.ReLU(),
            nn.Conv2d(6, 16, 5), MaxPool2x2(), nn.ReLU(),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, num_classes)
        )

    def forward(self, x):
        return self.classifier(self.features(x))


class SmallCNN(nn.Module):
    """A small CNN for 8x8 images (scikit-learn digits): conv8-3x3, pool, conv16-3x3, pool, 64,
    classes (each block pools before its ReLU, as ``LeNet5``)."""

    def __init__(self, in_channels: int = 1, num_classes: int = 10, width: int = 8):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(in_channels, width, 3, padding=1), MaxPool2x2(), nn.ReLU(),
            nn.Conv2d(width, 2 * width, 3, padding=1), MaxPool2x2(), nn.ReLU(),
            nn.Flatten(), nn.Linear(2 * width * 2 * 2, 64), nn.ReLU(), nn.Linear(64, num_classes),
        )

    def forward(self, x):
        return self.net(x)


class MLP(nn.Module):
    """A one-hidden-layer perceptron on flattened inputs."""

    def __init__(self, in_features: int, num_classes: int, hidden: int = 64):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, num_classes))

    def forward(self, x):
        return self.net(x)


class LogisticRegression(nn.Module):
    """Multinomial logistic regression (Self-FL's MNIST set-up)."""

    def __init__(self, in_features: int, num_classes: int):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(in_features, num_classes))

    def forward(self, x):
        return self.net(x)


class TextMeanPool(nn.Module):
    """Embedding (16 over the vocabulary), mean over non-padding tokens, dense to the tags
    (journal V-A, after TensorFlow's basic text classification). Token 0 is padding."""

    def __init__(self, vocab_size: int = 10_002, embedding_dim: int = 16, num_classes: int = 4):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim)
        self.dense = nn.Linear(embedding_dim, num_classes)

    def forward(self, tokens):
        mask = (tokens != 0).unsqueeze(-1).to(self.embedding.weight.dtype)
        summed = (self.embedding(tokens) * mask).sum(dim=1)
        return self.dense(summed / mask.sum(dim=1).clamp(min=1.0))


class ScalarMean(nn.Module):
    """One scalar parameter, the mean of scalar data (Self-FL's two-level Gaussian model, sec. 2.1).

    Its "prediction" is the parameter itself; the loss is the squared error to the data point.
    """

    def __init__(self):
        super().__init__()
        self.theta = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return self.theta.expand(x.shape[0])


MODELS: dict[str, Callable[..., nn.Module]] = {
    "lenet5": LeNet5,
    "small-cnn": SmallCNN,
    "mlp": MLP,
    "logistic": LogisticRegression,
    "text-mean-pool": TextMeanPool,
    "scalar-mean": ScalarMean,
}


def build_model(name: str, generator: torch.Generator, init: str = "keras", **kwargs) -> nn.Module:
    """Build model ``name`` and initialize it from ``generator`` with scheme ``init`` (see
    ``init_parameters``), without touching the global RNG."""
    if name not in MODELS:
        raise KeyError(f"unknown model {name!r}; choose from {', '.join(MODELS)}")
    model = MODELS[name](**kwargs)
    init_parameters(model, generator, init)
    return model


def fans(weight: torch.Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a dense ``(out, in)`` or convolution ``(out, in, kh, kw)`` kernel, as
    both Keras and PyTorch count them: the receptive field multiplies both."""
    receptive = weight[0][0].numel() if weight.dim() > 2 else 1
    return weight.shape[1] * receptive, weight.shape[0] * receptive


def init_parameters(model: nn.Module, generator: torch.Generator, scheme: str = "keras") -> None:
    """Initialize every layer by ``scheme``, drawn from ``generator``.

    ``keras`` (the authors' reference code: Keras layers with ``kernel_initializer='he_uniform'``
    on convolutions and the default ``glorot_uniform`` on dense layers): convolution kernels
    ``U(+-sqrt(6 / fan_in))``, dense kernels ``U(+-sqrt(6 / (fan_in + fan_out)))``, biases 0,
    embeddings He-uniform over the vocabulary (the reference's text model).
    ``torch``: PyTorch's defaults, Kaiming-uniform with ``a = sqrt(5)`` (``U(+-1/sqrt(fan_in))``)
    for kernels and ``U(+-1/sqrt(fan_in))`` for biases, embeddings standard normal.
    Parameters of other modules keep their constructor's values.
    """
    if scheme not in INIT_SCHEMES:
        raise ValueError(f"unknown init {scheme!r}; choose from {', '.join(INIT_SCHEMES)}")
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, (nn.Linear, nn.Conv2d)):
                fan_in, fan_out = fans(module.weight)
                if scheme == "torch":
                    nn.init.kaiming_uniform_(module.weight, a=math.sqrt(5), generator=generator)
                    if module.bias is not None:
                        bound = 1 / math.sqrt(fan_in)
                        nn.init.uniform_(module.bias, -bound, bound, generator=generator)
                    continue
                denominator = fan_in if isinstance(module, nn.Conv2d) else fan_in + fan_out
                bound = math.sqrt(6.0 / denominator)
                nn.init.uniform_(module.weight, -bound, bound, generator=generator)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                if scheme == "torch":
                    nn.init.normal_(module.weight, generator=generator)
                else:
                    bound = math.sqrt(6.0 / module.num_embeddings)
                    nn.init.uniform_(module.weight, -bound, bound, generator=generator)
