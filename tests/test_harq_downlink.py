"""``link_abstraction=nr-harq`` on the downlink: each multicast stream through the NR link layer
(``netsim.radio.harq_downlink``): two listeners by hand, a block lost after four copies, the
rounds' streams in the vectorized timeline equal to the processes, determinism and common
random numbers."""

from __future__ import annotations

import numpy as np
import pytest

from contract import RoundPlan, Stream
from netsim import simulate_rounds
from netsim.radio import harq_downlink
from netsim.radio.link.adaptation import Allocation
from scenarios.definitions.cells import get_cell_system

LINK = harq_downlink.link_config(1)  # 30 kHz: 0.5 ms slots, HARQ round trip 3 slots


def flat(db: float) -> np.ndarray:
    return np.full(10, 10 ** (db / 10))


def test_a_two_listener_stream_by_hand():
    """10 PRBs, listener A at 12 dB (its own MCS 20), B at 5.87 dB: the stream's MCS is B's, 13
    (16QAM, 490/1024), TBS 2976; B's first-copy BLER 0.09135 (under 10%), A's ~5e-47.
    5,000 bits: two blocks. A draws from default_rng(1): 0.5118 (block 1), 0.9505 (block 2), both
    decoded at once. B from default_rng(3): 0.0856 < 0.09135, NACK; 0.2368 >= BLER of two copies
    (~6e-24), decoded; block 2: 0.8013, decoded. Block 1 twice, block 2 once: slot 0 block 1,
    slot 1 block 2, slot 2 idle (block 1's copy due 3 slots after its first), slot 3 its copy:
    4 slots, 2 ms of the downlink's slots; on a downlink share of 0.8, 2.5 ms of wall clock."""
    sinr = np.array([flat(12.0), flat(5.87)])
    assert Allocation("pdsch-64qam", sinr[1]).combined_bler(13, 1) == pytest.approx(0.09135, abs=5e-6)
    result = harq_downlink.stream(5000, sinr, [np.random.default_rng(1), np.random.default_rng(3)], LINK)
    assert (result.mcs, result.tbs_bits) == (13, 2976)
    assert result.transmissions.tolist() == [2, 1] and result.delivered.tolist() == [True, True]
    assert result.slots == 4
    assert harq_downlink.stream_airtime_s(result, LINK, 0.8) == pytest.approx(4 * 0.5e-3 / 0.8, rel=1e-12)
    # B alone: the same MCS and the same draws (its own generator), so the same blocks
    alone = harq_downlink.stream(5000, sinr[1:], [np.random.default_rng(3)], LINK)
    assert alone.transmissions.tolist() == [2, 1] and alone.mcs == 13
    # A alone: its own MCS 20, one copy a block
    a_alone = harq_downlink.stream(5000, sinr[:1], [np.random.default_rng(1)], LINK)
    assert a_alone.mcs == 20 and set(a_alone.transmissions.tolist()) == {1}


def test_the_expected_stream_rate_by_hand():
    """The two listeners above: MCS 13, TBS 2976; A decodes every first copy (BLER ~5e-47), B's
    BLER is 0.09135, ~6e-24 after two: a block goes 1 + (1 - (1 - 0) (1 - 0.09135)) = 1.09135 times
    (to 1e-20), all decode it; 2976 / 1.09135 bits a 0.5 ms slot on a share of 0.8:
    4.36303 Mbit/s. One listener alone: the uplink's formula, 1 + p_1 + p_1 p_2 + p_1 p_2 p_3."""
    sinr = np.array([flat(12.0), flat(5.87)])
    p1 = Allocation("pdsch-64qam", sinr[1]).combined_bler(13, 1)
    by_hand = 2976 / (1 + p1) / 0.5e-3 * 0.8
    assert by_hand == pytest.approx(4.36303e6, rel=1e-5)
    assert harq_downlink.expected_bps(sinr, LINK, 0.8) == pytest.approx(by_hand, rel=1e-12)
    assert harq_downlink.expected_bps(sinr[1:], LINK, 0.8) == pytest.approx(by_hand, rel=1e-12)
    weak = Allocation("pdsch-64qam", flat(-12.5))
    p = [weak.combined_bler(0, k) for k in (1, 2, 3, 4)]
    alone = 368 * (1 - p[0] * p[1] * p[2] * p[3]) / (1 + p[0] + p[0] * p[1] + p[0] * p[1] * p[2]) / 0.5e-3 * 0.8
    assert harq_downlink.expected_bps(flat(-12.5), LINK, 0.8) == pytest.approx(alone, rel=1e-12)


