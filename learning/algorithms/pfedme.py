"""pFedMe (Dinh et al. 2020, Alg. 1): personal models as Moreau envelopes of the local loss.

Each round device i starts its local copy ``w`` from the global model; for ``R`` local rounds
it draws a mini-batch ``b``, solves the inner problem
``theta = argmin f_i(theta; b) + lam/2 ||theta - w||^2`` approximately with ``K`` gradient
steps of size ``personal_lr`` (warm-started from the previous ``theta``), then
moves ``w <- w - lr lam (w - theta)`` (Alg. 1). The server sets
``w <- (1 - beta) w + beta sum_i n_i/n w_i`` (the data-size weights of their code). The
personal models ``theta_i`` are what is evaluated.

Options (Dinh et al.'s names): ``lam`` (15), ``K`` (5), ``personal_lr`` (0.01), ``lr``
(0.01; both learning rates are the journal's footnote 2), ``beta`` (1), ``R`` (local
rounds, one mini-batch each, default 20: the footnote's E = 20, which in Dinh et al.'s code
counts mini-batch iterations) and ``batch_size`` (default the scenario's; the footnote's is
20). Plain gradient steps, no momentum, as in their optimizer.
Traffic is FedAvg's: one broadcast down, one model up per device. Compute: ``R K`` mini-batch
gradient steps against a standard local update's ``E`` epochs of mini-batches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from learning.algorithms.base import LearnerSetup
from learning.algorithms.server_step import ServerStepFedAvg
from learning.options import Options, option


@dataclass(frozen=True)
class PFedMeOptions(Options):
    lam: float = option(15.0, "regularization lambda of the Moreau envelope", low=0, low_open=True)
    K: int = option(5, "steps that solve the personal problem per local step", low=1)
    personal_lr: float = option(0.01, "learning rate of the personal problem", low=0, low_open=True)
    lr: float = option(0.01, "learning rate of the local model", low=0, low_open=True)
    beta: float = option(1.0, "server step: beta = 1 is FedAvg's average", low=0, low_open=True)
    R: int = option(20, "local steps per round", low=1)
    batch_size: int | None = option(None, "mini-batch size (none: the scenario's)", low=1)


class PFedMe(ServerStepFedAvg):
    name = "pfedme"
    Options = PFedMeOptions
    step_option = "beta"

    def __init__(self, setup: LearnerSetup):
        super().__init__(setup)
        self.batch_size = self.options.batch_size or setup.training.batch_size
        self.personal = self.theta0.repeat(self.num_devices, 1)

    @classmethod
    def update_work(cls, options, training, standard_steps: int) -> float:
        return options.R * options.K / standard_steps  # R local steps of K personal steps each

    def plan_round(self, server_round: int):
        return self.scale_by_work(super().plan_round(server_round))

    def local_update(self, server_round: int, devices: Sequence[int]) -> None:
        if devices:
            index = list(devices)
            self.theta_half[index], self.personal[index] = self.client_updates(devices)

    def client_updates(self, devices: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor]:
        """R local rounds of every device from its received global model, in step: each inner
        step's gradients for all devices come from one call. Returns (local w, personal theta)."""
        o, datas = self.options, [self.data.devices[d] for d in devices]
        batches = [[torch.randperm(data.num_train, generator=self.generators[d])[: self.batch_size] for _ in range(o.R)]
                   for d, data in zip(devices, datas)]  # each device's own generator: R draws
        local = self.theta[list(devices)].clone()
        personal = local.clone()
        for r in range(o.R):
            for _ in range(o.K):
                gradient = self.trainer.mean_gradients(personal, datas, [b[r] for b in batches]) + o.lam * (personal - local)
                personal = personal - o.personal_lr * gradient
            local = local - o.lr * o.lam * (local - personal)
        return local, personal

    def personal_model(self, device: int) -> torch.Tensor:
        return self.personal[device]
