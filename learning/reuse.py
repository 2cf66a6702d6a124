"""Results of the trainer's pure computations kept for the runs of one command, in one process.

Runs of one command (``compare``, ``sweep``, ``reproduce``, ``lambda-study``) often compute the
same thing: every algorithm on a scenario and seed starts from the same ``theta^0`` and
evaluates it on every device at round 0; the user-centric runs with different stream limits
and the Fig. 5 silhouette curve all take the same set-up gradients (eq. 10). While
``kept()`` is active (a pooled command's worker processes, or its runs one after another),
``Trainer.evaluate_many`` and the user-centric set-up (``UserCentric.gradient_statistics``: each
device's full gradient and eq. 10 variance, kept in that reduced form, a row per device rather
than the gradients of its mini-batches) look their call up here first.

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

import torch

MAX_ENTRIES = 16
MAX_BYTES = 256 * 2**20  # what the kept results may hold, all together

_kept: OrderedDict | None = None  # None: nothing is kept (the default)


def keep() -> None:
    """Keep results from now on, for the life of this process (a pooled command's worker)."""
    global _kept
    if _kept is None:
        _kept = OrderedDict()


@contextmanager
def kept():
    """Keep results within the ``with`` block (a command's runs one after another), then forget them."""
    global _kept
    before = _kept
    _kept = OrderedDict() if before is None else before
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
    parts = result if isinstance(result, tuple) else (result,)
    return sum(p.nbytes if hasattr(p, "nbytes") else p.numel() * p.element_size() for p in parts)


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
    _kept[key] = (_copy(result), tuple(datas))  # the data objects held: their ids stay theirs
    total = sum(_size(value[0]) for value in _kept.values())
    while len(_kept) > 1 and (len(_kept) > MAX_ENTRIES or total > MAX_BYTES):
        _, (oldest, _) = _kept.popitem(last=False)
        total -= _size(oldest)
    return result
