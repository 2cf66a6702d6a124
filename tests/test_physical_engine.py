"""The round loop on a physical network: exact event times and energies on hand-built channels
(multicast at the weakest member, TDMA and FDMA uplinks, outages), the reduction to the
normalized closed form, and the separation of channel and compute randomness."""

import dataclasses
import math

import numpy as np
import pytest
from scipy.optimize import brentq

from contract import RoundPlan, Stream
from netsim import NetworkSystem, expected_round_time_barrier, simulate_rounds
from netsim.radio.cell import Cell, CellLayout
from netsim.radio.physical import LinkBudget, PhysicalSystem

MBIT = 1e6
LOG2_3 = math.log2(3)
CQI_AT_MINUS_5_DB = math.log2(1 + 10 ** -0.5)  # the efficiency at -5 dB: outage below -5 dB with no gap


def network(snr_db, samples=None, ul_noise_figure_db=0.0, **system):
    """Devices whose downlink SNR on a 1 MHz, 1 W link (noise -114 dBm) is ``snr_db`` (no
    fading); the uplink's is lower by its noise figure. Compute: 1e9 cycles per sample at 1 GHz,
    so a device's compute time in seconds is its ``samples``."""
    n = len(snr_db)
    loss = 30.0 + 114.0 - np.asarray(snr_db, dtype=float)  # P_tx 30 dBm - PL - noise = SNR
    layout = CellLayout(np.full(n, 50.0), np.zeros(n), np.ones(n, bool), np.zeros(n), loss)
    settings = dict(fading="none", cycles_per_sample=1e9, cpu_hz=1e9, mode="barrier")
    settings.update(system)
    physical = PhysicalSystem(Cell(distances_m=(50.0,) * n, los="los", shadowing=False),
                              LinkBudget(1e6, 1.0, 0.0), LinkBudget(1e6, 1.0, ul_noise_figure_db), **settings)
    return physical.network(layout, np.zeros(n) if samples is None else samples)


def run(plans, net):
    return simulate_rounds(plans, net, MBIT, np.random.default_rng(0), channel_rng=np.random.default_rng(1))


def events(trace, kind):
    return [(e.entity, pytest.approx(e.start), pytest.approx(e.end)) for e in trace if e.kind == kind]


def uploads(bits):
    return RoundPlan((), dict(enumerate(bits)), tuple(range(len(bits))))


def test_multicast_stream_takes_payload_over_its_weakest_members_rate():
    # rates log2(1 + SNR) Mbit/s: 0 dB -> 1, 10*log10(3) dB -> 2, 10*log10(7) dB -> 3
    net = network([10 * math.log10(3), 0.0, 10 * math.log10(7)])
    plan = RoundPlan((Stream((0, 1), 2 * MBIT), Stream((0, 2), 3 * MBIT), Stream((2,), 3 * MBIT)), {}, (0, 1, 2))
    records, trace = run([plan], net)
    # stream 0 at device 1's 1 Mbit/s: 2 s; stream 1 at device 0's 2 Mbit/s: 1.5 s; stream 2 at 3 Mbit/s: 1 s
    assert events(trace, "downlink") == [(0, 0, 2), (1, 2, 3.5), (2, 3.5, 4.5)]
    assert records[0].end == pytest.approx(4.5)
    assert records[0].outcome.received == (0, 1, 2)


def test_tdma_uplink_hand_computed_three_devices():
    # every device at 0 dB: 1 Mbit/s alone on the band; FIFO: 1, then 2, then 3 Mbit
    records, trace = run([uploads([MBIT, 2 * MBIT, 3 * MBIT])], network([0.0] * 3))
    assert events(trace, "uplink") == [(0, 0, 1), (1, 1, 3), (2, 3, 6)]
    assert records[0].arrived == (0, 1, 2)


def in_sectors(net, sectors):
    """``net`` with its devices served by the given sectors of the site."""
    return dataclasses.replace(net, layout=dataclasses.replace(net.layout, sector=np.array(sectors)))


