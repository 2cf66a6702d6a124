"""The moving cell (netsim.dynamics: mobility, association, motion): paths at their speed inside
the layout, association with its margin by hand, and the channel read at any time."""

import math

import numpy as np
import pytest

from netsim.radio import multicell
from netsim.dynamics.association import Handover, L3Filter, handovers, strongest
from netsim.dynamics.mobility import DiskMotion, TorusMotion, table_7_8_1_speeds_m_s
from netsim.dynamics.motion import ChannelInTime, array_gain_db
from scenarios.definitions.cells import get_cell_system


def _speeds(motion, t_s, dt_s=1e-3):
    x0, y0 = motion.positions(t_s)
    x1, y1 = motion.positions(t_s + dt_s)
    return np.hypot(x1 - x0, y1 - y0) / dt_s


def test_billiard_in_the_disk_keeps_speed_and_stays_inside():
    rng = np.random.default_rng(0)
    r, a = 100.0 * np.sqrt(rng.random(500)), rng.uniform(0, 2 * np.pi, 500)
    motion = DiskMotion.draw(rng, r * np.cos(a), r * np.sin(a), 10.0, 100.0)
    x, y = motion.positions(0.0)
    np.testing.assert_allclose(np.hypot(x, y), r, atol=1e-9)
    for t in (3.0, 77.7, 1234.5):
        x, y = motion.positions(t)
        assert np.hypot(x, y).max() <= 100.0 + 1e-9
        assert np.median(_speeds(motion, t)) == pytest.approx(10.0, rel=1e-6)
    x, y = motion.positions(1e4)  # stationary: uniform over the disk
    assert (np.hypot(x, y) < 50.0).mean() == pytest.approx(0.25, abs=0.06)


def test_straight_lines_on_the_wrap_around_torus():
    rng = np.random.default_rng(1)
    motion = TorusMotion.draw(rng, np.zeros(3000), np.zeros(3000), 8.0, multicell.wrap_shifts(500.0))
    assert np.percentile(_speeds(motion, 1e5), [1, 99]) == pytest.approx([8.0, 8.0], rel=1e-6)
    x, y = motion.positions(1e5)  # folded into the lattice cell around the centre site, spread over the 19 sites
    assert np.hypot(x, y).max() <= math.sqrt(19) * 500.0 / math.sqrt(3) + 1e-6
    sites = multicell.hex_sites(500.0)
    home = np.argmin(np.hypot(x[:, None] - sites[:, 0], y[:, None] - sites[:, 1]), axis=1)
    assert (home == 0).mean() == pytest.approx(1 / 19, abs=0.02)


def test_table_7_8_1_speeds():
    np.testing.assert_allclose(table_7_8_1_speeds_m_s([True, False]), [3 / 3.6, 30 / 3.6])


def test_association_margin_by_hand():
    gains = np.array([[0.0, 2.0, -5.0], [0.0, 4.0, -5.0]])
    np.testing.assert_array_equal(strongest(gains, None, 3.0), [1, 1])
    np.testing.assert_array_equal(strongest(gains, np.array([0, 0]), 3.0), [0, 1])  # 2 dB better: stays; 4 dB: hands over
    assert handovers(1.5, np.array([0, 0]), np.array([0, 1])) == [Handover(1.5, 1, 0, 1)]


def test_closed_form_array_gain_is_multicells():
    zenith = np.linspace(60.0, 179.0, 500)
    exact = multicell.array_gain_db(zenith, 10, 12.0)
    outside_nulls = exact > -40.0
    np.testing.assert_allclose(array_gain_db(zenith, 10, 12.0)[outside_nulls], exact[outside_nulls], atol=1e-3)
    assert np.all(array_gain_db(zenith, 10, 12.0)[~outside_nulls] < -30.0)


