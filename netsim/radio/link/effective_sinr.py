"""Effective SINR of an allocation: exponential effective SINR mapping (EESM).

``SINR_eff = -beta ln( (1/N) sum_i exp(-SINR_i / beta) )`` over the N allocated PRBs (linear SINRs),
with ``beta`` calibrated per MCS: the one SINR that, held on every PRB, gives an AWGN code block
the BLER of the varying channel (Brueninger et al., "Link performance models for system level
simulations of broadband radio access systems", PIMRC 2005; the form Sionna SYS documents in
``sionna.sys.EESM``). The betas are 5G-LENA's (CTTC, ``NrEesmT1`` / ``NrEesmT2`` beta tables of
``nr-eesm-t1.cc`` / ``nr-eesm-t2.cc``), the same values Sionna SYS v1.2.1 ships in
``esm_params/eesm_beta_table.json``: one per index of TS 38.214 Tables 5.1.3.1-1 and 5.1.3.1-2.
PUSCH with transform precoding (Table 6.1.4.1-1) takes the beta of the Table 5.1.3.1-1 entry with
the same modulation and code rate.

The result lies between the smallest SINR and the arithmetic mean (exp is convex: Jensen), equals
the common SINR when all are equal, and tends to the mean as beta grows.
"""

from __future__ import annotations

import numpy as np

from netsim.radio.link.mcs_tables import PDSCH_MCS_TABLE_1, PDSCH_MCS_TABLE_2, McsEntry

# 5G-LENA NrEesmT1 beta table: TS 38.214 Table 5.1.3.1-1 indices 0-28
EESM_BETA_TABLE_1 = (
    1.60, 1.61, 1.63, 1.65, 1.67, 1.70, 1.73, 1.76, 1.79, 1.82, 3.97, 4.27, 4.71, 5.16, 5.66,
    6.16, 6.50, 9.95, 10.97, 12.92, 14.96, 17.06, 19.33, 21.85, 24.51, 27.14, 29.94, 32.05, 34.28,
)
# 5G-LENA NrEesmT2 beta table: TS 38.214 Table 5.1.3.1-2 indices 0-27
EESM_BETA_TABLE_2 = (
    1.60, 1.63, 1.67, 1.73, 1.79, 4.27, 4.71, 5.16, 5.66, 6.16, 6.50, 10.97, 12.92, 14.96,
    17.06, 19.33, 21.85, 24.51, 27.14, 29.94, 56.48, 65.00, 78.58, 92.48, 106.27, 118.74, 126.36, 132.54,
)

_BETA_BY_ENTRY = {
    **{(e.modulation_order, e.rate_x1024): b for e, b in zip(PDSCH_MCS_TABLE_1, EESM_BETA_TABLE_1)},
    **{(e.modulation_order, e.rate_x1024): b for e, b in zip(PDSCH_MCS_TABLE_2, EESM_BETA_TABLE_2)},
}


def eesm_beta(entry: McsEntry) -> float:
    """The EESM beta of an MCS (by its modulation order and code rate; see the module docstring)."""
    try:
        return _BETA_BY_ENTRY[(entry.modulation_order, entry.rate_x1024)]
    except KeyError:
        raise ValueError(f"no EESM beta for Q_m={entry.modulation_order}, R={entry.rate_x1024}/1024") from None


def _checked(sinr_linear) -> np.ndarray:
    """The per-PRB linear SINRs as an array: ValueError unless at least one, each finite and non-negative."""
    sinr = np.asarray(sinr_linear, dtype=float)
    if sinr.size == 0 or np.any(sinr < 0) or not np.all(np.isfinite(sinr)):
        raise ValueError("EESM needs at least one finite, non-negative linear SINR")
    return sinr


def eesm(sinr_linear, beta: float) -> float:
    """EESM effective SINR (linear) of the per-PRB linear SINRs ``sinr_linear`` at ``beta``.

    Computed as ``min + (-beta ln mean exp(-(SINR_i - min) / beta))`` so that no term underflows.
    """
    sinr = _checked(sinr_linear)
    if beta <= 0:
        raise ValueError(f"beta > 0, not {beta}")
    low = float(sinr.min())
    return low - beta * float(np.log(np.mean(np.exp(-(sinr - low) / beta))))


def eesm_each(sinr_linear, betas) -> np.ndarray:
    """``eesm(sinr_linear, beta)`` for every beta of ``betas`` at once (one array operation:
    what ``Allocation`` needs for every MCS of a table on one allocation)."""
    sinr = _checked(sinr_linear)
    betas = np.asarray(betas, dtype=float)
    if np.any(betas <= 0):
        raise ValueError(f"beta > 0, not {betas.min()}")
    low = float(sinr.min())
    return low - betas * np.log(np.mean(np.exp(-(sinr - low)[None, :] / betas[:, None]), axis=1))


def eesm_scaled(sinr_linear, beta: float, scales) -> np.ndarray:
    """``eesm(sinr_linear * scale, beta)`` for every scale of ``scales`` at once (one array
    operation: chase combining of ``k`` copies multiplies every PRB's SINR by ``k``)."""
    sinr = _checked(sinr_linear)
    if beta <= 0:
        raise ValueError(f"beta > 0, not {beta}")
    scaled = sinr[None, :] * np.asarray(scales)[:, None]
    low = scaled.min(axis=1)
    return low - beta * np.log(np.mean(np.exp(-(scaled - low[:, None]) / beta), axis=1))