@pytest.mark.parametrize("simulator", ["timeline", "processes"])
def test_each_sector_of_the_site_is_an_uplink_queue_of_its_own(simulator):
    # every device at 0 dB: 1 Mbit/s alone on the band; devices 0 and 2 in sector 0, device 1 in sector 1.
    # One queue per sector (the default): device 1 sends its 2 Mbit at once, beside device 0 (0-1 s),
    # and device 2 waits for device 0 only: 1-4 s. One queue for the site: 0-1, 1-3, 3-6 s.
    plan = uploads([MBIT, 2 * MBIT, 3 * MBIT])
    for queues, expected, end in (("sector", [(0, 0, 1), (1, 0, 2), (2, 1, 4)], 4.0),
                                  ("site", [(0, 0, 1), (1, 1, 3), (2, 3, 6)], 6.0)):
        net = in_sectors(network([0.0] * 3, uplink_queues=queues), [0, 1, 0])
        records, trace = simulate_rounds([plan], net, MBIT, np.random.default_rng(0), simulator=simulator,
                                         channel_rng=np.random.default_rng(1))
        assert sorted(events(trace, "uplink"), key=lambda e: e[0]) == expected
        assert records[0].end == end and records[0].arrived == (0, 1, 2)


@pytest.mark.parametrize("simulator", ["timeline", "processes"])
def test_devices_served_by_two_sites_upload_at_once_each_on_its_sectors_blocks(simulator):
    # coverage=network on a moving cell: device 0 served by the centre site's sector of orientation 1,
    # devices 1 and 2 by site 4's sectors of orientations 1 and 2 (3 site + orientation: queues 1, 13, 14);
    # every device at 0 dB: 1 Mbit/s alone on the band (whole-band grants). One queue per serving sector:
    # all three at once, 0-1, 0-2, 0-3 s (before, device 1 queued behind device 0 at the centre's
    # sector 1: 1-3 s). One queue per serving site: site 0's device 0 0-1 s beside site 4's device 1 0-2 s,
    # device 2 after it 2-5 s (before, one queue for all: 0-1, 1-3, 3-6 s).
    plan = uploads([MBIT, 2 * MBIT, 3 * MBIT])
    for queues, expected, end in (("sector", [(0, 0, 1), (1, 0, 2), (2, 0, 3)], 3.0),
                                  ("site", [(0, 0, 1), (1, 0, 2), (2, 2, 5)], 5.0)):
        net = network([0.0] * 3, uplink_queues=queues)
        net = dataclasses.replace(net, layout=dataclasses.replace(net.layout, sector=np.array([1, 1, 2]), site=np.array([0, 4, 4])))
        assert net.uplink_queue.tolist() == ([1, 13, 14] if queues == "sector" else [0, 4, 4])
        records, trace = simulate_rounds([plan], net, MBIT, np.random.default_rng(0), simulator=simulator,
                                         channel_rng=np.random.default_rng(1))
        assert sorted(events(trace, "uplink"), key=lambda e: e[0]) == expected
        assert records[0].end == end and records[0].arrived == (0, 1, 2)


def test_fdma_shares_the_band_of_each_sector_among_its_own_devices():
    # sector 0's devices 0 (1 Mbit) and 2 (3 Mbit) share its band at log2(3)/2 Mbit/s each: device 0
    # done at 2/log2(3) = 1.26186 s, device 2's last 2 Mbit alone at 1 Mbit/s: done at 3.26186 s;
    # device 1 alone in sector 1 at 1 Mbit/s: its 2 Mbit by 2 s
    net = in_sectors(network([0.0] * 3, uplink_access="fdma"), [0, 1, 0])
    records, trace = run([uploads([MBIT, 2 * MBIT, 3 * MBIT])], net)
    t1 = 2 / LOG2_3
    assert sorted(events(trace, "uplink"), key=lambda e: e[0]) == [(0, 0, t1), (1, 0, 2), (2, 0, t1 + 2)]
    assert records[0].end == pytest.approx(t1 + 2)


def test_fdma_devices_served_by_two_sites_each_have_their_sectors_band():
    # coverage=network: devices 0 and 1 served by the sectors of orientation 0 of sites 0 and 2 (queues 0 and 6),
    # each alone on its sector's band at 1 Mbit/s: 1 Mbit by 1 s, 2 Mbit by 2 s (one band shared at
    # log2(3)/2 Mbit/s each, as before: 2/log2(3) and 1 + 2/log2(3) s)
    net = network([0.0] * 2, uplink_access="fdma")
    net = dataclasses.replace(net, layout=dataclasses.replace(net.layout, sector=np.array([0, 0]), site=np.array([0, 2])))
    records, trace = run([uploads([MBIT, 2 * MBIT])], net)
    assert sorted(events(trace, "uplink"), key=lambda e: e[0]) == [(0, 0, 1), (1, 0, 2)]
    assert records[0].end == pytest.approx(2.0)


