"""Training backends: each trains the ``LocalJob``s of a round and returns their vectors.

A backend is a function ``(trainer, jobs) -> Tensor (len(jobs), parameters)``; it must give
what ``Trainer.train`` (the reference loop) gives for each job, optimizer state included, up to
float rounding. ``loop`` is that reference, one job after another; ``batched``
(``learning.engine.batched``) trains all jobs together with ``torch.func`` (``compiled``: with
its step under ``torch.compile``); ``processes`` runs the same loop in worker processes
(``learning/engine/workers.py``), bit for bit the same at one thread.

A backend may also evaluate and take gradients its own way: ``EVALUATORS`` (``(trainer,
models, datas) -> (accuracy, loss)`` arrays, ``Trainer.evaluate`` of each pair) and
``GRADIENTS`` (``(trainer, params, datas, batches) -> Tensor``, ``Trainer.mean_gradient`` of
each row on a batch of its device's training points); a backend without them uses the loop's.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import torch

from learning.engine.batched import evaluate_batched, gradients_batched, train_batched


def train_in_a_loop(trainer, jobs: Sequence) -> torch.Tensor:
    """The reference backend: ``Trainer.train`` for one job after another."""
    return torch.stack([trainer.train_job(job) for job in jobs])


def evaluate_in_a_loop(trainer, models: torch.Tensor, datas: Sequence) -> tuple[np.ndarray, np.ndarray]:
    """``Trainer.evaluate`` of ``models[k]`` on ``datas[k]``'s validation split, one after another."""
    pairs = [trainer.evaluate(model, data.x_val, data.y_val) for model, data in zip(models, datas)]
    return np.array([a for a, _ in pairs], dtype=np.float64), np.array([l for _, l in pairs], dtype=np.float64)


def gradients_in_a_loop(trainer, params: torch.Tensor, datas: Sequence, batches: Sequence) -> torch.Tensor:
    """``Trainer.mean_gradient`` of each row on its batch of training points (None: all), one after another."""
    return torch.stack([trainer.mean_gradient(p, d.x_train, d.y_train) if b is None else
                        trainer.mean_gradient(p, d.x_train[b], d.y_train[b]) for p, d, b in zip(params, datas, batches)])


def release(trainer=None) -> None:
    """Free what backends hold for ``trainer`` (every trainer when None): worker processes."""
    from learning.engine import workers

    workers.release(trainer)


def _train_in_processes(trainer, jobs: Sequence) -> torch.Tensor:
    from learning.engine.workers import train_in_processes

    return train_in_processes(trainer, jobs)


def _evaluate_in_processes(trainer, models: torch.Tensor, datas: Sequence) -> tuple[np.ndarray, np.ndarray]:
    from learning.engine.workers import evaluate_in_processes

    pairs = evaluate_in_processes(trainer, models, datas)
    return np.array([a for a, _ in pairs], dtype=np.float64), np.array([l for _, l in pairs], dtype=np.float64)


BACKENDS: dict[str, Callable] = {"loop": train_in_a_loop, "batched": train_batched, "compiled": train_batched,
                                 "processes": _train_in_processes}
EVALUATORS: dict[str, Callable] = {"loop": evaluate_in_a_loop, "batched": evaluate_batched, "compiled": evaluate_batched,
                                   "processes": _evaluate_in_processes}
GRADIENTS: dict[str, Callable] = {"loop": gradients_in_a_loop, "batched": gradients_batched, "compiled": gradients_batched}
