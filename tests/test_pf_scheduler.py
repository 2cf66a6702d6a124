"""The proportional-fair uplink scheduler (``uplink_access=pf``, issue 58 item 2): at every change
the receiver's blocks water-filled among the devices with data pending, each capped by its power
headroom (TS 38.213 7.1.1 / TS 38.321 5.4.6) and rounded to a DFT-s-OFDM size (TS 38.211 6.3.1.4),
nobody waiting while blocks are free; hand-computed allocations and SimPy event times, the bits
and joules counted once, determinism, a moving cell, and what composes with it or is refused."""

import dataclasses
import math

import numpy as np
import pytest

from contract import RoundPlan, Stream
from netsim import simulate_rounds
from netsim.radio.cell import Cell, CellLayout
from netsim.radio.physical import LinkBudget, PhysicalSystem, water_fill_prbs
from netsim.radio.physical_links import SEGMENT_S, PhysicalLinks
from scenarios.cli.main import main
from scenarios.definitions.cells import get_cell_system
from scenarios.errors import UsageError

PRB_BPS = 0.9 * 2e6 / 10 * 2.0  # one of the hand cell's 10 blocks at the 2 bit/s/Hz cap: 360 kbit/s
MW_PER_PRB_90_DB = 10 ** ((-30 + 0.5 * 90) / 10)  # open-loop power per block at 90 dB: -30 + 45 = 15 dBm


@pytest.mark.parametrize("caps, band, grants", [
    ([6, 51, 51], 51, [6, 25, 20]),  # the case: level 22 (6 + 22 + 22 = 50), DFT 6/20/20, then 5 left: 20 -> 24 -> 25
    ([7, 51], 51, [6, 45]),  # level 44; 7 -> 6 and 44 -> 40 (DFT sizes), the 5 left raise the wider to 45
    ([2, 3], 51, [2, 3]),  # the caps fit: each at its cap, the rest of the band idle
    ([0, 100, 100, 100], 51, [1, 18, 16, 16]),  # a cap of 0 is 1 block; level 16 (1 + 48); 2 left: the first 16 -> 18
    ([10, 10], 10, [5, 5]),  # equal halves
    ([1, 1, 1], 3, [1, 1, 1]),  # one block each: as many devices as blocks
    # level 7 -> DFT 6 each (42), 9 left: 6 -> 8 four times (fewest first, the earlier on a tie); the 1 left cannot
    # raise a 6 (to 8) but raises the first 8 to 9
    ([51] * 7, 51, [9, 8, 8, 8, 6, 6, 6]),
])
def test_water_filling_by_hand(caps, band, grants):
    got = water_fill_prbs(caps, band)
    assert got.tolist() == grants
    assert got.sum() <= band and all(g <= max(1, min(c, band)) for g, c in zip(got, caps))
    sizes = {2 ** a * 3 ** b * 5 ** c for a in range(7) for b in range(5) for c in range(4)}
    assert all(int(g) in sizes for g in got)


def test_more_devices_than_blocks_is_not_an_allocation():
    with pytest.raises(ValueError, match="4 devices cannot each hold one of 3 blocks"):
        water_fill_prbs([1, 1, 1, 1], 3)


def hand_cell(losses_db, access="pf", **extra):
    """FDD, 2 MHz of which 1.8 MHz occupied: 10 blocks at 15 kHz (180 kHz each, ``2^mu M`` = M);
    P_CMAX 30 dBm, no noise figure (noise -110.9897 dBm over 2 MHz), no antenna gains, no fading,
    rate cap 2 bit/s/Hz; open-loop power P0 -30 dBm per block, alpha 0.5: a device's power
    headroom limit is ``floor(10^((30 + 30 - 0.5 PL) / 10))`` blocks (90 dB: 31; 112 dB: 2; 150
    dB: 0, one block at P_CMAX)."""
    n = len(losses_db)
    system = PhysicalSystem(Cell(distances_m=(50.0,) * n), LinkBudget(2e6, 1.0, 0.0), LinkBudget(2e6, 1.0, 0.0), fading="none",
                            max_bps_per_hz=2.0, bandwidth_occupancy=0.9, subcarrier_spacing_hz=15e3, uplink_access=access,
                            mode="barrier", ul_power_control="fractional", p0_dbm_per_prb=-30.0, alpha=0.5, **extra)
    layout = CellLayout(np.full(n, 50.0), np.zeros(n), np.ones(n, bool), np.zeros(n), np.array(losses_db, dtype=float))
    return system.network(layout, np.zeros(n))


