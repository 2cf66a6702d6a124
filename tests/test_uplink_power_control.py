"""Fractional uplink power control (TS 38.213 Sec. 7.1.1): one device's PUSCH power, its energy
for one upload, an interferer's power, and ``off`` as the previous full-power behaviour, all
against hand-computed values."""

import dataclasses
import math

import numpy as np
import pytest

from contract import RoundPlan, Stream
from netsim import simulate_rounds
from netsim.radio import link_budget
from netsim.radio.cell import Cell, CellLayout
from netsim.radio.physical import LinkBudget, PhysicalSystem, dft_s_ofdm_prbs, pusch_power_dbm
from scenarios.definitions.cells import get_cell_system
from scenarios.errors import UsageError
from tests.shannon_link import SHANNON


def test_pusch_power_formula():
    # 51 PRBs at 30 kHz = 102 x 180 kHz: 10 log10(102) = 20.086002 dB
    # P = min(23, -92.2 + 20.086002 + 0.8 x 100) = min(23, 7.886002); at 130 dB: 31.886 -> 23
    np.testing.assert_allclose(pusch_power_dbm(23.0, -92.2, 0.8, 18.36e6, [100.0, 130.0]), [7.886002, 23.0], atol=1e-6)
    # alpha 0: every device at P0 + 10 log10(2^mu M_RB), whatever its loss
    np.testing.assert_allclose(pusch_power_dbm(23.0, -92.2, 0.0, 18.36e6, [80.0, 120.0]), [-72.113998] * 2, atol=1e-6)


def test_preset_device_power_and_sinr_hand_computed():
    # umi-3.5ghz, isolated cell, LOS at 20 m and 150 m, no shadowing (tests/test_cell_presets.py):
    # path loss 71.360167 and 88.993897 dB, minus the 8 dBi BS antenna: coupling loss 63.360167
    # and 80.993897 dB. P0 -92.2 dBm per 180 kHz, alpha 0.8, 18.36 MHz (+20.086002 dB):
    #   P = -72.113998 + 0.8 x 63.360167 = -21.425864 dBm; -72.113998 + 0.8 x 80.993897 = -7.318880 dBm
    # uplink SNR = P + 8 - PL + 95.9897 (noise over 20 MHz, NF 5 dB) = 11.203669, 7.676923 dB
    overrides = {"distances_m": "20,150", "los": "los", "shadowing": False, "interference": "off"}
    system = get_cell_system("umi-3.5ghz", overrides=overrides)
    assert (system.ul_power_control, system.p0_dbm_per_prb, system.alpha) == ("fractional", -92.2, 0.8)
    layout = system.cell.place(2, np.random.default_rng(0))
    np.testing.assert_allclose(system.coupling_loss_db(layout), [63.360167, 80.993897], atol=1e-5)
    np.testing.assert_allclose(system.uplink_power_dbm(layout), [-21.425864, -7.318880], atol=1e-5)
    np.testing.assert_allclose(system.mean_snr_db(layout)[1], [11.203669, 7.676923], atol=1e-5)
    # P0 -78 dBm, alpha 1: -78 + 20.086002 + 63.360167 = 5.446169 dBm; the far one's 23.079899 is capped at 23
    capped = get_cell_system("umi-3.5ghz", overrides={**overrides, "p0_dbm_per_prb": -78, "alpha": 1})
    np.testing.assert_allclose(capped.uplink_power_dbm(layout), [5.446169, 23.0], atol=1e-5)
    # off: every device at 23 dBm (the hand-computed budget of tests/test_cell_presets.py)
    off = get_cell_system("umi-3.5ghz", overrides={**overrides, **SHANNON, "ul_power_control": "off"})
    np.testing.assert_array_equal(off.uplink_power_dbm(layout), [23.0, 23.0])
    np.testing.assert_allclose(off.mean_snr_db(layout)[1], [55.629533, 37.995803], atol=1e-5)
    # the downlink does not change
    np.testing.assert_array_equal(system.mean_snr_db(layout)[0], off.mean_snr_db(layout)[0])


