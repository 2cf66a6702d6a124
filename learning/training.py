"""Local training and evaluation on one reusable model object, and the swappable client step.

``Trainer.train`` is the reference: one device's ``LocalJob``, a plain PyTorch loop with
``torch.optim``'s fused SGD or Adam step (``learning/fused_steps.py``). ``Trainer.train_many``
trains the devices of a round together through the trainer's backend (``Trainer.backend``,
made from ``LocalTraining.backend``: ``loop``, the reference, one device after another; the
others in ``learning/engine/``); algorithms describe each device's update as a ``LocalJob`` (``learning/jobs.py``, importable from here too) and
never see which backend runs it. Its settings are ``LocalTraining`` (``learning/local_training.py``,
importable from here too).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Hashable, Sequence

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, jacrev, vmap
from torch.nn import functional as F

from learning.data import DeviceData
from learning.engine import BACKENDS, Backend, resolve_training
from learning.fused_steps import FusedAdam, FusedSGD
from learning.jobs import ADAM_BETAS, ADAM_EPS, AdamState, LocalJob, prototype_terms
from learning.local_training import LocalTraining
from learning.models import output_layer
from learning.params import flat_grad, get_flat, set_flat
from learning.reuse import reuse, reuse_training

__all__ = ["ADAM_BETAS", "ADAM_EPS", "AdamState", "LocalJob", "LocalTraining", "Trainer", "prototype_terms", "torch_generator"]


class Trainer:
    """Trains and evaluates any parameter vector on any device's data with one model object.

    ``task`` is ``classification`` (cross-entropy, accuracy) or ``regression`` (the Gaussian
    negative log-likelihood ``(y - f)^2 / (2 noise_variance)``; squared error at 1/2). Either
    way the mean loss is the per-sample negative log-likelihood. ``backend``: the ``Backend``
    that ``train_many``, ``evaluate_many`` and ``mean_gradients`` go through, made once from
    the settings; ``close`` frees what it holds (worker processes).
    """

    def __init__(self, model: nn.Module, config: LocalTraining, task: str = "classification",
                 eval_batch: int = 2048, noise_variance: float = 0.5):
        if not noise_variance > 0:
            raise ValueError(f"noise_variance must be positive, got {noise_variance}")
        self.model = _fast_layout(model)
        self.config = resolve_training(config)
        self.task = task
        self.eval_batch = eval_batch
        self.noise_variance = noise_variance
        self.optimizer_states: dict[Hashable, AdamState] = {}  # Adam only: per state key, across rounds
        self.resident_data: Sequence[DeviceData] = ()  # the learner's data: worker backends hold it, jobs name it
        self.backend: Backend = BACKENDS[self.config.backend](self)

    def loss(self, outputs: torch.Tensor, y: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
        if self.task == "regression":
            return F.mse_loss(outputs, y, reduction=reduction) / (2 * self.noise_variance)
        return F.cross_entropy(outputs, y, reduction=reduction)

    def train(self, job: LocalJob) -> torch.Tensor:
        """The reference local update (Algorithm 1, ClientUpdate) of one device: ``job`` by a
        plain loop with ``torch.optim``'s fused steps; returns the trained vector."""
        model, cfg = self.model, self.config
        set_flat(model, job.start)
        params = list(model.parameters())
        optimizer = self._optimizer(params, job.state_key)
        offsets = _split_like(job.gradient_offset, params) if job.gradient_offset is not None else None
        anchors = _split_like(job.anchor.detach(), params) if job.proximal > 0 else None
        data, generator, proximal = job.data, job.generator, job.proximal
        with _Embedding(model) if job.prototypes is not None else nullcontext() as embedding:
            n = data.num_train
            steps, limit = 0, job.max_steps if job.max_steps is not None else float("inf")
            for _ in range(cfg.epochs if job.epochs is None else job.epochs):
                order = torch.randperm(n, generator=generator)  # one order per epoch, drawn even if unused
                for begin in range(0, n, cfg.batch_size):
                    if steps >= limit:
                        break
                    index = order[begin : begin + cfg.batch_size]
                    for p in params:
                        p.grad = None
                    y = data.y_train[index]
                    loss = self.loss(model(data.x_train[index]), y)
                    if embedding is not None:
                        loss = loss + prototype_terms(embedding.value, y, job.prototypes, job.prototype_weights).sum() / y.shape[0]
                    if anchors is not None:
                        loss = loss + 0.5 * proximal * sum(torch.sum((p - a) ** 2) for p, a in zip(params, anchors))
                    loss.backward()
                    if offsets is not None:
                        for p, offset in zip(params, offsets):
                            p.grad.add_(offset)
                    optimizer.step()
                    steps += 1
        self._keep_state(optimizer, params, job.state_key)
        return get_flat(model)

    def train_many(self, jobs: Sequence[LocalJob]) -> torch.Tensor:
        """Every job's trained vector, stacked in job order, by the trainer's backend."""
        if not jobs:
            return torch.empty(0, self.num_parameters)
        return reuse_training(self, jobs, self.backend.train)  # a pooled command's runs share local updates made alike

    def evaluate_many(self, models: torch.Tensor | Sequence[torch.Tensor], datas: Sequence[DeviceData]) -> tuple[np.ndarray, np.ndarray]:
        """(accuracy, mean loss) arrays: ``models[k]`` on ``datas[k]``'s validation split, as
        ``evaluate`` of each pair, by the trainer's backend."""
        if len(datas) == 0:
            return np.empty(0), np.empty(0)
        models = torch.stack(list(models)) if not isinstance(models, torch.Tensor) else models
        return reuse("evaluate", self, models, datas, None, lambda: self.backend.evaluate(models, datas))

    def mean_gradients(self, params: torch.Tensor | Sequence[torch.Tensor], datas: Sequence[DeviceData],
                       batches: Sequence | None = None) -> torch.Tensor:
        """Row k: ``mean_gradient`` at ``params[k]`` over the training points ``batches[k]`` (an
        index array; None, or no ``batches``: all) of ``datas[k]``, by the trainer's backend."""
        if len(datas) == 0:
            return torch.empty(0, self.num_parameters)
        params = torch.stack(list(params)) if not isinstance(params, torch.Tensor) else params
        batches = [None] * len(datas) if batches is None else batches
        return self.backend.gradients(params, datas, batches)

    def close(self) -> None:
        """Free what the backend holds (worker processes, device copies); training later starts it afresh."""
        self.backend.close()

    @property
    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())

    def _optimizer(self, params: list[torch.Tensor], state_key: Hashable | None) -> FusedSGD | FusedAdam:
        cfg = self.config
        if cfg.optimizer == "sgd":
            return FusedSGD(params, lr=cfg.lr, momentum=cfg.momentum)
        optimizer = FusedAdam(params, lr=cfg.lr, betas=ADAM_BETAS, eps=ADAM_EPS)
        state = self.optimizer_states.get(state_key) if state_key is not None else None
        if state is not None:
            for p, m, v in zip(params, _split_like(state.exp_avg, params), _split_like(state.exp_avg_sq, params)):
                optimizer.state[p] = {"step": torch.tensor(float(state.step), device=p.device),
                                      "exp_avg": torch.empty_like(p).copy_(m), "exp_avg_sq": torch.empty_like(p).copy_(v)}
        return optimizer

    def _keep_state(self, optimizer: FusedSGD | FusedAdam, params: list[torch.Tensor], state_key: Hashable | None) -> None:
        if self.config.optimizer != "adam" or state_key is None or params[0] not in optimizer.state:
            return
        states = [optimizer.state[p] for p in params]
        self.optimizer_states[state_key] = AdamState(
            torch.cat([s["exp_avg"].reshape(-1) for s in states]),
            torch.cat([s["exp_avg_sq"].reshape(-1) for s in states]),
            int(states[0]["step"]),
        )

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
    def embeddings(self, params: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """The model's embedding of each row of ``x`` at ``params`` (the output layer's input, flat)."""
        set_flat(self.model, params)
        pieces = []
        with _Embedding(self.model) as embedding:
            for begin in range(0, x.shape[0], self.eval_batch):
                self.model(x[begin : begin + self.eval_batch])
                pieces.append(embedding.value)
        return torch.cat(pieces)

    def evaluate(self, params: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
        """(accuracy, mean loss) of ``params`` on ``(x, y)``; accuracy is NaN for regression."""
        return self.evaluate_labelings(params, x, [y])[0]

    @torch.no_grad()
    def evaluate_labelings(self, params: torch.Tensor, x: torch.Tensor, labelings: Sequence[torch.Tensor]) -> list[tuple[float, float]]:
        """``evaluate(params, x, y)`` for each ``y`` of ``labelings``, from one forward pass over
        ``x``: devices that validate on the same inputs under their own labels (the concept-shift
        scenarios) and hold the same model cost one evaluation. Each pair's numbers are
        ``evaluate``'s, bit for bit: the same outputs, summed in the same chunks."""
        if x.shape[0] == 0:
            return [(float("nan"), float("nan"))] * len(labelings)
        set_flat(self.model, params)
        correct, total_loss = [0] * len(labelings), [0.0] * len(labelings)
        for begin in range(0, x.shape[0], self.eval_batch):
            outputs = self.model(x[begin : begin + self.eval_batch])
            predicted = outputs.argmax(dim=1) if self.task == "classification" else None
            for k, y in enumerate(labelings):
                target = y[begin : begin + self.eval_batch]
                total_loss[k] += float(self.loss(outputs, target, "sum"))
                if predicted is not None:
                    correct[k] += int((predicted == target).sum())
        size = x.shape[0]
        return [(c / size if self.task == "classification" else float("nan"), l / size) for c, l in zip(correct, total_loss)]


class _Embedding:
    """Within ``with``: ``value`` is the input of ``model``'s output layer at the last forward
    pass (flat per sample)."""

    def __init__(self, model: nn.Module):
        self.value: torch.Tensor | None = None
        self._layer = output_layer(model)

    def __enter__(self) -> "_Embedding":
        self._handle = self._layer.register_forward_pre_hook(self._keep)
        return self

    def __exit__(self, *exc) -> None:
        self._handle.remove()
        self.value = None

    def _keep(self, module, inputs) -> None:
        self.value = inputs[0].reshape(inputs[0].shape[0], -1)


def _fast_layout(model: nn.Module) -> nn.Module:
    """``model`` with its 4-d (convolution) weights ``channels_last``: the same function up to
    float rounding, and faster convolutions and pooling on CPU (``benchmarks/training_speed.py``)."""
    if any(p.dim() == 4 for p in model.parameters()):
        model.to(memory_format=torch.channels_last)
    return model


def _split_like(flat: torch.Tensor, params: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    pieces, offset = [], 0
    for p in params:
        pieces.append(flat[offset : offset + p.numel()].view_as(p))
        offset += p.numel()
    return pieces


def torch_generator(seed_sequence: np.random.SeedSequence) -> torch.Generator:
    """A torch generator seeded from one stream of the run seed (``contract.seeds``)."""
    return torch.Generator().manual_seed(int(seed_sequence.generate_state(1, np.uint64)[0] >> 1))
