"""A spatially consistent Gaussian field: one value per point of the plane, correlated over
distance as ``exp(-d / d_corr)`` (TR 38.901 Sec. 7.6.3.1, eq. (7.6-5)'s exponential
auto-correlation of the large-scale parameters, with the decorrelation distances of
Table 7.5-6 / Table 7.6.3.1-2), evaluated at any point.

A sum of sinusoids with random wave vectors (the spectral method of Shinozuka and Deodatis,
Appl. Mech. Rev. 44(4), 1991; TR 38.901 7.6.3.1 allows any method with the stated
correlation): ``g(x) = sqrt(2/N) sum_n cos(k_n . x + phi_n)``, ``phi_n`` uniform, ``k_n`` drawn
from the spectrum of ``exp(-r/d)`` in two dimensions, ``S(k) ~ (1 + (k d)^2)^(-3/2)``: its
direction uniform, its length ``|k| = sqrt((1-u)^-2 - 1) / d`` (inverting
``P(|k| <= k) = 1 - (1 + (k d)^2)^(-1/2)``), so that ``E[g(x) g(x + r)] = E[cos(k . r)] =
exp(-|r| / d)`` exactly, at every distance, and ``E g^2 = 1``. With many sinusoids ``g`` is close
to Gaussian (central limit); the mean over fields of the correlation is exact for any ``N``.

On the wrap-around torus of the 19-site layout (``period_m``, the lattice of the cluster's
translations) the field must be periodic, or a device crossing the torus's seam (its position
folded back by a lattice vector) would jump to an independent value, and two devices either side
of the seam, metres apart, would be uncorrelated: each wave vector is moved to the nearest point
of the reciprocal lattice (``k . a_i`` a multiple of ``2 pi`` for both lattice vectors ``a_i``),
a shift of at most ``|b| / sqrt(3)``, ~1.9e-3 rad/m for the 19-site cluster at ISD 500 m
(``|b| = 2 pi / (|a| sin 60°)``, ``|a| = sqrt(19) ISD``), so that the correlation stays close to
``exp(-r/d)`` at the correlation distances of Table 7.5-6 (`tests/test_dynamics_field.py` holds
it within 0.05 at ``d`` and ``2 d``).

The phases are evaluated in single precision (vectorized cosines are an order of magnitude
faster there; at the layout's kilometre scale a wave's phase is off by at most ~1e-3 rad, the
few waves of wavelength far below a metre excepted, whose phase is as random either way).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WAVES = 16  # N


@dataclass(frozen=True)
class ExponentialField:
    """Independent unit-variance fields (any shape of fields), ``WAVES`` sinusoids each:
    ``waves[0]``, ``waves[1]`` the wave vectors' components (rad/m), ``waves[2]`` the phases."""

    waves: np.ndarray  # 3 x fields x N, single precision

    @classmethod
    def draw(cls, rng: np.random.Generator, correlation_m, waves: int = WAVES, period_m: np.ndarray | None = None) -> "ExponentialField":
        """Fields of correlation distances ``correlation_m`` (one per field, any shape): per field
        ``N`` uniforms for the wave numbers, ``N`` directions, ``N`` phases, in that order.
        ``period_m`` (2 x 2, rows the lattice vectors ``a_1``, ``a_2``): periodic on that lattice."""
        d = np.asarray(correlation_m, dtype=float)[..., None]
        u = rng.random(d.shape[:-1] + (waves,))
        direction = rng.uniform(0.0, 2.0 * np.pi, u.shape)
        phase = rng.uniform(0.0, 2.0 * np.pi, u.shape)
        k = np.sqrt((1.0 - u) ** -2 - 1.0) / d
        kx, ky = k * np.cos(direction), k * np.sin(direction)
        if period_m is not None:  # k = n_1 b_1 + n_2 b_2, b the reciprocal basis (a_i . b_j = 2 pi delta_ij), n rounded
            lattice = np.asarray(period_m, dtype=float)
            reciprocal = 2.0 * np.pi * np.linalg.inv(lattice).T  # rows b_1, b_2
            n = np.rint(np.stack([kx, ky], axis=-1) @ lattice.T / (2.0 * np.pi))
            kx, ky = np.moveaxis(n @ reciprocal, -1, 0)
        return cls(np.stack([kx, ky, phase]).astype(np.float32))

    def at(self, x_m, y_m) -> np.ndarray:
        """Every field at every point: ``x``, ``y`` of one shape ``P`` give ``P + fields``."""
        x = np.asarray(x_m, dtype=np.float32)
        return _sum_shared(x.ravel(), np.asarray(y_m, dtype=np.float32).ravel(), self.waves).reshape(x.shape + self.waves.shape[1:-1])

    def select(self, x_m, y_m, which) -> np.ndarray:
        """Fields of shape ``(sites, kinds)``: at each of ``n`` points and every site, the field of
        kind ``which`` (an int: the same for all; else an array ``n x sites``), ``n x sites``, so
        each link reads only the field it needs."""
        x = np.asarray(x_m, dtype=np.float32)
        y = np.asarray(y_m, dtype=np.float32)
        if np.ndim(which) == 0:
            return _sum_shared(x, y, self.waves[:, :, int(which)])
        return _sum(x[:, None, None], y[:, None, None], self.waves[:, np.arange(self.waves.shape[1]), np.asarray(which)])


    def select_links(self, x_m, y_m, sites, which) -> np.ndarray:
        """Fields of shape ``(sites, kinds)``: at each of ``n`` points, the field of site
        ``sites`` (``n x m``) and kind ``which`` (an int, or ``n x m``), ``n x m``."""
        x = np.asarray(x_m, dtype=np.float32)[:, None, None]
        y = np.asarray(y_m, dtype=np.float32)[:, None, None]
        return _sum(x, y, self.waves[:, sites, which])


def _sum_shared(x, y, waves) -> np.ndarray:
    """``_sum`` of points ``x``, ``y`` (1-D) against fields ``waves`` (3 x fields x N) every point
    shares: the phases as one matrix product ``[x y 1] @ [kx; ky; phase]``, then the cosines."""
    points = np.stack([x, y, np.ones_like(x)], axis=1)
    arg = points @ np.ascontiguousarray(waves.reshape(3, -1))
    total = np.cos(arg, out=arg).reshape((x.size,) + waves.shape[1:]).sum(axis=-1, dtype=np.float64)
    return np.sqrt(2.0 / waves.shape[-1]) * total


def _sum(x, y, waves) -> np.ndarray:
    """``sqrt(2/N) sum_n cos(kx x + ky y + phase)`` over the last axis."""
    arg = x * waves[0]
    arg += y * waves[1]
    arg += waves[2]
    return np.sqrt(2.0 / waves.shape[-1]) * np.cos(arg, out=arg).sum(axis=-1, dtype=np.float64)