def test_fdma_uplink_hand_computed_three_devices():
    # n devices share 1 MHz: each (1/n) MHz at SNR n (its power in its share): (1/n) log2(1 + n) Mbit/s
    # three at 2/3 Mbit/s: device 0 (1 Mbit) done at 1.5 s, devices 1 and 2 have sent 1 Mbit each;
    # two at log2(3)/2: device 1's last Mbit takes 2/log2(3) = 1.26186 s, done at 2.76186 s;
    # device 2 alone at 1 Mbit/s sends its last Mbit by 3.76186 s
    records, trace = run([uploads([MBIT, 2 * MBIT, 3 * MBIT])], network([0.0] * 3, uplink_access="fdma"))
    t1 = 1.5 + 2 / LOG2_3
    assert events(trace, "uplink") == [(0, 0, 1.5), (1, 0, t1), (2, 0, t1 + 1)]
    assert records[0].end == pytest.approx(t1 + 1)


def test_fdma_shares_change_when_a_device_joins():
    # pipelined; device 1 computes 0.5 s. Device 0 (2 Mbit) alone at 1 Mbit/s until 0.5 s, then both at
    # log2(3)/2: device 1's 1 Mbit takes 2/log2(3) s (done at 1.76186 s), in which device 0 also sends
    # 1 Mbit; device 0's last 0.5 Mbit alone takes 0.5 s
    net = network([0.0, 0.0], samples=[0.0, 0.5], uplink_access="fdma", mode="pipelined")
    _, trace = run([uploads([2 * MBIT, MBIT])], net)
    t1 = 0.5 + 2 / LOG2_3
    assert events(trace, "compute") == [(0, 0, 0), (1, 0, 0.5)]
    assert events(trace, "uplink") == [(1, 0.5, t1), (0, 0, t1 + 0.5)]


def test_fdma_upload_running_at_the_deadline_is_cut_and_its_airtime_paid():
    net = network([0.0, 0.0], uplink_access="fdma", deadline=2.0)
    records, trace = run([uploads([MBIT, 3 * MBIT])], net)
    # both at log2(3)/2 Mbit/s: device 0 done at 2/log2(3) = 1.26186 s; device 1 then alone at
    # 1 Mbit/s, cut at 2 s with 1 + 0.73814 Mbit sent
    assert records[0].arrived == (0,)
    dropped = [e for e in trace if e.kind == "dropped"]
    assert [(e.entity, e.start, e.end, e.reason) for e in dropped] == [(1, 0.0, 2.0, "deadline")]
    assert dropped[0].bits == pytest.approx(MBIT + (2 - 2 / LOG2_3) * MBIT)
    assert dropped[0].energy_j == pytest.approx(1.0 * 2.0)  # 1 W for 2 s
    assert records[0].end == 2.0


def test_outages_miss_the_stream_or_the_upload_and_the_outcome_says_who():
    # uplink 20 dB below the downlink; threshold -5 dB. Device 0: 30/10 dB, fine. Device 1: 10/-10 dB,
    # uplink outage. Device 2: -10/-30 dB, downlink outage: no compute, no upload.
    net = network([30.0, 10.0, -10.0], samples=[1.0, 1.0, 1.0], ul_noise_figure_db=20.0, min_bps_per_hz=CQI_AT_MINUS_5_DB)
    plan = RoundPlan((Stream((0, 1, 2), MBIT),), {0: MBIT, 1: MBIT, 2: MBIT}, (0, 1, 2))
    records, trace = run([plan], net)
    rate_1 = math.log2(1 + 10.0) * MBIT  # the weakest member that can receive: device 1 at 10 dB
    t_dl = MBIT / rate_1
    assert events(trace, "downlink") == [(0, 0, t_dl)]
    assert events(trace, "compute") == [(0, t_dl, t_dl + 1), (1, t_dl, t_dl + 1)]
    outcome = records[0].outcome
    assert outcome.received == (0, 1) and outcome.computed == (0, 1) and outcome.arrived == (0,)
    assert outcome.dropped == {2: "downlink-outage", 1: "uplink-outage"}
    t_ul = MBIT / (math.log2(1 + 10.0) * MBIT)  # device 0's uplink at 10 dB
    assert events(trace, "uplink") == [(0, t_dl + 1, t_dl + 1 + t_ul)]
    assert records[0].uplink_bits == MBIT


