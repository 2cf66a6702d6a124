"""Device batteries drained by the energy model: each device starts with ``capacity_j`` and
spends what its rounds cost it (receive, compute, transmit: ``netsim.radio.energy``); an empty
device takes no more part.

An empty device is dropped at a round's start (``battery``). In a synchronous round each step's
energy is drained as the step ends, and a step the charge left cannot pay for is cut when that
charge is spent (``netsim.transport.lifecycle.Presence``); the waiting energy is drained at the round's
end (``netsim.dynamics.rounds.RoundInTime``). The buffered orchestrators drain each step's
energy as it is spent (``netsim.clock.buffered``).
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