def one_round(network, bits, simulator="processes"):
    plan = RoundPlan((), dict(enumerate(bits)), tuple(range(len(bits))))
    records, trace = simulate_rounds([plan], network, 1e6, np.random.default_rng(0), simulator=simulator,
                                     channel_rng=np.random.default_rng(1))
    return records[0], trace


def test_a_power_limited_device_and_two_whole_band_ones_by_hand():
    """Losses 112, 90, 90 dB: caps 2, 31 and 31 blocks (10 at most). All three ask at 0 s: the
    level is 4 (2 + 4 + 4 = 10), so 2, 4 and 4 blocks (720 kbit/s, 1.44 and 1.44 Mbit/s: every
    SNR is above the cap's 4.8 dB) and nobody waits. Device 1's 0.72 Mbit ends at 0.5 s; then
    device 2 takes 8 (2 + 8 = 10): its 2.16 Mbit, 0.72 of it sent by 0.5 s, ends at 1.0 s.
    Device 0 keeps its 2 blocks (its cap) alone from 1.0 s, 8 blocks idle: its 1.08 Mbit ends at
    1.5 s. Power per block (TS 38.213 7.1.1): -30 + 56 = 26 dBm at 112 dB, 15 dBm at 90 dB, so
    device 0 draws 2 x 398.107 mW for 1.5 s, device 1 4 x 31.623 mW for 0.5 s, device 2 4 x
    31.623 mW for 0.5 s and 8 x for 0.5 s: the same 1 W per 18.97 Mbit as alone on the band."""
    network = hand_cell([112.0, 90.0, 90.0])
    assert network.system.uplink_prbs == 10
    assert network.system.power_limit_prbs(network.coupling_loss_db).tolist() == [2, 31, 31]
    record, trace = one_round(network, [1.08e6, 0.72e6, 2.16e6])
    ups = {e.entity: e for e in trace if e.kind == "uplink"}
    assert [(d, ups[d].start, ups[d].end) for d in range(3)] == [
        (0, 0.0, pytest.approx(1.5, rel=1e-12)), (1, 0.0, pytest.approx(0.5, rel=1e-12)), (2, 0.0, pytest.approx(1.0, rel=1e-12))]
    assert 1.08e6 / 1.5 == pytest.approx(2 * PRB_BPS) and 0.72e6 / 0.5 == pytest.approx(4 * PRB_BPS)
    per_prb_112_w = 10 ** ((-30 + 56) / 10) / 1e3
    per_prb_90_w = MW_PER_PRB_90_DB / 1e3
    assert ups[0].energy_j == pytest.approx(2 * per_prb_112_w * 1.5, rel=1e-12)
    assert ups[1].energy_j == pytest.approx(4 * per_prb_90_w * 0.5, rel=1e-12)
    assert ups[2].energy_j == pytest.approx(4 * per_prb_90_w * 0.5 + 8 * per_prb_90_w * 0.5, rel=1e-12)
    # bits and joules once: each upload's bits on one event, the round's energy the sum of the events'
    assert sorted(e.bits for e in trace if e.kind == "uplink") == [0.72e6, 1.08e6, 2.16e6]
    assert not [e for e in trace if e.kind == "dropped"]
    assert sum(record.energy_j.values()) == pytest.approx(sum(e.energy_j for e in trace), rel=1e-12)
    assert record.end == pytest.approx(1.5, rel=1e-12)


def test_an_upload_running_at_the_deadline_is_cut_with_the_bits_and_joules_it_got_through():
    """The same round with a 1.2 s deadline: devices 1 and 2 arrive (0.5 and 1.0 s); device 0,
    alone on its 2 blocks from 1.0 s, is cut at 1.2 s: ``deadline``, 1.2 s of 720 kbit/s
    through (0.864 Mbit of its 1.08) and 1.2 s of its 796.2 mW spent."""
    network = hand_cell([112.0, 90.0, 90.0], deadline=1.2)
    record, trace = one_round(network, [1.08e6, 0.72e6, 2.16e6])
    cut = [e for e in trace if e.kind == "dropped"]
    assert record.outcome.arrived == (1, 2) and record.outcome.dropped == {0: "deadline"}
    assert [(e.entity, e.start, e.end) for e in cut] == [(0, 0.0, pytest.approx(1.2, rel=1e-12))]
    assert cut[0].bits == pytest.approx(1.2 * 2 * PRB_BPS, rel=1e-12)
    assert cut[0].energy_j == pytest.approx(1.2 * 2 * 10 ** ((-30 + 56) / 10) / 1e3, rel=1e-12)


