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

from typing import Sequence

import torch

from learning.algorithms.base import LearnerSetup
from learning.algorithms.server_step import ServerStepFedAvg


class PFedMe(ServerStepFedAvg):
    name = "pfedme"
    defaults = {"lam": 15.0, "K": 5, "personal_lr": 0.01, "lr": 0.01, "beta": 1.0, "R": 20, "batch_size": None}

    def __init__(self, setup: LearnerSetup):
        super().__init__(setup)
        options = self.options
        self.lam = float(options["lam"])
        self.K = int(options["K"])
        self.personal_lr = float(options["personal_lr"])
        self.lr = float(options["lr"])
        self.server_step = float(options["beta"])
        self.R = int(options["R"])
        self.batch_size = int(options["batch_size"] or setup.training.batch_size)
        if not (self.lam > 0 and self.K >= 1 and self.personal_lr > 0 and self.lr > 0 and self.server_step > 0 and self.R >= 1 and self.batch_size >= 1):
            raise ValueError(f"pfedme needs lam, personal_lr, lr, beta > 0 and K, R, batch_size >= 1; got {options}")
        self.personal = self.theta0.repeat(self.num_devices, 1)

    def plan_round(self, server_round: int):
        return self.scale_compute(super().plan_round(server_round), lambda d: self.R * self.K / self.standard_steps(d))

    def local_update(self, server_round: int, devices: Sequence[int]) -> None:
        if devices:
            index = list(devices)
            self.theta_half[index], self.personal[index] = self.client_updates(devices)

    def client_updates(self, devices: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor]:
        """R local rounds of every device from its received global model, in step: each inner
        step's gradients for all devices come from one call. Returns (local w, personal theta)."""
        datas = [self.data.devices[d] for d in devices]
        batches = [[torch.randperm(data.num_train, generator=self.generators[d])[: self.batch_size] for _ in range(self.R)]
                   for d, data in zip(devices, datas)]  # each device's own generator: R draws
        local = self.theta[list(devices)].clone()
        personal = local.clone()
        for r in range(self.R):
            for _ in range(self.K):
                gradient = self.trainer.mean_gradients(personal, datas, [b[r] for b in batches]) + self.lam * (personal - local)
                personal = personal - self.personal_lr * gradient
            local = local - self.lr * self.lam * (local - personal)
        return local, personal

    def personal_model(self, device: int) -> torch.Tensor:
        return self.personal[device]
