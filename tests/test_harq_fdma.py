"""``link_abstraction=nr-harq`` under ``uplink_access=fdma``: the band split equally among the devices
transmitting at one receiver in whole DFT-s-OFDM sizes, each capped at its widest decodable grant
(``PhysicalSystem.fdma_grant_prbs``: ``water_fill_prbs`` with those caps), each transmitter at its
share's expected HARQ goodput (``RoundChannel.harq_share_bps``, as PF's), its energy the shared
uplink's; outage where MCS 0 misses the target after four copies on one block."""

import json

import numpy as np
import pytest

from netsim.radio import harq_uplink
from netsim.radio.cell import Cell, CellLayout
from netsim.radio.link.adaptation import Allocation
from netsim.radio.physical import LinkBudget, PhysicalSystem, dft_s_ofdm_prbs, water_fill_prbs
from netsim.radio.physical_links import PhysicalLinks
from scenarios.cli.main import main
from tests.test_harq_pf import MW_PER_PRB_90_DB, SLOT_S, TBS_10, _umi, hand_cell, one_round

# TS 38.214 5.1.3.2 (test_harq_pf's hand cell: MCS 27, 64QAM R = 948/1024, N_RE = 156 a PRB) on 5 PRBs:
# N_info = 780 x 6 x 0.92578 = 4332.7 > 3824: n = floor(log2(4308.7)) - 5 = 7, N'_info = 2^7 round(4308.7 / 2^7) = 4352;
# R > 1/4 and N'_info <= 8424: C = 1, TBS = 8 ceil((4352 + 24) / 8) - 24 = 4352
TBS_5 = 4352


@pytest.mark.parametrize("band, splits", [(51, [[50], [25, 25], [18, 16, 16], [15, 12, 12, 12], [10] * 5]),
                                          (10, [[10], [5, 5], [4, 3, 3]])])
def test_fdma_grants_are_an_equal_split_in_whole_dft_s_ofdm_sizes(band, splits):
    """51 blocks: 50 alone (51 = 3 x 17 is no DFT-s-OFDM size), 25 each for two (the leftover 1
    cannot raise 25 to 27), three at 17 -> 16, the 3 left raise the first to 18; four at 12, the
    3 left raise the first to 15. Capped, 2, 51 and 51 on 51 blocks: level 24 (2 + 24 + 24 = 50),
    the block left raises the second to 25 (the first's next size, 3, is over its cap). The split
    is ``water_fill_prbs`` with the caps."""
    bandwidth_hz = band * 12 * 15e3 / 0.9
    system = PhysicalSystem(Cell(distances_m=(50.0,)), LinkBudget(2e6, 1.0, 0.0), LinkBudget(bandwidth_hz, 1.0, 0.0),
                            bandwidth_occupancy=0.9, subcarrier_spacing_hz=15e3, uplink_access="fdma", link_abstraction="nr-harq")
    assert system.uplink_prbs == band
    for n, grants in enumerate(splits, start=1):
        assert system.fdma_grant_prbs(np.full(n, band)).tolist() == grants == water_fill_prbs(np.full(n, band), band).tolist()
        assert set(grants) <= set(dft_s_ofdm_prbs(np.arange(1, band + 1)).tolist())
    if band == 51:
        assert system.fdma_grant_prbs([2, 51, 51]).tolist() == [2, 25, 24]


def test_two_devices_on_an_fdma_uplink_by_hand():
    """Both at 90 dB on the hand cell's 10 blocks: 5 + 5 (TBS_5 a slot each, 4.352 Mbit/s). Device
    0's 435.2 kbit end at 0.1 s; device 1 (435.2 kbit sent by then) has the band alone, its share
    doubled to 10 blocks: its other 871.2 kbit at 8.712 Mbit/s end at 0.2 s. Energy at 15 dBm a
    block: 5 blocks for 0.1 s; 5 then 10 blocks for 0.1 s each."""
    link = harq_uplink.link_config(15e3)  # the hand TBS on 5 PRBs is the link layer's (at 35 dB a PRB: MCS 27, BLER below 1e-12)
    allocation = Allocation(link.table, np.full(5, 10 ** 3.5), link.n_symbols, link.dmrs_re_per_prb)
    chosen = allocation.select(harq_uplink.OuterLoop())
    assert (chosen.mcs, chosen.segmentation.tbs_bits) == (27, TBS_5) and allocation.combined_bler(27, 1) < 1e-12
    network = hand_cell([90.0, 90.0], access="fdma")
    links = PhysicalLinks(network, network.draw_round(np.random.default_rng(1)))
    assert links.fdma_prb_sharing(np.array([0, 1])).tolist() == [2.0, 2.0] and links.fdma_prb_sharing(np.array([1])).tolist() == [1.0]
    assert links.uplink_share_bps(np.array([0, 1]), np.array([2.0, 2.0])) == pytest.approx([TBS_5 / SLOT_S] * 2, rel=1e-12)
    record, trace = one_round(network, [TBS_5 * 100, TBS_5 * 100 + TBS_10 * 100])
    ups = {e.entity: e for e in trace if e.kind == "uplink"}
    assert [(d, ups[d].start, ups[d].end) for d in range(2)] == [
        (0, 0.0, pytest.approx(0.1, rel=1e-12)), (1, 0.0, pytest.approx(0.2, rel=1e-12))]
    assert ups[0].energy_j == pytest.approx(5 * MW_PER_PRB_90_DB / 1e3 * 0.1, rel=1e-12)
    assert ups[1].energy_j == pytest.approx((5 + 10) * MW_PER_PRB_90_DB / 1e3 * 0.1, rel=1e-12)
    assert record.end == pytest.approx(0.2, rel=1e-12) and not [e for e in trace if e.kind == "dropped"]
    assert one_round(hand_cell([90.0, 90.0], access="fdma"), [TBS_5 * 100, TBS_5 * 100 + TBS_10 * 100])[1] == trace


