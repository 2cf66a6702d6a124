"""The physical layer's formulas against hand-computed values: TR 38.901 path loss, noise,
Shannon rates, weakest-member multicast, outages, energy; the seeded cell layout."""

import dataclasses
import math

import numpy as np
import pytest

from netsim.radio import energy, pathloss, link_budget
from netsim.radio.cell import Cell
from contract.setting import field_setting
from netsim.radio.physical import LinkBudget, PhysicalSystem
from netsim.normalized.system import NetworkSystem

GHZ = 1e9

# Hand computation, fc = 3.5 GHz, h_UT = 1.5 m, c = 3e8 m/s, h_E = 1 m:
# UMi (h_BS = 10 m): d'BP = 4 * 9 * 0.5 * 3.5e9 / 3e8 = 210 m
#   d2D = 20 m:  d3D = sqrt(20^2 + 8.5^2) = 21.7313;  PL1 = 32.4 + 21 log10(21.7313) + 20 log10(3.5) = 71.360167
#                NLOS' = 35.3 log10(21.7313) + 22.4 + 21.3 log10(3.5) = 81.187785
#   d2D = 150 m: d3D = 150.2406;  PL1 = 88.993897;  NLOS' = 110.829245
#   d2D = 400 m: d3D = 400.0903 (beyond d'BP);
#                PL2 = 32.4 + 40 log10(400.0903) + 20 log10(3.5) - 9.5 log10(210^2 + 8.5^2) = 103.238761
#                NLOS' = 125.844828
# UMa (h_BS = 25 m): d'BP = 4 * 24 * 0.5 * 3.5e9 / 3e8 = 560 m
#   d2D = 50 m:   d3D = 55.2472;   PL1 = 28 + 22 log10(55.2472) + 20 log10(3.5) = 77.212182
#                 NLOS' = 13.54 + 39.08 log10(55.2472) + 20 log10(3.5) = 92.510838
#   d2D = 300 m:  d3D = 300.9190;  PL1 = 93.407253;  NLOS' = 121.279172
#   d2D = 1000 m: d3D = 1000.2761; PL2 = 28 + 40 log10(1000.2761) + 20 log10(3.5) - 9 log10(560^2 + 23.5^2) = 109.411895
#                 NLOS' = 141.666046
HAND = {
    ("umi", "los"): ((20, 150, 400), (71.360167, 88.993897, 103.238761)),
    ("umi", "nlos"): ((20, 150, 400), (81.187785, 110.829245, 125.844828)),
    ("uma", "los"): ((50, 300, 1000), (77.212182, 93.407253, 109.411895)),
    ("uma", "nlos"): ((50, 300, 1000), (92.510838, 121.279172, 141.666046)),
}
HEIGHTS = {"umi": 10.0, "uma": 25.0}


@pytest.mark.parametrize("scenario,state", list(HAND))
def test_path_loss_equals_hand_computed_tr38901_values(scenario, state):
    distances, expected = HAND[(scenario, state)]
    prop = pathloss.SCENARIOS[scenario]
    formula = prop.los_db if state == "los" else prop.nlos_db
    got = formula(np.array(distances, dtype=float), HEIGHTS[scenario], 1.5, 3.5 * GHZ)
    np.testing.assert_allclose(got, expected, atol=1e-6)
    per_device = prop.path_loss_db(distances, [state == "los"] * 3, HEIGHTS[scenario], 1.5, 3.5 * GHZ)
    np.testing.assert_allclose(per_device, expected, atol=1e-6)


def test_breakpoint_distance():
    assert pathloss.breakpoint_distance_m(10, 1.5, 3.5 * GHZ) == pytest.approx(210.0)
    assert pathloss.breakpoint_distance_m(25, 1.5, 3.5 * GHZ) == pytest.approx(560.0)


def test_nlos_is_never_below_los():
    # UMa at d2D = 10 m with h_UT = 12.5 m: d3D = 16.0078, LOS PL1 = 65.376664 exceeds
    # NLOS' = 13.54 + 39.08 log10(16.0078) + 20 log10(3.5) - 0.6 * 11 = 64.886653, so NLOS = LOS
    assert pathloss.uma_nlos_db(10.0, 25.0, 12.5, 3.5 * GHZ) == pytest.approx(65.376664, abs=1e-6)
    d = np.linspace(10, 5000, 400)
    for prop in pathloss.SCENARIOS.values():
        assert np.all(prop.nlos_db(d, HEIGHTS[prop.name], 1.5, 3.5 * GHZ) >= prop.los_db(d, HEIGHTS[prop.name], 1.5, 3.5 * GHZ))


