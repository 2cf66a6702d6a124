"""Ditto (Li et al. 2021, Alg. 1): a global model trained as in FedAvg, and on every device
a personal model ``v_k`` trained on its own data with ``lam/2 ||v_k - w^t||^2`` (their personal objective ``h_k``),
``w^t`` the global model it received this round.

The personal models are what is evaluated. Options: ``lam`` (lambda, default 0.1, the
smallest of the journal's grid {0.1, 0.5, 1}, footnote 1) and ``personal_epochs`` (local
epochs of the personal solver, default 1, as the global model's E = 1). Traffic is FedAvg's:
one broadcast down, one model up (the personal models never leave the device). Compute:
the global and the personal update, ``1 + personal_epochs / E`` standard local updates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from learning.algorithms.base import LearnerSetup
from learning.algorithms.fedavg import FedAvg
from learning.options import Options, option


@dataclass(frozen=True)
class DittoOptions(Options):
    lam: float = option(0.1, "weight of the pull lam/2 ||v_k - w^t||^2 towards the global model", low=0)
    personal_epochs: int = option(1, "local epochs on the personal model per round", low=1)


class Ditto(FedAvg):
    name = "ditto"
    Options = DittoOptions

    def __init__(self, setup: LearnerSetup):
        super().__init__(setup)
        self.personal = self.theta0.repeat(self.num_devices, 1)

    @classmethod
    def update_work(cls, options, training, standard_steps: int) -> float:
        return 1 + options.personal_epochs / training.epochs  # the global model's update, then the personal one

    def plan_round(self, server_round: int):
        return self.scale_by_work(super().plan_round(server_round))

    def local_update(self, server_round: int, devices: Sequence[int]) -> None:
        super().local_update(server_round, devices)  # the global model's update: theta_half
        if devices:
            o = self.options
            jobs = [self.job(d, self.personal[d], "personal", epochs=o.personal_epochs, anchor=self.theta[d], proximal=o.lam)
                    for d in devices]
            self.personal[list(devices)] = self.trainer.train_many(jobs)

    def personal_model(self, device: int) -> torch.Tensor:
        return self.personal[device]