def test_under_fdma_the_same_devices_share_the_band_equally():
    """The same round under FDMA (the equal policy) is not PF's: device 0 has a third of the band
    at P_CMAX (above its power headroom) from the start, so the ends differ (the policy matters)."""
    _, pf = one_round(hand_cell([112.0, 90.0, 90.0]), [1.08e6, 0.72e6, 2.16e6])
    _, fdma = one_round(hand_cell([112.0, 90.0, 90.0], "fdma"), [1.08e6, 0.72e6, 2.16e6])
    assert [e.end for e in fdma if e.kind == "uplink"] != [e.end for e in pf if e.kind == "uplink"]


def test_pf_with_caps_above_the_band_and_an_equal_split_in_dft_sizes_is_fdma_exactly():
    """Two devices at 90 dB (caps 31 of 10 blocks): PF gives 5 and 5, FDMA halves: the same
    events, bit for bit; alone, each has all 10 blocks under both."""
    bits = [1e6, 2e6]
    assert one_round(hand_cell([90.0, 90.0]), bits)[1] == one_round(hand_cell([90.0, 90.0], "fdma"), bits)[1]


def test_a_device_whose_widest_grant_is_below_the_floor_is_in_outage_and_the_others_are_served():
    """Outage floor 1 bit/s/Hz (0 dB). At 150 dB the cap is 0: one block at P_CMAX, SNR 30 - 150
    + 110.9897 + 10 = 0.9897 dB (above the floor); at 152 dB -1.0103 dB even there: dropped
    ``uplink-outage``, nothing sent. Devices 0 (90 dB) and 1 (150 dB) ask at 0 s: level 9 (9 +
    1 = 10): device 0 sends its 3.24 Mbit on 9 blocks by 1.0 s; device 1 stays on its one block
    (its cap) after, alone: its bits of 2 s at that rate end at 2.0 s, at 1 W."""
    network = hand_cell([90.0, 150.0, 152.0], min_bps_per_hz=1.0)
    one_block_bps = 0.9 * 2e6 / 10 * math.log2(1 + 10 ** ((30 - 150 + 174 - 10 * math.log10(2e6) + 10) / 10))
    record, trace = one_round(network, [3.24e6, 2 * one_block_bps, 1e6])
    ups = {e.entity: e for e in trace if e.kind == "uplink"}
    assert (ups[0].end, ups[1].end) == (pytest.approx(1.0, rel=1e-12), pytest.approx(2.0, rel=1e-12))
    assert ups[1].energy_j == pytest.approx(2.0, rel=1e-12)
    assert ups[0].energy_j == pytest.approx(9 * MW_PER_PRB_90_DB / 1e3 * 1.0, rel=1e-12)
    assert record.outcome.dropped == {2: "uplink-outage"} and record.outcome.arrived == (0, 1)


def test_more_devices_pending_than_blocks_wait_in_arrival_order():
    """2 blocks (0.36 of 1 MHz at 15 kHz), three devices at 90 dB: devices 0 and 1 take one each
    (360 kbit/s) and end their 360 kbit at 1 s; device 2 waits, then has both: its 720 kbit by 2 s."""
    system = dataclasses.replace(hand_cell([90.0] * 3).system, uplink=LinkBudget(1e6, 1.0, 0.0),
                                 downlink=LinkBudget(1e6, 1.0, 0.0), bandwidth_occupancy=0.36)
    assert system.uplink_prbs == 2
    network = system.network(hand_cell([90.0] * 3).layout, np.zeros(3))
    _, trace = one_round(network, [360e3, 360e3, 720e3])
    assert [(e.entity, e.start, e.end) for e in trace if e.kind == "uplink"] == [
        (0, 0.0, pytest.approx(1.0)), (1, 0.0, pytest.approx(1.0)), (2, 0.0, pytest.approx(2.0))]


DEVICES = 12


def _links(**radio):
    system = get_cell_system("umi-3.5ghz", overrides={"uplink_access": "pf", **radio})
    network, channel_rng = system.bind(np.full(DEVICES, 100.0), np.random.SeedSequence(5))
    return network, PhysicalLinks.draw(network, channel_rng, 0.0)