def test_los_probability_table_7_4_2_1():
    # UMi at 36 m: 18/36 + exp(-1) (1 - 18/36) = 0.5 + 0.5 e^-1;  UMa at 63 m: 18/63 + e^-1 (45/63)
    assert pathloss.umi_los_probability(36.0) == pytest.approx(0.5 + 0.5 * math.exp(-1))
    assert pathloss.uma_los_probability(63.0) == pytest.approx(18 / 63 + math.exp(-1) * 45 / 63)
    assert pathloss.umi_los_probability(12.0) == 1.0 == pathloss.uma_los_probability(18.0)


def test_noise_snr_and_shannon_rate():
    # -174 + 10 log10(20e6) + 9 = -91.9897 dBm
    assert link_budget.noise_power_dbm(20e6, 9.0) == pytest.approx(-174 + 73.0103 + 9, abs=1e-4)
    # 30 dBm - 100 dB of loss over 10 MHz, NF 0: noise -104 dBm, SNR 34 dB
    assert link_budget.snr_db(30.0, -100.0, 10e6, 0.0) == pytest.approx(34.0)
    assert link_budget.shannon_rate_bps(10e6, 15.0) == pytest.approx(40e6)  # 10 MHz * log2(16)
    gap = 10 * math.log10(3)  # SNR 15 over a 4.77 dB gap is 5: log2(6)
    assert link_budget.shannon_rate_bps(10e6, 15.0, gap) == pytest.approx(10e6 * math.log2(6))
    # SNR 20 dB: log2(101) = 6.658 bit/s/Hz, capped at 5.5547 (TS 38.214 CQI 15, 64QAM 948/1024)
    assert link_budget.shannon_rate_bps(1e6, 100.0, 0.0, 5.5547) == pytest.approx(5.5547e6)
    assert link_budget.dbm_to_w(23.0) == pytest.approx(0.19953, rel=1e-4)
    assert link_budget.w_to_dbm(1.0) == pytest.approx(30.0)


def test_energy_formulas():
    assert energy.transmit_energy_j(0.2, 0.5) == pytest.approx(0.1)
    assert energy.receive_energy_j(0.1, 3.0) == pytest.approx(0.3)
    # kappa 1e-28, 2e4 cycles/sample x 100 samples, 1 GHz: 1e-28 * 2e6 * 1e18 = 2e-4 J in 2 ms
    assert energy.compute_energy_j(1e-28, 2e6, 1e9) == pytest.approx(2e-4)
    assert energy.compute_time_s(2e6, 1e9) == pytest.approx(2e-3)


def flat_system(snr_db_by_device, **extra):
    """A 1 MHz link at 1 W, no fading: the geometry only sizes the system."""
    cell = Cell(scenario="umi", distances_m=tuple([50.0] * len(snr_db_by_device)), los="los", shadowing=False)
    budget = LinkBudget(1e6, 1.0, 0.0)
    return PhysicalSystem(cell, budget, budget, fading="none", **extra)


def channel_with(snr_db, **extra):
    """One round's channel with the given per-device SNRs (dB), both directions (the fades
    carry the SNR over a 0 dB link budget)."""
    system = flat_system(snr_db, **extra)
    network = system.network(system.cell.place(len(snr_db), np.random.default_rng(0)), [1.0] * len(snr_db))
    mean_dl, mean_ul = system.mean_snr_db(network.layout)
    channel = network.draw_round(np.random.default_rng(1))
    snr = np.array(snr_db, dtype=float)
    return type(channel)(network, link_budget.db_to_linear(snr - mean_dl)[:, None], link_budget.db_to_linear(snr - mean_ul)[:, None])


