"""Spatially consistent shadowing (netsim.dynamics.field): the correlation of two devices' values
against their distance matches TR 38.901's exp(-d / d_corr) at d_corr and 2 d_corr, unit variance."""

import numpy as np
import pytest

from netsim.dynamics.field import ExponentialField


@pytest.mark.parametrize("correlation_m", [37.0, 50.0])  # Table 7.5-6, UMa LOS and NLOS shadow fading
def test_correlation_against_distance_is_exponential(correlation_m):
    rng = np.random.default_rng(11)
    field = ExponentialField.draw(rng, np.full(1500, correlation_m))  # 1500 independent fields
    x, y = rng.uniform(-1000.0, 1000.0, (2, 40))
    _assert_exponential(field, rng, x, y, correlation_m)


def _assert_exponential(field, rng, x, y, correlation_m):
    """Unit variance at the points ``x``, ``y`` (40 of them, over the fields), and the
    correlation with points at d_corr and 2 d_corr in random directions exp(-1) and exp(-2)."""
    here = field.at(x, y)  # 40 points x the fields
    assert here.var() == pytest.approx(1.0, abs=0.05)
    for multiple in (1.0, 2.0):
        angle = rng.uniform(0.0, 2.0 * np.pi, 40)
        d = multiple * correlation_m
        there = field.at(x + d * np.cos(angle), y + d * np.sin(angle))
        assert np.mean(here * there) == pytest.approx(np.exp(-multiple), abs=0.05)


def test_the_same_point_gives_the_same_value_and_far_points_are_uncorrelated():
    field = ExponentialField.draw(np.random.default_rng(2), np.full(3000, 10.0))
    np.testing.assert_array_equal(field.at([5.0], [7.0]), field.at([5.0], [7.0]))
    far = np.mean(field.at([0.0], [0.0]) * field.at([200.0], [0.0]))  # 20 d_corr: exp(-20)
    assert abs(far) < 0.05


def _cluster_lattice(isd_m=500.0):
    from netsim.radio import multicell

    return multicell.wrap_shifts(isd_m)[1:3]  # the 19-site wrap-around torus's lattice vectors


@pytest.mark.parametrize("correlation_m", [7.0, 50.0])  # Table 7.5-6, UMa O2I and NLOS shadow fading
def test_a_field_on_the_torus_is_periodic_and_still_exponential(correlation_m):
    rng = np.random.default_rng(5)
    lattice = _cluster_lattice()
    field = ExponentialField.draw(rng, np.full(1500, correlation_m), period_m=lattice)
    x, y = rng.uniform(-1200.0, 1200.0, (2, 40))
    here = field.at(x, y)
    for a in lattice:  # the same point of the torus: the same value, but for the rare waves of wavelength
        # far below a metre, whose single-precision phase at kilometres is noise (see the module's docstring)
        assert np.mean(np.abs(field.at(x + a[0], y + a[1]) - here) < 2e-2) > 0.99
    _assert_exponential(field, rng, x, y, correlation_m)


@pytest.mark.parametrize("r_m", [0.25, 1.0, 4.0])  # below, at and above a 100 ms reading's 0.83 m at 30 km/h
def test_metre_scale_roughness_is_the_exponentials(r_m):
    """The field is as rough at metre scale as exp(-d / d_corr) says, not rougher: the mean square
    increment over r is 2 (1 - exp(-r / d)) (the wave numbers' heavy tail is the exponential's)."""
    rng = np.random.default_rng(8)
    field = ExponentialField.draw(rng, np.full(4000, 50.0))
    x, y = rng.uniform(-1000.0, 1000.0, (2, 20))
    angle = rng.uniform(0.0, 2.0 * np.pi, 20)
    step = field.at(x + r_m * np.cos(angle), y + r_m * np.sin(angle)) - field.at(x, y)
    assert np.mean(step**2) / 2.0 == pytest.approx(1.0 - np.exp(-r_m / 50.0), rel=0.2)
