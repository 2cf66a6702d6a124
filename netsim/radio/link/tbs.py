"""Transport block size (TS 38.214 5.1.3.2, which 6.1.4.2 applies to PUSCH) and the code-block
segmentation that decides which BLER curve a block follows (TS 38.212 5.2.2, base graph 6.2.2/7.2.2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

SUBCARRIERS_PER_PRB = 12  # N_sc^RB, TS 38.211 4.4.4.1
MAX_RE_PER_PRB = 156  # the cap on N'_RE, TS 38.214 5.1.3.2 step 1

# TS 38.214 Table 5.1.3.2-1: TBS for N_info <= 3824 (indices 1-93)
TBS_TABLE = (
    24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136, 144, 152, 160, 168, 176, 184,
    192, 208, 224, 240, 256, 272, 288, 304, 320, 336, 352, 368, 384, 408, 432, 456, 480, 504, 528,
    552, 576, 608, 640, 672, 704, 736, 768, 808, 848, 888, 928, 984, 1032, 1064, 1128, 1160, 1192,
    1224, 1256, 1288, 1320, 1352, 1416, 1480, 1544, 1608, 1672, 1736, 1800, 1864, 1928, 2024, 2088,
    2152, 2216, 2280, 2408, 2472, 2536, 2600, 2664, 2728, 2792, 2856, 2976, 3104, 3240, 3368, 3496,
    3624, 3752, 3824,
)


def resource_elements(n_prb: int, n_symbols: int = 14, dmrs_re_per_prb: int = 12, overhead_re_per_prb: int = 0) -> int:
    """N_RE = min(156, N'_RE) n_PRB with N'_RE = 12 N_symb - N_DMRS - N_oh (TS 38.214 5.1.3.2 step 1).

    The defaults are a full slot (14 symbols, PUSCH mapping type A) with one single-symbol DMRS,
    which under transform precoding fills its whole symbol (12 REs per PRB, TS 38.211 6.4.1.1.3).
    """
    if n_prb < 1 or not 1 <= n_symbols <= 14:
        raise ValueError(f"n_prb >= 1 and 1 <= n_symbols <= 14, not {n_prb}, {n_symbols}")
    per_prb = SUBCARRIERS_PER_PRB * n_symbols - dmrs_re_per_prb - overhead_re_per_prb
    if per_prb < 1:
        raise ValueError(f"no data resource elements left in a PRB ({per_prb})")
    return min(MAX_RE_PER_PRB, per_prb) * n_prb


def transport_block_size(n_re: int, code_rate: float, modulation_order: int, layers: int = 1) -> int:
    """TBS in bits from N_RE, R, Q_m and v (TS 38.214 5.1.3.2 steps 2-4).

    Step 2: ``N_info = N_RE R Q_m v``. Step 3 (``N_info <= 3824``): ``n = max(3, floor(log2 N_info) - 6)``,
    ``N'_info = max(24, 2^n floor(N_info / 2^n))`` and the smallest TBS of Table 5.1.3.2-1 not
    below it. Step 4: ``n = floor(log2(N_info - 24)) - 5``, ``N'_info = max(3840, 2^n round((N_info - 24) / 2^n))``
    (round half up) and ``TBS = 8 C ceil((N'_info + 24) / 8C) - 24`` with ``C = ceil((N'_info + 24) / 3816)``
    if ``R <= 1/4``, ``C = ceil((N'_info + 24) / 8424)`` if ``N'_info > 8424``, else ``C = 1``.
    """
    n_info = n_re * code_rate * modulation_order * layers
    if n_info <= 3824:
        n = max(3, math.floor(math.log2(n_info)) - 6)
        n_info_q = max(24, 2 ** n * math.floor(n_info / 2 ** n))
        return next(tbs for tbs in TBS_TABLE if tbs >= n_info_q)
    n = math.floor(math.log2(n_info - 24)) - 5
    n_info_q = max(3840, 2 ** n * math.floor((n_info - 24) / 2 ** n + 0.5))
    if code_rate <= 1 / 4:
        c = math.ceil((n_info_q + 24) / 3816)
    elif n_info_q > 8424:
        c = math.ceil((n_info_q + 24) / 8424)
    else:
        c = 1
    return 8 * c * math.ceil((n_info_q + 24) / (8 * c)) - 24


@dataclass(frozen=True)
class Segmentation:
    """How a transport block of ``tbs_bits`` is coded (TS 38.212): LDPC ``base_graph`` (1 or 2),
    ``n_code_blocks`` blocks of ``code_block_bits`` each (K', CRC bits included)."""

    tbs_bits: int
    base_graph: int
    n_code_blocks: int
    code_block_bits: int


def segment(tbs_bits: int, code_rate: float) -> Segmentation:
    """Base graph (TS 38.212 6.2.2 / 7.2.2: BG2 if ``A <= 292``, or ``A <= 3824`` and ``R <= 0.67``,
    or ``R <= 0.25``; else BG1), TB CRC ``L = 24`` if ``A > 3824`` else 16 (6.2.1 / 7.2.1), and
    code-block segmentation (5.2.2): ``B = A + L``; ``K_cb`` = 8448 (BG1) or 3840 (BG2); if
    ``B > K_cb``, ``C = ceil(B / (K_cb - 24))`` blocks each with a 24-bit CRC; ``K' = B' / C``.
    """
    a = tbs_bits
    bg = 2 if a <= 292 or (a <= 3824 and code_rate <= 0.67) or code_rate <= 0.25 else 1
    b = a + (24 if a > 3824 else 16)
    k_cb = 8448 if bg == 1 else 3840
    if b <= k_cb:
        return Segmentation(a, bg, 1, b)
    c = math.ceil(b / (k_cb - 24))
    b_prime = b + 24 * c
    if b_prime % c:
        raise ValueError(f"TBS {a} does not segment evenly into {c} blocks (not a TS 38.214 size)")
    return Segmentation(a, bg, c, b_prime // c)