def test_multicast_airtime_is_payload_over_the_weakest_members_rate():
    channel = channel_with([20.0, 10.0, 0.0, -20.0], min_bps_per_hz=math.log2(1.1))  # outage below -10 dB
    rates = 1e6 * np.log2(1 + 10 ** (np.array([20.0, 10.0, 0.0]) / 10))
    assert channel.stream_airtime_s((0, 1), 1e6) == pytest.approx(1e6 / rates[1])
    assert channel.stream_airtime_s((0, 1, 2), 1e6) == pytest.approx(1e6 / rates[2])  # 1 Mbit at 1 Mbit/s: 1 s
    assert channel.stream_airtime_s((0,), 5e5) == pytest.approx(5e5 / rates[0])
    # device 3 (-20 dB) is in outage: it does not slow the stream down, it misses it
    assert list(channel.downlink_outage) == [False, False, False, True]
    assert channel.stream_airtime_s((0, 3), 1e6) == pytest.approx(1e6 / rates[0])
    assert channel.stream_airtime_s((3,), 1e6) == 0.0


def test_fdma_share_concentrates_the_power():
    channel = channel_with([0.0, 0.0])
    # half of 1 MHz with the SNR doubled: 0.5e6 * log2(1 + 2) bit/s
    assert channel.uplink_share_bps(0, 2) == pytest.approx(0.5e6 * math.log2(3))
    assert channel.uplink_share_bps(0, 1) == pytest.approx(1e6)


def test_rayleigh_fading_has_unit_mean_power_and_is_redrawn_each_round():
    cell = Cell(scenario="uma", bs_height_m=25.0, inner_radius_m=35.0, outer_radius_m=289.0)
    budget = LinkBudget(20e6, 1.0, 5.0)
    system = PhysicalSystem(cell, budget, budget)
    network = system.network(cell.place(4, np.random.default_rng(0)), [1.0] * 4)
    rng = np.random.default_rng(2)
    mean_dl, _ = system.mean_snr_db(network.layout)
    draws = np.array([network.draw_round(rng).downlink_snr_db for _ in range(20000)])
    gains = 10 ** ((draws - mean_dl) / 10)
    np.testing.assert_allclose(gains.mean(axis=0), 1.0, atol=0.03)
    assert not np.allclose(draws[0], draws[1])


def test_layout_is_seeded_uniform_over_the_annulus_with_table_los_and_shadowing():
    cell = Cell(scenario="umi", inner_radius_m=10.0, outer_radius_m=200.0)
    layout = cell.place(40000, np.random.default_rng(5))
    d = layout.distance_m
    assert d.min() >= 10.0 and d.max() <= 200.0
    # uniform over the area: d^2 uniform on [100, 40000], mean 20050
    assert np.mean(d**2) == pytest.approx(20050, rel=0.01)
    expected_los = pathloss.umi_los_probability(d).mean()
    assert layout.los.mean() == pytest.approx(expected_los, abs=0.01)
    assert layout.shadowing_db[layout.los].std() == pytest.approx(4.0, rel=0.03)
    assert layout.shadowing_db[~layout.los].std() == pytest.approx(7.82, rel=0.03)
    again = cell.place(40000, np.random.default_rng(5))
    np.testing.assert_array_equal(again.x_m, layout.x_m)
    flat = Cell(scenario="umi", inner_radius_m=10.0, outer_radius_m=200.0, los="nlos", shadowing=False).place(40000, np.random.default_rng(5))
    np.testing.assert_array_equal(flat.x_m, layout.x_m)  # same positions, other LOS mode
    assert not flat.los.any() and not flat.shadowing_db.any()


def test_given_distances():
    layout = Cell(distances_m=(10.0, 50.0, 99.0), los="los").place(3, np.random.default_rng(0))
    np.testing.assert_allclose(layout.distance_m, [10.0, 50.0, 99.0])
    with pytest.raises(ValueError, match="3 distances given for 2 devices"):
        Cell(distances_m=(10.0, 50.0, 99.0)).place(2, np.random.default_rng(0))


@pytest.mark.parametrize("cell,message", [
    (dict(inner_radius_m=-5.0), r"inner_radius_m must be a finite number in \[1, 5000\], got -5.0"),
    (dict(outer_radius_m=-100.0), r"outer_radius_m must be a finite number in \[1, 5000\], got -100.0"),
    (dict(inner_radius_m=150.0, outer_radius_m=100.0), "inner radius 150 m is above the outer radius 100 m"),
    (dict(carrier_hz=-3.5e9), r"carrier_hz must be a finite number in \[500000000, 100000000000\]"),
    (dict(carrier_hz=200e9), "carrier_hz must be a finite number in .*, got 2000"),
    (dict(inner_radius_m=5.0), "10 m <= d2D"),
    (dict(scenario="rma"), "unknown propagation scenario"),
    (dict(los="sometimes"), "unknown LOS mode"),
    (dict(scenario="uma", bs_height_m=25.0, ut_height_m=15.0), "< 13"),
])
def test_impossible_cells_are_refused(cell, message):
    with pytest.raises(ValueError, match=message):
        Cell(**cell)


