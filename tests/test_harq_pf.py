"""``link_abstraction=nr-harq`` under ``uplink_access=pf``: each transmitter's rate on its
water-filled grant is the link layer's expected HARQ goodput there (``RoundChannel.harq_share_bps``:
EESM MCS of the grant's per-PRB SINRs at the TS 38.213 power on its blocks, the device's outer
loop, ``TBS (1 - p_1..p_4) / (E[T] slot)`` on the uplink's share), its energy the shared uplink's;
outage where MCS 0 misses the target after four copies on a grant the scheduler can give."""

import json

import numpy as np
import pytest

from contract import RoundPlan, Stream
from netsim import simulate_rounds
from netsim.radio import harq_uplink
from netsim.radio.cell import Cell, CellLayout
from netsim.radio.link.adaptation import Allocation
from netsim.radio.physical import LinkBudget, PhysicalSystem, dft_s_ofdm_prbs
from netsim.radio.physical_links import PhysicalLinks
from scenarios.cli.main import main
from scenarios.definitions.cells import get_cell_system

# TS 38.214 5.1.3.2, PUSCH with transform precoding (Table 6.1.4.1-1) MCS 27 (64QAM, R = 948/1024), 14 symbols, one DMRS
# symbol (12 RE a PRB): N_RE = 156 a PRB. 10 PRBs: N_info = 1560 x 6 x 0.92578 = 8665.3 -> N'_info 8704, C = 2, TBS 8712;
# 8 PRBs: N_info 6934.2 -> N'_info 6912, TBS 6912; 2 PRBs: N_info 1733.1 -> N'_info 1728, Table 5.1.3.2-1: TBS 1736
TBS_10, TBS_8, TBS_2 = 8712, 6912, 1736
SLOT_S = 1e-3  # mu 0 (15 kHz)
MW_PER_PRB_90_DB = 10 ** ((-30 + 0.5 * 90) / 10)  # open-loop power per block at 90 dB: 15 dBm
MW_PER_PRB_112_DB = 10 ** ((-30 + 0.5 * 112) / 10)  # at 112 dB: 26 dBm


def hand_cell(losses_db, access="pf"):
    """test_pf_scheduler's hand cell (FDD, 10 blocks at 15 kHz, no fading, no noise figure, P0 -30
    dBm a block, alpha 0.5) under nr-harq: at 90 dB the SINR on a grant is 46.0 dB, at 112 dB on 2
    blocks 35.4 dB, both far above MCS 27's (every BLER below 1e-12: TBS per slot)."""
    n = len(losses_db)
    system = PhysicalSystem(Cell(distances_m=(50.0,) * n), LinkBudget(2e6, 1.0, 0.0), LinkBudget(2e6, 1.0, 0.0), fading="none",
                            bandwidth_occupancy=0.9, subcarrier_spacing_hz=15e3, uplink_access=access, mode="barrier",
                            ul_power_control="fractional", p0_dbm_per_prb=-30.0, alpha=0.5, link_abstraction="nr-harq")
    layout = CellLayout(np.full(n, 50.0), np.zeros(n), np.ones(n, bool), np.zeros(n), np.array(losses_db, dtype=float))
    return system.network(layout, np.zeros(n))


def one_round(network, bits):
    plan = RoundPlan((), dict(enumerate(bits)), tuple(range(len(bits))))
    records, trace = simulate_rounds([plan], network, 1e6, np.random.default_rng(0), simulator="processes",
                                     channel_rng=np.random.default_rng(1))
    return records[0], trace


def test_one_device_alone_on_a_pf_uplink_runs_at_its_expected_goodput_on_its_water_filled_grant():
    """90 dB: power headroom 31 blocks, so the whole band (10) alone: TBS_10 a slot, 8.712 Mbit/s;
    2 x 8.712 Mbit take 2 s at 10 x 15 dBm."""
    network = hand_cell([90.0])
    record, trace = one_round(network, [2 * TBS_10 * 1e3])
    (up,) = [e for e in trace if e.kind == "uplink"]
    assert (up.start, up.end) == (0.0, pytest.approx(2.0, rel=1e-12))
    assert up.energy_j == pytest.approx(10 * MW_PER_PRB_90_DB / 1e3 * 2.0, rel=1e-12)
    links = PhysicalLinks(network, network.draw_round(np.random.default_rng(1)))
    assert links.uplink_share_bps(np.array([0]), np.array([1.0]))[0] == pytest.approx(TBS_10 / SLOT_S, rel=1e-12)


