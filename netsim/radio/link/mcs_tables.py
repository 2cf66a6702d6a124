"""The MCS and CQI tables of TS 38.214 (V17), transcribed entry by entry.

Each row is ``(modulation order Q_m, target code rate R x 1024, spectral efficiency)`` exactly as
the standard prints it (the efficiency column rounded to four decimals, half up, as printed):

- ``PDSCH_MCS_TABLE_1``: TS 38.214 Table 5.1.3.1-1, MCS index table 1 for PDSCH (up to 64QAM),
  indices 0-28 (29-31 are reserved for retransmissions and carry no rate).
- ``PDSCH_MCS_TABLE_2``: TS 38.214 Table 5.1.3.1-2, MCS index table 2 for PDSCH (up to 256QAM),
  indices 0-27.
- ``pusch_transform_precoding_table(q)``: TS 38.214 Table 6.1.4.1-1, MCS index table for PUSCH
  with transform precoding (DFT-s-OFDM) and 64QAM, indices 0-27; indices 0 and 1 depend on
  ``q`` (q = 1 with ``tp-pi2BPSK`` configured, else q = 2), with ``Q_m = q`` and ``R = 240/q``,
  ``314/q``. ``PUSCH_TP_MCS_TABLE`` is the table at q = 2 (no pi/2-BPSK), the default.
- ``CQI_TABLE_1``: TS 38.214 Table 5.2.2.1-2 (4-bit CQI table 1, up to 64QAM), CQI 1-15.
- ``CQI_TABLE_2``: TS 38.214 Table 5.2.2.1-3 (4-bit CQI table 2, up to 256QAM), CQI 1-15.
  CQI 0 ("out of range") has no row: ``cqi_table(...)[0]`` is CQI 1.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class McsEntry:
    """One row of an MCS or CQI table: ``R = rate_x1024 / 1024`` code bits per coded bit."""

    modulation_order: int
    rate_x1024: float
    spectral_efficiency: float

    @property
    def code_rate(self) -> float:
        return self.rate_x1024 / 1024


def _table(rows) -> tuple[McsEntry, ...]:
    return tuple(McsEntry(q, r, se) for q, r, se in rows)


# TS 38.214 Table 5.1.3.1-1 (indices 0-28)
PDSCH_MCS_TABLE_1 = _table([
    (2, 120, 0.2344), (2, 157, 0.3066), (2, 193, 0.3770), (2, 251, 0.4902), (2, 308, 0.6016),
    (2, 379, 0.7402), (2, 449, 0.8770), (2, 526, 1.0273), (2, 602, 1.1758), (2, 679, 1.3262),
    (4, 340, 1.3281), (4, 378, 1.4766), (4, 434, 1.6953), (4, 490, 1.9141), (4, 553, 2.1602),
    (4, 616, 2.4063), (4, 658, 2.5703), (6, 438, 2.5664), (6, 466, 2.7305), (6, 517, 3.0293),
    (6, 567, 3.3223), (6, 616, 3.6094), (6, 666, 3.9023), (6, 719, 4.2129), (6, 772, 4.5234),
    (6, 822, 4.8164), (6, 873, 5.1152), (6, 910, 5.3320), (6, 948, 5.5547),
])

# TS 38.214 Table 5.1.3.1-2 (indices 0-27)
PDSCH_MCS_TABLE_2 = _table([
    (2, 120, 0.2344), (2, 193, 0.3770), (2, 308, 0.6016), (2, 449, 0.8770), (2, 602, 1.1758),
    (4, 378, 1.4766), (4, 434, 1.6953), (4, 490, 1.9141), (4, 553, 2.1602), (4, 616, 2.4063),
    (4, 658, 2.5703), (6, 466, 2.7305), (6, 517, 3.0293), (6, 567, 3.3223), (6, 616, 3.6094),
    (6, 666, 3.9023), (6, 719, 4.2129), (6, 772, 4.5234), (6, 822, 4.8164), (6, 873, 5.1152),
    (8, 682.5, 5.3320), (8, 711, 5.5547), (8, 754, 5.8906), (8, 797, 6.2266), (8, 841, 6.5703),
    (8, 885, 6.9141), (8, 916.5, 7.1602), (8, 948, 7.4063),
])

# TS 38.214 Table 6.1.4.1-1 at indices 2-27 (0 and 1 depend on q: ``pusch_transform_precoding_table``)
_PUSCH_TP_FROM_2 = [
    (2, 193, 0.3770), (2, 251, 0.4902), (2, 308, 0.6016), (2, 379, 0.7402), (2, 449, 0.8770),
    (2, 526, 1.0273), (2, 602, 1.1758), (2, 679, 1.3262), (4, 340, 1.3281), (4, 378, 1.4766),
    (4, 434, 1.6953), (4, 490, 1.9141), (4, 553, 2.1602), (4, 616, 2.4063), (4, 658, 2.5703),
    (6, 466, 2.7305), (6, 517, 3.0293), (6, 567, 3.3223), (6, 616, 3.6094), (6, 666, 3.9023),
    (6, 719, 4.2129), (6, 772, 4.5234), (6, 822, 4.8164), (6, 873, 5.1152), (6, 910, 5.3320),
    (6, 948, 5.5547),
]


def pusch_transform_precoding_table(q: int = 2) -> tuple[McsEntry, ...]:
    """TS 38.214 Table 6.1.4.1-1 for ``q`` (1 with ``tp-pi2BPSK``, else 2): indices 0-27."""
    if q not in (1, 2):
        raise ValueError(f"q is 1 (tp-pi2BPSK) or 2, not {q!r} (TS 38.214 6.1.4.1)")
    return _table([(q, 240 / q, 0.2344), (q, 314 / q, 0.3066), *_PUSCH_TP_FROM_2])


PUSCH_TP_MCS_TABLE = pusch_transform_precoding_table(2)

# TS 38.214 Table 5.2.2.1-2 (CQI 1-15)
CQI_TABLE_1 = _table([
    (2, 78, 0.1523), (2, 120, 0.2344), (2, 193, 0.3770), (2, 308, 0.6016), (2, 449, 0.8770),
    (2, 602, 1.1758), (4, 378, 1.4766), (4, 490, 1.9141), (4, 616, 2.4063), (6, 466, 2.7305),
    (6, 567, 3.3223), (6, 666, 3.9023), (6, 772, 4.5234), (6, 873, 5.1152), (6, 948, 5.5547),
])

# TS 38.214 Table 5.2.2.1-3 (CQI 1-15)
CQI_TABLE_2 = _table([
    (2, 78, 0.1523), (2, 193, 0.3770), (2, 449, 0.8770), (4, 378, 1.4766), (4, 490, 1.9141),
    (4, 616, 2.4063), (6, 466, 2.7305), (6, 567, 3.3223), (6, 666, 3.9023), (6, 772, 4.5234),
    (6, 873, 5.1152), (8, 711, 5.5547), (8, 797, 6.2266), (8, 885, 6.9141), (8, 948, 7.4063),
])

MCS_TABLES = {
    "pdsch-64qam": PDSCH_MCS_TABLE_1,
    "pdsch-256qam": PDSCH_MCS_TABLE_2,
    "pusch-tp-64qam": PUSCH_TP_MCS_TABLE,
}
"""The MCS tables by name: ``pdsch-64qam`` (5.1.3.1-1), ``pdsch-256qam`` (5.1.3.1-2),
``pusch-tp-64qam`` (6.1.4.1-1 at q = 2)."""
