"""Local training and evaluation on one reusable model object (the fast way on CPU)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, jacrev, vmap
from torch.nn import functional as F

from learning.data import DeviceData
from learning.params import flat_grad, get_flat, set_flat


@dataclass(frozen=True)
class LocalTraining:
    """Local SGD settings; defaults are the journal paper's (V-A): lr 0.01, momentum 0.9, batch 64, E = 1."""

    lr: float = 0.01
    momentum: float = 0.9
    batch_size: int = 64
    epochs: int = 1

    def __post_init__(self) -> None:
        if not self.lr > 0 or self.batch_size < 1 or self.epochs < 1 or not 0 <= self.momentum < 1:
            raise ValueError(f"impossible local training settings: {self}")


Regularizer = Callable[[Sequence[torch.Tensor]], torch.Tensor]


class Trainer:
    """Trains and evaluates any parameter vector on any device's data with one model object.

    ``task`` is ``classification`` (cross-entropy, accuracy) or ``regression`` (the Gaussian
    negative log-likelihood ``(y - f)^2 / (2 noise_variance)``; squared error at 1/2). Either
    way the mean loss is the per-sample negative log-likelihood.
    """

    def __init__(self, model: nn.Module, config: LocalTraining, task: str = "classification",
                 eval_batch: int = 2048, noise_variance: float = 0.5):
        if not noise_variance > 0:
            raise ValueError(f"noise_variance must be positive, got {noise_variance}")
        self.model = model
        self.config = config
        self.task = task
        self.eval_batch = eval_batch
        self.noise_variance = noise_variance

    def loss(self, outputs: torch.Tensor, y: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
        if self.task == "regression":
            return F.mse_loss(outputs, y, reduction=reduction) / (2 * self.noise_variance)
        return F.cross_entropy(outputs, y, reduction=reduction)

    def train(
        self,
        start: torch.Tensor,
        data: DeviceData,
        generator: torch.Generator,
        *,
        epochs: int | None = None,
        max_steps: int | None = None,
        lr: float | None = None,
        regularizer: Regularizer | None = None,
        gradient_offset: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Local SGD from ``start`` (Algorithm 1, ClientUpdate); returns the trained vector.

        ``regularizer(params)`` is added to each mini-batch loss (FedProx, Ditto);
        ``gradient_offset`` is added to the flat gradient (SCAFFOLD's ``c - c_i``).
        ``max_steps`` stops early after that many mini-batch steps.
        """
        model, cfg = self.model, self.config
        set_flat(model, start)
        params = list(model.parameters())
        optimizer = torch.optim.SGD(params, lr=cfg.lr if lr is None else lr, momentum=cfg.momentum)
        offsets = _split_like(gradient_offset, params) if gradient_offset is not None else None
        n = data.num_train
        steps = 0
        for _ in range(cfg.epochs if epochs is None else epochs):
            order = torch.randperm(n, generator=generator)
            for begin in range(0, n, cfg.batch_size):
                if max_steps is not None and steps >= max_steps:
                    return get_flat(model)
                index = order[begin : begin + cfg.batch_size]
                optimizer.zero_grad(set_to_none=True)
                loss = self.loss(model(data.x_train[index]), data.y_train[index])
                if regularizer is not None:
                    loss = loss + regularizer(params)
                loss.backward()
                if offsets is not None:
                    for p, offset in zip(params, offsets):
                        p.grad.add_(offset)
                optimizer.step()
                steps += 1
        return get_flat(model)

    def steps_per_epoch(self, data: DeviceData) -> int:
        return -(-data.num_train // self.config.batch_size)

    def mean_gradient(self, params: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Gradient of the mean loss over ``(x, y)`` at ``params`` (chunked, exact)."""
        set_flat(self.model, params)
        self.model.zero_grad(set_to_none=True)
        for begin in range(0, y.shape[0], self.eval_batch):
            loss = self.loss(self.model(x[begin : begin + self.eval_batch]), y[begin : begin + self.eval_batch], "sum")
            (loss / y.shape[0]).backward()
        return flat_grad(self.model)

    def fisher_diagonal(self, params: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """The diagonal of the model's Fisher information per sample at ``params``, averaged over
        the inputs ``x``: the expected squared score under the model's own ``p(y | x)``.
        Regression (Gaussian): ``(df/dtheta)^2 / noise_variance``; classification:
        ``sum_c p_c (d log p_c / dtheta)^2``."""
        set_flat(self.model, params)
        names = [name for name, _ in self.model.named_parameters()]
        values = {name: p.detach() for name, p in self.model.named_parameters()}
        regression = self.task == "regression"

        def outputs_one(values, x_one):
            outputs = functional_call(self.model, values, (x_one.unsqueeze(0),))[0]
            return outputs if regression else torch.log_softmax(outputs, dim=-1)

        jacobian = vmap(jacrev(outputs_one), in_dims=(None, 0))
        width = 1 if regression else int(self.model(x[:1]).shape[-1])
        chunk = max(1, min(self.eval_batch, 2**24 // (width * params.numel())))  # bounds the Jacobian's memory
        total = torch.zeros_like(params)
        for begin in range(0, x.shape[0], chunk):
            x_chunk = x[begin : begin + chunk]
            parts = jacobian(values, x_chunk)
            scores = torch.cat([parts[name].reshape(x_chunk.shape[0], width, -1) for name in names], dim=2)  # (B, C, P)
            if regression:
                total += scores.square().sum(dim=(0, 1)) / self.noise_variance
            else:
                with torch.no_grad():
                    probs = torch.softmax(self.model(x_chunk), dim=-1)
                total += torch.einsum("bc,bcp->p", probs, scores.square())
        return total / x.shape[0]

    @torch.no_grad()
    def evaluate(self, params: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
        """(accuracy, mean loss) of ``params`` on ``(x, y)``; accuracy is NaN for regression."""
        if y.shape[0] == 0:
            return float("nan"), float("nan")
        set_flat(self.model, params)
        correct, total_loss = 0, 0.0
        for begin in range(0, y.shape[0], self.eval_batch):
            outputs = self.model(x[begin : begin + self.eval_batch])
            target = y[begin : begin + self.eval_batch]
            total_loss += float(self.loss(outputs, target, "sum"))
            if self.task == "classification":
                correct += int((outputs.argmax(dim=1) == target).sum())
        accuracy = correct / y.shape[0] if self.task == "classification" else float("nan")
        return accuracy, total_loss / y.shape[0]


def _split_like(flat: torch.Tensor, params: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    pieces, offset = [], 0
    for p in params:
        pieces.append(flat[offset : offset + p.numel()].view_as(p))
        offset += p.numel()
    return pieces


def device_generators(seed_sequence: np.random.SeedSequence, num_devices: int) -> list[torch.Generator]:
    """One torch generator per device (its mini-batch order), independent streams of one seed."""
    return [torch.Generator().manual_seed(int(child.generate_state(1, np.uint64)[0] >> 1)) for child in seed_sequence.spawn(num_devices)]


def torch_generator(seed_sequence: np.random.SeedSequence) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed_sequence.generate_state(1, np.uint64)[0] >> 1))