def one_device(duplex: str, access: str = "tdma", **pc) -> PhysicalSystem:
    """1 W (30 dBm) cap, 1 MHz of which 180 kHz occupied (one PRB at 15 kHz: 10 log10(1) = 0 dB),
    no antenna gains, no fading, rate cap 2 bit/s/Hz."""
    return PhysicalSystem(Cell(distances_m=(50.0,)), LinkBudget(1e6, 1.0, 0.0), LinkBudget(1e6, 1.0, 0.0), fading="none",
                          max_bps_per_hz=2.0, bandwidth_occupancy=0.18, duplex=duplex, uplink_access=access, mode="barrier", **pc)


@pytest.mark.parametrize("simulator", ["timeline", "processes"])
@pytest.mark.parametrize("duplex", ["fdd", "tdd"])
@pytest.mark.parametrize("access", ["tdma", "fdma"])
def test_upload_energy_is_the_controlled_power_times_the_time_on_the_air(simulator, duplex, access):
    # coupling loss 100 dB; P0 -30 dBm, alpha 0.5: P = -30 + 0 + 50 = 20 dBm = 0.1 W (below the 1 W cap);
    # SNR = 20 - 100 + 114 = 34 dB, capped at 2 bit/s/Hz: 0.18 x 1e6 x 2 = 360 kbit/s on the air
    # (TDD: x 16/70 on the clock). 1 Mbit: 2.777778 s on the air: 0.1 W -> 0.277778 J; off: 1 W -> 2.777778 J
    layout = CellLayout(np.array([50.0]), np.zeros(1), np.ones(1, bool), np.zeros(1), np.array([100.0]))
    plan = RoundPlan((), {0: 1e6}, (0,))
    for pc, watts in (({"ul_power_control": "fractional", "p0_dbm_per_prb": -30.0, "alpha": 0.5}, 0.1),
                      ({"ul_power_control": "off"}, 1.0)):
        system = one_device(duplex, access, **pc)
        assert system.uplink_power_dbm(layout)[0] == pytest.approx(link_budget.w_to_dbm(watts))
        network = system.network(layout, np.zeros(1))
        records, trace = simulate_rounds([plan], network, 1e6, np.random.default_rng(0), simulator=simulator,
                                         channel_rng=np.random.default_rng(1))
        share = 16 / 70 if duplex == "tdd" else 1.0
        assert records[0].end == pytest.approx(1e6 / (360e3 * share))
        upload = [e for e in trace if e.kind == "uplink"]
        assert upload[0].energy_j == pytest.approx(watts * 1e6 / 360e3, rel=1e-12)
        assert records[0].energy_j == {0: pytest.approx(watts * 1e6 / 360e3, rel=1e-12)}


