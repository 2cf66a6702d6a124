"""3GPP TR 38.901 (V16.1.0) large-scale propagation: path loss (Table 7.4.1-1), shadow-fading
standard deviations (same table; an O2I link's from Table 7.5-6), LOS probability (Table
7.4.2-1) and the LOS Ricean K-factor's distribution (Table 7.5-6, ``K ~ N(mu_K, sigma_K)`` in
dB) for UMi street canyon and UMa.

Distances in metres, the carrier in Hz (the table's ``fc`` is in GHz: ``fc = carrier_hz / 1e9``),
heights in metres. The formulas hold for ``10 m <= d2D <= 5 km`` (Table 7.4.1-1) and
``0.5 <= fc <= 100 GHz``; callers check the range (``check_range``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SPEED_OF_LIGHT_M_S = 3.0e8  # the value Table 7.4.1-1 note 1 uses
EFFECTIVE_ENVIRONMENT_HEIGHT_M = 1.0  # h_E: UMi always; UMa with probability 1 for h_UT < 13 m (note 1)
MIN_DISTANCE_M = 10.0
MAX_DISTANCE_M = 5000.0
MIN_CARRIER_HZ = 0.5e9
MAX_CARRIER_HZ = 100e9


def breakpoint_distance_m(bs_height_m: float, ut_height_m, carrier_hz: float,
                          effective_height_m=EFFECTIVE_ENVIRONMENT_HEIGHT_M):
    """``d'_BP = 4 h'_BS h'_UT f_c / c`` with ``h' = h - h_E`` (Table 7.4.1-1 note 1: ``h_E = 1 m``
    for UMi; for UMa drawn per link, ``uma_effective_height_m``). Scalars or arrays."""
    h_bs = bs_height_m - effective_height_m
    h_ut = ut_height_m - effective_height_m
    return 4.0 * h_bs * h_ut * carrier_hz / SPEED_OF_LIGHT_M_S


def distance_3d_m(d2d_m, bs_height_m: float, ut_height_m: float) -> np.ndarray:
    return np.sqrt(np.asarray(d2d_m, dtype=float) ** 2 + (bs_height_m - ut_height_m) ** 2)


def _dual_slope_los_db(d2d_m, bs_height_m, ut_height_m, carrier_hz, intercept_db, near_slope, far_correction,
                       effective_height_m=EFFECTIVE_ENVIRONMENT_HEIGHT_M) -> np.ndarray:
    """The LOS form shared by UMi and UMa: ``PL1`` up to the breakpoint, ``PL2`` beyond it."""
    d2d = np.asarray(d2d_m, dtype=float)
    d3d = distance_3d_m(d2d, bs_height_m, ut_height_m)
    fc_ghz = carrier_hz / 1e9
    d_bp = breakpoint_distance_m(bs_height_m, ut_height_m, carrier_hz, effective_height_m)
    near = intercept_db + near_slope * np.log10(d3d) + 20.0 * np.log10(fc_ghz)
    far = (intercept_db + 40.0 * np.log10(d3d) + 20.0 * np.log10(fc_ghz)
           - far_correction * np.log10(d_bp**2 + (bs_height_m - ut_height_m) ** 2))
    return np.where(d2d <= d_bp, near, far)


def umi_los_db(d2d_m, bs_height_m: float, ut_height_m, carrier_hz: float, effective_height_m=1.0) -> np.ndarray:
    """UMi street canyon LOS: ``PL1 = 32.4 + 21 log10(d3D) + 20 log10(fc)``,
    ``PL2 = 32.4 + 40 log10(d3D) + 20 log10(fc) - 9.5 log10(d'BP^2 + (hBS - hUT)^2)``."""
    return _dual_slope_los_db(d2d_m, bs_height_m, ut_height_m, carrier_hz, 32.4, 21.0, 9.5, effective_height_m)


def umi_nlos_db(d2d_m, bs_height_m: float, ut_height_m, carrier_hz: float, effective_height_m=1.0) -> np.ndarray:
    """UMi street canyon NLOS: ``max(PL_LOS, 35.3 log10(d3D) + 22.4 + 21.3 log10(fc) - 0.3 (hUT - 1.5))``."""
    d3d = distance_3d_m(d2d_m, bs_height_m, ut_height_m)
    nlos = 35.3 * np.log10(d3d) + 22.4 + 21.3 * np.log10(carrier_hz / 1e9) - 0.3 * (ut_height_m - 1.5)
    return np.maximum(umi_los_db(d2d_m, bs_height_m, ut_height_m, carrier_hz, effective_height_m), nlos)


def uma_los_db(d2d_m, bs_height_m: float, ut_height_m, carrier_hz: float, effective_height_m=1.0) -> np.ndarray:
    """UMa LOS: ``PL1 = 28.0 + 22 log10(d3D) + 20 log10(fc)``,
    ``PL2 = 28.0 + 40 log10(d3D) + 20 log10(fc) - 9 log10(d'BP^2 + (hBS - hUT)^2)``."""
    return _dual_slope_los_db(d2d_m, bs_height_m, ut_height_m, carrier_hz, 28.0, 22.0, 9.0, effective_height_m)


def uma_nlos_db(d2d_m, bs_height_m: float, ut_height_m, carrier_hz: float, effective_height_m=1.0) -> np.ndarray:
    """UMa NLOS: ``max(PL_LOS, 13.54 + 39.08 log10(d3D) + 20 log10(fc) - 0.6 (hUT - 1.5))``."""
    d3d = distance_3d_m(d2d_m, bs_height_m, ut_height_m)
    nlos = 13.54 + 39.08 * np.log10(d3d) + 20.0 * np.log10(carrier_hz / 1e9) - 0.6 * (ut_height_m - 1.5)
    return np.maximum(uma_los_db(d2d_m, bs_height_m, ut_height_m, carrier_hz, effective_height_m), nlos)


def umi_los_probability(d2d_m, ut_height_m=1.5) -> np.ndarray:
    """Table 7.4.2-1, UMi street canyon: 1 up to 18 m, then ``18/d + exp(-d/36) (1 - 18/d)``."""
    d = np.maximum(np.asarray(d2d_m, dtype=float), 18.0)
    return 18.0 / d + np.exp(-d / 36.0) * (1.0 - 18.0 / d)


def uma_los_probability(d2d_m, ut_height_m=1.5) -> np.ndarray:
    """Table 7.4.2-1, UMa: 1 up to 18 m, then ``[18/d + exp(-d/63) (1 - 18/d)] (1 + C'(h_UT) 5/4
    (d/100)^3 exp(-d/150))``, ``C'(h_UT) = ((h_UT - 13)/10)^1.5`` above 13 m, else 0."""
    d = np.maximum(np.asarray(d2d_m, dtype=float), 18.0)
    c = np.where(np.asarray(ut_height_m) > 13.0, (np.maximum(np.asarray(ut_height_m, dtype=float), 13.0) - 13.0) / 10.0, 0.0) ** 1.5
    return (18.0 / d + np.exp(-d / 63.0) * (1.0 - 18.0 / d)) * (1.0 + c * 1.25 * (d / 100.0) ** 3 * np.exp(-d / 150.0))


def uma_effective_height_m(rng: np.random.Generator, d2d_m, ut_height_m) -> np.ndarray:
    """UMa ``h_E`` per link (Table 7.4.1-1 note 1): 1 m with probability ``1 / (1 + C(d2D, h_UT))``,
    else uniform over ``12, 15, ..., h_UT - 1.5`` m; ``C = g(d2D) ((h_UT - 13)/10)^1.5`` above 13 m
    (0 below), ``g = 5/4 (d2D/100)^3 exp(-d2D/150)`` beyond 18 m (0 within)."""
    d = np.asarray(d2d_m, dtype=float)
    h = np.broadcast_to(np.asarray(ut_height_m, dtype=float), d.shape)
    g = np.where(d > 18.0, 1.25 * (d / 100.0) ** 3 * np.exp(-d / 150.0), 0.0)
    c = np.where(h > 13.0, g * (np.maximum(h, 13.0) - 13.0) ** 1.5 / 10.0**1.5, 0.0)
    u_one, u_pick = rng.random(d.shape), rng.random(d.shape)
    choices = np.floor((h - 1.5 - 12.0) / 3.0) + 1.0  # how many of 12, 15, ... lie at or below h_UT - 1.5
    picked = 12.0 + 3.0 * np.floor(u_pick * np.maximum(choices, 1.0))
    return np.where((u_one < 1.0 / (1.0 + c)) | (choices < 1.0), EFFECTIVE_ENVIRONMENT_HEIGHT_M, picked)


@dataclass(frozen=True)
class PropagationScenario:
    """One row pair of Table 7.4.1-1: LOS and NLOS path loss, their ``sigma_SF``, the LOS
    probability of Table 7.4.2-1 and the UT heights the formulas hold for."""

    name: str
    los_db: object
    nlos_db: object
    sigma_sf_los_db: float
    sigma_sf_nlos_db: float
    sigma_sf_o2i_db: float  # Table 7.5-6: sigma_SF of an O2I link (7 dB in UMi and UMa)
    los_probability: object
    max_ut_height_m: float  # Table 7.4.1-1: 1.5 <= h_UT <= 22.5 m; UMa below 13 m so that h_E = 1 m
    k_factor_mu_db: float  # Table 7.5-6, LOS: Ricean K-factor mean (dB) ...
    k_factor_sigma_db: float  # ... and standard deviation (dB)

    def path_loss_db(self, d2d_m, los, bs_height_m: float, ut_height_m, carrier_hz: float,
                     effective_height_m=EFFECTIVE_ENVIRONMENT_HEIGHT_M) -> np.ndarray:
        """Per device: LOS or NLOS path loss (``los`` a boolean per device)."""
        los = np.asarray(los, dtype=bool)
        return np.where(los, self.los_db(d2d_m, bs_height_m, ut_height_m, carrier_hz, effective_height_m),
                        self.nlos_db(d2d_m, bs_height_m, ut_height_m, carrier_hz, effective_height_m))

    def sigma_sf_db(self, los, indoor=False) -> np.ndarray:
        """A link's shadow-fading standard deviation: Table 7.4.1-1's LOS or NLOS value outdoors,
        Table 7.5-6's O2I value for an indoor device (``indoor`` broadcast against ``los``)."""
        outdoor = np.where(np.asarray(los, dtype=bool), self.sigma_sf_los_db, self.sigma_sf_nlos_db)
        return np.where(np.asarray(indoor, dtype=bool), self.sigma_sf_o2i_db, outdoor)


SCENARIOS: dict[str, PropagationScenario] = {
    "umi": PropagationScenario("umi", umi_los_db, umi_nlos_db, 4.0, 7.82, 7.0, umi_los_probability, 22.5, 9.0, 5.0),
    "uma": PropagationScenario("uma", uma_los_db, uma_nlos_db, 4.0, 6.0, 7.0, uma_los_probability, 13.0, 9.0, 3.5),
}


def check_range(d2d_m, carrier_hz: float) -> None:
    """ValueError unless every distance and the carrier lie where Table 7.4.1-1 holds."""
    d2d = np.asarray(d2d_m, dtype=float)
    if d2d.size and (d2d.min() < MIN_DISTANCE_M or d2d.max() > MAX_DISTANCE_M):
        raise ValueError(f"TR 38.901 path loss holds for 10 m <= d2D <= 5000 m, got {d2d.min():g}..{d2d.max():g} m")
    if not MIN_CARRIER_HZ <= carrier_hz <= MAX_CARRIER_HZ:
        raise ValueError(f"TR 38.901 path loss holds for carriers of 0.5..100 GHz, got {carrier_hz / 1e9:g} GHz")
