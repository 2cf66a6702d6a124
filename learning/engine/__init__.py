"""Training backends: how a ``Trainer`` trains the ``LocalJob``s of a round, evaluates models
and takes gradients.

A backend is a ``Backend`` (``learning/engine/loop.py``) that its trainer makes once from
``LocalTraining.backend`` through ``BACKENDS`` and owns (``Trainer.backend``; ``Trainer.close``
frees what it holds). ``train(jobs)`` returns the trained vectors ``(len(jobs), parameters)``
and must give what ``Trainer.train`` (the reference) gives for each job, optimizer state
included, up to float rounding; ``evaluate(models, datas)`` gives ``Trainer.evaluate`` of each
pair as (accuracy, loss) arrays and ``gradients(params, datas, batches)`` ``Trainer.mean_gradient``
of each row on a batch of its device's training points. ``loop`` is the base itself: the
reference, one job after another; a backend inherits whichever of the three it does not do its
own way. ``batched`` (``learning/engine/batched.py``) trains all jobs together with
``torch.func`` (``compiled``: with its step under ``torch.compile``); ``processes`` runs the
loop in worker processes (``learning/engine/workers.py``), bit for bit the same at one thread.
"""

from __future__ import annotations

from dataclasses import replace

import torch

from learning.engine.batched import BatchedBackend, CompiledBackend
from learning.engine.loop import Backend
from learning.engine.workers import ProcessesBackend
from learning.local_training import CPU_BACKENDS, LocalTraining

BACKENDS: dict[str, type[Backend]] = {"loop": Backend, "batched": BatchedBackend, "compiled": CompiledBackend,
                                      "processes": ProcessesBackend}

__all__ = ["BACKENDS", "Backend", "BatchedBackend", "CompiledBackend", "ProcessesBackend", "resolve_training"]


def resolve_training(settings: LocalTraining) -> LocalTraining:
    """``settings`` with ``auto`` replaced by this machine's choice: the device is CUDA when
    present unless the backend is a CPU one (ValueError: a CUDA device asked for and none
    present, or a backend that cannot train here: ``Backend.unavailable``)."""
    device = settings.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() and settings.backend not in CPU_BACKENDS else "cpu"
    elif device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device}: no CUDA device on this machine (use cpu or auto)")
    backend = settings.backend if settings.backend != "auto" else ("batched" if device.startswith("cuda") else "processes")
    problem = BACKENDS[backend].unavailable("cpu" if device == "cpu" else "cuda")
    if problem is not None:
        raise ValueError(f"backend {backend} on {device}: {problem}")
    return replace(settings, device=device, backend=backend)
