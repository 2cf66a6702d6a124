"""The cell presets' link budgets, TDD shares, Ricean and wideband fading, and the outage floor
with an SNR gap, against hand-computed values."""

import dataclasses
import json
import math

import numpy as np
import pytest

from contract import RoundPlan, Stream
from netsim import simulate_rounds
from netsim.radio import fading, link_budget
from netsim.radio.cell import Cell, CellLayout
from netsim.radio.duplex import tdd_shares
from netsim.radio.physical import LinkBudget, PhysicalSystem
from scenarios.definitions.cells import get_cell_system
from scenarios.errors import UsageError
from tests.shannon_link import SHANNON

# Noise over 20 MHz: -174 + 10 log10(2e7) = -100.9897 dBm; + 9 dB (UE, downlink) = -91.9897,
# + 5 dB (BS, uplink) = -95.9897. Antennas 8 dBi (BS) + 0 dBi (UE) = 8 dB both ways.
# LOS path loss, h_UT = 1.5 m (TR 38.901 Table 7.4.1-1; tests/test_physical_layer.py derives the
# 3.5 GHz values); at 2.14 GHz, UMa (h_BS = 25 m, d'BP = 4 * 24 * 0.5 * 2.14e9 / 3e8 = 342.4 m):
#   50 m: d3D = sqrt(50^2 + 23.5^2) = 55.2472, PL1 = 28 + 22 log10(55.2472) + 20 log10(2.14) = 72.939097
#   300 m: d3D = 300.9190, PL1 = 28 + 22 log10(300.9190) + 20 log10(2.14) = 89.134167
# received power = P + 8 - PL; SNR = received power - noise.
#   umi-3.5ghz (44 dBm): 20 m: PL 71.360167, DL -19.360167 dBm, SNR 72.629533; UL (23 dBm) -40.360167 dBm, 55.629533
#                        150 m: PL 88.993897, DL -36.993897 dBm, 54.995803; UL -57.993897 dBm, 37.995803
#   uma-3.5ghz (49 dBm): 50 m: PL 77.212182, DL -20.212182 dBm, 71.777518; UL -46.212182 dBm, 49.777518
#                        300 m: PL 93.407253, DL -36.407253 dBm, 55.582447; UL -62.407253 dBm, 33.582447
#   uma-2.1ghz (49 dBm): 50 m: PL 72.939097, DL -15.939097 dBm, 76.050603; UL -41.939097 dBm, 54.050603
#                        300 m: PL 89.134167, DL -32.134167 dBm, 59.855533; UL -58.134167 dBm, 37.855533
BUDGETS = {
    "umi-3.5ghz": ((20.0, 150.0), (71.360167, 88.993897), (-19.360167, -36.993897), (72.629533, 54.995803),
                   (-40.360167, -57.993897), (55.629533, 37.995803)),
    "uma-3.5ghz": ((50.0, 300.0), (77.212182, 93.407253), (-20.212182, -36.407253), (71.777518, 55.582447),
                   (-46.212182, -62.407253), (49.777518, 33.582447)),
    "uma-2.1ghz": ((50.0, 300.0), (72.939097, 89.134167), (-15.939097, -32.134167), (76.050603, 59.855533),
                   (-41.939097, -58.134167), (54.050603, 37.855533)),
}


@pytest.mark.parametrize("preset", list(BUDGETS))
def test_preset_link_budget_is_hand_computed(preset):
    distances, loss, rx_dl, snr_dl, rx_ul, snr_ul = BUDGETS[preset]
    system = get_cell_system(preset, overrides={"distances_m": ",".join(map(str, distances)), "los": "los", "shadowing": False,
                                                        "interference": "off", "ul_power_control": "off", **SHANNON})
    layout = system.cell.place(2, np.random.default_rng(0))
    np.testing.assert_allclose(layout.path_loss_db, loss, atol=1e-5)
    assert link_budget.noise_power_dbm(system.downlink.bandwidth_hz, system.downlink.noise_figure_db) == pytest.approx(-91.9897, abs=1e-4)
    assert link_budget.noise_power_dbm(system.uplink.bandwidth_hz, system.uplink.noise_figure_db) == pytest.approx(-95.9897, abs=1e-4)
    antennas = system.bs_antenna_gain_dbi + system.ue_antenna_gain_dbi
    np.testing.assert_allclose(system.downlink.tx_power_dbm + antennas + layout.gain_db, rx_dl, atol=1e-5)
    np.testing.assert_allclose(system.uplink.tx_power_dbm + antennas + layout.gain_db, rx_ul, atol=1e-5)
    dl, ul = system.mean_snr_db(layout)
    np.testing.assert_allclose(dl, snr_dl, atol=1e-5)
    np.testing.assert_allclose(ul, snr_ul, atol=1e-5)