def test_interferer_power_is_set_by_its_own_coupling_loss():
    # two interferers: coupling losses to their own sectors 90 and 130 dB, gains -100 and -95 dB
    # to the device's sector 0. P0 -30 dBm, alpha 0.5, cap 30 dBm: P = -30 + 45 = 15 dBm and
    # min(30, -30 + 65) = 30 dBm. Interference 10 log10(10^((15 - 100)/10) + 10^((30 - 95)/10))
    # = -65 + 10 log10(1.01) = -64.956786 dBm; off (both at 30 dBm): -65 + 10 log10(1 + 10^-0.5)
    # = -63.806690 dBm; load 0.5: 3.010300 dB less.
    gains = np.array([[-100.0, -110.0, -120.0], [-95.0, -105.0, -115.0]])
    layout = CellLayout(np.array([50.0]), np.zeros(1), np.ones(1, bool), np.zeros(1), np.array([100.0]),
                        bs_gain_db=np.zeros(1), downlink_interference_db=np.array([-300.0]),
                        uplink_interference_db=np.array([10 * math.log10(10 ** -10 + 10 ** -9.5)]), sector=np.array([0]),
                        interferer_gain_db=gains, interferer_coupling_loss_db=np.array([90.0, 130.0]))
    on = one_device("fdd", ul_power_control="fractional", p0_dbm_per_prb=-30.0, alpha=0.5)
    assert on.uplink_interference_dbm(layout)[0] == pytest.approx(-64.956786, abs=1e-6)
    off = one_device("fdd", ul_power_control="off")
    assert off.uplink_interference_dbm(layout)[0] == pytest.approx(-63.806690, abs=1e-6)
    # the device's own SINR: signal 20 - 100 = -80 dBm over noise -114 dBm plus the interference
    sinr = on.mean_snr_db(layout)[1][0]
    assert sinr == pytest.approx(-80.0 - 10 * math.log10(10 ** -11.4 + 10 ** -6.4956786), abs=1e-6)
    half = dataclasses.replace(on, cell=Cell(distances_m=(50.0,), interference_load=0.5))
    assert half.uplink_interference_dbm(layout)[0] == pytest.approx(-64.956786 - 3.010300, abs=1e-6)


def test_power_control_off_reproduces_full_power_in_the_network():
    """``off``: every serving and interfering device at the UE power, the interference the
    previous ``P + interference gain``; ``fractional`` lowers both (seeded drop, UMi)."""
    layout = get_cell_system("umi-3.5ghz").cell.place(10, np.random.default_rng(0))
    on, off = get_cell_system("umi-3.5ghz", overrides=SHANNON), get_cell_system("umi-3.5ghz", overrides={**SHANNON, "ul_power_control": "off"})
    np.testing.assert_array_equal(off.uplink_power_dbm(layout), np.full(10, 23.0))
    np.testing.assert_allclose(off.uplink_interference_dbm(layout), 23.0 + layout.uplink_interference_db, atol=1e-12)
    network = dataclasses.replace(off, power_unit_w=0.0).network(layout, np.ones(10))  # radiated power alone
    assert network.transmit_j(2.0, 3) == pytest.approx(10 ** -0.7 * 16 / 70 * 2.0, rel=1e-12)  # 23 dBm = 10^-0.7 W
    states = off.network(layout, np.ones(10))  # TR 38.840: PUSCH at 23 dBm draws 700 units of 1 mW
    assert states.transmit_j(2.0, 3) == pytest.approx(0.7 * 16 / 70 * 2.0, rel=1e-12)
    assert np.all(on.uplink_power_dbm(layout) <= 23.0)
    assert np.all(on.uplink_interference_dbm(layout) < off.uplink_interference_dbm(layout))


def test_a_record_without_power_control_replays_at_full_power():
    record = get_cell_system("uma-3.5ghz").record("uma-3.5ghz")
    for key in ("ul_power_control", "p0_dbm_per_prb", "alpha", "ul_allocation"):  # a record before power control: nor grants
        del record[key]
    assert PhysicalSystem.from_dict(record).ul_power_control == "off"


@pytest.mark.parametrize("override, message", [({"ul_power_control": "on"}, "unknown uplink power control"),
                                               ({"alpha": 1.5}, "alpha"), ({"p0_dbm_per_prb": -300}, "p0_dbm_per_prb")])
def test_bad_power_control_settings_are_one_line_errors(override, message):
    with pytest.raises(UsageError, match=message):
        get_cell_system("uma-3.5ghz", overrides=override)


def two_prb_groups(**pc) -> PhysicalSystem:
    """FDD, 2 MHz of which 1.8 MHz occupied: 10 PRBs at 15 kHz (``2^mu M_RB`` = 10, +10 dB);
    1 W (30 dBm) cap, no noise figure (noise -110.9897 dBm over 2 MHz), no fading, rate cap 2."""
    return PhysicalSystem(Cell(distances_m=(50.0, 60.0)), LinkBudget(2e6, 1.0, 0.0), LinkBudget(2e6, 1.0, 0.0), fading="none",
                          max_bps_per_hz=2.0, bandwidth_occupancy=0.9, subcarrier_spacing_hz=15e3, uplink_access="fdma",
                          mode="barrier", **pc)