@pytest.mark.parametrize("coverage", ["network", "site"])
def test_moving_network_reads_the_same_channel_at_the_same_time(coverage):
    system = get_cell_system("uma-3.5ghz", overrides={"speed_kmh": 30.0, "coverage": coverage, "fading_in_time": "doppler"})
    layout = system.cell.place(200, np.random.default_rng(0))
    channel = ChannelInTime.start(system, layout, np.random.default_rng(1))
    again = ChannelInTime.start(system, layout, np.random.default_rng(1))
    at_5, fade_5, _, out = channel.at(5.0)
    np.testing.assert_array_equal(fade_5, again.at(5.0)[1])
    np.testing.assert_array_equal(at_5.path_loss_db, again.at(5.0)[0].path_loss_db)
    assert fade_5.shape == (200, system.subbands) and np.all(np.isfinite(system.mean_snr_db(at_5)[0]))
    assert not out.any() if coverage == "network" else out.any()
    later = channel.at(60.0)[0]  # 500 m later the devices are elsewhere
    assert np.median(np.hypot(later.x_m - at_5.x_m, later.y_m - at_5.y_m)) > 100.0


def test_table_7_8_1_speeds_follow_the_indoor_states_and_need_the_network():
    system = get_cell_system("uma-3.5ghz", overrides={"speed_kmh": "38.901"})
    layout = system.cell.place(100, np.random.default_rng(0))
    channel = ChannelInTime.start(system, layout, np.random.default_rng(1))
    np.testing.assert_allclose(channel.speed_m_s, np.where(layout.indoor, 3.0, 30.0) / 3.6)
    with pytest.raises(Exception, match="speed_kmh=38.901 sets speeds by the devices' indoor states"):
        get_cell_system("uma-3.5ghz", overrides={"speed_kmh": "38.901", "interference": False})


def test_time_to_trigger_by_hand():
    from netsim.dynamics.association import Trigger

    trigger = Trigger(2, 0.3)
    serving = np.array([0, 0])
    serving = trigger.confirm(0.0, serving, np.array([1, 2]))  # both want a change: the clock starts
    np.testing.assert_array_equal(serving, [0, 0])
    serving = trigger.confirm(0.2, serving, np.array([1, 0]))  # device 1 no longer wants it
    np.testing.assert_array_equal(serving, [0, 0])
    serving = trigger.confirm(0.3, serving, np.array([1, 2]))  # device 0: 0.3 s on sector 1; device 1 starts again
    np.testing.assert_array_equal(serving, [1, 0])


def test_no_fading_on_a_moving_cell_is_unit_gain():
    system = get_cell_system("umi-3.5ghz", overrides={"speed_kmh": 3.0, "fading": "none"})
    network, channel_rng = system.bind(np.full(20, 100.0), np.random.SeedSequence(1))
    channel = network.draw_round(channel_rng, 4.0)
    assert channel.downlink_fade.shape == (20, system.subbands) and np.all(channel.downlink_fade == 1.0)
    assert np.all(channel.uplink_fade == 1.0)
    with pytest.raises(Exception, match="fading_in_time=doppler times a fading the cell does not have"):
        get_cell_system("umi-3.5ghz", overrides={"speed_kmh": 3.0, "fading": "none", "fading_in_time": "doppler"})


def test_layer_3_filter_by_hand():
    """TS 38.331 Sec. 5.5.3.2: F_0 = M_1, F_n = (1 - a) F_{n-1} + a M_n, a = 1/2^(k/4) per 200 ms."""
    fc4 = L3Filter(4)
    np.testing.assert_array_equal(fc4.read(0.0, np.array([-80.0])), [-80.0])
    np.testing.assert_allclose(fc4.read(0.2, np.array([-90.0])), [-85.0])  # a = 1/2
    np.testing.assert_allclose(fc4.read(0.6, np.array([-85.0 - 8.0])), [-85.0 - 8.0 * 0.75])  # two periods: weight 1/4 left
    halves = L3Filter(8)  # a = 1/4: two readings 100 ms apart of the same value filter as one reading 200 ms later
    halves.read(0.0, np.array([0.0]))
    halves.read(0.1, np.array([10.0]))
    np.testing.assert_allclose(halves.read(0.2, np.array([10.0])), [2.5])
    unfiltered = L3Filter(0)
    unfiltered.read(0.0, np.array([1.0]))
    np.testing.assert_array_equal(unfiltered.read(0.1, np.array([5.0])), [5.0])


