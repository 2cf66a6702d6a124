"""EESM effective SINR (``netsim.radio.link.effective_sinr``): the identities it must keep and a hand-computed case."""

import math

import numpy as np
import pytest

from netsim.radio.link.adaptation import Allocation, OuterLoop, block_error, effective_sinr_db, group_grant, multicast_grant
from netsim.radio.link.effective_sinr import EESM_BETA_TABLE_1, EESM_BETA_TABLE_2, eesm, eesm_beta, eesm_each
from netsim.radio.link.mcs_tables import MCS_TABLES
from netsim.radio.link.mcs_tables import PDSCH_MCS_TABLE_1, PDSCH_MCS_TABLE_2, PUSCH_TP_MCS_TABLE


@pytest.mark.parametrize("beta", [1.6, 6.5, 34.28, 132.54])
def test_equal_sinrs_give_back_that_sinr(beta):
    assert eesm(np.full(17, 3.7), beta) == pytest.approx(3.7, rel=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_the_effective_sinr_lies_between_the_smallest_and_the_mean(seed):
    sinr = 10 ** (np.random.default_rng(seed).uniform(-10, 25, 51) / 10)
    for beta in EESM_BETA_TABLE_1:
        value = eesm(sinr, beta)
        assert sinr.min() < value < sinr.mean()


def test_two_prbs_by_hand():
    # SINRs 1 and 9, beta 2: -2 ln((e^-0.5 + e^-4.5) / 2) = -2 ln((0.606531 + 0.011109) / 2) = 2.349995
    assert eesm([1.0, 9.0], 2.0) == pytest.approx(2.3499945052842715, rel=1e-12)


def test_small_beta_tends_to_the_minimum_and_large_beta_to_the_mean():
    assert eesm([1.0, 9.0], 0.01) == pytest.approx(1.0 + 0.01 * math.log(2), rel=1e-9)
    assert eesm([1.0, 9.0], 1e6) == pytest.approx(5.0, rel=1e-5)


def test_far_apart_sinrs_do_not_underflow():
    assert eesm([1e4, 2e4], 1.6) == pytest.approx(1e4 + 1.6 * math.log(2), rel=1e-12)


def test_betas_follow_the_tables_and_transform_precoding_shares_them_by_modulation_and_rate():
    assert len(EESM_BETA_TABLE_1) == len(PDSCH_MCS_TABLE_1) and len(EESM_BETA_TABLE_2) == len(PDSCH_MCS_TABLE_2)
    assert eesm_beta(PDSCH_MCS_TABLE_1[17]) == 9.95
    assert eesm_beta(PUSCH_TP_MCS_TABLE[17]) == eesm_beta(PDSCH_MCS_TABLE_1[18]) == 10.97  # (6, 466)
    assert eesm_beta(PDSCH_MCS_TABLE_2[27]) == 132.54


def test_bad_input_is_refused():
    for sinr, beta in (([], 2.0), ([-1.0], 2.0), ([1.0], 0.0), ([math.nan], 2.0)):
        with pytest.raises(ValueError):
            eesm(sinr, beta)


@pytest.mark.parametrize("table", sorted(MCS_TABLES))
def test_every_mcs_at_once_is_each_mcs_alone(table):
    """``Allocation`` computes every MCS's EESM in one array operation (``eesm_each``): the same
    effective SINRs as ``effective_sinr_db`` MCS by MCS, on allocations of 1 to 51 PRBs whose
    SINRs span -20 to 30 dB, and far-apart SINRs (no underflow)."""
    rng = np.random.default_rng(7)
    cases = [rng.exponential(1.0, int(n)) * 10 ** rng.uniform(-2, 3) for n in rng.integers(1, 52, 60)]
    cases.append(np.array([1e-3, 1e4]))
    for sinr in cases:
        each = Allocation(table, sinr)._effective_db
        alone = [effective_sinr_db(table, m, sinr) for m in range(len(MCS_TABLES[table]))]
        assert each == pytest.approx(alone, rel=0, abs=1e-12)
    betas = np.array([1.6, 34.28])
    assert eesm_each([2.0, 8.0], betas) == pytest.approx([eesm([2.0, 8.0], b) for b in betas], rel=1e-15)
    with pytest.raises(ValueError):
        eesm_each([1.0], [1.0, 0.0])


@pytest.mark.parametrize("table", sorted(MCS_TABLES))
def test_the_blers_of_every_count_of_copies_at_once_are_each_alone(table):
    """``Allocation.combined_bler`` computes the BLERs of 1-4 chase-combined copies of an MCS in
    one array operation (``eesm_scaled``): each the ``block_error`` of the SINRs times the
    copies, whichever count is asked first; more copies than that one at a time."""
    rng = np.random.default_rng(11)
    for n in rng.integers(1, 52, 25).tolist():
        sinr = rng.exponential(1.0, n) * 10 ** rng.uniform(-1.5, 2.5)
        for mcs in (0, 7, len(MCS_TABLES[table]) - 1):
            for first in (4, 1, 3, 6):
                allocation = Allocation(table, sinr)
                for copies in (first, 1, 2, 3, 4, 6):
                    alone = block_error(table, allocation.grants[mcs], sinr * copies)
                    assert allocation.combined_bler(mcs, copies) == pytest.approx(alone, rel=1e-12, abs=1e-15)
        rows = rng.exponential(1.0, (3, n)) * 10 ** rng.uniform(-1.5, 2.5)
        members = [Allocation(table, row) for row in rows]
        assert group_grant(members, OuterLoop()) == multicast_grant(table, rows, OuterLoop())
