"""Per-FedAvg (Fallah et al. 2020, Alg. 1), first-order MAML version (FO).

The global model is trained for the MAML objective ``F_i(w) = f_i(w - alpha grad f_i(w))``:
each local step draws two independent mini-batches D and D' and sets
``w_tmp = w - alpha grad f_i(w; D)``, ``w <- w - beta grad f_i(w_tmp; D')`` (the first-order
approximation drops the Hessian term); as many steps as FedAvg's local training (E epochs of
the scenario's batch size), plain gradient steps as in their algorithm. The server averages
with FedAvg's weights. A device's personal model is its adaptation of the global model:
``adaptation_steps`` full-batch gradient steps of size ``alpha`` on its own training data
(the one-step adaptation MAML is trained for).

Options (their names): ``alpha`` (inner step, default the scenario's learning rate), ``beta``
(outer step, default the scenario's learning rate), ``adaptation_steps`` (default 1).
Traffic is FedAvg's; the compute per round is twice FedAvg's (two gradients per step).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from contract import RoundPlan
from learning.algorithms.base import LearnerSetup
from learning.algorithms.fedavg import FedAvg
from learning.options import Options, option


@dataclass(frozen=True)
class PerFedAvgOptions(Options):
    alpha: float | None = option(None, "inner (adaptation) step size (none: the scenario's learning rate)", low=0, low_open=True)
    beta: float | None = option(None, "outer (meta) step size (none: the scenario's learning rate)", low=0, low_open=True)
    adaptation_steps: int = option(1, "gradient steps a device adapts the global model by before it is evaluated", low=0)


class PerFedAvg(FedAvg):
    name = "per-fedavg"
    Options = PerFedAvgOptions

    def __init__(self, setup: LearnerSetup):
        super().__init__(setup)
        o, lr = self.options, setup.training.lr
        self.alpha = float(lr if o.alpha is None else o.alpha)
        self.beta = float(lr if o.beta is None else o.beta)
        self.adapted: dict[int, torch.Tensor] = {}

    @classmethod
    def update_work(cls, options, training, standard_steps: int) -> float:
        return 2.0  # two gradients per step

    def plan_round(self, server_round: int) -> RoundPlan | None:
        return self.scale_by_work(super().plan_round(server_round))

    def local_update(self, server_round: int, devices: Sequence[int]) -> None:
        if devices:
            self.theta_half[list(devices)] = self.meta_train(devices)

    def meta_train(self, devices: Sequence[int]) -> torch.Tensor:
        """FO-MAML local steps of every device from its copy of the global model, in step: each
        step's inner (and outer) gradients for all devices still stepping come from one call."""
        size = self.setup.training.batch_size
        datas = [self.data.devices[d] for d in devices]
        draws = []
        for device, data in zip(devices, datas):  # each device's own generator: inner, outer, inner, ...
            steps = self.setup.training.epochs * self.trainer.steps_per_epoch(data)
            draws.append([[torch.randperm(data.num_train, generator=self.generators[device])[:size] for _ in range(2)]
                          for _ in range(steps)])
        w = self.theta[list(devices)].clone()
        for step in range(max(len(d) for d in draws)):
            rows = [j for j, d in enumerate(draws) if step < len(d)]
            stepping = [datas[j] for j in rows]
            inner = self.trainer.mean_gradients(w[rows], stepping, [draws[j][step][0] for j in rows])
            adapted = w[rows] - self.alpha * inner
            outer = self.trainer.mean_gradients(adapted, stepping, [draws[j][step][1] for j in rows])
            w[rows] = w[rows] - self.beta * outer
        return w

    def aggregate(self, server_round: int, arrived: Sequence[int]) -> None:
        super().aggregate(server_round, arrived)
        self.adapted.clear()

    def personal_model(self, device: int) -> torch.Tensor:
        """``adaptation_steps`` full-batch steps of size alpha from the device's global model (cached
        until the next aggregation)."""
        if device not in self.adapted:
            self.adapt([device])
        return self.adapted[device]

    def personal_models(self, devices: Sequence[int]) -> list[torch.Tensor]:
        """The personal models of ``devices``, those not cached adapted in one call."""
        self.adapt([d for d in devices if d not in self.adapted])
        return [self.adapted[d] for d in devices]

    def adapt(self, devices: Sequence[int]) -> None:
        """The personal models of ``devices``, each step's full-batch gradients in one call."""
        datas = [self.data.devices[d] for d in devices]
        w = self.theta[list(devices)]
        for _ in range(self.options.adaptation_steps):
            w = w - self.alpha * self.trainer.mean_gradients(w, datas)
        self.adapted.update(zip(devices, w))

    def evaluate(self, server_round: int):
        self.adapt([d for d in range(self.num_devices) if d not in self.adapted])  # all at once, then evaluated
        return super().evaluate(server_round)
