"""Time-correlated fading (netsim.dynamics.doppler): the sum of sinusoids against Clarke's J0 up to
its first zero at 3 and 120 km/h, its power, the Ricean mean, and a gain at any time in any order."""

import numpy as np
import pytest
from scipy.special import j0

from netsim.dynamics.doppler import KMH, SumOfSinusoids, autocorrelation, coherence_time_s, doppler_hz, first_zero_s


@pytest.mark.parametrize("speed_kmh", [3.0, 120.0])
def test_autocorrelation_follows_j0_up_to_its_first_zero(speed_kmh):
    doppler = float(doppler_hz(speed_kmh * KMH, 3.5e9))
    process = SumOfSinusoids.draw(np.random.default_rng(7), np.full(2000, doppler))
    lags = np.linspace(0.0, first_zero_s(doppler), 25)
    measured = autocorrelation(process, lags, starts_s=[0.0, 3.1, 17.3])
    assert np.max(np.abs(measured - j0(2.0 * np.pi * doppler * lags))) < 0.05


def test_doppler_and_coherence_time():
    assert float(doppler_hz(3 * KMH, 3.5e9)) == pytest.approx(9.7222, rel=1e-4)  # 0.8333 m/s x 3.5e9 / 3e8
    assert coherence_time_s(float(doppler_hz(3 * KMH, 3.5e9))) == pytest.approx(0.0435, abs=1e-4)  # the 44 ms


def test_unit_mean_power_rayleigh_and_ricean_and_stateless_in_time():
    rng = np.random.default_rng(3)
    for k in (0.0, 10.0):
        process = SumOfSinusoids.draw(rng, np.full(20000, 50.0))
        power = process.power(1.234, k)
        assert power.mean() == pytest.approx(1.0, abs=0.03)
        if k == 0.0:  # |h|^2 of Rayleigh fading: exponential, variance 1
            assert power.var() == pytest.approx(1.0, abs=0.08)
        else:  # Ricean: (1 + 2K) / (K + 1)^2
            assert power.var() == pytest.approx(21.0 / 121.0, abs=0.02)
    process = SumOfSinusoids.draw(np.random.default_rng(4), np.full(5, 100.0))
    later, earlier = process.gain(2.0), process.gain(1.0)
    np.testing.assert_array_equal(later, process.gain(2.0))
    assert not np.allclose(earlier, later)
    static = SumOfSinusoids.draw(np.random.default_rng(4), np.zeros(5))  # no motion: no change
    np.testing.assert_allclose(static.gain(0.0), static.gain(100.0))