def test_the_hand_cells_transport_blocks_are_the_tables_and_its_rates_the_link_layers():
    """The TBS above, chosen at 35 dB a PRB (MCS 27, BLER below 1e-12), are the PF rates a slot."""
    link = harq_uplink.link_config(15e3)
    network = hand_cell([90.0])
    links = PhysicalLinks(network, network.draw_round(np.random.default_rng(1)))
    for prbs, tbs in [(10, TBS_10), (8, TBS_8), (2, TBS_2)]:
        allocation = Allocation(link.table, np.full(prbs, 10 ** 3.5), link.n_symbols, link.dmrs_re_per_prb)
        chosen = allocation.select(harq_uplink.OuterLoop())
        assert (chosen.mcs, chosen.segmentation.tbs_bits) == (27, tbs) and allocation.combined_bler(27, 1) < 1e-12
        assert links.uplink_share_bps(np.array([0]), np.array([10 / prbs]))[0] == pytest.approx(tbs / SLOT_S, rel=1e-12)


def test_two_devices_on_a_pf_uplink_by_hand():
    """112 and 90 dB: caps 2 and 31 blocks; water-filling gives 2 and 8 (level 8): 1.736 and
    6.912 Mbit/s. Device 0's 173.6 kbit end at 0.1 s; device 1 (691.2 kbit sent by then) takes
    the band's 10 blocks: its other 871.2 kbit at 8.712 Mbit/s end at 0.2 s. Energy: 2 x 26 dBm
    for 0.1 s; 8 x 15 dBm for 0.1 s and 10 x for 0.1 s."""
    network = hand_cell([112.0, 90.0])
    assert network.system.power_limit_prbs(network.coupling_loss_db).tolist() == [2, 31]
    record, trace = one_round(network, [TBS_2 * 100, TBS_8 * 100 + TBS_10 * 100])
    ups = {e.entity: e for e in trace if e.kind == "uplink"}
    assert [(d, ups[d].start, ups[d].end) for d in range(2)] == [
        (0, 0.0, pytest.approx(0.1, rel=1e-12)), (1, 0.0, pytest.approx(0.2, rel=1e-12))]
    assert ups[0].energy_j == pytest.approx(2 * MW_PER_PRB_112_DB / 1e3 * 0.1, rel=1e-12)
    assert ups[1].energy_j == pytest.approx((8 + 10) * MW_PER_PRB_90_DB / 1e3 * 0.1, rel=1e-12)
    assert record.end == pytest.approx(0.2, rel=1e-12) and not [e for e in trace if e.kind == "dropped"]


def test_a_device_where_mcs_0_misses_after_four_copies_is_in_outage_and_the_other_is_served_alone():
    """170 dB: one block at P_CMAX (30 dBm), SINR -18.5 dB: MCS 0 after four copies (-12.5 dB)
    misses 10% (no outage floor in this cell: the link layer's outage alone). The other device
    has the band alone."""
    network = hand_cell([170.0, 90.0])
    links = PhysicalLinks(network, network.draw_round(np.random.default_rng(1)))
    assert not links.can_upload(0, True) and links.can_upload(1, True)
    record, trace = one_round(network, [1e5, TBS_10 * 100])
    assert record.outcome.dropped == {0: "uplink-outage"}
    (up,) = [e for e in trace if e.kind == "uplink"]
    assert (up.entity, up.end) == (1, pytest.approx(0.1, rel=1e-12))


def _umi(access="pf", **radio):
    system = get_cell_system("umi-3.5ghz", overrides={"uplink_access": access, "link_abstraction": "nr-harq", **radio})
    return system.bind(np.full(8, 100.0), np.random.SeedSequence(5))