def test_fdma_power_follows_the_allocated_prbs_per_ts_38_213():
    """P0 -30 dBm, alpha 0.5, P_CMAX 30 dBm; coupling losses 90 and 120 dB. Whole band (10 PRBs):
    device 0 at -30 + 10 + 45 = 25 dBm (316.228 mW), device 1 at min(30, 40) = 30 dBm. On half
    the band (5 PRBs): device 0 at -30 + 6.9897 + 45 = 21.9897 dBm (158.114 mW: the same power per
    PRB), device 1 still capped at 1 W. Both SNRs on the share stay above the cap (45.99 and
    23.99 dB): 2 bit/s/Hz, so 0.9 x 1 MHz x 2 = 1.8 Mbit/s each on half the band, 3.6 Mbit/s alone.
    Device 1 uploads 0.9 Mbit (done at 0.5 s), device 0 1.8 Mbit: 0.9 Mbit by 0.5 s at 158.114 mW,
    then 0.9 Mbit alone in 0.25 s at 316.228 mW. Energy: device 0 0.5 x 0.158114 + 0.25 x
    0.316228 = 0.158114 J, exactly what TDMA charges (1.8 Mbit alone: 0.5 s at 316.228 mW); device
    1: 0.5 s at 1 W = 0.5 J."""
    pc = {"ul_power_control": "fractional", "p0_dbm_per_prb": -30.0, "alpha": 0.5}
    layout = CellLayout(np.array([50.0, 60.0]), np.zeros(2), np.ones(2, bool), np.zeros(2), np.array([90.0, 120.0]))
    system = two_prb_groups(**pc)
    assert system.uplink_prbs == 10
    network = system.network(layout, np.zeros(2))
    np.testing.assert_allclose(network.uplink_power_dbm, [25.0, 30.0], atol=1e-9)
    np.testing.assert_allclose(network.share_power_dbm(np.arange(2), 2), [15 + 10 * math.log10(5), 30.0], atol=1e-9)
    plan = RoundPlan((), {0: 1.8e6, 1: 0.9e6}, (0, 1))
    records, trace = simulate_rounds([plan], network, 1e6, np.random.default_rng(0), simulator="processes",
                                     channel_rng=np.random.default_rng(1))
    uploads = {e.entity: e for e in trace if e.kind == "uplink"}
    assert (uploads[1].end, uploads[0].end) == (pytest.approx(0.5), pytest.approx(0.75))
    assert uploads[0].energy_j == pytest.approx(0.5 * 10 ** -0.5 / 2 + 0.25 * 10 ** -0.5, rel=1e-12)
    assert uploads[0].energy_j == pytest.approx(0.5 * 10 ** -0.5, rel=1e-12)  # TDMA's 1.8 Mbit alone
    assert uploads[1].energy_j == pytest.approx(0.5, rel=1e-12)
    tdma = dataclasses.replace(system, uplink_access="tdma").network(layout, np.zeros(2))
    _, alone = simulate_rounds([RoundPlan((), {0: 1.8e6}, (0,))], tdma, 1e6, np.random.default_rng(0),
                               channel_rng=np.random.default_rng(1))
    assert [e.energy_j for e in alone if e.kind == "uplink"] == [pytest.approx(uploads[0].energy_j, rel=1e-12)]