def test_presets_duplexing():
    assert get_cell_system("umi-3.5ghz").duplex == "tdd" == get_cell_system("uma-3.5ghz").duplex
    fdd = get_cell_system("uma-2.1ghz")
    assert fdd.duplex == "fdd" and fdd.shares == (1.0, 1.0)
    assert fdd.downlink.bandwidth_hz == fdd.uplink.bandwidth_hz == 20e6
    with pytest.raises(UsageError, match="TDD shares one carrier"):
        get_cell_system("uma-3.5ghz", overrides={"uplink_bandwidth_hz": 10e6})
    with pytest.raises(UsageError, match="TDD pattern must be"):
        get_cell_system("uma-3.5ghz", overrides={"tdd_pattern": "DDXU"})


def flat(snr_db, **extra):
    """Devices at the given mean SNR (dB) both ways: 1 MHz, 1 W, NF 0 (noise -114 dBm)."""
    n = len(snr_db)
    loss = 30.0 + 114.0 - np.asarray(snr_db, dtype=float)
    layout = CellLayout(np.full(n, 50.0), np.zeros(n), np.ones(n, bool), np.zeros(n), loss)
    settings = dict(fading="none", mode="barrier")
    settings.update(extra)
    system = PhysicalSystem(Cell(distances_m=(50.0,) * n), LinkBudget(1e6, 1.0, 0.0), LinkBudget(1e6, 1.0, 0.0), **settings)
    return system.network(layout, np.zeros(n))


def test_tdd_split_hand_computed():
    # DDDSU, special slot 10:2:2 of 14 symbols: downlink (3 + 10/14) / 5 = 52/70, uplink (1 + 2/14) / 5 = 16/70
    assert tdd_shares("DDDSU", "10:2:2") == (pytest.approx(52 / 70), pytest.approx(16 / 70))
    assert tdd_shares("DSUUU", "6:4:4") == (pytest.approx((1 + 6 / 14) / 5), pytest.approx((3 + 4 / 14) / 5))
    # a device at 10 log10(3) dB: log2(4) = 2 bit/s/Hz on 1 MHz, times the share
    net = flat([10 * math.log10(3)], duplex="tdd")
    channel = net.draw_round(np.random.default_rng(0))
    assert channel.downlink_bps[0] == pytest.approx(2e6 * 52 / 70)
    assert channel.uplink_bps[0] == pytest.approx(2e6 * 16 / 70)
    # one upload of 1 Mbit: 1e6 / (2e6 * 16/70) = 2.1875 s on the clock
    records, trace = simulate_rounds([RoundPlan((), {0: 1e6}, (0,))], net, 1e6, np.random.default_rng(0),
                                     channel_rng=np.random.default_rng(1))
    assert records[0].end == pytest.approx(2.1875)