def test_three_devices_share_by_the_leftover_rule_and_the_first_keeps_its_extra_block():
    """Three at 90 dB: 4 + 3 + 3 blocks (the leftover block to the first arrival); TBS on 4 and 3
    blocks are the link layer's (MCS 27). Each ends where its bits at its share's rate do."""
    network = hand_cell([90.0, 90.0, 90.0], access="fdma")
    links = PhysicalLinks(network, network.draw_round(np.random.default_rng(1)))
    rate_4, rate_3 = links.uplink_share_bps(np.array([0, 1, 2]), 10 / np.array([4.0, 3.0, 3.0]))[:2]
    record, trace = one_round(network, [rate_4 * 0.05, rate_3 * 0.05, rate_3 * 0.05])
    ends = sorted(e.end for e in trace if e.kind == "uplink")
    assert ends == pytest.approx([0.05] * 3, rel=1e-12) and rate_4 > rate_3


def test_fdma_under_nr_harq_needs_no_power_control():
    """``ul_power_control=off``: each device at the UE power (1 W) on its share, no headroom cap
    (PF refuses it). Two at 90 dB: the hand case's times, 1 W for 0.1 and 0.2 s."""
    n = 2
    system = PhysicalSystem(Cell(distances_m=(50.0,) * n), LinkBudget(2e6, 1.0, 0.0), LinkBudget(2e6, 1.0, 0.0), fading="none",
                            bandwidth_occupancy=0.9, subcarrier_spacing_hz=15e3, uplink_access="fdma", mode="barrier",
                            link_abstraction="nr-harq")
    assert system.ul_power_control == "off"
    layout = CellLayout(np.full(n, 50.0), np.zeros(n), np.ones(n, bool), np.zeros(n), np.full(n, 90.0))
    record, trace = one_round(system.network(layout, np.zeros(n)), [TBS_5 * 100, TBS_5 * 100 + TBS_10 * 100])
    ups = {e.entity: e for e in trace if e.kind == "uplink"}
    assert [(ups[d].end, ups[d].energy_j) for d in range(2)] == [(pytest.approx(0.1, rel=1e-12), pytest.approx(0.1, rel=1e-12)),
                                                                  (pytest.approx(0.2, rel=1e-12), pytest.approx(0.2, rel=1e-12))]


def test_a_device_where_mcs_0_misses_after_four_copies_is_in_outage_and_the_other_has_the_band():
    network = hand_cell([170.0, 90.0], access="fdma")
    record, trace = one_round(network, [1e5, TBS_10 * 100])
    assert record.outcome.dropped == {0: "uplink-outage"}
    (up,) = [e for e in trace if e.kind == "uplink"]
    assert (up.entity, up.end) == (1, pytest.approx(0.1, rel=1e-12))


@pytest.mark.parametrize("power_control", ["fractional", "off"])
def test_fdma_shares_are_capped_where_a_wider_one_has_no_goodput(power_control):
    """On a UMi round each device's decodable width (``harq_decodable_prbs``) is the widest
    DFT-s-OFDM size up to which every size has a positive expected goodput above the outage
    floor, the next size either no goodput or below the floor; the FDMA test admits a device
    exactly where one block carries it, and its share of an equal split never exceeds that
    width, so every transmitter has a rate."""
    network, channel_rng = _umi("fdma", ul_power_control=power_control)
    links = PhysicalLinks.draw(network, channel_rng)
    links.fdma_sharing = {q: 8 for q in set(links.uplink_queue.tolist())}
    channel, band = links.channel, network.system.uplink_prbs
    sizes = [int(m) for m in np.unique(dft_s_ofdm_prbs(np.arange(1, 51)))]
    caps = []
    for d in range(8):
        rates = [float(links.uplink_share_bps(np.array([d]), np.array([band / m]))[0]) for m in sizes]
        cap = channel.harq_decodable_prbs(d, 50)
        assert all(r > 0 and not channel.uplink_share_outage(d, band / m) for m, r in zip(sizes, rates) if m <= cap)
        if cap < 50:
            after = sizes.index(cap) + 1 if cap else 0
            assert rates[after] == 0 or channel.uplink_share_outage(d, band / sizes[after])
        assert links.can_upload(d, True) == (cap > 0)
        caps.append(cap)
    admitted = np.array([d for d in range(8) if links.can_upload(d, True)])
    grants = band / links.fdma_prb_sharing(admitted)
    assert np.all(np.round(grants) <= np.array(caps)[admitted])
    assert np.all(links.uplink_share_bps(admitted, links.fdma_prb_sharing(admitted)) > 0)


@pytest.mark.parametrize("power_control", ["fractional", "off"])
def test_nr_harq_fdma_runs_on_the_command_line(capsys, power_control):
    code = main(["round-time", "--devices", "6", "--rounds", "3", "--system", "umi-3.5ghz", "--radio", "link_abstraction=nr-harq",
                 "--radio", "uplink_access=fdma", "--radio", f"ul_power_control={power_control}", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["rounds"] == 3