def test_pf_outage_is_where_the_rates_are_0():
    """On a UMi cell's round, a device the PF outage test admits has a positive expected goodput
    on every grant the scheduler can give it (each DFT-s-OFDM size up to its headroom); one it
    refuses on the floor's grounds or has 0 (``expected_bps``) on one of them."""
    network, channel_rng = _umi()
    links = PhysicalLinks.draw(network, channel_rng)
    channel, band, link = links.channel, network.system.uplink_prbs, links.channel.harq_link
    for d in range(8):
        widest = int(network.power_limited_grant_prbs[d])
        sizes = [int(m) for m in np.unique(dft_s_ofdm_prbs(np.arange(1, widest + 1)))]
        expected = [harq_uplink.expected_bps(channel.harq_share_sinr(d, m, float(channel.uplink_share_snr_db(d, band / m))), link,
                                             network.system.shares[1]) for m in sizes]
        floor = channel.uplink_share_outage(d, band / widest)
        assert links.can_upload(d, True) == (not floor and min(expected) > 0)
        if links.can_upload(d, True):
            rates = [float(links.uplink_share_bps(np.array([d]), np.array([band / m]))[0]) for m in sizes]
            assert rates == pytest.approx(expected, rel=1e-12)


def _round(access="pf", **radio):
    network, channel_rng = _umi(access, **radio)
    every = tuple(range(8))
    plans = [RoundPlan((Stream(every, 2e6),), {d: 2e6 for d in every}, every) for _ in range(2)]
    return simulate_rounds(plans, network, 2e6, np.random.default_rng(0), channel_rng=channel_rng)


DYNAMICS = {"cell": {}, "availability": {"mean_off_s": 5.0, "mean_on_s": 5.0}, "batteries": {"battery_j": 0.2},
            "slots": {"ue_energy": "slots"}, "moving": {"speed_kmh": 30.0}}


@pytest.mark.parametrize("access, radio", [(a, r) for a in ("pf", "fdma") for r in DYNAMICS.values()]
                         + [("fdma", {"ul_power_control": "off"})],
                         ids=[f"{a}-{name}" for a in ("pf", "fdma") for name in DYNAMICS] + ["fdma-power-off"])
def test_nr_harq_shared_rounds_compose_and_count_everything_once(access, radio):
    """PF and FDMA (equal shares in whole PRBs, also without power control): synchronous rounds with
    availability, batteries, TR 38.840's slots, a moving cell (each step's channel, its grants'
    goodput there): every participant arrives or is dropped with a reason, each round's energy the
    sum of its events', the same seed the same trace; uploads share the band at once."""
    records, trace = _round(access, **radio)
    assert [e for e in trace if e.kind == "uplink"]
    for record in records:
        outcome = record.outcome
        assert set(outcome.arrived) | set(outcome.dropped) == set(range(8)) and not set(outcome.arrived) & set(outcome.dropped)
        events = [e for e in trace if e.round == record.server_round]
        assert sum(record.energy_j.values()) == pytest.approx(sum(e.energy_j for e in events if e.kind != "downlink"), rel=1e-9)
    assert _round(access, **radio)[1] == trace


@pytest.mark.parametrize("access", ["pf", "fdma"])
def test_fedbuff_k_c_n_under_nr_harq_on_a_shared_uplink_is_the_synchronous_pipelined_run(access):
    """The buffered orchestrators on the shared uplink (PF, FDMA) take the same rates: K = C = N
    FedBuff is the synchronous pipelined run event for event."""
    from netsim.clock.buffered import Buffered, NetworkOnly, run_buffered
    from netsim.clock.engine import RunOptions

    n, bits = 8, 1e6
    network, channel_rng = _umi(access)
    plan = RoundPlan((Stream(tuple(range(n)), bits),), {d: bits for d in range(n)}, tuple(range(n)))
    rounds, synchronous = simulate_rounds([plan] * 3, network, bits, np.random.default_rng(5), simulator="processes",
                                          channel_rng=channel_rng)
    network, channel_rng = _umi(access)
    versions, trace = run_buffered(NetworkOnly(n, bits), network, Buffered(n), 3, np.random.default_rng(5),
                                   RunOptions(channel_rng=channel_rng))
    steps = lambda t: [(e.kind, e.entity, e.start, e.end, e.bits, e.energy_j, e.reason) for e in t
                       if e.kind in ("compute", "uplink", "dropped")]
    assert steps(trace) == steps(synchronous) and [e for e in trace if e.kind == "uplink"]


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_nr_harq_pf_runs_on_the_command_line_and_records_its_uplink(capsys):
    code, out, err = run_cli(capsys, "round-time", "--devices", "6", "--rounds", "3", "--system", "umi-3.5ghz", "--radio",
                             "link_abstraction=nr-harq", "--radio", "uplink_access=pf", "--json")
    assert code == 0, err
    assert json.loads(out)["rounds"] == 3