def test_a_stream_nobody_can_receive_is_not_sent():
    net = network([-20.0, 20.0], min_bps_per_hz=CQI_AT_MINUS_5_DB)
    plan = RoundPlan((Stream((0,), MBIT), Stream((1,), MBIT)), {}, (0, 1))
    records, trace = run([plan], net)
    rate = math.log2(1 + 100.0) * MBIT
    assert events(trace, "downlink") == [(0, 0, 0), (1, 0, MBIT / rate)]
    assert records[0].downlink_bits == MBIT


def test_energy_per_device_is_hand_computed():
    # device d: SNR 0 dB (1 Mbit/s both ways), 1 W uplink; compute kappa * cycles * f^2 with f = 1 GHz
    # and kappa = 2.5e-28: 2.5e-28 x 1e9 x 1e18 = 0.25 J per second of compute;
    # receive 0.5 W while its stream is on the air
    net = network([0.0, 0.0], samples=[2.0, 4.0], kappa=2.5e-28, receive_power_w=0.5)
    plan = RoundPlan((Stream((0, 1), MBIT),), {0: MBIT, 1: 2 * MBIT}, (0, 1), {1: 2.0})
    records, trace = run([plan], net)
    # device 0: receive 0.5 W x 1 s, compute 0.25 J/s x 2 s, uplink 1 W x 1 s
    # device 1: receive 0.5, compute 0.25 J/s x (2 x 4) s, uplink 1 W x 2 s
    assert records[0].energy_j == pytest.approx({0: 0.5 + 0.5 + 1.0, 1: 0.5 + 2.0 + 2.0})
    assert events(trace, "compute") == [(0, 1, 3), (1, 1, 9)]  # 2 s; 2 x 4 s (compute scale 2)
    per_device = {0: 0.0, 1: 0.0}
    for e in trace:
        if e.kind in ("receive", "compute", "uplink", "dropped"):
            per_device[e.entity] += e.energy_j
    assert per_device == pytest.approx(records[0].energy_j)


def rate(bandwidth_hz, snr_linear):
    return bandwidth_hz * math.log2(1 + snr_linear)


def test_reduction_to_the_normalized_closed_form():
    """Equal deterministic channels, bandwidths set so that T_ul / T_dl = rho: the barrier round
    time equals T_dl (m + rho N) + T_min + H_N / mu (journal V-D), in seconds, over 5,000 rounds."""
    devices, streams, rho, model_bits = 20, 4, 4.0, 1e6
    cell = Cell(scenario="umi", distances_m=(80.0,) * devices, los="los", shadowing=False)
    layout = cell.place(devices, np.random.default_rng(0))
    gain_db = float(layout.gain_db[0])
    downlink = LinkBudget(10e6, 1.0, 7.0)
    snr = lambda bw, budget: 10 ** ((budget.tx_power_dbm + gain_db - (-174 + 10 * math.log10(bw) + budget.noise_figure_db)) / 10)
    r_dl = rate(10e6, snr(10e6, downlink))
    power_ul, nf_ul = 0.2, 5.0
    bw_ul = brentq(lambda bw: rate(bw, snr(bw, LinkBudget(bw, power_ul, nf_ul))) - r_dl / rho, 1e3, 10e6)
    t_min_s, inv_mu_s = 0.05, 0.03
    system = PhysicalSystem(cell, downlink, LinkBudget(bw_ul, power_ul, nf_ul), fading="none", cycles_per_sample=1e4,
                            cpu_hz=2e9, compute_extra_s=inv_mu_s, mode="barrier")
    net = system.network(layout, np.full(devices, t_min_s * 2e9 / 1e4))
    groups = [tuple(range(s, devices, streams)) for s in range(streams)]
    plan = RoundPlan(tuple(Stream(g, model_bits) for g in groups), {d: model_bits for d in range(devices)}, tuple(range(devices)))
    records, _ = simulate_rounds([plan] * 5000, net, model_bits, np.random.default_rng(3), channel_rng=np.random.default_rng(4),
                                 keep_trace=False)
    t_dl = model_bits / r_dl
    closed = expected_round_time_barrier(streams, devices, rho, t_min_s, inv_mu_s, t_dl=t_dl)
    simulated = np.mean([r.duration for r in records])
    assert abs(simulated - closed) / closed < 0.01
    # and the same draws give the normalized system's times scaled by T_dl, round by round
    normalized, _ = simulate_rounds([plan] * 50, NetworkSystem(rho=rho, t_min=t_min_s / t_dl, inv_mu=inv_mu_s / t_dl, mode="barrier"),
                                    model_bits, np.random.default_rng(3))
    np.testing.assert_allclose([r.duration * t_dl for r in normalized], [r.duration for r in records[:50]], rtol=1e-9)