@pytest.mark.parametrize("budget,message", [
    (LinkBudget(-1e6, 1.0, 5.0), r"link bandwidth_hz must be a finite number in \[1000, 10000000000\], got -1000000.0"),
    (LinkBudget(1e6, -0.2, 5.0), r"link tx_power_w must be a finite number in \[1e-09, 10000\], got -0.2"),
    (LinkBudget(1e6, 0.2, -1.0), r"link noise_figure_db must be a finite number in \[0, 100\], got -1.0"),
])
def test_impossible_links_are_refused(budget, message):
    with pytest.raises(ValueError, match=message):
        PhysicalSystem(Cell(), budget, LinkBudget(1e6, 0.2, 5.0))
    with pytest.raises(ValueError, match=message):
        PhysicalSystem(Cell(), LinkBudget(1e6, 0.2, 5.0), budget)


@pytest.mark.parametrize("extra,message", [
    (dict(cpu_hz=-1e9), r"cpu_hz must be a finite number in \[1000, 1000000000000\], got -1000000000.0"),
    (dict(uplink_access="cdma"), "unknown uplink access"),
    (dict(fading="rician"), "unknown fading model"),
    (dict(kappa=-1.0), "kappa must be a finite number in .*, got -1.0"),
    (dict(receive_power_w=-0.1), r"receive_power_w must be a finite number in \[0, 10000\], got -0.1"),
])
def test_impossible_systems_are_refused(extra, message):
    budget = LinkBudget(1e6, 0.2, 5.0)
    with pytest.raises(ValueError, match=message):
        PhysicalSystem(Cell(), budget, budget, **extra)


def _declared(cls):
    return [f for f in dataclasses.fields(cls) if "rule" in f.metadata]


def _outside(setting):
    """A value just outside the declared range: below ``low`` or above ``high`` (a word: unknown)."""
    if setting.kind is str:
        return "unknown"
    if setting.low is not None:
        return type(setting.kind(0))(setting.low - (1 if setting.kind is int else abs(setting.low) * 1e-6 + 1e-12))
    return setting.high * 2 + 1


@pytest.mark.parametrize("cls, f", [(cls, f) for cls in (Cell, PhysicalSystem, LinkBudget, NetworkSystem) for f in _declared(cls)],
                         ids=lambda item: getattr(item, "name", getattr(item, "__name__", "")))
def test_every_declared_bound_holds_at_construction(cls, f):
    """The bounds a network parameter declares (``contract.setting.parameter``) are the ones its
    dataclass refuses: one declaration, used by ``--radio``/``--rho``... and by construction alike."""
    budget = LinkBudget(1e6, 0.2, 5.0)
    build = {Cell: lambda **kw: Cell(**kw), PhysicalSystem: lambda **kw: PhysicalSystem(Cell(), budget, budget, **kw),
             LinkBudget: lambda **kw: PhysicalSystem(Cell(), dataclasses.replace(budget, **kw), budget),
             NetworkSystem: lambda **kw: NetworkSystem(**{"rho": 4.0, "t_min": 1.0, "inv_mu": 1.0, **kw})}[cls]
    with pytest.raises(ValueError, match=f"^(downlink )?{f.name} must be "):
        build(**{f.name: _outside(field_setting(cls, f))})


def test_attenuated_shannon_of_tr_36_942_annex_a2():
    """alpha log2(1 + SNR) between SNR_min and Thr_max (downlink 0.6, -10 dB, 4.4; uplink 0.4,
    -10 dB, 2.0 bit/s/Hz), 0 below SNR_min; the named abstraction uses it per direction."""
    from scenarios.definitions.cells import get_cell_system

    snr = link_budget.db_to_linear(np.array([-10.5, -10.0, 10.0, 30.0]))
    np.testing.assert_allclose(link_budget.attenuated_shannon(snr, "downlink"), [0.0, 0.6 * math.log2(1.1), 0.6 * math.log2(11.0), 4.4])
    np.testing.assert_allclose(link_budget.attenuated_shannon(snr, "uplink"), [0.0, 0.4 * math.log2(1.1), 0.4 * math.log2(11.0), 2.0])
    system = dataclasses.replace(get_cell_system("umi-3.5ghz"), link_abstraction="attenuated-shannon")
    assert system.efficiency(np.array([10.0]))[0] == pytest.approx(0.6 * math.log2(11.0))
    assert system.efficiency(np.array([10.0]), direction="uplink")[0] == pytest.approx(0.4 * math.log2(11.0))


