"""Models as rows of the weight matrix ``Theta`` (devices x parameters)."""

from __future__ import annotations

import torch
from torch import nn


def num_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def model_bits(model: nn.Module, bits_per_parameter: int = 32) -> float:
    """Payload of one model on the air (float32 parameters)."""
    return float(num_parameters(model) * bits_per_parameter)


def get_flat(model: nn.Module) -> torch.Tensor:
    """The parameters as one new vector, each in its logical (row-major) order whatever its
    memory format (the trainer keeps convolutions ``channels_last``)."""
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


@torch.no_grad()
def set_flat(model: nn.Module, flat: torch.Tensor) -> None:
    """Copy ``flat`` into the model's parameters (a copy: training never writes into ``flat``)."""
    offset = 0
    for p in model.parameters():
        p.copy_(flat[offset : offset + p.numel()].view_as(p))
        offset += p.numel()


def flat_grad(model: nn.Module) -> torch.Tensor:
    return torch.cat([p.grad.reshape(-1) if p.grad is not None else torch.zeros(p.numel()) for p in model.parameters()])
