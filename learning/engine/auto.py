"""``auto``: worker processes only where they save more than their start costs, and on a
machine with CUDA the GPU only where it saves more than CUDA's start.

The ``processes`` backend trains the loop's jobs on worker processes (``learning/engine/workers.py``):
the same numbers, about 1.9x faster with two workers, but a command's first pool waits for the
fork server to import torch and the project (``learning/worker_start.py``). A run whose
training takes less than that start is faster in its own process. The rule, on the work size
alone (never on this machine's load or cores, so a config names the same folder everywhere):

    estimated_s = rounds x epochs x participation x sum over devices of
                      work x (steps x STEP_S + 3 x training samples x MACs / MACS_PER_S)
                  + set-up epochs x 3 x training samples x MACs / MACS_PER_S
                  + evaluations x validation samples x MACs / MACS_PER_S
    processes  if  estimated_s x (1 - 1/2) > WORKER_START_S   (what two workers save), else loop

MACs: the model's forward multiply-accumulates per sample; steps: the mini-batches of a local
update; work: the standard local updates the algorithm computes in one (its ``update_work``:
pFedMe's R x K steps, Ditto's two models, SCAFFOLD's epochs); set-up epochs: gradient passes
over all the data before the first round (its ``setup_epochs``: the user-centric eq. 10
statistics). A training step costs about three forward passes (forward and backward) and a
fixed overhead (small models are bound by it); an evaluation one pass. The constants are
measured by ``python3 -m benchmarks.run_cost`` (``docs/benchmarks.md``).

On a machine with CUDA, ``--device auto`` gives a run the CPU (and the rule above) where its
training there would end before CUDA is even ready:

    cpu  if  min(estimated_s, estimated_s / 2 + WORKER_START_S) < CUDA_START_S, else cuda (batched)

``CUDA_START_S`` is what CUDA added to a 1-round ``digits-rotation`` run on an H100 machine
(``python3 -m benchmarks.device_choice``, ``docs/benchmarks.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch
from torch import nn

WORKER_START_S = 1.7  # the fork server's first pool of 2 workers, to each one's first result (benchmarks.worker_start)
MACS_PER_S = 12e9  # multiply-accumulates a second at one torch thread, LeNet-5 training (benchmarks.run_cost)
STEP_S = 0.4e-3  # a mini-batch step's fixed cost at one torch thread, the digits MLP (benchmarks.run_cost)
TRAINING_PASSES = 3  # a training step: the forward pass and a backward pass of about twice its cost
POOL_WORKERS = 2  # the smallest pool: what the rule assumes, whatever this machine has
CUDA_START_S = 4.0  # a 1-round digits run, 11.2 s with --device cuda against 7.1 s with cpu, an H100 machine (benchmarks.device_choice)


def forward_macs(model: nn.Module, sample: torch.Tensor) -> int:
    """Multiply-accumulates of ``model``'s forward pass on one sample (``sample``: a batch of
    one), counted over its dense and convolution layers (at least 1)."""
    total = 0

    def count(module: nn.Module, _inputs, output) -> None:
        nonlocal total
        if isinstance(module, nn.Linear):
            total += module.weight.numel() * (output.numel() // output.shape[-1])
        elif isinstance(module, nn.modules.conv._ConvNd):
            total += module.weight.numel() // module.out_channels * output.numel()

    hooks = [m.register_forward_hook(count) for m in model.modules() if isinstance(m, (nn.Linear, nn.modules.conv._ConvNd))]
    try:
        with torch.no_grad():
            model.eval()(sample)  # eval: a batch norm takes a batch of one
    finally:
        for hook in hooks:
            hook.remove()
    return max(total, 1)


@dataclass(frozen=True)
class RunWork:
    """What a run computes, as the rule above counts it: its devices' training and validation
    sizes, its local updates (``update_work``: each device's standard local updates a round,
    none: one each) and its set-up, rounds and evaluations."""

    train_sizes: Sequence[int]
    val_sizes: Sequence[int]
    batch_size: int
    epochs: int
    participation: float
    rounds: int
    evaluations: int
    update_work: Sequence[float] | None = None
    setup_epochs: float = 0.0


def estimated_training_s(macs: int, work: RunWork) -> float:
    """Seconds the loop would spend on ``work`` at one torch thread, by the rule above."""
    factors = [1.0] * len(work.train_sizes) if work.update_work is None else work.update_work
    update_s = sum(f * (-(-int(n) // work.batch_size) * STEP_S + TRAINING_PASSES * int(n) * macs / MACS_PER_S)
                   for n, f in zip(work.train_sizes, factors, strict=True))
    setup_s = work.setup_epochs * TRAINING_PASSES * sum(int(n) for n in work.train_sizes) * macs / MACS_PER_S
    evaluation_s = sum(int(n) for n in work.val_sizes) * macs / MACS_PER_S
    return work.rounds * work.epochs * work.participation * update_s + setup_s + work.evaluations * evaluation_s


def choose_cpu_backend(estimated_s: float) -> tuple[str, str]:
    """``auto``'s backend on the CPU for a run of ``estimated_s`` seconds of training, and why."""
    saved_s = estimated_s * (1 - 1 / POOL_WORKERS)
    if saved_s > WORKER_START_S:
        return "processes", (f"auto: processes (about {estimated_s:.3g} s of training; {POOL_WORKERS} workers save more "
                             f"than their {WORKER_START_S} s start)")
    return "loop", (f"auto: loop (about {estimated_s:.3g} s of training; {POOL_WORKERS} workers would save less "
                    f"than their {WORKER_START_S} s start)")


def choose_device(estimated_s: float) -> tuple[str, str]:
    """``auto``'s device on a machine with CUDA for a run of ``estimated_s`` seconds of training
    on one thread, and why: the CPU where the run would take less there than CUDA's start."""
    on_cpu_s = min(estimated_s, estimated_s / POOL_WORKERS + WORKER_START_S)
    if on_cpu_s < CUDA_START_S:
        return "cpu", f"auto: cpu (about {on_cpu_s:.3g} s of training there, less than CUDA's {CUDA_START_S} s start)"
    return "cuda", f"auto: cuda, batched (about {on_cpu_s:.3g} s of training on the CPU, more than CUDA's {CUDA_START_S} s start)"
