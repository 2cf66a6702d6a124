"""FedAvg with a server step size: ``x <- x + eta_g (sum_i n_i/n y_i - x)``.

SCAFFOLD's global learning rate ``eta_g`` (Karimireddy et al., Alg. 1) and pFedMe's ``beta``
(Dinh et al., Alg. 1: ``w <- (1 - beta) w + beta mean(w_i)``) are this one step; a step of 1
is FedAvg exactly.
"""

from __future__ import annotations

from typing import Sequence

import torch

from learning.algorithms.fedavg import FedAvg


class ServerStepFedAvg(FedAvg):
    """Not registered: the shared parent of SCAFFOLD and pFedMe. Subclasses name the option
    that is their server step (``step_option``)."""

    name = "server-step-fedavg"
    step_option = ""

    @property
    def server_step(self) -> float:
        return getattr(self.options, self.step_option) if self.step_option else 1.0

    def aggregate(self, server_round: int, arrived: Sequence[int]) -> None:
        previous = self.theta.clone()
        super().aggregate(server_round, arrived)
        if self.server_step != 1.0:
            self.theta = torch.lerp(previous, self.theta, self.server_step)
