"""Transport block size (TS 38.214 5.1.3.2) and segmentation (TS 38.212 5.2.2) against hand-computed
cases. The implementation also matched Sionna v1.2.1's reference ``calculate_tb_size_numpy`` on all
10,773 cases of Tables 5.1.3.1-1/2 x 1-59, 100, 133, 200, 273 PRBs x (14, 12), (12, 24), (7, 6)
(symbols, DMRS REs), checked once by hand; these cases are computed below step by step."""

import pytest

from netsim.radio.link.tbs import TBS_TABLE, resource_elements, segment, transport_block_size


def test_resource_elements_cap_at_156_per_prb():
    assert resource_elements(1) == 12 * 14 - 12 == 156
    assert resource_elements(10, 14, 0) == 1560  # 168 capped at 156
    assert resource_elements(51, 7, 6) == 51 * 78
    with pytest.raises(ValueError):
        resource_elements(0)


def test_table_5_1_3_2_1_has_93_increasing_sizes_from_24_to_3824():
    assert len(TBS_TABLE) == 93 and TBS_TABLE[0] == 24 and TBS_TABLE[-1] == 3824
    assert list(TBS_TABLE) == sorted(set(TBS_TABLE))


@pytest.mark.parametrize("n_re, rate, qm, expected", [
    # N_info = 156 * 2 * 120/1024 = 36.5625; n = max(3, 5 - 6) = 3; N'_info = max(24, 8 * 4) = 32 -> 32
    (156, 120 / 1024, 2, 32),
    # N_info = 1560 * 2 * 0.5 = 1560; n = max(3, 10 - 6) = 4; N'_info = 16 * 97 = 1552 -> 1608 (1544 < 1552)
    (1560, 0.5, 2, 1608),
    # N_info = 1560 * 4 * 340/1024 = 2071.875; n = 5; N'_info = 32 * 64 = 2048 -> 2088
    (1560, 340 / 1024, 4, 2088),
    # N_info = 3120 * 4 * 658/1024 = 8019.375 > 3824; n = floor(log2 7995.375) - 5 = 7;
    # N'_info = 128 * round(62.464) = 7936; C = 1: TBS = 8 ceil(7960 / 8) - 24 = 7936
    (3120, 658 / 1024, 4, 7936),
    # N_info = 7956 * 6 * 910/1024 = 42421.64; n = 15 - 5 = 10; N'_info = 1024 * round(41.404) = 41984;
    # C = ceil(42008 / 8424) = 5: TBS = 40 ceil(42008 / 40) - 24 = 42016
    (7956, 910 / 1024, 6, 42016),
    # R <= 1/4: N_info = 42588 * 2 * 120/1024 = 9981.56; n = 13 - 5 = 8; N'_info = 256 * 39 = 9984;
    # C = ceil(10008 / 3816) = 3: TBS = 24 ceil(10008 / 24) - 24 = 9984
    (42588, 120 / 1024, 2, 9984),
])
def test_tbs_by_hand(n_re, rate, qm, expected):
    assert transport_block_size(n_re, rate, qm) == expected


def test_segmentation_by_hand():
    # A = 42016 at R = 910/1024: BG1; B = 42040 > 8448: C = ceil(42040 / 8424) = 5, B' = 42160, K' = 8432
    s = segment(42016, 910 / 1024)
    assert (s.base_graph, s.n_code_blocks, s.code_block_bits) == (1, 5, 8432)
    # A = 9984 at R = 0.117 <= 1/4: BG2; B = 10008 > 3840: C = 3, B' = 10080, K' = 3360
    s = segment(9984, 120 / 1024)
    assert (s.base_graph, s.n_code_blocks, s.code_block_bits) == (2, 3, 3360)
    # A = 1608 <= 3824 at R = 0.5: BG2, one block of A + 16 CRC bits
    s = segment(1608, 0.5)
    assert (s.base_graph, s.n_code_blocks, s.code_block_bits) == (2, 1, 1624)
    # A = 3968 > 3824: BG1 and a 24-bit CRC, one block (B = 3992 <= 8448)
    s = segment(3968, 658 / 1024)
    assert (s.base_graph, s.n_code_blocks, s.code_block_bits) == (1, 1, 3992)
    # A = 200 <= 292 at a high rate still takes BG2
    assert segment(200, 0.9).base_graph == 2
