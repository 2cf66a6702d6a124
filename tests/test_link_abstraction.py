"""The NR link layer as an efficiency per SNR (``netsim.radio.link.abstraction``), and the cell's opt-in
``link_abstraction=nr`` that uses it (the default stays ``shannon``)."""

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
