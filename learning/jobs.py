"""One device's local update as every training backend sees it: ``LocalJob``, the optimizers'
constants and kept state (``AdamState``), and the prototype term (FedProto) of the loss.

Below both the reference step (``learning.training.Trainer.train``) and the backends
(``learning.engine``): each imports from here, nothing here imports them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable

import torch

from learning.data import DeviceData

ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-7  # Keras's default, as the reference code's tf.keras.optimizers.Adam


@dataclass
class AdamState:
    """One device's Adam moments (flat, like the parameters) and its step count."""

    exp_avg: torch.Tensor
    exp_avg_sq: torch.Tensor
    step: int


@dataclass(frozen=True)
class LocalJob:
    """One device's local update in a round: what an algorithm asks of the training engine.

    From ``start``, ``epochs`` epochs (default the settings') of mini-batches in the order
    drawn from ``generator``, stopping after ``max_steps`` steps if given. Hooks: the proximal
    term ``proximal/2 ||w - anchor||^2`` added to each mini-batch loss (FedProx's mu, Ditto's
    lambda), ``gradient_offset`` added to each gradient (SCAFFOLD's ``c - c_i``) and the
    prototype term ``sum_i prototype_weights[y_i] ||f(x_i) - prototypes[y_i]||^2 / batch``
    added to each mini-batch loss, ``f`` the input of the model's output layer (FedProto:
    ``lam`` for the classes with a global prototype, 0 for the others).
    ``state_key`` names the optimizer state that persists across rounds (Adam; e.g.
    ``("model", device)``); None starts it afresh.
    """

    start: torch.Tensor
    data: DeviceData
    generator: torch.Generator
    state_key: Hashable | None = None
    epochs: int | None = None
    max_steps: int | None = None
    anchor: torch.Tensor | None = None
    proximal: float = 0.0
    gradient_offset: torch.Tensor | None = None
    prototypes: torch.Tensor | None = None  # (classes, embedding)
    prototype_weights: torch.Tensor | None = None  # (classes,)

    def __post_init__(self) -> None:
        if (self.prototypes is None) != (self.prototype_weights is None):
            raise ValueError("a prototype term needs both prototypes and prototype_weights")
        if self.proximal < 0:
            raise ValueError(f"proximal coefficient must be >= 0, got {self.proximal}")
        if self.proximal > 0 and self.anchor is None:
            raise ValueError("a proximal term needs an anchor")


def prototype_terms(embedding: torch.Tensor, y: torch.Tensor, prototypes: torch.Tensor,
                    weights: torch.Tensor) -> torch.Tensor:
    """Each sample's ``weights[y_i] ||embedding_i - prototypes[y_i]||^2``."""
    return weights[y] * (embedding - prototypes[y]).square().sum(dim=1)