def test_channel_draws_leave_the_compute_draws_unchanged():
    """The compute generator gives the same draws with the physical layer on or off."""
    plan = RoundPlan((), {}, (0, 1, 2))
    off, trace_off = simulate_rounds([plan] * 3, NetworkSystem(rho=1, t_min=0, inv_mu=0.7), MBIT, np.random.default_rng(9))
    faded = network([5.0] * 3, fading="rayleigh", compute_extra_s=0.7)
    _, trace_on = simulate_rounds([plan] * 3, faded, MBIT, np.random.default_rng(9), channel_rng=np.random.default_rng(123))
    durations = lambda trace: [e.end - e.start for e in trace if e.kind == "compute"]
    np.testing.assert_allclose(durations(trace_on), durations(trace_off), rtol=1e-12)


def test_physical_network_needs_its_channel_generator():
    with pytest.raises(ValueError, match="channel generator"):
        simulate_rounds([uploads([MBIT])], network([0.0]), MBIT, np.random.default_rng(0))


def test_normalized_outcomes_agree_on_both_simulators_and_name_the_deadline():
    """Who received, computed, arrived and why the others were dropped: the timeline and the
    per-device processes agree (a device cut while computing did not compute)."""
    plan = RoundPlan((Stream((0, 1, 2), MBIT),), {0: MBIT, 1: MBIT, 2: MBIT}, (0, 1, 2), {2: 10.0})
    system = NetworkSystem(rho=2, t_min=1, inv_mu=0, deadline=5.5)
    outcomes = [simulate_rounds([plan], system, MBIT, np.random.default_rng(0), simulator=s)[0][0].outcome
                for s in ("timeline", "processes")]
    # stream ends at 1, compute at 2 (device 2: at 11, cut at 5.5); uploads 2-4, then 4-6 > 5.5: dropped
    assert outcomes[0] == outcomes[1]
    assert outcomes[0].received == (0, 1, 2) and outcomes[0].computed == (0, 1) and outcomes[0].arrived == (0,)
    assert outcomes[0].dropped == {1: "deadline", 2: "deadline"}


def test_a_physical_round_runs_the_same_whichever_simulator_is_named():
    net = network([0.0] * 3, uplink_access="fdma")
    runs = [simulate_rounds([uploads([MBIT, 2 * MBIT, 3 * MBIT])], net, MBIT, np.random.default_rng(0),
                            simulator=s, channel_rng=np.random.default_rng(1)) for s in ("timeline", "processes")]
    assert runs[0][1] == runs[1][1] and runs[0][0][0].end == runs[1][0][0].end


@pytest.mark.parametrize("simulator", ["timeline", "processes"])
def test_headroom_grants_of_20_20_and_40_blocks_share_the_sector_in_frequency(simulator):
    """One sector of 51 blocks (20 MHz at 30 kHz, 0.918 occupied), 30 dBm, no fading, noise
    -174 + 73.0103 dBm, outage floor 1 bit/s/Hz (0 dB). Whole-band SNR -4, -4 and -1 dB: all in
    outage there; on m blocks the SNR gains 10 log10(51 / m): the most that reach 0 dB are
    m = 20, 20 and 40 (51 x 10^-0.4 = 20.3, 51 x 10^-0.1 = 40.5). All ask at 0 s (barrier, no
    compute): devices 0 and 1 send together (40 of 51 blocks), device 2 (40) waits until both
    gave theirs back: it starts at the end of device 1's 2 Mbit, not after 0's and 1's in turn."""
    snr_db = np.array([-4.0, -4.0, -1.0])
    loss = 30.0 + 174.0 - 10 * math.log10(20e6) - snr_db
    layout = CellLayout(np.full(3, 50.0), np.zeros(3), np.ones(3, bool), np.zeros(3), loss)
    system = PhysicalSystem(Cell(distances_m=(50.0,) * 3), LinkBudget(20e6, 1.0, 0.0), LinkBudget(20e6, 1.0, 0.0),
                            fading="none", min_bps_per_hz=1.0, max_bps_per_hz=6.0, subcarrier_spacing_hz=30e3,
                            bandwidth_occupancy=51 * 12 * 30e3 / 20e6, mode="barrier", ul_allocation="headroom")
    net = system.network(layout, np.zeros(3))
    assert net.draw_round(np.random.default_rng(0)).allocated_prbs.tolist() == [20, 20, 40]

    def rate(m, snr):
        return 12 * 30e3 * m * math.log2(1 + 10 ** (snr / 10) * 51 / m)

    records, trace = simulate_rounds([uploads([MBIT, 2 * MBIT, MBIT])], net, MBIT, np.random.default_rng(0),
                                     simulator=simulator, channel_rng=np.random.default_rng(1))
    first, second = MBIT / rate(20, -4.0), 2 * MBIT / rate(20, -4.0)
    assert sorted(events(trace, "uplink")) == [(0, 0.0, first), (1, 0.0, second), (2, second, second + MBIT / rate(40, -1.0))]
    assert records[0].arrived == (0, 1, 2)


