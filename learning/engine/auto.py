"""``auto`` on the CPU: worker processes only where they save more than their start costs.

The ``processes`` backend trains the loop's jobs on worker processes (``learning/engine/workers.py``):
the same numbers, about 1.9x faster with two workers, but a command's first pool waits for the
fork server to import torch and the project (``learning/worker_start.py``). A run whose
training takes less than that start is faster in its own process. The rule, on the work size
alone (never on this machine's load or cores, so a config names the same folder everywhere):

    estimated_s = rounds x epochs x participation x (steps x STEP_S + 3 x training samples x MACs / MACS_PER_S)
                  + evaluations x validation samples x MACs / MACS_PER_S
    processes  if  estimated_s x (1 - 1/2) > WORKER_START_S   (what two workers save), else loop

MACs: the model's forward multiply-accumulates per sample; steps: the mini-batches of a local
update. A training step costs about three forward passes (forward and backward) and a fixed
overhead (small models are bound by it); an evaluation one pass. The constants are measured by
``python3 -m benchmarks.run_cost`` (``docs/benchmarks.md``).
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import nn

WORKER_START_S = 1.7  # the fork server's first pool of 2 workers, to each one's first result (benchmarks.worker_start)
MACS_PER_S = 12e9  # multiply-accumulates a second at one torch thread, LeNet-5 training (benchmarks.run_cost)
STEP_S = 0.4e-3  # a mini-batch step's fixed cost at one torch thread, the digits MLP (benchmarks.run_cost)
TRAINING_PASSES = 3  # a training step: the forward pass and a backward pass of about twice its cost
POOL_WORKERS = 2  # the smallest pool: what the rule assumes, whatever this machine has


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


def estimated_training_s(macs: int, train_sizes: Sequence[int], val_sizes: Sequence[int], batch_size: int,
                         epochs: int, participation: float, rounds: int, evaluations: int) -> float:
    """Seconds the loop would spend on ``rounds`` rounds of local updates and ``evaluations``
    evaluations at one torch thread, by the rule above."""
    steps = sum(-(-int(n) // batch_size) for n in train_sizes)
    update_s = steps * STEP_S + TRAINING_PASSES * sum(int(n) for n in train_sizes) * macs / MACS_PER_S
    evaluation_s = sum(int(n) for n in val_sizes) * macs / MACS_PER_S
    return rounds * epochs * participation * update_s + evaluations * evaluation_s


def choose_cpu_backend(estimated_s: float) -> tuple[str, str]:
    """``auto``'s backend on the CPU for a run of ``estimated_s`` seconds of training, and why."""
    saved_s = estimated_s * (1 - 1 / POOL_WORKERS)
    if saved_s > WORKER_START_S:
        return "processes", (f"auto: processes (about {estimated_s:.3g} s of training; {POOL_WORKERS} workers save more "
                             f"than their {WORKER_START_S} s start)")
    return "loop", (f"auto: loop (about {estimated_s:.3g} s of training; {POOL_WORKERS} workers would save less "
                    f"than their {WORKER_START_S} s start)")
