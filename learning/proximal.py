"""The proximal term ``coefficient/2 ||w - anchor||^2`` as a Trainer regularizer.

FedProx's ``mu`` term (Li et al. 2020) and Ditto's ``lambda`` term (Li et al. 2021) pull
local training towards the received global model ``anchor``.
"""

from __future__ import annotations

from typing import Sequence

import torch

from learning.training import Regularizer


def proximal_term(anchor: torch.Tensor, coefficient: float) -> Regularizer:
    """``regularizer(params) = coefficient/2 ||flat(params) - anchor||^2`` (anchor held fixed)."""
    if coefficient < 0:
        raise ValueError(f"proximal coefficient must be >= 0, got {coefficient}")
    fixed = anchor.detach().clone()

    def regularizer(params: Sequence[torch.Tensor]) -> torch.Tensor:
        flat = torch.cat([p.reshape(-1) for p in params])
        return 0.5 * coefficient * torch.sum((flat - fixed) ** 2)

    return regularizer