def tdd_uploads_network(ue_energy, duplex="tdd"):
    """Two devices at 0 dBm (TR 38.840's 250-unit PUSCH state, 1 unit = 1 mW: 0.25 W) whose uplink
    SNR is 0 dB on 1 MHz (1 bit/s/Hz), DDDSU with a 10:2:2 special slot (uplink share 16/70)."""
    n = 2
    layout = CellLayout(np.full(n, 50.0), np.zeros(n), np.ones(n, bool), np.zeros(n), np.full(n, 114.0))
    physical = PhysicalSystem(Cell(distances_m=(50.0,) * n, los="los", shadowing=False), LinkBudget(1e6, 1.0, 0.0),
                              LinkBudget(1e6, 1e-3, 0.0), fading="none", mode="barrier", duplex=duplex,
                              power_unit_w=1e-3, ue_energy=ue_energy)
    return physical.network(layout, np.zeros(n))


@pytest.mark.parametrize("simulator", ["timeline", "processes"])
def test_tdd_upload_and_grant_wait_energy_under_both_accountings_by_hand(simulator):
    # uplink share (1 + 2/14) / 5 = 8/35: 1 Mbit at 1e6 x 8/35 bit/s takes 35/8 = 4.375 s; device 0
    # sends first, device 1 waits 4.375 s for its grant (the whole band is device 0's), the round ends at 8.75 s
    # airtime: each upload 0.25 W x 8/35 x 4.375 s = 0.25 J; waiting 20 mW x 4.375 s = 0.0875 J
    # slots: each upload + PDCCH monitoring 0.1 W x (27/35) x 4.375 s = 0.3375 J in its D and S slots;
    # device 1's grant wait at PDCCH monitoring 0.1 W x 4.375 s = 0.4375 J instead of light sleep
    plans = [uploads([MBIT, MBIT])]
    records = {}
    for accounting in ("airtime", "slots"):
        records[accounting], trace = simulate_rounds(plans, tdd_uploads_network(accounting), MBIT, np.random.default_rng(0),
                                                     simulator=simulator, channel_rng=np.random.default_rng(1))
        assert events(trace, "uplink") == [(0, 0, 4.375), (1, 4.375, 8.75)]
    assert records["airtime"][0].energy_j == pytest.approx({0: 0.25 + 0.0875, 1: 0.25 + 0.0875})
    assert records["slots"][0].energy_j == pytest.approx({0: 0.25 + 0.3375 + 0.0875, 1: 0.25 + 0.3375 + 0.4375})


def test_fdd_has_no_off_direction_slots_but_its_grant_wait_is_monitored():
    # FDD: 1 Mbit at 1 Mbit/s, 1 s each; the upload is charged alike, device 1's 1 s grant wait 0.1 J instead of 0.02 J
    plans = [uploads([MBIT, MBIT])]
    airtime = run(plans, tdd_uploads_network("airtime", "fdd"))[0][0].energy_j
    slots = run(plans, tdd_uploads_network("slots", "fdd"))[0][0].energy_j
    assert airtime == pytest.approx({0: 0.25 + 0.02, 1: 0.25 + 0.02})
    assert slots == pytest.approx({0: 0.25 + 0.02, 1: 0.25 + 0.1})


