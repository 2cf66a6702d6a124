"""Small-scale fading correlated in time: a sum of sinusoids per link, evaluated at any time.

The scattered part of each link's complex gain is Zheng and Xiao's statistical sum-of-sinusoids
model (Y. R. Zheng and C. Xiao, "Simulation models with correct statistical properties for
Rayleigh fading channels", IEEE Trans. Commun. 51(6), 2003, eqs. (6)-(8)): with ``M`` sinusoids,

    X_c(t) = sqrt(2/M) sum_n cos(w_d t cos(a_n) + phi_n),
    X_s(t) = sqrt(2/M) sum_n cos(w_d t sin(a_n) + psi_n),
    a_n = (2 pi n - pi + theta) / (4 M),

``theta, phi_n, psi_n`` uniform on ``[-pi, pi)``, ``w_d = 2 pi f_D`` and ``f_D = v f_c / c`` the
maximum Doppler shift. Over its random angles and phases the autocorrelation of each quadrature
is exactly Clarke's ``J0(w_d tau)`` (their eq. (9): each ``a_n`` is uniform on its own slice of
``[0, pi/2)``), for any ``M``, and ``h = (X_c + j X_s) / sqrt(2)`` has ``E|h|^2 = 1``. A
Gauss-Markov AR(1) recursion with ``rho = J0(w_d dt)`` would match ``J0`` only at one lag and
decay exponentially beyond it; the sum of sinusoids matches it at every lag and needs no state:
``gain(t)`` for any ``t``, in any order, from parameters drawn once.

A LOS link adds the Ricean specular component of TR 38.901 Sec. 7.5 step 11 / 7.6.3.2:
``h = sqrt(K/(K+1)) exp(j (w_d t cos(a_0) + phi_0)) + sqrt(1/(K+1)) h_scatter``, ``a_0`` the
direction of travel relative to the LOS ray (uniform), so ``E|h|^2 = 1`` for every ``K`` as in
``netsim.radio.fading``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from netsim.radio.pathloss import SPEED_OF_LIGHT_M_S

SINUSOIDS = 8  # M: Zheng and Xiao's Figs. 3-6 show the statistics close to Clarke's at M = 8
KMH = 1000.0 / 3600.0  # m/s per km/h


def doppler_hz(speed_m_s, carrier_hz: float) -> np.ndarray:
    """Maximum Doppler shift ``f_D = v f_c / c`` (Hz)."""
    return np.asarray(speed_m_s, dtype=float) * carrier_hz / SPEED_OF_LIGHT_M_S


def coherence_time_s(doppler: float) -> float:
    """The usual ``T_c = 0.423 / f_D`` (Rappaport, Wireless Communications, eq. (5.40.c)): about
    44 ms at 3 km/h and 3.5 GHz."""
    return 0.423 / doppler


@dataclass(frozen=True)
class SumOfSinusoids:
    """Every link's fading process: ``links`` complex gains (any shape, e.g. devices x subbands),
    each with its own angles and phases and its Doppler shift; the K-factor (linear, 0: Rayleigh)
    is given at each evaluation (a link's LOS state may change as its device moves)."""

    omega_rad_s: np.ndarray  # links: 2 pi f_D
    cos_hz: np.ndarray  # links x M: f_D cos(a_n)
    sin_hz: np.ndarray  # links x M: f_D sin(a_n)
    phi_cycles: np.ndarray  # links x M: phi_n / 2 pi
    psi_cycles: np.ndarray  # links x M
    los_cos: np.ndarray  # links: cos(a_0) of the specular ray
    los_phase: np.ndarray  # links

    @classmethod
    def draw(cls, rng: np.random.Generator, doppler, sinusoids: int = SINUSOIDS) -> "SumOfSinusoids":
        """The processes of links with Doppler shifts ``doppler`` (Hz, one per link): one
        ``theta``, ``M`` ``phi`` and ``M`` ``psi`` per link, drawn in that order, then the
        specular ray's direction and phase."""
        doppler = np.asarray(doppler, dtype=float)
        shape = doppler.shape
        theta = rng.uniform(-np.pi, np.pi, shape + (1,))
        phi = rng.uniform(-np.pi, np.pi, shape + (sinusoids,))
        psi = rng.uniform(-np.pi, np.pi, shape + (sinusoids,))
        los_a = rng.uniform(-np.pi, np.pi, shape)
        los_phase = rng.uniform(-np.pi, np.pi, shape)
        n = np.arange(1, sinusoids + 1)
        a = (2.0 * np.pi * n - np.pi + theta) / (4.0 * sinusoids)
        f_d = doppler[..., None]
        return cls(2.0 * np.pi * doppler, f_d * np.cos(a), f_d * np.sin(a), phi / (2.0 * np.pi), psi / (2.0 * np.pi), np.cos(los_a), los_phase)

    def gain(self, t_s: float, k_factor=0.0) -> np.ndarray:
        """The complex gains ``h`` at time ``t_s`` (``E|h|^2 = 1``) under K-factors ``k_factor``
        (linear, broadcast against the links)."""
        scale = np.sqrt(1.0 / self.cos_hz.shape[-1])  # sqrt(2/M) per quadrature, over sqrt(2)
        scatter = scale * (_cos_sum(t_s, self.cos_hz, self.phi_cycles) + 1j * _cos_sum(t_s, self.sin_hz, self.psi_cycles))
        k = np.asarray(k_factor, dtype=float)
        if not k.any():
            return scatter
        los = np.exp(1j * (self.omega_rad_s * t_s * self.los_cos + self.los_phase))
        return np.sqrt(k / (k + 1.0)) * los + np.sqrt(1.0 / (k + 1.0)) * scatter

    def power(self, t_s: float, k_factor=0.0) -> np.ndarray:
        """``|h(t)|^2``."""
        h = self.gain(t_s, k_factor)
        return h.real**2 + h.imag**2


def _cos_sum(t_s: float, frequency_hz: np.ndarray, phase_cycles: np.ndarray) -> np.ndarray:
    """``sum_n cos(2 pi (f_n t + phase_n))``: the phase counted in cycles in double precision and
    reduced to one cycle there, its cosine taken in single precision (vectorized, an order of
    magnitude faster; the error, ~1e-7, is far below the model's)."""
    cycles = frequency_hz * t_s
    cycles += phase_cycles
    cycles -= np.floor(cycles)
    single = cycles.astype(np.float32)
    single *= np.float32(2.0 * np.pi)
    return np.cos(single, out=single).sum(axis=-1, dtype=np.float64)


def autocorrelation(process: SumOfSinusoids, lags_s, starts_s) -> np.ndarray:
    """The ensemble autocorrelation ``Re E[h(t) h*(t + tau)]`` at each lag, averaged over the
    links and the start times ``starts_s`` (what Clarke's model sets to ``J0(w_d tau)``)."""
    lags = np.asarray(lags_s, dtype=float)
    total = np.zeros(lags.size)
    for start in np.asarray(starts_s, dtype=float):
        h0 = np.conj(process.gain(start))
        total += [float(np.mean((process.gain(start + lag) * h0).real)) for lag in lags]
    return total / np.size(starts_s)


def first_zero_s(doppler: float) -> float:
    """The first zero of ``J0(2 pi f_D tau)``: ``tau = 2.404826 / (2 pi f_D)``."""
    return 2.404825557695773 / (2.0 * np.pi * doppler)