def test_fdma_never_splits_the_band_below_one_prb():
    """2 PRBs (0.36 of 1 MHz at 15 kHz): devices 0 and 1 take one each (360 kbit/s at the 2
    bit/s/Hz cap) and finish their 360 kbit at 1 s; device 2 waits, then sends its 720 kbit alone
    at 720 kbit/s: 1 to 2 s (an equal three-way split would end devices 0 and 1 at 1.5 s)."""
    system = PhysicalSystem(Cell(distances_m=(50.0,) * 3), LinkBudget(1e6, 1.0, 0.0), LinkBudget(1e6, 1.0, 0.0),
                            fading="none", max_bps_per_hz=2.0, bandwidth_occupancy=0.36, uplink_access="fdma", mode="barrier")
    assert system.uplink_prbs == 2
    layout = CellLayout(np.full(3, 50.0), np.zeros(3), np.ones(3, bool), np.zeros(3), np.full(3, 60.0))
    plan = RoundPlan((), {0: 360e3, 1: 360e3, 2: 720e3}, (0, 1, 2))
    _, trace = simulate_rounds([plan], system.network(layout, np.zeros(3)), 1e6, np.random.default_rng(0),
                               simulator="processes", channel_rng=np.random.default_rng(1))
    assert [(e.entity, e.start, e.end) for e in trace if e.kind == "uplink"] == [
        (0, 0.0, pytest.approx(1.0)), (1, 0.0, pytest.approx(1.0)), (2, 0.0, pytest.approx(2.0))]


@pytest.mark.parametrize("simulator", ["timeline", "processes"])
def test_headroom_grant_by_hand(simulator):
    """10 PRBs (2 MHz, 0.9 occupied, 15 kHz), 1 W cap, noise -174 + 63.0103 = -110.9897 dBm, no
    fading, outage floor 1 bit/s/Hz (0 dB). At 145 dB coupling loss and 30 dBm the whole band gives
    -4.0103 dB: outage. ``headroom``: on m blocks the SNR gains 10 log10(10 / m); m = 3 is the most
    that reaches 0 dB (+5.2288 dB: 1.2185 dB; m = 4 gives -0.0309 dB), at 30 dBm: the rate is
    0.9 x 2 MHz x 3/10 x log2(1 + 10^0.12185) and 1 Mbit costs 1 W times 1 Mbit over it."""
    layout = CellLayout(np.array([50.0]), np.zeros(1), np.ones(1, bool), np.zeros(1), np.array([145.0]))
    base = PhysicalSystem(Cell(distances_m=(50.0,)), LinkBudget(2e6, 1.0, 0.0), LinkBudget(2e6, 1.0, 0.0), fading="none",
                          min_bps_per_hz=1.0, max_bps_per_hz=6.0, bandwidth_occupancy=0.9, mode="barrier")
    whole = base.network(layout, np.zeros(1)).draw_round(np.random.default_rng(0))
    assert whole.uplink_outage[0] and whole.allocated_prbs[0] == 10
    system = dataclasses.replace(base, ul_allocation="headroom")
    network = system.network(layout, np.zeros(1))
    channel = network.draw_round(np.random.default_rng(0))
    snr = 10 ** ((30 - 145 + 174 - 10 * math.log10(2e6)) / 10) * 10 / 3
    rate = 0.9 * 2e6 * 0.3 * math.log2(1 + snr)
    assert channel.allocated_prbs[0] == 3 and not channel.uplink_outage[0]
    assert channel.uplink_bps[0] == pytest.approx(rate, rel=1e-12)
    records, trace = simulate_rounds([RoundPlan((), {0: 1e6}, (0,))], network, 1e6, np.random.default_rng(0),
                                     simulator=simulator, channel_rng=np.random.default_rng(1))
    assert records[0].end == pytest.approx(1e6 / rate) and records[0].energy_j[0] == pytest.approx(1e6 / rate, rel=1e-12)


def test_dft_s_ofdm_sizes_are_2a_3b_5c_rounded_down():
    """TS 38.211 6.3.1.4: a transform-precoded PUSCH spans ``2^a 3^b 5^c`` PRBs."""
    assert dft_s_ofdm_prbs(np.arange(1, 17)).tolist() == [1, 2, 3, 4, 5, 6, 6, 8, 9, 10, 10, 12, 12, 12, 15, 16]
    assert dft_s_ofdm_prbs([51, 106, 273]).tolist() == [50, 100, 270]
    with pytest.raises(ValueError, match="at least 1 PRB"):
        dft_s_ofdm_prbs([0])


