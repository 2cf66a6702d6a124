"""Simulated round times against the paper's closed form (journal V-D)."""

import numpy as np
import pytest

from netsim import NetworkSystem, ShiftedExponential, expected_round_time_barrier, harmonic_number, simulate_rounds
from scenarios.commands.round_time import MODEL_BITS, round_plan


def durations(devices, streams, mode, rounds, seed=0, **system):
    records, _ = simulate_rounds([round_plan(devices, streams)] * rounds, NetworkSystem(mode=mode, **system), MODEL_BITS, np.random.default_rng(seed))
    return np.array([r.duration for r in records])


def test_harmonic_numbers():
    assert harmonic_number(0) == 0 and harmonic_number(1) == 1 and harmonic_number(4) == pytest.approx(25 / 12)


def test_shifted_exponential_knows_its_moments():
    dist = ShiftedExponential(t_min=1.0, inv_mu=2.0)
    draws = dist.sample(np.random.default_rng(1), 200_000)
    assert dist.mean == 3.0 and draws.mean() == pytest.approx(3.0, rel=0.01)
    assert draws.var() == pytest.approx(dist.variance, rel=0.03)
    maxima = dist.sample(np.random.default_rng(2), 5 * 40_000).reshape(-1, 5).max(axis=1)
    assert maxima.mean() == pytest.approx(dist.expected_max(5), rel=0.01)


@pytest.mark.parametrize("devices,streams,rho,t_min,inv_mu", [(20, 1, 4, 1, 1), (20, 20, 4, 1, 1), (10, 4, 2, 1, 0), (50, 5, 1, 0.5, 3)])
def test_barrier_mean_matches_closed_form(devices, streams, rho, t_min, inv_mu):
    simulated = durations(devices, streams, "barrier", 5000, rho=rho, t_min=t_min, inv_mu=inv_mu)
    assert simulated.mean() == pytest.approx(expected_round_time_barrier(streams, devices, rho, t_min, inv_mu), rel=0.01)


def test_reliable_devices_make_round_time_exact():
    simulated = durations(8, 2, "barrier", 10, rho=3, t_min=2, inv_mu=0)
    assert np.all(simulated == expected_round_time_barrier(2, 8, 3, 2, 0))


@pytest.mark.parametrize("devices,streams,rho,inv_mu", [(20, 20, 4, 1), (20, 1, 2, 0), (7, 3, 1, 5)])
def test_pipelined_is_never_slower_than_barrier(devices, streams, rho, inv_mu):
    # same seed: both modes see the same compute draws (common random numbers)
    barrier = durations(devices, streams, "barrier", 300, rho=rho, t_min=1, inv_mu=inv_mu)
    pipelined = durations(devices, streams, "pipelined", 300, rho=rho, t_min=1, inv_mu=inv_mu)
    assert np.all(pipelined <= barrier + 1e-9)
    assert pipelined.mean() < barrier.mean() or streams == 1
