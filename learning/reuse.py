"""Results of the trainer's pure computations kept for the runs of one command, in one process.

Runs of one command (``compare``, ``sweep``, ``reproduce``, ``lambda-study``) often compute the
same thing: every algorithm on a scenario and seed starts from the same ``theta^0`` and
evaluates it on every device at round 0; the user-centric runs with different stream limits
and the Fig. 5 silhouette curve all take the same set-up gradients (eq. 10). While
``kept()`` is active (a pooled command's worker processes, or its runs one after another),
``Trainer.evaluate_many`` and the user-centric set-up (``UserCentric.gradient_statistics``: each
device's full gradient and eq. 10 variance, kept in that reduced form, a row per device rather
than the gradients of its mini-batches) look their call up here first, and
``Trainer.train_many`` each of its local updates (``reuse_training``): FedAvg, CFL, Local,
Oracle, FedFomo and Ditto all start their devices' first local updates from ``theta^0``, with
the same mini-batches drawn from the same generators, and CFL repeats FedAvg's updates until it
splits.

A call is the same only if everything its result depends on is: the model (its class, its
layers as ``repr`` shows them, its buffers), the loss (task, noise variance), the chunk size,
the training settings (backend and device among them; ``processes`` counts as
the ``loop`` it runs), the parameters (a digest of their
bytes), the very data objects (held here, so an id is never reused while its entry lives; a
command's runs never change their data) and the index batches. The stored result is what the
computation returned, so a reused result is the same bit for bit: nothing a run records
depends on whether its result was computed or looked up.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import OrderedDict
from contextlib import contextmanager
from typing import Callable, Sequence

import numpy as np
import torch

from learning.jobs import AdamState

MAX_ENTRIES = 4096  # a local update is an entry (a run's rounds: tens to hundreds)
MAX_BYTES = 256 * 2**20  # what the kept results may hold, all together


class _Store(OrderedDict):
    """The kept results, oldest first, and the bytes they hold."""

    def __init__(self):
        super().__init__()
        self.bytes = 0


_kept: _Store | None = None  # None: nothing is kept (the default)


def keep() -> None:
    """Keep results from now on, for the life of this process (a pooled command's worker)."""
    global _kept
    if _kept is None:
        _kept = _Store()


@contextmanager
def kept():
    """Keep results within the ``with`` block (a command's runs one after another), then forget them."""
    global _kept
    before = _kept
    _kept = _Store() if before is None else before
    try:
        yield
    finally:
        _kept = before


def _digest(tensor: torch.Tensor) -> bytes:
    data = tensor.detach().to("cpu").contiguous()
    return hashlib.blake2b(data.view(torch.uint8).reshape(-1).numpy(), digest_size=16).digest() + str(
        (data.dtype, tuple(data.shape))).encode()


def _model_key(trainer) -> tuple:
    model = trainer.model
    buffers = tuple(_digest(b) for b in model.buffers())
    config = trainer.config
    if config.backend == "processes":  # the loop in worker processes, bit for bit (tests/test_engine_workers.py)
        config = dataclasses.replace(config, backend="loop")
    return (type(model).__module__, type(model).__qualname__, repr(model), buffers, trainer.task, trainer.noise_variance,
            trainer.eval_batch, config)


def _size(result) -> int:
    if isinstance(result, AdamState):
        return _size((result.exp_avg, result.exp_avg_sq))
    if isinstance(result, (tuple, list)):
        return sum(_size(part) for part in result)
    if isinstance(result, (torch.Tensor, np.ndarray)):
        return result.nbytes
    return 0


def _copy(result):
    if isinstance(result, tuple):
        return tuple(part.copy() for part in result)
    return result.clone()


def reuse(kind: str, trainer, params: torch.Tensor, datas: Sequence, batches: Sequence | None, compute: Callable):
    """``compute()``, or the result of the same call kept earlier (see the module)."""
    if _kept is None:
        return compute()
    batch_key = None if batches is None else tuple(
        None if b is None else _digest(torch.as_tensor(b)) for b in batches)
    key = (kind, _model_key(trainer), _digest(params), tuple(id(d) for d in datas), batch_key)
    found = _kept.get(key)
    if found is not None:
        _kept.move_to_end(key)
        return _copy(found[0])
    result = compute()
    _remember(key, _copy(result), tuple(datas))
    return result


def reuse_training(trainer, jobs: Sequence, train: Callable) -> torch.Tensor:
    """``train(jobs)``'s rows, each job's looked up first. A job is the same only if its start,
    data object, generator state, epochs, step limit, hooks (proximal anchor, gradient offset,
    prototypes) and Adam state kept under its ``state_key`` are, and the trainer's model and
    settings (see the module): FedAvg's first local updates from ``theta^0`` are also CFL's,
    Local's, Oracle's, FedFomo's and Ditto's. A job looked up leaves its generator and its Adam
    state where training it would have. Only where a job's result depends on that job alone: the
    ``loop`` backend (and ``processes``, which runs it bit for bit), each job with its own
    generator and state key."""
    if _kept is None or trainer.config.backend not in ("loop", "processes"):  # a single run: nothing more to do
        return train(jobs)
    adam = trainer.config.optimizer == "adam"
    state_keys = [job.state_key for job in jobs if adam and job.state_key is not None]
    if len(state_keys) > len(set(state_keys)) or len({id(job.generator) for job in jobs}) < len(jobs):
        return train(jobs)
    model = _model_key(trainer)

    def adam_state(job) -> AdamState | None:
        return trainer.optimizer_states.get(job.state_key) if adam and job.state_key is not None else None

    def key(job) -> tuple:
        state = adam_state(job)
        hooks = (job.anchor, job.gradient_offset, job.prototypes, job.prototype_weights)
        return ("train", model, _digest(job.start), id(job.data), _digest(job.generator.get_state()), job.epochs,
                job.max_steps, job.proximal, *(None if t is None else _digest(t) for t in hooks),
                None if state is None else (_digest(state.exp_avg), _digest(state.exp_avg_sq), state.step))

    keys = [key(job) for job in jobs]
    rows: list[torch.Tensor | None] = [None] * len(jobs)
    for k, (job, job_key) in enumerate(zip(jobs, keys)):
        found = _kept.get(job_key)
        if found is not None:
            _kept.move_to_end(job_key)
            row, generator_state, state = found[0]
            rows[k] = row.clone()
            job.generator.set_state(generator_state)
            if state is not None:
                trainer.optimizer_states[job.state_key] = AdamState(state.exp_avg.clone(), state.exp_avg_sq.clone(), state.step)
    missing = [k for k, row in enumerate(rows) if row is None]
    if missing:
        for k, row in zip(missing, train([jobs[k] for k in missing])):
            rows[k] = row
            state = adam_state(jobs[k])
            if state is not None:
                state = AdamState(state.exp_avg.clone(), state.exp_avg_sq.clone(), state.step)
            _remember(keys[k], (row.clone(), jobs[k].generator.get_state(), state), (jobs[k].data,))
    return torch.stack(rows)


def _remember(key: tuple, result, holds: tuple) -> None:
    """Keep ``result`` under ``key`` with the data objects it was computed on (held, so their ids
    stay theirs), then forget the oldest results beyond ``MAX_ENTRIES`` or ``MAX_BYTES``."""
    if key in _kept:
        _kept.bytes -= _size(_kept.pop(key)[0])
    _kept[key] = (result, holds)
    _kept.bytes += _size(result)
    while len(_kept) > 1 and (len(_kept) > MAX_ENTRIES or _kept.bytes > MAX_BYTES):
        _, (oldest, _) = _kept.popitem(last=False)
        _kept.bytes -= _size(oldest)
