"""Backend ``loop``, the reference, and the base every backend extends (``Backend``)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from learning.data import DeviceData
from learning.jobs import LocalJob


class Backend:
    """How one ``Trainer`` trains a round's jobs, evaluates models and takes gradients; this
    base is backend ``loop``: the trainer's reference methods, one job (or model) after another.

    A backend overrides what it does its own way and inherits the rest; each must give the
    loop's numbers (optimizer state included) up to float rounding (the settings refuse the
    CPU ones, ``learning.local_training.CPU_BACKENDS``, on a GPU). ``close`` frees what it holds
    (worker processes); it may be used again afterwards, and starts afresh.
    """

    @classmethod
    def unavailable(cls, device: str) -> str | None:
        """Why this backend cannot train on ``device`` ("cpu" or "cuda") on this machine (None: it can)."""
        return None

    def __init__(self, trainer):
        self.trainer = trainer

    def train(self, jobs: Sequence[LocalJob]) -> torch.Tensor:
        """Every job's trained vector, stacked in job order: ``Trainer.train`` of each."""
        return torch.stack([self.trainer.train(job) for job in jobs])

    def evaluate(self, models: torch.Tensor, datas: Sequence[DeviceData]) -> tuple[np.ndarray, np.ndarray]:
        """(accuracy, mean loss) arrays: ``Trainer.evaluate`` of ``models[k]`` on ``datas[k]``'s
        validation split; pairs with one input tensor and equal models share a forward pass."""
        pairs: list = [None] * len(datas)
        for members in shared_evaluations(models, datas):
            first = members[0]
            results = self.trainer.evaluate_labelings(models[first], datas[first].x_val, [datas[k].y_val for k in members])
            for k, result in zip(members, results):
                pairs[k] = result
        return np.array([a for a, _ in pairs], dtype=np.float64), np.array([l for _, l in pairs], dtype=np.float64)

    def gradients(self, params: torch.Tensor, datas: Sequence[DeviceData], batches: Sequence) -> torch.Tensor:
        """Row k: ``Trainer.mean_gradient`` at ``params[k]`` on the training points ``batches[k]`` (None: all) of ``datas[k]``."""
        trainer = self.trainer
        return torch.stack([trainer.mean_gradient(p, d.x_train, d.y_train) if b is None else
                            trainer.mean_gradient(p, d.x_train[b], d.y_train[b]) for p, d, b in zip(params, datas, batches)])

    def close(self) -> None:
        """Free what this backend holds (nothing, here)."""


def memory_key(tensor: torch.Tensor) -> tuple:
    """Equal for two tensors that are views of the same memory with the same layout."""
    return (tensor.device, tensor.dtype, tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape),
            tuple(tensor.stride()))


def shared_evaluations(models: torch.Tensor, datas: Sequence[DeviceData]) -> list[list[int]]:
    """The pairs ``(models[k], datas[k])`` in groups that one forward pass serves: the same
    validation input tensor (one storage, offset, shape and strides) and equal model vectors.
    Models are compared only where inputs are shared, so per-device validation sets cost nothing."""
    by_inputs: dict[tuple, list[int]] = {}
    for k, data in enumerate(datas):
        by_inputs.setdefault(memory_key(data.x_val), []).append(k)
    groups: list[list[int]] = []
    for members in by_inputs.values():
        if len(members) == 1:
            groups.append(members)
            continue
        by_model: dict[bytes, list[int]] = {}
        for k in members:
            by_model.setdefault(models[k].detach().cpu().numpy().tobytes(), []).append(k)
        groups.extend(by_model.values())
    return groups