def test_fdma_upload_is_charged_its_off_direction_slots():
    # FDMA, TDD: the two share the band; on half of it at the same power the SNR is 3 dB (log2 3 bit/s/Hz), so
    # 1 Mbit takes 1e6 / (0.5e6 x 8/35 x log2 3) = 8.75 / log2 3 s each; slots add 0.1 W x 27/35 of that
    plans = [uploads([MBIT, MBIT])]
    joules = {}
    for accounting in ("airtime", "slots"):
        net = tdd_uploads_network(accounting)
        joules[accounting] = run(plans, dataclasses.replace(net, system=dataclasses.replace(net.system, uplink_access="fdma")))[0][0].energy_j
    for d in (0, 1):
        assert joules["slots"][d] - joules["airtime"][d] == pytest.approx(0.1 * 27 / 35 * 8.75 / LOG2_3)


def test_ue_energy_slots_needs_the_device_state_model():
    with pytest.raises(ValueError, match="power_unit_w"):
        PhysicalSystem(Cell(distances_m=(50.0,)), LinkBudget(1e6, 1.0, 0.0), LinkBudget(1e6, 1.0, 0.0), ue_energy="slots")
    with pytest.raises(ValueError, match="ue_energy"):
        PhysicalSystem(Cell(distances_m=(50.0,)), LinkBudget(1e6, 1.0, 0.0), LinkBudget(1e6, 1.0, 0.0), power_unit_w=1e-3,
                       ue_energy="slot")


@pytest.mark.parametrize("ue_energy", ["airtime", "slots"])
def test_a_round_with_batteries_charges_the_grant_wait_as_one_without(ue_energy):
    # the Presence path (present_idle_events) charges the grant wait as idle_events does: the same energies
    from netsim.dynamics.rounds import dynamics_of

    plans = [uploads([MBIT, MBIT])]
    plain = tdd_uploads_network(ue_energy)
    system = dataclasses.replace(plain.system, battery_j=1e6)
    batteries = dataclasses.replace(plain, system=system, dynamics=dynamics_of(system, plain.layout, np.random.default_rng(0)))
    assert run(plans, batteries)[0][0].energy_j == pytest.approx(run(plans, plain)[0][0].energy_j)
    if ue_energy == "slots":
        assert run(plans, batteries)[0][0].energy_j == pytest.approx({0: 0.675, 1: 1.025})


@pytest.mark.parametrize("overrides, message", [
    ({"ue_energy": "slots", "power_unit_w": 0.0}, "ue_energy=slots charges TR 38.840's device states: it needs power_unit_w > 0"),
    ({"power_unit_w": 0.0}, "power_unit_w > 0 .*give ue_energy=airtime with it"),  # the preset's slots: what to give
    ({"ue_energy": "per-slot"}, "ue_energy"),
])
def test_ue_energy_without_effect_or_unknown_is_refused_on_a_preset(overrides, message):
    from scenarios.definitions.cells import get_cell_system
    from scenarios.errors import UsageError

    with pytest.raises(UsageError, match=message):
        get_cell_system("uma-3.5ghz", overrides=overrides)
    assert get_cell_system("uma-3.5ghz").record("uma-3.5ghz")["ue_energy"] == "slots"  # the presets' default
    airtime = get_cell_system("uma-3.5ghz", overrides={"ue_energy": "airtime", "power_unit_w": 0.0})
    assert "ue_energy" not in airtime.record("uma-3.5ghz")  # the field's default is not recorded


def test_tdd_reception_is_charged_micro_sleep_in_its_uplink_slots():
    # device 0 alone receives 1 Mbit at 30 dB (log2 1001 bit/s/Hz) on 1 MHz of DDDSU (downlink share 52/70):
    # t = 70 / (52 log2 1001) s; airtime: PDSCH 0.3 W x 52/70 x t; slots: + micro sleep 0.045 W x 18/70 x t
    t = 70 / (52 * math.log2(1001))
    plan = RoundPlan((Stream((0,), MBIT),), {}, (0, 1))
    received = {}
    for accounting in ("airtime", "slots"):
        _, trace = run([plan], tdd_uploads_network(accounting))
        [(_, start, end)] = events(trace, "receive")
        assert (start, end) == (0, pytest.approx(t))
        received[accounting] = next(e.energy_j for e in trace if e.kind == "receive")
    assert received["airtime"] == pytest.approx(0.3 * 52 / 70 * t)
    assert received["slots"] == pytest.approx(0.3 * 52 / 70 * t + 0.045 * 18 / 70 * t)
