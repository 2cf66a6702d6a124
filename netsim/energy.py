"""Device energy per round (joules): radio on the air, and the CPU.

Compute energy is the standard CMOS model of the wireless-FL literature: ``E = kappa C f^2``
for ``C`` CPU cycles at clock ``f`` (Hz) with effective switched capacitance ``kappa``
(Yang et al., "Energy efficient federated learning over wireless communication networks",
IEEE TWC 20(3), 2021, Sec. II). Tran et al. (INFOCOM 2019, eq. 3) write the same model as
``(alpha / 2) C f^2``: their ``alpha`` is ``2 kappa``, so a ``kappa`` taken from Yang et al.
(1e-28) is used as is, and an ``alpha`` from Tran et al. must be halved.
"""

from __future__ import annotations


def transmit_energy_j(tx_power_w: float, airtime_s: float) -> float:
    """Radiated transmit power times the time on the air."""
    return tx_power_w * airtime_s


def receive_energy_j(receive_power_w: float, listening_s: float) -> float:
    """Receiver power times the time spent listening to the device's streams."""
    return receive_power_w * listening_s


def compute_energy_j(kappa: float, cycles: float, cpu_hz: float) -> float:
    """``kappa * cycles * f^2``."""
    return kappa * cycles * cpu_hz**2


def compute_time_s(cycles: float, cpu_hz: float) -> float:
    """The deterministic part of the compute time: ``cycles / f``."""
    return cycles / cpu_hz
