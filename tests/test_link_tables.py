"""TS 38.214's MCS and CQI tables as transcribed in ``netsim.radio.link.mcs_tables``: sizes, the printed
efficiency column against Q_m R / 1024, and spot entries read off the standard."""

from decimal import ROUND_HALF_UP, Decimal

import pytest

from netsim.radio.link.mcs_tables import (CQI_TABLE_1, CQI_TABLE_2, PDSCH_MCS_TABLE_1, PDSCH_MCS_TABLE_2,
                                    PUSCH_TP_MCS_TABLE, pusch_transform_precoding_table)

TABLES = {"5.1.3.1-1": PDSCH_MCS_TABLE_1, "5.1.3.1-2": PDSCH_MCS_TABLE_2, "6.1.4.1-1": PUSCH_TP_MCS_TABLE,
          "6.1.4.1-1 q=1": pusch_transform_precoding_table(1), "5.2.2.1-2": CQI_TABLE_1, "5.2.2.1-3": CQI_TABLE_2}


def test_each_table_has_the_standards_number_of_rows():
    assert [len(t) for t in TABLES.values()] == [29, 28, 28, 28, 15, 15]


@pytest.mark.parametrize("name", TABLES)
def test_the_printed_efficiency_is_qm_times_rate_rounded_half_up(name):
    for entry in TABLES[name]:
        exact = Decimal(entry.modulation_order) * Decimal(str(entry.rate_x1024)) / 1024
        assert Decimal(str(entry.spectral_efficiency)) == exact.quantize(Decimal("0.0001"), ROUND_HALF_UP), entry


@pytest.mark.parametrize("name", TABLES)
def test_efficiency_never_falls_with_the_index_but_where_the_standard_has_it_fall(name):
    efficiency = [e.spectral_efficiency for e in TABLES[name]]
    falls = [i for i in range(1, len(efficiency)) if efficiency[i] < efficiency[i - 1]]
    assert falls == ([17] if name == "5.1.3.1-1" else [])  # 2.5664 (64QAM, 438) after 2.5703 (16QAM, 658)


def test_spot_entries_of_the_standard():
    # 5.1.3.1-1: MCS 17 is 64QAM at 438 (2.5664), the entry 6.1.4.1-1 does not have
    assert (PDSCH_MCS_TABLE_1[17].modulation_order, PDSCH_MCS_TABLE_1[17].rate_x1024) == (6, 438)
    assert (PUSCH_TP_MCS_TABLE[17].modulation_order, PUSCH_TP_MCS_TABLE[17].rate_x1024) == (6, 466)
    assert [(e.modulation_order, e.rate_x1024) for e in PDSCH_MCS_TABLE_2[20:22]] == [(8, 682.5), (8, 711)]
    assert (PUSCH_TP_MCS_TABLE[27].rate_x1024, PDSCH_MCS_TABLE_1[28].rate_x1024) == (948, 948)
    assert (CQI_TABLE_1[0].rate_x1024, CQI_TABLE_1[-1].spectral_efficiency) == (78, 5.5547)
    assert (CQI_TABLE_2[11].modulation_order, CQI_TABLE_2[11].rate_x1024) == (8, 711)


def test_pi2bpsk_halves_the_order_and_doubles_the_rate_of_the_first_two_indices():
    q1 = pusch_transform_precoding_table(1)
    assert [(e.modulation_order, e.rate_x1024) for e in q1[:2]] == [(1, 240), (1, 314)]
    assert [(e.modulation_order, e.rate_x1024) for e in PUSCH_TP_MCS_TABLE[:2]] == [(2, 120), (2, 157)]
    assert q1[2:] == PUSCH_TP_MCS_TABLE[2:]
    with pytest.raises(ValueError, match="q is 1"):
        pusch_transform_precoding_table(3)
