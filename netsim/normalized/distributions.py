"""Compute-time distributions that know their theoretical moments (Ciw style), so the
simulation can be tested against theory."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ShiftedExponential:
    """``T = t_min + Exp(mu)`` with mean extra delay ``inv_mu = 1/mu`` (journal V-D).

    ``inv_mu = 0`` is a reliable device: the time is exactly ``t_min``.
    """

    t_min: float
    inv_mu: float

    def __post_init__(self) -> None:
        if self.t_min < 0 or self.inv_mu < 0:
            raise ValueError("t_min and inv_mu must be >= 0")

    @property
    def mean(self) -> float:
        return self.t_min + self.inv_mu

    @property
    def variance(self) -> float:
        return self.inv_mu**2

    def expected_max(self, n: int) -> float:
        """``E[max(T_1..T_n)] = t_min + H_n / mu`` for n independent devices."""
        from netsim.normalized.round_time import harmonic_number

        return self.t_min + harmonic_number(n) * self.inv_mu

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        extra = rng.exponential(self.inv_mu, size) if self.inv_mu > 0 else np.zeros(size)
        return self.t_min + extra


@dataclass(frozen=True)
class Deterministic:
    """A fixed duration; used by tests that assert exact event times."""

    value: float

    @property
    def mean(self) -> float:
        return self.value

    @property
    def variance(self) -> float:
        return 0.0

    def expected_max(self, n: int) -> float:
        return self.value

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return np.full(size, float(self.value))
