"""Training backends: each trains the ``LocalJob``s of a round and returns their vectors.

A backend is a function ``(trainer, jobs) -> Tensor (len(jobs), parameters)``; it must give
what ``Trainer.train`` (the reference loop) gives for each job, optimizer state included, up to
float rounding. ``loop`` is that reference, one job after another; ``processes`` runs the same
loop in worker processes (``learning/engine/workers.py``), bit for bit the same at one thread.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch


def train_in_a_loop(trainer, jobs: Sequence) -> torch.Tensor:
    """The reference backend: ``Trainer.train`` for one job after another."""
    return torch.stack([trainer.train_job(job) for job in jobs])


def release(trainer=None) -> None:
    """Free what backends hold for ``trainer`` (every trainer when None): worker processes."""
    from learning.engine import workers

    workers.release(trainer)


def _train_in_processes(trainer, jobs: Sequence) -> torch.Tensor:
    from learning.engine.workers import train_in_processes

    return train_in_processes(trainer, jobs)


def _evaluate_in_processes(trainer, params: torch.Tensor, data: Sequence) -> list:
    from learning.engine.workers import evaluate_in_processes

    return evaluate_in_processes(trainer, params, data)


BACKENDS: dict[str, Callable] = {"loop": train_in_a_loop, "processes": _train_in_processes}
# backends that also evaluate many models at once: (trainer, params, data) -> [(accuracy, loss)]
EVALUATORS: dict[str, Callable] = {"processes": _evaluate_in_processes}
