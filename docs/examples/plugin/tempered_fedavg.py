"""Tempered FedAvg: FedAvg whose aggregation weights are n_i ** power instead of n_i."""

from __future__ import annotations

from dataclasses import dataclass

from learning.algorithms.fedavg import FedAvg
from learning.options import Options, option
from learning.weights import fedavg_weights


@dataclass(frozen=True)
class TemperedOptions(Options):
    power: float = option(1.0, "weights proportional to n_i ** power (1: FedAvg, 0: a plain mean)", low=0)


class TemperedFedAvg(FedAvg):
    name = "tempered-fedavg"
    Options = TemperedOptions

    def mixing_matrix(self):
        return fedavg_weights(self.train_sizes ** self.options.power)


ALGORITHMS = [TemperedFedAvg]