def test_a_block_lost_after_four_copies_goes_again():
    """One listener at -12.5 dB: MCS 0, TBS 368; its BLER after 1, 2, 3 copies is 1 (to 4 digits)
    and after 4 0.02514. 368 bits, default_rng(0): 0.637, 0.2698, 0.041 fail; 0.0165 < 0.02514
    fails the fourth: block 1 lost. Block 2: 0.8133, 0.9128, 0.6066 fail, 0.7295 decodes. Two
    blocks of 4 copies interleaved on the round trip of 3: slots 0,1,3,4,6,7,9,10: 11 slots. A
    second listener at 12 dB changes neither the MCS (the weakest's) nor the blocks."""
    weak = flat(-12.5)
    assert not harq_downlink.in_outage(weak, LINK)
    assert Allocation("pdsch-64qam", weak).combined_bler(0, 4) == pytest.approx(0.02514, abs=5e-6)
    result = harq_downlink.stream(368, weak, [np.random.default_rng(0)], LINK)
    assert (result.mcs, result.tbs_bits) == (0, 368)
    assert result.transmissions.tolist() == [4, 4] and result.delivered.tolist() == [False, True] and result.slots == 11
    both = harq_downlink.stream(368, np.array([flat(12.0), weak]), [np.random.default_rng(5), np.random.default_rng(0)], LINK)
    assert both.transmissions.tolist() == [4, 4] and both.delivered.tolist() == [False, True]
    assert harq_downlink.in_outage(flat(-14.0), LINK)


def test_each_listener_draws_its_own_child():
    """Listener d's k-th stream draws from child (d, k) whichever listeners share it."""
    seed = np.random.SeedSequence(7)
    one, other = harq_downlink.HarqStreams(seed), harq_downlink.HarqStreams(seed)
    first = one.rngs([3, 5])
    second = other.rngs([5])
    assert first[1].random() == second[0].random()
    assert one.heard == {3: 1, 5: 1} and other.heard == {5: 1}
    assert one.rngs([5])[0].random() != harq_downlink.HarqStreams(seed).rngs([5])[0].random()  # its second stream


def stream_rounds(devices=6, rounds=3):
    streams = (Stream(tuple(range(0, devices, 2)), 2e5), Stream(tuple(range(1, devices, 2)), 2e5))
    return [RoundPlan(streams, {d: 1e5 for d in range(devices)}, tuple(range(devices)))] * rounds


def run(abstraction="nr-harq", simulator="timeline", seed=0, devices=6):
    system = get_cell_system("umi-3.5ghz", "barrier", overrides={"link_abstraction": abstraction})
    network, channel_rng = system.bind(np.full(devices, 100.0), np.random.SeedSequence(seed))
    records, trace = simulate_rounds(stream_rounds(devices), network, 1e5, np.random.default_rng(0), simulator=simulator,
                                     channel_rng=channel_rng)
    return records, trace, network


def downlinks(trace):
    return [(e.round, e.entity, e.start, e.end) for e in trace if e.kind == "downlink"]


def test_the_rounds_streams_timeline_equals_processes_and_determinism():
    """The cell's streams under nr-harq: the vectorized rounds and the processes give the same
    stream times, records and listener counts; the same seed the same numbers; not the nr curve's."""
    fast, fast_trace, fast_net = run()
    ref, ref_trace, ref_net = run(simulator="processes")
    assert downlinks(fast_trace) == downlinks(ref_trace) and sorted(fast_trace) == sorted(ref_trace)
    assert [(r.end, r.energy_j) for r in fast] == [(r.end, r.energy_j) for r in ref]
    assert fast_net.stream_state.heard == ref_net.stream_state.heard == {d: 3 for d in range(6)}
    again, again_trace, _ = run()
    assert downlinks(again_trace) == downlinks(fast_trace)
    _, curve_trace, _ = run("nr")
    assert [e[2:] for e in downlinks(curve_trace)] != [e[2:] for e in downlinks(fast_trace)]