def _handovers_per_minute(devices, minutes, step_s, **radio):
    system = get_cell_system("uma-3.5ghz", overrides={"speed_kmh": 30.0, **radio})
    layout = system.cell.place(devices, np.random.default_rng(0))
    channel = ChannelInTime.start(system, layout, np.random.default_rng(1), measurement_period_s=step_s)
    for i in range(int(round(60.0 * minutes / step_s)) + 1):
        channel.at(i * step_s)
    return len(channel.handovers) / devices / minutes


def test_handover_rate_of_geometry_is_the_sector_boundary_crossing_rate():
    """Without shadowing, LOS flips or array nulls the strongest sector changes where a straight
    path crosses a sector boundary: (2/pi) v L/A, L/A = 2 sqrt(3)/ISD for hexagonal sectors
    (benchmarks.handover_rate), 2.21 per minute at 30 km/h and ISD 500 m, within 20%."""
    rate = _handovers_per_minute(80, 2.0, 0.25, shadowing=False, los="nlos", bs_elements=1)
    analytic = 60.0 * 2.0 / math.pi * (30.0 / 3.6) * 2.0 * math.sqrt(3.0) / 500.0
    assert rate == pytest.approx(analytic, rel=0.2)


def test_the_layer_3_filter_and_time_to_trigger_cut_the_shadowing_ping_pong():
    unfiltered = _handovers_per_minute(20, 0.3, 0.1, handover_filter_k=0)
    filtered = _handovers_per_minute(20, 0.3, 0.1)
    with_a3 = _handovers_per_minute(20, 0.3, 0.1, handover_margin_db=3.0, handover_ttt_s=0.48)
    assert unfiltered > 1.5 * filtered > 1.5 * 1.5 * with_a3


def test_the_fields_are_continuous_across_the_torus_seam():
    """A device folded back across the wrap-around torus's seam is at the same point: its LOS
    state and shadowing must not jump there (TR 38.901 7.6.3.1's spatial consistency)."""
    system = get_cell_system("uma-3.5ghz", overrides={"speed_kmh": 30.0})
    network = np.random.default_rng(3)
    channel = ChannelInTime.start(system, system.cell.place(20, network), np.random.default_rng(4))
    x, y = network.uniform(-1200.0, 1200.0, (2, 50))
    for a in multicell.wrap_shifts(system.cell.inter_site_distance_m)[1:]:
        same = np.abs(channel.fields.at(x + a[0], y + a[1]) - channel.fields.at(x, y)) < 2e-2
        assert same.mean() > 0.99  # but for waves of wavelength far below a metre (single-precision phases)


def test_filtered_shadowing_statistics_by_hand_and_against_the_filter():
    """The analytic handover partner's filtered shadowing (benchmarks.handover_rate): fc4's time
    constant 0.2 s / ln 2, T = 50 m / (30 km/h) = 6 s; s0^2 = 2 sigma^2 T / (T + tau) and
    s1^2 = 2 sigma^2 / (tau (T + tau)) by hand, and Rice's zero-crossing rate s1 / (pi s0) against
    TS 38.331's filter run on the sampled Ornstein-Uhlenbeck difference."""
    from scipy.signal import lfilter

    from benchmarks.handover_rate import filtered_shadowing_db, mean_abs_db

    tau, t = 0.2 / math.log(2.0), 6.0
    s0, s1 = filtered_shadowing_db(6.0, 50.0, 30.0 / 3.6, 4)
    assert s0 == pytest.approx(6.0 * math.sqrt(2.0 * t / (t + tau)), rel=1e-12) and s0 == pytest.approx(8.2884, abs=1e-3)
    assert s1 == pytest.approx(6.0 * math.sqrt(2.0 / (tau * (t + tau))), rel=1e-12) and s1 == pytest.approx(6.2992, abs=1e-3)
    assert mean_abs_db(0.0, 2.0) == pytest.approx(2.0 * math.sqrt(2.0 / math.pi))
    assert mean_abs_db(np.array([-30.0, 30.0]), 1.0) == pytest.approx([30.0, 30.0])
    step, n = 0.1, 400_000
    rng = np.random.default_rng(0)
    rho = math.exp(-step / t)
    ou = lfilter([math.sqrt(1 - rho**2)], [1.0, -rho], rng.standard_normal(n)) * math.sqrt(2.0) * 6.0  # two sites' difference
    keep = 0.5 ** (step / 0.2)
    filtered = lfilter([1.0 - keep], [1.0, -keep], ou)[1000:]
    assert filtered.std() == pytest.approx(s0, rel=0.05)
    crossings_per_s = np.count_nonzero(np.diff(np.sign(filtered))) / (filtered.size * step)
    assert crossings_per_s == pytest.approx(s1 / (math.pi * s0), rel=0.05)