def test_a_pf_upload_spanning_two_steps_is_reallocated_at_each_step():
    """A moving cell (120 km/h): two devices of one receiver start at 0.1 s. Each step's
    allocation is the water-filling of that step's power headroom limits (its path losses), and
    each device's rate and power those of its blocks on that step's channel: the first ends 0.05
    s in, the second 0.1 s into step 1 (``sum_k rate_k dt_k = bits``), its energy the sum of its
    pieces' power times time."""
    import simpy

    network, links = _links(speed_kmh=120.0)
    assert links.segmented
    queue_of = [int(q) for q in links.uplink_queue]
    a, b = next((a, b) for a in range(DEVICES) for b in range(a + 1, DEVICES) if queue_of[a] == queue_of[b])
    steps = [links._step(k)[0] for k in range(2)]
    band = network.system.uplink_prbs

    def grants(k, devices):
        return water_fill_prbs(network.system.power_limit_prbs(steps[k].network.coupling_loss_db[devices]), band)

    def rate(k, device, prbs):
        return float(steps[k].uplink_share_bps(np.array([device]), band / prbs)[0])

    def power(k, device, prbs):
        return float(steps[k].network.share_power_w(np.array([device]), band / prbs)[0])

    both, alone = grants(0, [a, b]), [int(grants(k, [b])[0]) for k in range(2)]
    assert rate(0, b, alone[0]) != rate(1, b, alone[1])  # it moves: step 1's channel is another
    bits_a = rate(0, a, both[0]) * 0.05
    bits_b = rate(0, b, both[1]) * 0.05 + rate(0, b, alone[0]) * 0.05 + rate(1, b, alone[1]) * 0.1
    env = simpy.Environment()
    uplink = links.shared_uplink(env, queue_of[a])
    done = {}

    def send(device, bits):
        yield env.timeout(0.1)
        done[device] = (yield uplink.transmit(device, bits)), env.now

    env.process(send(a, bits_a))
    env.process(send(b, bits_b))
    env.run()
    assert done[a][1] == pytest.approx(0.15, rel=1e-9) and done[b][1] == pytest.approx(0.3, rel=1e-9)
    assert done[b][0] == pytest.approx(power(0, b, both[1]) * 0.05 + power(0, b, alone[0]) * 0.05 + power(1, b, alone[1]) * 0.1,
                                       rel=1e-9)
    assert SEGMENT_S == pytest.approx(0.2)


def _round(**radio):
    system = get_cell_system("umi-3.5ghz", overrides={"uplink_access": "pf", **radio})
    network, channel_rng = system.bind(np.full(DEVICES, 100.0), np.random.SeedSequence(5))
    every = tuple(range(DEVICES))
    plans = [RoundPlan((Stream(every, 4e6),), {d: 4e6 for d in every}, every) for _ in range(2)]
    return simulate_rounds(plans, network, 4e6, np.random.default_rng(0), channel_rng=channel_rng)


@pytest.mark.parametrize("radio", [
    {},
    {"speed_kmh": 30.0},
    {"speed_kmh": 120.0, "fading_in_time": "doppler", "min_bps_per_hz": 1.0},
    {"mean_off_s": 5.0, "mean_on_s": 5.0},
    {"battery_j": 0.5},
    {"ue_energy": "slots"},
    {"speed_kmh": 30.0, "coverage": "network"},
])
def test_pf_rounds_compose_and_count_everything_once(radio):
    """PF on a cell with each of the moving cell, availability, batteries, TR 38.840's slots and
    network coverage: every participant arrives or is dropped with a reason, each upload's bits
    are on one event, each round's energy is the sum of its events', and the same seed gives
    the same trace."""
    records, trace = _round(**radio)
    for record in records:
        outcome = record.outcome
        assert set(outcome.arrived) | set(outcome.dropped) == set(range(DEVICES))
        assert not set(outcome.arrived) & set(outcome.dropped)
        events = [e for e in trace if e.round == record.server_round]
        sent = sorted(e.entity for e in events if e.kind == "uplink")  # a battery the round's waiting empties loses its upload
        assert set(outcome.arrived) <= set(sent) and all(outcome.dropped[d] == "battery" for d in set(sent) - set(outcome.arrived))
        assert all(e.bits == 4e6 for e in events if e.kind == "uplink")
        assert sum(record.energy_j.values()) == pytest.approx(sum(e.energy_j for e in events if e.kind != "downlink"), rel=1e-9)
    assert _round(**radio)[1] == trace


