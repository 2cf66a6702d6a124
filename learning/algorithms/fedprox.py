"""FedProx (Li et al. 2020): FedAvg whose local objective adds ``mu/2 ||w - w^t||^2``
(their local objective ``h_k``), ``w^t`` the global model the device received.

Option ``mu`` (default 0.1, the smallest of the journal's grid {0.1, 0.5, 1}, footnote 1).
Traffic is FedAvg's: one broadcast down, one model up per device.
"""

from __future__ import annotations

from dataclasses import dataclass
from learning.algorithms.fedavg import FedAvg
from learning.options import Options, option


@dataclass(frozen=True)
class FedProxOptions(Options):
    mu: float = option(0.1, "weight of the proximal term mu/2 ||w - w^t||^2", low=0)


class FedProx(FedAvg):
    name = "fedprox"
    Options = FedProxOptions
    asynchronous = True

    def local_job(self, device: int, start):
        """The received model is both the start and the anchor."""
        return self.job(device, start, anchor=start, proximal=self.options.mu)
