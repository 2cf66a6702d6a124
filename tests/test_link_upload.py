"""One upload through the NR link layer (``netsim.radio.link.upload``): the hand-computed case the issue asks
for (the MCS chosen for a given SINR, the TBS, the BLER, the HARQ transmissions and the energy), and
the invariants every upload keeps."""

import math

import numpy as np
import pytest

from netsim.radio.link import HarqTiming, LinkConfig, OuterLoop, upload
from netsim.radio.link.adaptation import block_error, grant

SINR_9_5_DB = np.full(10, 10 ** 0.95)


def test_one_upload_by_hand():
    """12,672 bits over 10 PRBs at 9.5 dB each, 0.2 W, mu = 1 (0.5 ms slots, HARQ round trip 3 slots).

    Draws of default_rng(29): 0.0500, 0.5063, 0.5192, 0.2652, 0.1292.
    Block 1: MCS 17, TBS 4224 (tests/test_link_harq.py), BLER 0.0663 at 9.5 dB: 0.0500 < 0.0663, NACK
      (offset +0.5 dB); retransmission chase-combined, 2 x SINR = 12.51 dB: BLER 1/(1 + e^(16.13 x 3.17)) ~ 1e-22, ACK.
    Block 2: seen at 9.0 dB: MCS 15, TBS 3752; true BLER (9.5 dB) ~ 1e-15: ACK (offset 0.5 - 0.0556 = 0.4444).
    Block 3: seen at 9.0556 dB: MCS 16 (BLER 0.0450 there), TBS 3968; ACK (offset 0.3889).
    Block 4: 12672 - 4224 - 3752 - 3968 = 728 bits left; seen at 9.1111 dB: MCS 16 (BLER 0.0141), ACK (0.3333).
    Transmissions 2 + 1 + 1 + 1 = 5 of a full slot: airtime 2.5 ms, energy 5 x 0.5 ms x 0.2 W = 0.5 mJ;
    slots 0: block 1, 1: block 2, 2: block 3, 3: block 1 again (3 slots on), 4: block 4: 2.5 ms.
    """
    draws = np.random.default_rng(29).random(5)
    assert draws[0] < block_error("pusch-tp-64qam", grant("pusch-tp-64qam", 17, 10), SINR_9_5_DB) == pytest.approx(0.06628, abs=5e-6)
    loop = OuterLoop()
    done = upload(12_672, SINR_9_5_DB, np.random.default_rng(29), 0.2, loop)
    assert done.mcs.tolist() == [17, 15, 16, 16]
    assert done.tbs_bits.tolist() == [4224, 3752, 3968, 3968]
    assert done.transmissions.tolist() == [2, 1, 1, 1] and done.delivered.all()
    assert (done.n_blocks, done.outage) == (4, False)
    assert done.airtime_s == pytest.approx(2.5e-3, rel=1e-12)
    assert done.energy_j == pytest.approx(0.5e-3, rel=1e-12)
    assert done.completion_s == pytest.approx(2.5e-3, rel=1e-12)
    assert loop.offset_db == pytest.approx(0.5 - 3 * 0.5 / 9, rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_every_transmission_is_charged_and_the_bits_fit_the_blocks(seed):
    rng = np.random.default_rng(seed)
    sinr = 10 ** (rng.uniform(-3, 12, 12) / 10)
    link = LinkConfig(timing=HarqTiming(mu=0), n_symbols=12)
    done = upload(200_000, sinr, rng, 0.25, link=link)
    carried = done.tbs_bits[done.delivered]
    assert carried.sum() - carried[-1] < 200_000 <= carried.sum()
    assert done.airtime_s == pytest.approx(done.transmissions.sum() * 1e-3 * 12 / 14, rel=1e-12)
    assert done.energy_j == pytest.approx(done.airtime_s * 0.25, rel=1e-12)
    assert done.completion_s >= done.transmissions.sum() * 1e-3 - 1e-15
    assert done.transmissions.min() >= 1


def test_same_generator_state_same_upload():
    sinr = 10 ** (np.random.default_rng(3).uniform(0, 15, 20) / 10)
    first, second = (upload(500_000, sinr, np.random.default_rng(11), 0.2) for _ in range(2))
    assert first.transmissions.tolist() == second.transmissions.tolist() and first.mcs.tolist() == second.mcs.tolist()
    assert first.energy_j == second.energy_j


def test_retransmissions_cost_time_and_energy():
    """Near MCS 0's threshold the first transmission nearly always fails and the second, chase-combined
    at twice the SINR, passes: twice the airtime and energy of the blocks."""
    sinr = np.full(20, 10 ** (-0.8))  # -8 dB
    done = upload(5_000, sinr, np.random.default_rng(0), 0.2)
    assert done.mcs.tolist() == [0] * done.n_blocks and done.transmissions.tolist() == [2] * done.n_blocks
    assert done.energy_j == pytest.approx(2 * done.n_blocks * 0.5e-3 * 0.2, rel=1e-12)


def test_a_block_that_fails_four_times_is_charged_and_its_bits_go_again():
    """An outer loop at its -20 dB floor sees 5 dB as 25 dB and picks MCS 27, which fails even with
    four copies (11 dB); every first-transmission NACK raises the offset 0.5 dB until an MCS that
    the channel carries comes back. Nothing is lost: the bits go in later blocks, and every
    transmission, failed blocks' too, is charged."""
    loop = OuterLoop(offset_db=-20.0)
    done = upload(50_000, np.full(10, 10 ** 0.5), np.random.default_rng(1), 0.2, loop)
    failed = ~done.delivered
    assert failed[0] and done.mcs[0] == 27 and failed.sum() >= 10
    assert done.transmissions[failed].tolist() == [4] * failed.sum()
    carried = done.tbs_bits[done.delivered]
    assert carried.sum() - carried[-1] < 50_000 <= carried.sum()
    assert done.energy_j == pytest.approx(done.transmissions.sum() * 0.5e-3 * 0.2, rel=1e-12)


def test_the_outer_loop_stays_within_its_bounds():
    loop = OuterLoop(offset_db=-19.99)
    loop.update(True)
    assert loop.offset_db == -20.0
    loop = OuterLoop(offset_db=19.8)
    loop.update(False)
    assert loop.offset_db == 20.0
    with pytest.raises(ValueError, match="outside"):
        OuterLoop(offset_db=25.0)


def test_outage_when_even_four_combined_transmissions_of_mcs_0_miss_the_target():
    done = upload(10_000, np.full(5, 10 ** -1.5), np.random.default_rng(0), 0.2)  # -15 dB
    assert done.outage and done.n_blocks == 0 and (done.airtime_s, done.energy_j, done.completion_s) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("bits, sinr, power", [(0, [1.0], 0.2), (10, [], 0.2), (10, [[1.0]], 0.2), (10, [1.0], -1.0)])
def test_bad_input_is_refused(bits, sinr, power):
    with pytest.raises(ValueError):
        upload(bits, sinr, np.random.default_rng(0), power)


def test_bad_link_settings_are_refused():
    with pytest.raises(ValueError, match="unknown MCS table"):
        LinkConfig(table="pusch-256qam")
    with pytest.raises(ValueError, match="HARQ transmissions"):
        LinkConfig(max_transmissions=5)
    assert math.isclose(LinkConfig().transmission_s, 0.5e-3)


def test_the_outer_loop_is_frozen_at_the_tables_ends_by_hand():
    """srsRAN's rule (``OuterLoop.update``): no rise on a NACK of MCS 0, no fall on an ACK of the top MCS.

    Near outage: 1,000 bits on 10 PRBs at -8 dB. MCS 0 (TBS 368, one 384-bit block): first-copy BLER
    1 - 1e-8, after two chase-combined copies (-4.99 dB) 1e-11, so three blocks of two transmissions
    (368 x 3 >= 1,000): slots 0, 1, 2 the first copies, 3, 4, 5 the second ones (3 ms at mu = 1).
    Three NACKs at MCS 0: the offset stays 0 dB (it rose to 1.5 dB before the freeze, and a device
    at MCS 0 for 40 blocks wound it up to its 20 dB bound).
    Far above: 26,136 bits at 30 dB: MCS 27 (TBS 8712), BLER 2e-30: three ACKs at the top MCS, the
    offset stays 0 dB (it fell to -0.1667 dB before)."""
    low = np.full(10, 10 ** -0.8)
    assert block_error("pusch-tp-64qam", grant("pusch-tp-64qam", 0, 10), low) > 1 - 1e-7
    loop = OuterLoop()
    done = upload(1_000, low, np.random.default_rng(5), 0.2, loop)
    assert done.mcs.tolist() == [0, 0, 0] and done.transmissions.tolist() == [2, 2, 2] and done.delivered.all()
    assert done.first_bler.tolist() == [done.first_bler[0]] * 3 and done.first_bler[0] > 1 - 1e-7
    assert done.completion_s == pytest.approx(3e-3, rel=1e-12)
    assert loop.offset_db == 0.0
    high = np.full(10, 1e3)
    loop = OuterLoop()
    done = upload(26_136, high, np.random.default_rng(5), 0.2, loop)
    assert done.mcs.tolist() == [27, 27, 27] and done.transmissions.tolist() == [1, 1, 1]
    assert loop.offset_db == 0.0
    # inside the table both steps are taken, within the bounds
    loop = OuterLoop(offset_db=19.8)
    loop.update(False, lowest=False)
    assert loop.offset_db == 20.0
    loop.update(True, highest=False)
    assert loop.offset_db == pytest.approx(20.0 - 0.5 / 9, rel=1e-15)
