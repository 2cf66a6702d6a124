"""Device batteries drained by the energy model: each device starts with ``capacity_j`` and
spends what its rounds cost it (receive, compute, transmit: ``netsim.energy``); an empty
device takes no more part.

The charge is checked at a round's start and settled at its end: a device whose round cost
more than it had left ran out during the round, and what it would have uploaded is lost
(it is dropped with reason ``battery``).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np


class Batteries:
    def __init__(self, devices: int, capacity_j: float):
        self.capacity_j = float(capacity_j)
        self.remaining_j = np.full(devices, self.capacity_j)

    @property
    def empty(self) -> np.ndarray:
        return self.remaining_j <= 0.0

    def drain(self, energy_j: Mapping[int, float]) -> list[int]:
        """Spend each device's round energy; the devices that ran out in this round."""
        ran_out = []
        for device, joules in energy_j.items():
            before = self.remaining_j[device]
            self.remaining_j[device] = before - float(joules)
            if before > 0.0 >= self.remaining_j[device]:
                ran_out.append(int(device))
        return ran_out
