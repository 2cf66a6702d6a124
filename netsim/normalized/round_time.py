"""Closed-form round time of the paper's system model (journal V-D)."""

from __future__ import annotations


def harmonic_number(n: int) -> float:
    """``H_n = 1 + 1/2 + ... + 1/n`` (0 for n = 0)."""
    return float(sum(1.0 / k for k in range(1, n + 1)))


def expected_round_time_barrier(
    num_streams: int, num_devices: int, rho: float, t_min: float, inv_mu: float, t_dl: float = 1.0
) -> float:
    """``E[T_round] = T_dl (m + rho N) + T_min + H_N / mu`` (journal V-D).

    ``m`` model-sized downlink streams one after another, every device computes
    (shifted exponential), then ``N`` model-sized uploads one after another.
    """
    return t_dl * (num_streams + rho * num_devices) + t_min + harmonic_number(num_devices) * inv_mu
