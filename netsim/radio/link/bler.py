"""Block error rate of a code block and of a transport block on AWGN, per MCS.

Each (MCS table, MCS, code-block size) follows a logistic in SNR dB,
``BLER(x) = 1 / (1 + exp(slope (x - midpoint)))``, fitted by ``benchmarks/link_bler_fit.py`` to
Sionna SYS v1.2.1's link-level AWGN BLER tables (LDPC per TS 38.212; code blocks of 24, 100, 500,
1000 and 2000 bits) and stored in ``netsim.radio.link.bler_curves``. Between tabulated code-block sizes the
midpoint and slope are interpolated linearly in log(size); outside them, the nearest size's curve
holds (a block longer than 2,000 bits takes the 2,000-bit curve: longer LDPC blocks fall at least
as steeply, so this is pessimistic by a fraction of a dB).

The fit's error at 10% BLER (``docs/link-layer.md`` lists it; ``tests/test_link_bler.py`` checks it):
within 0.17 dB of the source's crossing wherever the source resolves it (both points around 10%
within 1%-99%), 0.62 dB at most elsewhere, where the source's 1.79 dB grid steps from near 1 to
near 0 and cannot place the crossing more finely.

A transport block of C code blocks fails if any fails (TS 38.212 5.2.2 segmentation; each block's
CRC checked on its own): ``TBLER = 1 - (1 - BLER)^C``, the rule Sionna SYS also applies.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from netsim.radio.link.bler_curves import CURVES
from netsim.radio.link.mcs_tables import MCS_TABLES


def _by_mcs(table: str) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    rows = CURVES[table]
    found = {}
    for mcs in sorted({r[0] for r in rows}):
        mine = sorted((r for r in rows if r[0] == mcs), key=lambda r: r[1])
        found[mcs] = (np.log([r[1] for r in mine]), np.array([r[2] for r in mine]), np.array([r[3] for r in mine]))
    return found


_CURVES = {table: _by_mcs(table) for table in CURVES}


@functools.lru_cache(maxsize=65536)
def curve_parameters(table: str, mcs: int, code_block_bits: int) -> tuple[float, float]:
    """``(midpoint_db, slope_per_db)`` of the logistic for ``mcs`` of ``table`` at this block size
    (kept once computed: an upload asks for the same few thousand times)."""
    if table not in _CURVES:
        raise ValueError(f"no BLER curves for MCS table {table!r}; there are: {', '.join(_CURVES)}")
    if mcs not in _CURVES[table]:
        raise ValueError(f"MCS {mcs} of {table} has no BLER curve (0-{len(MCS_TABLES[table]) - 1})")
    log_sizes, midpoints, slopes = _CURVES[table][mcs]
    x = math.log(max(code_block_bits, 1))
    return float(np.interp(x, log_sizes, midpoints)), float(np.interp(x, log_sizes, slopes))


def code_block_bler(table: str, mcs: int, code_block_bits: int, sinr_db: float) -> float:
    """BLER of one code block of ``code_block_bits`` at effective SINR ``sinr_db`` (AWGN-equivalent)."""
    midpoint, slope = curve_parameters(table, mcs, code_block_bits)
    z = slope * (sinr_db - midpoint)
    return 1.0 / (1.0 + math.exp(z)) if z < 700 else 0.0


def transport_block_bler(table: str, mcs: int, code_block_bits: int, n_code_blocks: int, sinr_db: float) -> float:
    """``1 - (1 - BLER)^C``: a transport block of ``n_code_blocks`` fails when one of them does."""
    bler = code_block_bler(table, mcs, code_block_bits, sinr_db)
    return -math.expm1(n_code_blocks * math.log1p(-bler)) if bler < 1 else 1.0


def sinr_at_bler_db(table: str, mcs: int, code_block_bits: int, bler: float) -> float:
    """The SINR (dB) at which a code block of this MCS and size reaches ``bler`` (the curve inverted)."""
    if not 0 < bler < 1:
        raise ValueError(f"0 < bler < 1, not {bler}")
    midpoint, slope = curve_parameters(table, mcs, code_block_bits)
    return midpoint + math.log((1 - bler) / bler) / slope