def test_shadowed_handover_rate_is_rices_within_20_percent():
    """The handover count beside an analytic rate, with shadowing: at 30 km/h on UMa, every link NLOS, devices outdoors
    (Table 7.8-1's 30 km/h users), layer-3 filter fc4, zero margin, the simulated handovers per
    device per minute are within 20% of Rice's count for the filtered shadowed boundaries
    (benchmarks.handover_rate.rice_per_minute), about 3.5 times the shadow-free crossing rate."""
    from benchmarks.handover_rate import analytic_per_minute, measured_per_minute, rice_per_minute

    radio = {"shadowing": True, "los": "nlos", "handover_margin_db": 0.0, "handover_ttt_s": 0.0, "handover_filter_k": 4,
             "bs_elements": 10, "indoor_fraction": 0.0}
    simulated, _ = measured_per_minute(150, 0.5, 0.1, 0, radio)
    analytic = rice_per_minute(150, 0.5, 0.1, 0, radio)
    assert simulated == pytest.approx(analytic, rel=0.2)
    assert analytic > 2.5 * analytic_per_minute(30.0, 500.0)["hexagonal sectors (side ISD/3)"]


def test_a_measurement_of_the_candidate_sites_reads_what_the_full_one_reads_there():
    """Between two full measurements a device measures its three strongest sites' sectors: the
    same coupling gains as the full reading of all 57 (to the fields' single precision), and the
    other sectors' filtered values held."""
    from netsim.dynamics.motion import CANDIDATE_SITES

    system = get_cell_system("uma-3.5ghz", overrides={"speed_kmh": 30.0})
    network, _ = system.bind(np.full(60, 100.0), np.random.SeedSequence(2))
    channel = network.dynamics.motion
    channel.at(0.0)
    held = channel.measured_db.copy()
    channel.at(0.2)  # a candidate measurement
    sites = channel.candidates
    assert sites.shape == (60, CANDIDATE_SITES) and np.all(np.any(sites == (channel.serving // 3)[:, None], axis=1))
    sectors = (3 * sites[:, :, None] + np.arange(3)).reshape(60, -1)
    rows = np.arange(60)[:, None]
    full = channel.coupling_db(0.2)[-1]
    np.testing.assert_allclose(channel._links(0.2, sites)[-1], full[rows, sectors], atol=1e-3)
    untouched = np.ones(full.shape, bool)
    untouched[rows, sectors] = False
    np.testing.assert_array_equal(channel.measured_db[untouched], held[untouched])
    assert not np.array_equal(channel.measured_db[~untouched], held[~untouched])


@pytest.mark.parametrize("queues", ["sector", "site"])
def test_a_moving_device_queues_at_the_sector_serving_it_at_that_instant(queues):
    # coverage=network: each device's uplink receiver is its serving sector of the instant the links are
    # read (3 site + orientation of the 57), or its serving site; a handover to another site's sector moves it there
    from netsim.radio.physical_links import PhysicalLinks

    system = get_cell_system("uma-3.5ghz", overrides={"speed_kmh": 120.0, "uplink_queues": queues})
    network, channel_rng = system.bind(np.full(12, 100.0), np.random.SeedSequence(3))
    motion = network.dynamics.motion
    seen = set()
    for t_s in (0.0, 5.0, 10.0, 20.0):
        queue = PhysicalLinks.draw(network, channel_rng, t_s).uplink_queue
        serving = motion.serving_at(t_s)
        np.testing.assert_array_equal(queue, serving if queues == "sector" else serving // 3)
        seen.update((serving // 3).tolist())
    assert len(seen) > 3  # devices served by several sites over the run
    moved = [h for h in motion.handovers if h.source // 3 != h.target // 3]
    assert moved  # handovers between sites