@pytest.mark.parametrize("simulator", ["timeline", "processes"])
@pytest.mark.parametrize("access", ["tdma", "fdma"])
def test_tdd_energy_is_charged_for_the_symbols_on_the_air(simulator, access):
    # 2 bit/s/Hz on 1 MHz (10 log10(3) dB), DDDSU 10:2:2, UE 1 W, receiver 0.3 W.
    # Upload of 1 Mbit: rate 2e6 x 16/70 = 457,142.857 bit/s, 2.1875 s on the clock, of which the
    # device transmits in its uplink symbols only: 16/70 x 2.1875 = 0.5 s, 1 W x 0.5 s = 0.5 J.
    # Stream of 1 Mbit: 2e6 x 52/70 bit/s, 0.673077 s on the clock, 52/70 of it listened: 0.5 s x 0.3 W = 0.15 J.
    net = flat([10 * math.log10(3)], duplex="tdd", receive_power_w=0.3, uplink_access=access)
    plan = RoundPlan((Stream((0,), 1e6),), {0: 1e6}, (0,))
    records, trace = simulate_rounds([plan], net, 1e6, np.random.default_rng(0), simulator=simulator,
                                     channel_rng=np.random.default_rng(1))
    energy = {e.kind: e.energy_j for e in trace if e.kind in ("receive", "uplink")}
    assert records[0].end == pytest.approx(1e6 / (2e6 * 52 / 70) + 2.1875)
    assert energy == {"receive": pytest.approx(0.15, rel=1e-12), "uplink": pytest.approx(0.5, rel=1e-12)}
    assert records[0].energy_j == {0: pytest.approx(0.65, rel=1e-12)}
    # FDD: the whole wall-clock time is on the air (1 Mbit at 2 Mbit/s: 0.5 s each way)
    fdd = flat([10 * math.log10(3)], duplex="fdd", receive_power_w=0.3, uplink_access=access)
    records, _ = simulate_rounds([plan], fdd, 1e6, np.random.default_rng(0), simulator=simulator, channel_rng=np.random.default_rng(1))
    assert records[0].energy_j == {0: pytest.approx(0.3 * 0.5 + 1.0 * 0.5, rel=1e-12)}


def test_tdd_draws_are_reciprocal_and_fdd_draws_independent():
    tdd = flat([10.0] * 4, duplex="tdd", fading="rayleigh", subbands=3).draw_round(np.random.default_rng(0))
    fdd = flat([10.0] * 4, duplex="fdd", fading="rayleigh", subbands=3).draw_round(np.random.default_rng(0))
    np.testing.assert_array_equal(tdd.downlink_fade, tdd.uplink_fade)
    np.testing.assert_array_equal(fdd.downlink_fade, tdd.downlink_fade)  # the downlink is drawn first
    assert not np.any(fdd.downlink_fade == fdd.uplink_fade)


def test_ricean_k_factor_draw_mean_and_power():
    # TR 38.901 Table 7.5-6, LOS: K ~ N(9, 5) dB (UMi), N(9, 3.5) dB (UMa); NLOS links have none
    for scenario, sigma in (("umi", 5.0), ("uma", 3.5)):
        layout = Cell(scenario=scenario, bs_height_m=10.0 if scenario == "umi" else 25.0, inner_radius_m=35.0,
                      outer_radius_m=250.0).place(40000, np.random.default_rng(3))
        k_db = 10 * np.log10(layout.k_factor[layout.los])
        assert k_db.mean() == pytest.approx(9.0, abs=0.1) and k_db.std() == pytest.approx(sigma, rel=0.03)
        assert not layout.k_factor[~layout.los].any()
    # --radio k_factor_db moves mu_K alone: the same draws, every LOS link's K times 10^((20 - 9) / 10)
    for interference in (False, True):
        base = Cell(interference=interference)
        layouts = [dataclasses.replace(base, k_factor_db=k).place(50, np.random.default_rng(6)) for k in (None, 20.0)]
        np.testing.assert_array_equal(layouts[0].los, layouts[1].los)
        np.testing.assert_allclose(layouts[1].k_factor, layouts[0].k_factor * 10 ** 1.1, rtol=1e-12)
    # |h|^2 at K = 9 dB (7.943): mean 1, variance (1 + 2K) / (K + 1)^2 = 0.2111
    k = 10 ** 0.9
    power = fading.power_gains(np.random.default_rng(4), "ricean", np.array([k]), (200000, 1, 1)).ravel()
    assert power.mean() == pytest.approx(1.0, abs=0.005)
    assert power.var() == pytest.approx((1 + 2 * k) / (k + 1) ** 2, rel=0.02) == pytest.approx(0.2111, abs=1e-4)
    # Rayleigh: the weakest of 20 Exp(1) powers has mean 1/20 (-13.0 dB)
    weakest = fading.power_gains(np.random.default_rng(5), "rayleigh", np.zeros(20), (20000, 20, 1)).min(axis=(1, 2))
    assert weakest.mean() == pytest.approx(1 / 20, rel=0.03)


