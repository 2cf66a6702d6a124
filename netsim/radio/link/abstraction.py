"""The NR link layer as a spectral efficiency per SNR: what the cell's rate model uses under
``link_abstraction=nr`` in place of Shannon's ``log2(1 + SNR)``.

At an AWGN SNR x the inner loop (``netsim.radio.link.adaptation``, no outer-loop offset) takes the
highest MCS whose code-block BLER at x is at most the target (10%); its blocks need on average
``E[T] = 1 + p_1 + p_1 p_2 + p_1 p_2 p_3`` transmissions with ``p_k`` the BLER after k
chase-combined copies (SNR k x), and a block is lost with probability ``p_1 p_2 p_3 p_4``. The
delivered efficiency is ``SE (1 - p_1 p_2 p_3 p_4) / E[T]`` bit/s/Hz, SE the MCS's spectral
efficiency of TS 38.214 (Table 6.1.4.1-1 uplink, 5.1.3.1-1 downlink); 0 where even MCS 0 misses the
target after four combined copies (``netsim.radio.link.upload``'s outage). One code block of the reference size (8,448 bits: the 2,000-bit
curves, ``netsim.radio.link.bler``) stands for a transport block: long transfers fill large blocks.
Resource elements lost to DMRS and control are the cell's ``uplink_overhead`` /
``downlink_overhead``, not counted here again.
"""

from __future__ import annotations

import functools

import numpy as np

from netsim.radio.link.bler import curve_parameters
from netsim.radio.link.harq import MAX_TRANSMISSIONS
from netsim.radio.link.mcs_tables import MCS_TABLES

REFERENCE_CODE_BLOCK_BITS = 8448
TABLE_BY_DIRECTION = {"uplink": "pusch-tp-64qam", "downlink": "pdsch-64qam"}
BLER_TARGET = 0.1


def _bler(snr_db: np.ndarray, midpoint: np.ndarray, slope: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(np.clip(slope * (snr_db - midpoint), -700.0, 700.0)))


@functools.cache
def _curves(direction: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every MCS's ``(midpoints_db, slopes_per_db, spectral_efficiencies)`` of ``direction``'s table
    at the reference block size."""
    table = TABLE_BY_DIRECTION[direction]
    entries = MCS_TABLES[table]
    curves = np.array([curve_parameters(table, m, REFERENCE_CODE_BLOCK_BITS) for m in range(len(entries))])
    return curves[:, 0].copy(), curves[:, 1].copy(), np.array([e.spectral_efficiency for e in entries])


def expected_efficiency(snr_linear, direction: str) -> np.ndarray:
    """Delivered bit/s/Hz of an NR link at linear AWGN SNR ``snr_linear`` (any shape) in ``direction``."""
    midpoints, slopes, efficiencies = _curves(direction)
    snr_db = 10.0 * np.log10(np.maximum(np.asarray(snr_linear, dtype=float), 1e-30))
    # the highest MCS at or under the target (0 where none of 1.. is), every MCS's BLER at once
    meets = _bler(snr_db[..., None], midpoints[1:], slopes[1:]) <= BLER_TARGET
    chosen = np.where(meets.any(axis=-1), meets.shape[-1] - np.argmax(meets[..., ::-1], axis=-1), 0)
    midpoint, slope = midpoints[chosen], slopes[chosen]
    expected_transmissions = np.zeros(snr_db.shape)
    all_failed = np.ones(snr_db.shape)
    for copies in range(1, MAX_TRANSMISSIONS + 1):
        expected_transmissions += all_failed
        last = _bler(snr_db + 10.0 * np.log10(copies), midpoint, slope)
        all_failed = all_failed * last
    efficiency = efficiencies[chosen] * (1.0 - all_failed) / expected_transmissions
    return np.where((chosen == 0) & (last > BLER_TARGET), 0.0, efficiency)
