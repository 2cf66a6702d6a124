"""Link budget and rates: thermal noise, SNR, Shannon rate with an SNR gap and a spectral
efficiency cap. Powers in dBm or W, bandwidths in Hz, rates in bit/s."""

from __future__ import annotations

import numpy as np

THERMAL_NOISE_DBM_PER_HZ = -174.0  # k T at 290 K


def dbm_to_w(dbm):
    return 10.0 ** ((np.asarray(dbm, dtype=float) - 30.0) / 10.0)


def w_to_dbm(watts):
    return 10.0 * np.log10(np.asarray(watts, dtype=float)) + 30.0


def db_to_linear(db):
    return 10.0 ** (np.asarray(db, dtype=float) / 10.0)


def linear_to_db(linear):
    return 10.0 * np.log10(np.asarray(linear, dtype=float))


def noise_power_dbm(bandwidth_hz: float, noise_figure_db: float) -> float:
    """``N = -174 dBm/Hz + 10 log10(B) + NF``."""
    return THERMAL_NOISE_DBM_PER_HZ + 10.0 * np.log10(bandwidth_hz) + noise_figure_db


def snr_db(tx_power_dbm: float, channel_gain_db, bandwidth_hz: float, noise_figure_db: float,
           antenna_gains_dbi: float = 0.0) -> np.ndarray:
    """Received SNR: ``P_tx + G_tx + G_rx + G - N`` in dB, ``G = -(path loss + shadowing)``
    (dB), ``G_tx + G_rx`` the two antennas' gains (dBi) summed."""
    return (tx_power_dbm + antenna_gains_dbi + np.asarray(channel_gain_db, dtype=float)
            - noise_power_dbm(bandwidth_hz, noise_figure_db))


def sinr_db(snr_db, interference_dbm, bandwidth_hz: float, noise_figure_db: float) -> np.ndarray:
    """``S / (N + I)`` in dB from the SNR ``S / N`` (dB) and the interference power (dBm):
    ``SNR - 10 log10(1 + I / N)``."""
    i_over_n = db_to_linear(np.asarray(interference_dbm, dtype=float) - noise_power_dbm(bandwidth_hz, noise_figure_db))
    return np.asarray(snr_db, dtype=float) - 10.0 * np.log10(1.0 + i_over_n)


def spectral_efficiency(snr_linear, snr_gap_db: float = 0.0, max_bps_per_hz: float | None = None) -> np.ndarray:
    """``log2(1 + SNR / gap)`` bit/s/Hz, capped at ``max_bps_per_hz`` when a cap is given (a
    finite set of modulation and coding schemes tops out, e.g. TS 38.214 Table 5.2.2.1-2)."""
    efficiency = np.log2(1.0 + np.asarray(snr_linear, dtype=float) / db_to_linear(snr_gap_db))
    if max_bps_per_hz is not None:
        efficiency = np.minimum(efficiency, max_bps_per_hz)
    return efficiency


# TR 36.942 Annex A.2 (Table A.2-1): the attenuated Shannon bound fitted to LTE's link-level
# throughput: alpha, SNR_min (dB) and Thr_max (bit/s/Hz), downlink and uplink
ATTENUATED_SHANNON = {"downlink": (0.6, -10.0, 4.4), "uplink": (0.4, -10.0, 2.0)}


def attenuated_shannon(snr_linear, direction: str) -> np.ndarray:
    """TR 36.942 A.2: ``0`` below ``SNR_min``, ``alpha log2(1 + SNR)`` above, capped at ``Thr_max``."""
    alpha, snr_min_db, thr_max = ATTENUATED_SHANNON[direction]
    snr = np.asarray(snr_linear, dtype=float)
    return np.where(snr < db_to_linear(snr_min_db), 0.0, np.minimum(alpha * np.log2(1.0 + snr), thr_max))


def efficiency_snr_db(bps_per_hz, snr_gap_db: float = 0.0) -> np.ndarray:
    """The SNR (dB) at which ``log2(1 + SNR / gap)`` equals ``bps_per_hz``: ``gap (2^e - 1)``.
    E.g. TS 38.214 CQI 1 (0.1523 bit/s/Hz) needs -9.53 dB with no gap, -9.53 + gap dB with one."""
    return linear_to_db(np.expm1(np.asarray(bps_per_hz, dtype=float) * np.log(2.0))) + snr_gap_db


def shannon_rate_bps(bandwidth_hz, snr_linear, snr_gap_db: float = 0.0, max_bps_per_hz: float | None = None) -> np.ndarray:
    """``R = B log2(1 + SNR / gap)``, capped at ``B * max_bps_per_hz`` (``spectral_efficiency``)."""
    return np.asarray(bandwidth_hz, dtype=float) * spectral_efficiency(snr_linear, snr_gap_db, max_bps_per_hz)