@pytest.mark.parametrize("simulator", ["timeline", "processes"])
def test_power_limited_grant_by_hand(simulator):
    """11 PRBs (1.98 of 2 MHz at 15 kHz: 2^mu M = M), P_CMAX 30 dBm, P0 -50 dBm, alpha 0.5, no
    fading. Device 0 at 142.4 dB: ``P0 + alpha PL`` = 21.2 dBm, so ``m`` blocks need
    21.2 + 10 log10(m) dBm, within 30 dBm up to m = 10^0.88 = 7.586: the limit is 7 blocks, the
    DFT-s-OFDM size below it 6, sent at 21.2 + 7.7815 = 28.9815 dBm; its SNR on the grant is
    28.9815 - 142.4 + 174 - 10 log10(2e6 x 6/11) = 0.2036 dB. Device 1 at 100 dB: the limit
    (1,000 blocks) is capped at the band's 11, rounded down to 10. Device 2 at 170 dB: 0.316
    blocks, so 1 block, at P_CMAX."""
    loss = np.array([142.4, 100.0, 170.0])
    layout = CellLayout(np.full(3, 50.0), np.zeros(3), np.ones(3, bool), np.zeros(3), loss)
    system = PhysicalSystem(Cell(distances_m=(50.0,) * 3), LinkBudget(2e6, 1.0, 0.0), LinkBudget(2e6, 1.0, 0.0), fading="none",
                            max_bps_per_hz=6.0, bandwidth_occupancy=0.99, mode="barrier", ul_power_control="fractional",
                            p0_dbm_per_prb=-50.0, alpha=0.5, ul_allocation="power-limit")
    assert system.uplink_prbs == 11
    assert system.power_limit_prbs(loss).tolist() == [7, 1000, 0]
    network = system.network(layout, np.zeros(3))
    channel = network.draw_round(np.random.default_rng(0))
    assert channel.allocated_prbs.tolist() == [6, 10, 1]
    power_dbm = np.array([-50 + 10 * math.log10(6) + 71.2, -50 + 10 * math.log10(10) + 50, 30.0])
    np.testing.assert_allclose(channel.uplink_power_w, 10 ** (power_dbm / 10) / 1e3, rtol=1e-12)
    snr_db = power_dbm - loss + 174 - 10 * np.log10(2e6 * np.array([6, 10, 1]) / 11)
    assert snr_db[0] == pytest.approx(0.2036, abs=1e-4)
    rate = 0.99 * 2e6 * np.array([6, 10, 1]) / 11 * np.minimum(6.0, np.log2(1 + 10 ** (snr_db / 10)))
    np.testing.assert_allclose(channel.uplink_bps, rate, rtol=1e-12)
    records, trace = simulate_rounds([RoundPlan((), {0: 1e6}, (0,))], network, 1e6, np.random.default_rng(0),
                                     simulator=simulator, channel_rng=np.random.default_rng(1))
    assert records[0].end == pytest.approx(1e6 / rate[0], rel=1e-12)
    assert records[0].energy_j[0] == pytest.approx(10 ** (power_dbm[0] / 10) / 1e3 * 1e6 / rate[0], rel=1e-12)


