"""SCAFFOLD (Karimireddy et al. 2020, Alg. 1 with option II control variates).

Local steps correct the gradient by ``c - c_i`` (server and device control variates); after
K local steps from the global model ``x`` to ``y_i``, the device sets
``c_i+ = c_i - c + (x - y_i) / (K lr)``; the server moves ``x`` by ``global_lr`` times the
mean model change (FedAvg's data-size weights; their uniform mean for equal sizes) and sets
``c += |S|/N mean_{i in S}(c_i+ - c_i)``.

With SGD momentum beta (the scenario's local optimizer), ``x - y_i`` is ``lr`` times a sum
of gradients weighted ``(1 - beta^s) / (1 - beta)``; ``K`` is replaced by the sum of those
weights, so ``c_i+`` stays a convex combination of the local gradients (beta = 0 gives
option II exactly).

Options: ``local_epochs`` (E, default 5: the journal's footnote 2; its lr 0.01 is the
scenario's ``training.lr``) and ``global_lr`` (eta_g, default 1). Traffic: the model and the
control variate go both ways, so one broadcast of ``2 * model_bits`` down and
``2 * model_bits`` up per device. Compute: ``local_epochs / E`` standard local updates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from contract import RoundPlan
from learning.algorithms.base import LearnerSetup
from learning.algorithms.server_step import ServerStepFedAvg
from learning.options import Options, option


def momentum_step_count(steps: int, momentum: float) -> float:
    """``sum_{s=1..K} (1 - beta^s) / (1 - beta)``: the total gradient weight of K momentum-SGD
    steps (``x - y = lr * sum_j a_j g_j``, ``a_j`` summing to this); K when beta = 0."""
    return float(sum((1.0 - momentum**s) / (1.0 - momentum) for s in range(1, steps + 1)))


@dataclass(frozen=True)
class ScaffoldOptions(Options):
    local_epochs: int = option(5, "local epochs per round (E)", low=1)
    global_lr: float = option(1.0, "server step size (eta_g)", low=0, low_open=True)


class Scaffold(ServerStepFedAvg):
    name = "scaffold"
    Options = ScaffoldOptions
    step_option = "global_lr"

    def __init__(self, setup: LearnerSetup):
        super().__init__(setup)
        size = self.theta.shape[1]
        self.server_control = torch.zeros(size, dtype=self.theta.dtype)
        self.controls = torch.zeros(self.num_devices, size, dtype=self.theta.dtype)
        self.control_deltas = torch.zeros_like(self.controls)

    def plan_round(self, server_round: int) -> RoundPlan | None:
        if server_round == 0:
            return None
        participants = self.sample_participants()
        streams = self.model_streams(participants, 2.0 * self.model_bits)  # x and c
        plan = RoundPlan(streams, self.model_uplink(participants, 2.0), participants)  # y_i and delta c_i
        return self.scale_by_work(plan)

    @classmethod
    def update_work(cls, options, training, standard_steps: int) -> float:
        return options.local_epochs / training.epochs

    def local_update(self, server_round: int, devices: Sequence[int]) -> None:
        training = self.setup.training
        epochs = self.options.local_epochs
        jobs = [self.job(d, self.theta[d], epochs=epochs, gradient_offset=self.server_control - self.controls[d])
                for d in devices]
        for device, trained in zip(devices, self.trainer.train_many(jobs)):
            data = self.data.devices[device]
            start = self.theta[device]
            steps = momentum_step_count(epochs * self.trainer.steps_per_epoch(data), training.momentum)
            control = self.controls[device] - self.server_control + (start - trained) / (steps * training.lr)
            self.control_deltas[device] = control - self.controls[device]
            self.controls[device] = control
            self.theta_half[device] = trained

    def aggregate(self, server_round: int, arrived: Sequence[int]) -> None:
        super().aggregate(server_round, arrived)
        if arrived:
            self.server_control += self.control_deltas[list(arrived)].sum(dim=0) / self.num_devices
