"""The NR link layer as an efficiency per SNR (``netsim.radio.link.abstraction``), and the cell's opt-in
``link_abstraction=nr`` that uses it."""

import dataclasses
import math

import numpy as np
import pytest

from netsim.radio.link.abstraction import expected_efficiency


def test_efficiency_at_one_snr_by_hand():
    """Uplink at 9.5 dB: MCS 17 (64QAM, 466; SE 2.7305) is the highest at <= 10% BLER on the 2,000-bit
    curve (midpoint 9.336 dB, slope 16.1297/dB): p_1 = 1 / (1 + e^(16.1297 x 0.164)) = 0.0663; two
    copies (12.51 dB) all but never fail, so E[T] = 1 + p_1 and the delivered efficiency 2.7305 / 1.0663."""
    p1 = 1 / (1 + math.exp(16.1297 * (9.5 - 9.336)))
    assert expected_efficiency(10 ** 0.95, "uplink") == pytest.approx(2.7305 / (1 + p1), rel=1e-9)


def test_high_snr_reaches_the_top_mcs_and_deep_outage_gives_nothing():
    assert expected_efficiency(np.array([1e3]), "uplink")[0] == pytest.approx(5.5547, rel=1e-12)
    assert expected_efficiency(np.array([1e3]), "downlink")[0] == pytest.approx(5.5547, rel=1e-12)
    assert expected_efficiency(np.array([10 ** -1.4]), "uplink")[0] == 0.0  # -14 dB: MCS 0 misses 10% even with 4 copies


def test_never_above_the_shannon_bound():
    snr = 10 ** (np.arange(-15.0, 30.0, 0.05) / 10)
    for direction in ("uplink", "downlink"):
        assert np.all(expected_efficiency(snr, direction) < np.log2(1 + snr))


def test_the_presets_serve_through_the_link_layer_and_shannon_is_a_choice():
    from scenarios.definitions.cells import get_cell_system

    assert get_cell_system("umi-3.5ghz").link_abstraction == "nr-harq"
    default = get_cell_system("umi-3.5ghz", overrides={"link_abstraction": "shannon"})
    nr = dataclasses.replace(default, link_abstraction="nr")
    snr_db = np.array([-3.0, 9.5, 30.0])
    expected = np.minimum(expected_efficiency(10 ** (snr_db / 10), "uplink"), default.max_bps_per_hz)
    np.testing.assert_allclose(nr.efficiency(snr_db, direction="uplink"), expected, rtol=1e-12)
    assert nr.efficiency(np.array([9.5]))[0] != default.efficiency(np.array([9.5]))[0]


def _scanned_efficiency(snr_linear, direction):
    """The reference: every MCS's BLER scanned one by one, the curves read each time."""
    from netsim.radio.link.abstraction import (BLER_TARGET, REFERENCE_CODE_BLOCK_BITS, TABLE_BY_DIRECTION, _bler)
    from netsim.radio.link.bler import curve_parameters
    from netsim.radio.link.harq import MAX_TRANSMISSIONS
    from netsim.radio.link.mcs_tables import MCS_TABLES

    table = TABLE_BY_DIRECTION[direction]
    entries = MCS_TABLES[table]
    curves = np.array([curve_parameters(table, m, REFERENCE_CODE_BLOCK_BITS) for m in range(len(entries))])
    snr_db = 10.0 * np.log10(np.maximum(np.asarray(snr_linear, dtype=float), 1e-30))
    chosen = np.zeros(snr_db.shape, dtype=int)
    for mcs in range(1, len(entries)):
        chosen[_bler(snr_db, *curves[mcs]) <= BLER_TARGET] = mcs
    expected, all_failed = np.zeros(snr_db.shape), np.ones(snr_db.shape)
    for copies in range(1, MAX_TRANSMISSIONS + 1):
        expected += all_failed
        last = _bler(snr_db + 10.0 * np.log10(copies), curves[chosen, 0], curves[chosen, 1])
        all_failed = all_failed * last
    efficiency = np.array([e.spectral_efficiency for e in entries])[chosen] * (1.0 - all_failed) / expected
    return np.where((chosen == 0) & (last > BLER_TARGET), 0.0, efficiency)


@pytest.mark.parametrize("direction", ["uplink", "downlink"])
def test_every_mcs_at_once_is_the_scan_bit_for_bit(direction):
    """The MCS chosen from every MCS's BLER at once is the MCS-by-MCS scan's, to the bit: a grid of
    1e-3 dB from -15 to 35 dB (every switching point inside), and fades of any shape."""
    grid = 10 ** (np.arange(-15.0, 35.0, 1e-3) / 10)
    assert np.array_equal(expected_efficiency(grid, direction), _scanned_efficiency(grid, direction))
    fades = np.random.default_rng(3).exponential(1.0, size=(4, 7, 8)) * 10 ** np.random.default_rng(4).uniform(-2, 3, size=(4, 7, 1))
    assert np.array_equal(expected_efficiency(fades, direction), _scanned_efficiency(fades, direction))
    assert np.array_equal(expected_efficiency(0.0, direction), _scanned_efficiency(0.0, direction))