def test_a_pf_upload_cut_by_its_link_is_dropped_with_its_bits_and_energy():
    records, trace = _round(speed_kmh=120.0, fading_in_time="doppler", min_bps_per_hz=1.0)
    cut = [e for e in trace if e.kind == "dropped" and e.reason == "uplink-outage" and e.end > e.start]
    assert cut and all(0 < e.bits < 4e6 and e.energy_j > 0 for e in cut)


def test_pf_needs_open_loop_power_control():
    with pytest.raises(UsageError, match="uplink_access=pf caps each device's blocks by its power headroom .* needs "
                                         "ul_power_control=fractional"):
        get_cell_system("uma-3.5ghz", overrides={"uplink_access": "pf", "ul_power_control": "off"})


def buffered_hand_run(monkeypatch, bits, versions, outage_at_draw=None, **extra):
    """FedAsync (K = 1, both devices training) on ``hand_cell([90, 90])`` (caps 31 of 10 blocks:
    alone the whole band, 3.6 Mbit/s; together 5 blocks each, 1.8 Mbit/s), compute scripted
    0 s (device 0) and 1 s (device 1), then 9 s; ``outage_at_draw``: (draw, device) in uplink
    outage on that block-fading draw (the first is 0)."""
    from netsim.clock.buffered import Buffered, BufferedRun, NetworkOnly, run_buffered
    from netsim.clock.engine import RunOptions
    from netsim.normalized.scripted import Scripted
    from netsim.radio.physical import PhysicalNetwork

    script = Scripted([0.0, 1.0] + [9.0] * 8)
    monkeypatch.setattr(PhysicalNetwork, "compute", property(lambda network: script))
    draw_links, draws = BufferedRun._draw_links, []

    def drawn(run):
        links = draw_links(run)
        if outage_at_draw is not None and len(draws) == outage_at_draw[0]:
            can_upload, out = links.can_upload, outage_at_draw[1]
            links.can_upload = lambda device, uploading=False: device != out and can_upload(device, uploading)
        draws.append(links)
        return links

    monkeypatch.setattr(BufferedRun, "_draw_links", drawn)
    return run_buffered(NetworkOnly(2, bits), hand_cell([90.0, 90.0], **extra), Buffered(1), versions, np.random.default_rng(0),
                        RunOptions(channel_rng=np.random.default_rng(1)))


def test_two_fedasync_dispatches_on_a_pf_uplink_by_hand(monkeypatch):
    """5.4 Mbit each way. The broadcast takes 1.5 s (3.6 Mbit/s). Device 0 (compute 0 s) uploads
    alone from 1.5 s on the whole band; device 1's start at 2.5 s halves it: 3.6 Mbit through
    by then, the other 1.8 at 1.8 Mbit/s, so device 0 arrives at 3.5 s (version 1); device 1,
    1.8 Mbit through by 3.5 s, then alone: its other 3.6 Mbit end at 4.5 s (version 2). The
    aggregation at 3.5 s draws the next channel (no fading: the same rates). Each spends 15
    block-seconds at 15 dBm per block (TS 38.213 7.1.1 at 90 dB)."""
    versions, trace = buffered_hand_run(monkeypatch, 5.4e6, 2)
    ups = [(e.round, e.entity, e.start, e.end, e.bits) for e in trace if e.kind == "uplink"]
    assert ups == [(1, 0, 1.5, pytest.approx(3.5, rel=1e-12), 5.4e6), (2, 1, 2.5, pytest.approx(4.5, rel=1e-12), 5.4e6)]
    assert [e.energy_j for e in trace if e.kind == "uplink"] == pytest.approx([15 * MW_PER_PRB_90_DB / 1e3] * 2, rel=1e-12)
    assert [(v.server_round, v.start, v.end) for v in versions[1:]] == [(1, 0.0, pytest.approx(3.5)), (2, pytest.approx(3.5), pytest.approx(4.5))]
    assert [v.arrived for v in versions[1:]] == [(0,), (1,)]


def test_a_buffered_run_counts_a_shared_upload_on_the_air_when_it_charges_the_waiting(monkeypatch):
    """The hand run with TR 38.840's device states (unit 1 mW: waiting 20 units): device 1 waits
    1 s in version 1's interval (0-3.5 s: its reception 0-1.5 s and its upload's 2.5-3.5 s on
    the air), none in version 2's (3.5-4.5 s: its upload); device 0 none (reception, upload,
    then the next stream from 3.5 s)."""
    versions, trace = buffered_hand_run(monkeypatch, 5.4e6, 2, power_unit_w=1e-3)
    idle = {(e.round, e.entity): e.energy_j for e in trace if e.kind == "idle"}
    assert idle == {(1, 0): 0.0, (1, 1): pytest.approx(20e-3 * 1.0, rel=1e-12), (2, 0): 0.0, (2, 1): 0.0}


