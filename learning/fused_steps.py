"""``torch.optim``'s fused SGD and Adam steps, called directly.

``torch.optim.SGD(fused=True)`` and ``Adam(fused=True)`` end in one kernel each,
``torch._fused_sgd_`` and ``torch._fused_adam_``; their ``step`` wrapper, though, imports
``torch._dynamo`` on its first call (about as long as importing torch itself, in every fresh
process: a 1-round run paid it for a few steps). These classes pass the kernels the arguments
those optimizers pass (no weight decay, dampening, Nesterov or amsgrad; the step count a float32
tensor, raised by one before the Adam kernel), so every step is bit for bit theirs
(``tests/test_fused_steps.py`` checks it against ``torch.optim``). ``state`` holds the same
per-parameter entries as ``torch.optim``'s (``momentum_buffer``; ``step``, ``exp_avg``,
``exp_avg_sq``).
"""

from __future__ import annotations

from typing import Sequence

import torch


class FusedSGD:
    """``torch.optim.SGD(params, lr, momentum, fused=True)``'s step; the momentum buffers start
    empty (the first step sets them to the gradient)."""

    def __init__(self, params: Sequence[torch.Tensor], lr: float, momentum: float):
        self.params = list(params)
        self.lr, self.momentum = float(lr), float(momentum)
        self.state: dict[torch.Tensor, dict] = {}

    @torch.no_grad()
    def step(self) -> None:
        params = [p for p in self.params if p.grad is not None]
        grads = [p.grad for p in params]
        buffers = [] if self.momentum == 0 else [self.state.get(p, {}).get("momentum_buffer") for p in params]
        first = bool(buffers) and all(b is None for b in buffers)
        if first:
            buffers = [torch.empty_like(g) for g in grads]
        torch._fused_sgd_(params, grads, buffers, weight_decay=0.0, momentum=self.momentum, lr=self.lr, dampening=0.0,
                          nesterov=False, maximize=False, is_first_step=first, grad_scale=None, found_inf=None)
        for p, buffer in zip(params, buffers):
            self.state.setdefault(p, {})["momentum_buffer"] = buffer


class FusedAdam:
    """``torch.optim.Adam(params, lr, betas, eps, fused=True)``'s step; ``state[p]`` may be set
    beforehand (``step`` a float32 tensor, ``exp_avg``, ``exp_avg_sq``) to go on from it."""

    def __init__(self, params: Sequence[torch.Tensor], lr: float, betas: tuple[float, float], eps: float):
        self.params = list(params)
        self.lr, self.betas, self.eps = float(lr), (float(betas[0]), float(betas[1])), float(eps)
        self.state: dict[torch.Tensor, dict] = {}

    @torch.no_grad()
    def step(self) -> None:
        params = [p for p in self.params if p.grad is not None]
        for p in params:
            if p not in self.state:
                self.state[p] = {"step": torch.tensor(0.0, dtype=torch.float32, device=p.device),
                                 "exp_avg": torch.zeros_like(p, memory_format=torch.preserve_format),
                                 "exp_avg_sq": torch.zeros_like(p, memory_format=torch.preserve_format)}
        states = [self.state[p] for p in params]
        steps = [s["step"] for s in states]
        torch._foreach_add_(steps, 1)
        torch._fused_adam_(params, [p.grad for p in params], [s["exp_avg"] for s in states],
                           [s["exp_avg_sq"] for s in states], [], steps, amsgrad=False, lr=self.lr, beta1=self.betas[0],
                           beta2=self.betas[1], weight_decay=0.0, eps=self.eps, maximize=False, grad_scale=None,
                           found_inf=None)
