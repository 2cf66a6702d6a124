"""A 2x2 max-pool whose evaluation takes two elementwise maxima instead of torch's window loop.

torch's CPU max-pool visits each window element by element, and writes an argmax index even
where no gradient is wanted: on LeNet-5's first pool (a batch of 64 28x28 images, 6 channels,
channels-last as the trainer keeps them) about 0.8 ms, as long as the convolution before it.
Where autograd does not record the pool (evaluation, ``torch.no_grad``), ``MaxPool2x2`` takes
the maximum of the two rows of every window, then of its two columns: 9x quicker on that pool,
2.4x on the second, a LeNet-5 evaluation 1.5x (``python3 -m benchmarks.pool_speed``, one
torch thread). Training keeps torch's pool: its argmax indices route the gradient, and their
tie rule (the first maximum of a window in row-major order) matters where a digit's blank
margin ties every window.

The values are torch's (``tests/test_pooling.py``), so every accuracy and loss is the same, bit
for bit: a maximum is one of its inputs in any order, and NaN propagates as in torch's pool.
Only the sign of a zero can differ, where a window's maximum is ``-0.0`` and ``0.0`` at once,
and no later number shows it: added to any nonzero number a zero of either sign changes nothing,
and a ReLU's gradient mask is ``x > 0`` for both (the tests compare whole models' logits on
inputs whose blank margins tie).
"""

from __future__ import annotations

import torch
from torch import nn


class MaxPool2x2(nn.MaxPool2d):
    """``nn.MaxPool2d(2)`` (its settings, no state, its gradients), with a quicker forward where
    no gradient flows through it and the height and width are even."""

    def __init__(self):
        super().__init__(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if (torch.is_grad_enabled() and x.requires_grad) or x.dim() != 4 or x.shape[-2] % 2 or x.shape[-1] % 2:
            return super().forward(x)
        n, c, h, w = x.shape
        rows = x.reshape(n, c, h // 2, 2, w)  # a view for a contiguous or channels-last tensor
        pairs = torch.maximum(rows[:, :, :, 0], rows[:, :, :, 1]).reshape(n, c, h // 2, w // 2, 2)
        return torch.maximum(pairs[..., 0], pairs[..., 1])


def with_torch_pools(model: nn.Module) -> nn.Module:
    """``model`` with each ``MaxPool2x2`` replaced by torch's ``nn.MaxPool2d(2)`` (in place): the
    reference the tests and ``benchmarks.pool_speed`` compare against."""
    for module in list(model.modules()):
        for name, child in module.named_children():
            if isinstance(child, MaxPool2x2):
                setattr(module, name, nn.MaxPool2d(2))
    return model
