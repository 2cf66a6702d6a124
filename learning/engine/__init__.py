"""Training backends: each trains the ``LocalJob``s of a round and returns their vectors.

A backend is a function ``(trainer, jobs) -> Tensor (len(jobs), parameters)``; it must give
what ``Trainer.train`` (the reference loop) gives for each job, optimizer state included, up to
float rounding. ``loop`` is that reference, one job after another.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch


def train_in_a_loop(trainer, jobs: Sequence) -> torch.Tensor:
    """The reference backend: ``Trainer.train`` for one job after another."""
    return torch.stack([trainer.train_job(job) for job in jobs])


BACKENDS: dict[str, Callable] = {"loop": train_in_a_loop}
