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

from learning.engine.batched import BatchedBackend, CompiledBackend
from learning.engine.loop import Backend
from learning.engine.workers import ProcessesBackend

BACKENDS: dict[str, type[Backend]] = {"loop": Backend, "batched": BatchedBackend, "compiled": CompiledBackend,
                                      "processes": ProcessesBackend}

__all__ = ["BACKENDS", "Backend", "BatchedBackend", "CompiledBackend", "ProcessesBackend"]