def test_receive_combining_adds_the_array_gain_on_the_uplink_only():
    """Maximum-ratio combining over N = 4 receive antennas without fading: the uplink SNR is
    4 x one antenna's (+6.0206 dB), its efficiency log2(1 + 4 SNR_1); the downlink is untouched."""
    one, four = flat_system([3.0]), flat_system([3.0], bs_rx_antennas=4)
    layout = one.cell.place(1, np.random.default_rng(0))
    (dl1, ul1), (dl4, ul4) = one.mean_snr_db(layout), four.mean_snr_db(layout)
    assert dl4[0] == dl1[0] and ul4[0] - ul1[0] == pytest.approx(10 * math.log10(4), abs=1e-12)
    channel = four.network(layout, [1.0]).draw_round(np.random.default_rng(1))
    assert channel.uplink_efficiency[0] == pytest.approx(math.log2(1 + 4 * 10 ** (ul1[0] / 10)))
    assert channel.uplink_snr_db[0] == pytest.approx(ul4[0])


def test_receive_combining_diversity_matches_the_sum_of_rayleigh_branches():
    """Rayleigh, flat: after MRC over N branches the SNR is SNR_1 (|h_1|^2 + ... + |h_N|^2), a
    Gamma(N, 1) sum, so a link whose one-antenna mean SNR sits at the outage threshold (x = 1)
    is in outage with probability 1 - e^-1 sum_{k<N} 1/k!: 0.632 (N = 1), 0.264 (2), 0.019 (4)."""
    draws = 40000
    for n, closed in ((1, 1 - math.exp(-1)), (2, 1 - 2 * math.exp(-1)), (4, 1 - math.exp(-1) * (1 + 1 + 1 / 2 + 1 / 6))):
        system = flat_system([0.0], bs_rx_antennas=n)
        system = dataclasses.replace(system, fading="rayleigh")
        mean_ul = system.mean_snr_db(system.cell.place(1, np.random.default_rng(0)))[1][0]
        per_branch = 10 ** (mean_ul / 10) / n
        system = dataclasses.replace(system, min_bps_per_hz=math.log2(1 + per_branch))  # threshold = one branch's mean SNR
        rng = np.random.default_rng(7)
        k = np.zeros(draws)
        fades = system.combined_uplink_fade(rng, k, system.draw_fades(rng, k))
        assert fades.mean() == pytest.approx(1.0, abs=0.02)
        outage = system.below_floor(system.efficiency(np.full(draws, mean_ul), fades, "uplink")).mean()
        assert outage == pytest.approx(closed, abs=0.01), n


def test_receive_combining_keeps_tdd_reciprocity_on_its_first_branch():
    cell = Cell(scenario="uma", bs_height_m=25.0, inner_radius_m=35.0, outer_radius_m=250.0)
    budget = LinkBudget(20e6, 1.0, 5.0)
    for n in (1, 3):
        system = PhysicalSystem(cell, budget, budget, fading="rayleigh", duplex="tdd", subbands=4, bs_rx_antennas=n)
        channel = system.network(cell.place(5, np.random.default_rng(0)), [1.0] * 5).draw_round(np.random.default_rng(2))
        others = n * channel.uplink_fade - channel.downlink_fade  # the branches after the first: downlink's draw
        assert np.all(others >= -1e-12) and (n > 1) == bool(np.any(others > 0))


@pytest.mark.parametrize("overrides, message", [
    ({"bs_rx_antennas": 0}, r"bs_rx_antennas must be an integer in 1\.\.64, got 0"),
    ({"bs_rx_antennas": 2, "speed_kmh": 3.0, "fading_in_time": "doppler"}, "bs_rx_antennas above 1 needs block fading"),
])
def test_impossible_receive_antennas_are_refused(overrides, message):
    from scenarios.definitions.cells import get_cell_system
    from scenarios.errors import UsageError

    with pytest.raises(UsageError, match=message):
        get_cell_system("umi-3.5ghz", overrides=overrides)