def test_power_limited_grants_need_open_loop_power_on_tdma():
    """Without TS 38.213's open-loop power (``off``) there is no limit to size a grant by: the
    setting would have no effect, so it is refused."""
    with pytest.raises(UsageError, match="ul_allocation=power-limit .* needs ul_power_control=fractional \\(with "
                                         "ul_power_control=off give ul_allocation=headroom or whole-band\\)"):
        get_cell_system("uma-3.5ghz", overrides={"ul_power_control": "off"})  # the preset's power-limit
    assert get_cell_system("uma-3.5ghz", overrides={"ul_power_control": "off", "ul_allocation": "headroom"}).ul_allocation == "headroom"
    # off a TDMA uplink the preset's power-limit grants nothing: it needs no open-loop power there
    budget = LinkBudget(1e6, 1.0, 0.0)
    system = PhysicalSystem(Cell(distances_m=(50.0,)), budget, budget, uplink_access="fdma", ul_allocation="power-limit")
    assert system.ul_power_control == "off" and system.uplink_access == "fdma"
    with pytest.raises(ValueError, match="needs ul_power_control=fractional"):
        PhysicalSystem(Cell(distances_m=(50.0,)), budget, budget, ul_allocation="power-limit")


@pytest.mark.parametrize("access", ["fdma", "pf"])
@pytest.mark.parametrize("allocation", ["whole-band", "headroom"])
def test_a_tdma_grant_policy_is_refused_on_a_shared_uplink(access, allocation):
    """FDMA and PF have no TDMA grants: ``ul_allocation`` given off the preset's value has no
    effect there, so it is refused (the preset's own ``power-limit`` is not a setting given; FDMA takes the
    ``nr`` curve, ``nr-harq`` serving whole PRBs)."""
    abstraction = {"link_abstraction": "nr"} if access == "fdma" else {}
    with pytest.raises(UsageError, match=f"radio ul_allocation has an effect only with uplink_access='tdma' \\(this run has "
                                         f"uplink_access '{access}'\\)"):
        get_cell_system("uma-3.5ghz", overrides={"ul_allocation": allocation, "uplink_access": access, **abstraction})
    assert get_cell_system("uma-3.5ghz", overrides={"uplink_access": access, **abstraction}).uplink_access == access


@pytest.mark.parametrize("simulator", ["timeline", "processes"])
def test_one_round_of_tr_38_840_states_by_hand(simulator):
    """TR 38.840 Table 8.1-1 with one unit = 1 mW: receiving (PDCCH + PDSCH) 300 mW, sending PUSCH
    at 23 dBm 700 mW, waiting (light sleep) 20 mW. FDD, 360 kbit/s both ways (0.18 MHz x 2
    bit/s/Hz cap), no compute. A 360 kbit broadcast to devices 0 and 1 (0-1 s), then their
    360 kbit uploads one after the other (TDMA: 1-2 s and 2-3 s). Each: 0.3 J receiving, 0.7 J
    sending, and waits 1 s (device 0 after its upload, device 1 for its slot): 0.02 J; 1.02 J."""
    layout = CellLayout(np.array([50.0, 50.0]), np.zeros(2), np.ones(2, bool), np.zeros(2), np.array([100.0, 100.0]))
    system = PhysicalSystem(Cell(distances_m=(50.0, 50.0)), LinkBudget(1e6, 1.0, 0.0), LinkBudget(1e6, 10 ** -0.7, 0.0),
                            fading="none", max_bps_per_hz=2.0, bandwidth_occupancy=0.18, mode="barrier", power_unit_w=1e-3)
    plan = RoundPlan((Stream((0, 1), 360e3),), {0: 360e3, 1: 360e3}, (0, 1))
    records, trace = simulate_rounds([plan], system.network(layout, np.zeros(2)), 360e3, np.random.default_rng(0),
                                     simulator=simulator, channel_rng=np.random.default_rng(1))
    assert records[0].end == pytest.approx(3.0)
    by_kind = {(e.kind, e.entity): e.energy_j for e in trace if e.kind != "downlink"}
    for device in (0, 1):
        assert by_kind[("receive", device)] == pytest.approx(0.3, rel=1e-12)
        assert by_kind[("uplink", device)] == pytest.approx(0.7, rel=1e-12)
        assert by_kind[("idle", device)] == pytest.approx(0.02, rel=1e-9)
        assert records[0].energy_j[device] == pytest.approx(1.02, rel=1e-9)