def test_an_upload_whose_link_the_next_draw_loses_is_cut_there_with_what_it_got_through(monkeypatch):
    """The same run with device 1 in uplink outage on the draw of version 1 (drawn at device 0's
    arrival, 3.5 s): its upload stops there, ``uplink-outage``, the 1.8 Mbit and 5 block-seconds
    it got through (2.5-3.5 s on 5 blocks)."""
    versions, trace = buffered_hand_run(monkeypatch, 5.4e6, 2, outage_at_draw=(1, 1))
    cut = [e for e in trace if e.kind == "dropped" and e.entity == 1][0]
    assert (cut.round, cut.start, cut.end, cut.reason) == (2, 2.5, pytest.approx(3.5, rel=1e-12), "uplink-outage")
    assert cut.bits == pytest.approx(1.8e6, rel=1e-12)
    assert cut.energy_j == pytest.approx(5 * MW_PER_PRB_90_DB / 1e3, rel=1e-12)
    assert versions[1].arrived == (0,) and versions[2].outcome.dropped[1] == "uplink-outage"


@pytest.mark.parametrize("access", ["pf", "fdma"])
def test_fedbuff_with_k_c_n_on_a_shared_uplink_is_the_synchronous_pipelined_run(access):
    """K = C = N: each version to everyone in one broadcast, aggregated at the last arrival: the
    synchronous pipelined rounds of the same seeds (compute draws, block fading per version or
    round), event for event, the uploads overlapping on the shared band; the same seed twice,
    the same run."""
    from netsim.clock.buffered import Buffered, NetworkOnly, run_buffered
    from netsim.clock.engine import RunOptions

    losses = [112.0, 90.0, 100.0, 95.0]
    n, bits = len(losses), 1e6
    system = PhysicalSystem(Cell(distances_m=(50.0,) * n), LinkBudget(2e6, 1.0, 0.0), LinkBudget(2e6, 1.0, 0.0), fading="rayleigh",
                            max_bps_per_hz=2.0, bandwidth_occupancy=0.9, subcarrier_spacing_hz=15e3, uplink_access=access,
                            mode="pipelined", ul_power_control="fractional", p0_dbm_per_prb=-30.0, alpha=0.5, compute_extra_s=1.0)
    layout = CellLayout(np.full(n, 50.0), np.zeros(n), np.ones(n, bool), np.zeros(n), np.array(losses))
    network = system.network(layout, np.zeros(n))
    plan = RoundPlan((Stream(tuple(range(n)), bits),), {d: bits for d in range(n)}, tuple(range(n)))
    rounds, synchronous = simulate_rounds([plan] * 3, network, bits, np.random.default_rng(5), simulator="processes",
                                          channel_rng=np.random.default_rng(7))

    def buffered():
        return run_buffered(NetworkOnly(n, bits), network, Buffered(n), 3, np.random.default_rng(5),
                            RunOptions(channel_rng=np.random.default_rng(7)))

    versions, trace = buffered()
    steps = lambda t: [(e.kind, e.entity, e.start, e.end, e.bits, e.energy_j, e.reason) for e in t
                       if e.kind in ("compute", "uplink", "dropped")]
    assert steps(trace) == steps(synchronous)
    assert [(v.start, v.end, v.energy_j) for v in versions[1:]] == [(r.start, r.end, r.energy_j) for r in rounds]
    ups = sorted((e.start, e.end) for e in trace if e.kind == "uplink")
    assert any(b[0] < a[1] for a, b in zip(ups, ups[1:]))  # (uploads share the band at once)
    assert buffered() == (versions, trace)


def test_a_pf_run_on_the_command_line_records_its_uplink(capsys, tmp_path):
    """A synchronous run (barrier) with PF: recorded as the system's uplink access, its energy
    on the trace."""
    import json

    code = main(["run", "--system", "umi-3.5ghz", "--radio", "uplink_access=pf", "--algorithm", "fedavg", "--rounds", "2",
                 "--mode", "barrier", "--out", str(tmp_path), "--json", "--no-figure"])
    out, err = capsys.readouterr()
    assert code == 0, err
    run = json.loads(out)["runs"][0]
    config = json.load(open(f"{run['result_dir']}/config.json"))
    assert config["system"]["uplink_access"] == "pf"
    assert run["energy_j"] > 0