def test_wideband_rate_is_the_mean_over_subbands():
    net = flat([0.0], subbands=2, max_bps_per_hz=2.5)
    # 0 dB mean SNR, subband powers 1 and 7: log2(2) = 1 and log2(8) = 3 capped at 2.5: mean 1.75 bit/s/Hz
    channel = type(net.draw_round(np.random.default_rng(0)))(net, np.array([[1.0, 7.0]]), np.array([[1.0, 3.0]]))
    assert channel.downlink_bps[0] == pytest.approx(1.75e6)
    assert channel.uplink_bps[0] == pytest.approx(1.5e6)  # log2(2) and log2(4): 1.5
    # the effective SNR: the flat SNR of the uncapped mean efficiency, 2^2 - 1 = 3 (4.77 dB)
    assert channel.downlink_snr_db[0] == pytest.approx(10 * math.log10(3))


def test_outage_floor_follows_the_gap():
    # CQI 1: 0.1523 bit/s/Hz needs SNR / gap >= 2^0.1523 - 1 (-9.5335 dB); with a 3 dB gap, -6.5335 dB
    threshold = 10 * math.log10(2 ** 0.1523 - 1)
    assert threshold == pytest.approx(-9.5335, abs=1e-4)  # 2^0.1523 = 1.111339
    system = flat([0.0], min_bps_per_hz=0.1523, snr_gap_db=3.0).system
    assert system.outage_snr_db == pytest.approx(threshold + 3.0)
    assert list(system.in_outage([-6.6, -6.45, -9.0])) == [True, False, True]
    no_gap = flat([0.0], min_bps_per_hz=0.1523).system
    assert list(no_gap.in_outage([-9.6, -9.45])) == [True, False]
    # the rate at the threshold with the gap is exactly the floor: B * 0.1523
    assert system.rate_bps(1e6, threshold + 3.0) == pytest.approx(0.1523e6)


def test_fdma_outage_is_tested_on_the_share():
    # two devices at -11 dB on the uplink: alone on the band below -9.53 dB (outage); on half the band
    # with their whole power, -11 + 3.01 = -7.99 dB: both upload; with TDMA, neither
    plan = RoundPlan((), {0: 1e5, 1: 1e5}, (0, 1))
    outcomes = {}
    for access in ("tdma", "fdma"):
        net = flat([-11.0, -11.0], min_bps_per_hz=0.1523, uplink_access=access)
        records, _ = simulate_rounds([plan], net, 1e5, np.random.default_rng(0), channel_rng=np.random.default_rng(1))
        outcomes[access] = records[0].outcome
    assert outcomes["tdma"].arrived == () and outcomes["tdma"].dropped == {0: "uplink-outage", 1: "uplink-outage"}
    assert outcomes["fdma"].arrived == (0, 1) and outcomes["fdma"].dropped == {}
    # each on half of 1 MHz at 2 x 10^-1.1: 0.5e6 log2(1 + 0.15887) bit/s, 1e5 bits
    rate = 0.5e6 * math.log2(1 + 2 * 10 ** -1.1)
    assert records[0].end == pytest.approx(1e5 / rate)


@pytest.mark.parametrize("name", sorted(__import__("scenarios.definitions.cells", fromlist=["CELLS"]).CELLS))
def test_a_recorded_cell_reads_back_as_the_radio_parameters_it_was_built_from(name):
    """``radio_parameters`` inverts the build: the flat ``--radio`` parameters read from a run's
    recorded system are those it was built from (a field recorded only when set, k_factor_db,
    at its default and when set); a normalized system has none."""
    from scenarios.definitions.cells import cell_parameters, get_cell_system, radio_parameters
    from scenarios.definitions.systems import get_system

    for overrides in ({}, {"k_factor_db": 20.0}):
        record = get_cell_system(name, overrides=overrides).record(name)
        assert radio_parameters(json.loads(json.dumps(record))) == json.loads(json.dumps(cell_parameters(name, overrides)))
    assert radio_parameters(get_system("wired", "pipelined", None, {}).record("wired")) == {}


def test_a_sweep_table_shows_the_radio_parameters_its_runs_differ_in():
    from scenarios.definitions.cells import get_cell_system
    from scenarios.execution.sweep import setting_columns

    configs = [{"system": get_cell_system("umi-3.5ghz", overrides=o).record("umi-3.5ghz"), "algorithm_options": {}, "training": {}}
               for o in ({"k_factor_db": 0.0}, {"k_factor_db": 20.0})]
    assert [c for c in setting_columns(configs) if c.startswith("radio_")] == ["radio_k_factor_db"]
    assert not [c for c in setting_columns(configs[:1] * 2) if c.startswith("radio_")]
