"""Link adaptation (inner loop and OLLA) and HARQ timing (``netsim.radio.link.adaptation``, ``netsim.radio.link.harq``)
against hand-computed cases."""

import math

import numpy as np
import pytest

from netsim.radio.link.adaptation import OuterLoop, block_error, grant, select_mcs
from netsim.radio.link.harq import HarqTiming, SlotSchedule, occupied_slots

TABLE = "pusch-tp-64qam"
SINR_9_5_DB = np.full(10, 10 ** 0.95)  # 9.5 dB on each of 10 PRBs


def test_olla_steps_keep_the_target_bler_in_balance():
    loop = OuterLoop(bler_target=0.1, step_up_db=0.5)
    assert loop.step_down_db == pytest.approx(0.5 * 0.1 / 0.9, rel=1e-15)
    loop.update(False)
    assert loop.offset_db == 0.5
    for _ in range(9):  # one NACK in ten first transmissions: back where it started
        loop.update(True)
    assert loop.offset_db == pytest.approx(0.0, abs=1e-12)


def test_the_inner_loop_picks_the_highest_mcs_meeting_the_target_by_hand():
    # 10 PRBs, 14 symbols, 1 DMRS symbol: 1560 REs. MCS 17 (64QAM, 466): TBS 4224, one block of 4248 bits,
    # 2,000-bit curve (midpoint 9.336 dB, slope 16.1297/dB): BLER(9.5) = 1 / (1 + e^(16.1297 * 0.164)) = 0.0663 <= 0.1.
    # MCS 18 (64QAM, 517): TBS 4736, midpoint 10.8078 dB: BLER(9.5) = 1.0000 > 0.1.
    chosen = select_mcs(TABLE, SINR_9_5_DB, OuterLoop())
    assert (chosen.mcs, chosen.segmentation.tbs_bits, chosen.segmentation.code_block_bits) == (17, 4224, 4248)
    assert block_error(TABLE, chosen, SINR_9_5_DB) == pytest.approx(1 / (1 + math.exp(16.1297 * (9.5 - 9.336))), rel=1e-12)
    # After one NACK (offset 0.5 dB, 9.0 dB seen): MCS 17 BLER 0.9957; MCS 16 (16QAM, 658; TBS 3968,
    # midpoint 8.9135, slope 21.5076) 1 / (1 + e^(21.5076 * 0.0865)) = 0.1347 > 0.1; MCS 15 (TBS 3752) meets it.
    assert block_error(TABLE, grant(TABLE, 16, 10), SINR_9_5_DB, 0.5) == pytest.approx(1 / (1 + math.exp(21.5076 * 0.0865)), rel=1e-12)
    assert select_mcs(TABLE, SINR_9_5_DB, OuterLoop(offset_db=0.5)).mcs == 15


@pytest.mark.parametrize("seed", range(3))
def test_the_chosen_mcs_meets_the_target_and_the_next_does_not(seed):
    sinr = 10 ** (np.random.default_rng(seed).uniform(0, 20, 24) / 10)
    loop = OuterLoop()
    chosen = select_mcs(TABLE, sinr, loop)
    assert block_error(TABLE, chosen, sinr) <= 0.1
    assert all(block_error(TABLE, grant(TABLE, m, 24), sinr) > 0.1 for m in range(chosen.mcs + 1, 28))


def test_below_every_mcs_the_lowest_is_taken():
    assert select_mcs(TABLE, np.full(4, 1e-3), OuterLoop()).mcs == 0


@pytest.mark.parametrize("mu, slot_s, rtt", [(0, 1e-3, 3), (1, 0.5e-3, 3), (2, 0.25e-3, 4), (3, 0.125e-3, 5)])
def test_round_trip_is_one_slot_plus_processing_plus_k2_equal_to_j(mu, slot_s, rtt):
    timing = HarqTiming(mu)
    assert (timing.slot_s, timing.round_trip_slots) == (slot_s, rtt)


def test_an_explicit_k_replaces_j():
    assert HarqTiming(1, k_slots=4, gnb_processing_slots=2).round_trip_slots == 7
    with pytest.raises(ValueError):
        HarqTiming(4)


@pytest.mark.parametrize("transmissions, rtt, processes, slots", [
    ([1, 1, 1], 3, 16, 3),  # back to back
    ([2], 3, 16, 4),  # slots 0 and 3
    ([4], 3, 16, 10),  # slots 0, 3, 6, 9
    ([2, 1, 1, 1], 3, 16, 5),  # 0: A, 1: B, 2: C, 3: A again (due), 4: D
    ([1] * 5, 3, 2, 7),  # two processes, each busy 3 slots: 0: A, 1: B, 2: idle, 3: C, 4: D, 5: idle, 6: E
])
def test_occupied_slots_by_hand(transmissions, rtt, processes, slots):
    assert occupied_slots(transmissions, rtt, processes) == slots


def test_a_multicast_follows_its_weakest_member_or_a_named_percentile_with_the_misses_counted():
    from netsim.radio.link.adaptation import multicast_grant

    weak, strong = SINR_9_5_DB, np.full(10, 10 ** 1.5)  # 9.5 and 15 dB on the same 10 PRBs
    chosen, misses = multicast_grant(TABLE, [strong, weak, strong], OuterLoop())
    assert (chosen.mcs, misses) == (17, 0)  # the weakest's MCS (test above)
    strong_alone = select_mcs(TABLE, strong, OuterLoop()).mcs
    chosen, misses = multicast_grant(TABLE, [strong, weak, strong], OuterLoop(), percentile=34)
    assert (chosen.mcs, misses) == (strong_alone, 1) and strong_alone > 17  # 2 of 3 suffice: the weak one misses
    chosen, misses = multicast_grant(TABLE, [strong, weak, strong], OuterLoop(), percentile=33)
    assert (chosen.mcs, misses) == (17, 0)  # 67% must meet the target: 3 of 3
    chosen, misses = multicast_grant(TABLE, [np.full(10, 1e-3), weak], OuterLoop())
    assert (chosen.mcs, misses) == (0, 1)  # -30 dB: even MCS 0 misses, and is counted


def test_the_schedule_fed_block_by_block_by_hand():
    """Round trip 3 slots, 2 processes. Block 0 (2 transmissions) in slot 0, block 1 (1) in slot 1;
    slot 2 idle (both processes busy, nothing due); slot 3 block 0's retransmission; in slot 4
    block 1's process is free again (its ACK, 1 + 3): the next new block goes there. As
    ``occupied_slots([2, 1, 1], 3, 2)``: 5 slots."""
    schedule = SlotSchedule(3, processes=2)
    assert (schedule.add(2), schedule.add(1)) == (0, 1)
    assert schedule.next_start() == 4 and schedule.sent == [(0, 0), (1, 1), (3, 0)]
    assert schedule.add(1) == 4 and schedule.end() == 5 == occupied_slots([2, 1, 1], 3, 2)
