"""Simulated round times against the paper's closed form (journal V-D)."""

import numpy as np
import pytest

from netsim import NetworkSystem, ShiftedExponential, expected_round_time_barrier, harmonic_number, simulate_rounds
from scenarios.cli.round_time import MODEL_BITS, round_plan
from tests.shannon_link import SHANNON_ARGS


def durations(devices, streams, mode, rounds, seed=0, **system):
    records, _ = simulate_rounds([round_plan(devices, streams)] * rounds, NetworkSystem(mode=mode, **system), MODEL_BITS, np.random.default_rng(seed),
                                 keep_trace=False)  # the times alone (tests/test_timeline.py: the trace changes none)
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


def test_round_time_on_a_cell_is_hand_computed(capsys):
    """Two LOS devices at 20 m of the UMi TDD cell, no shadowing or fading: both links at the
    CQI-15 cap (5.5547 bit/s/Hz; SNR 72.6 dB down, 55.6 dB up at full power), on the DDDSU shares 52/70 and
    16/70 of 20 MHz, 51 resource blocks, NR overheads; a 1 Mbit broadcast, 2e4 x 100 cycles at 1 GHz (2 ms), two 1 Mbit uploads."""
    import json

    from scenarios.cli.main import main

    argv = ["round-time", "--system", "umi-3.5ghz", "--devices", "2", "--rounds", "3", "--json",
            "--radio", "interference=off", "--radio", "distances_m=20,20", "--radio", "los=los", "--radio", "shadowing=false", "--radio", "fading=none",
            "--radio", "ul_power_control=off", "--radio", "power_unit_w=0", *SHANNON_ARGS]  # radiated power only (no device states)
    assert main(argv) == 0
    data = json.loads(capsys.readouterr()[0])
    # data rates: 20 MHz x 51 x 12 x 30 kHz / 20 MHz occupied x (1 - OH), OH 0.14 down, 0.08 up (TS 38.306)
    t_dl = 1e6 / (20e6 * 5.5547 * 52 / 70 * 0.918 * 0.86)
    t_ul = 1e6 / (20e6 * 5.5547 * 16 / 70 * 0.918 * 0.92)
    assert data["simulated_mean_s"] == pytest.approx(t_dl + 2e-3 + 2 * t_ul)
    # per device: compute 1e-28 x 2e6 cycles x (1e9)^2 = 2e-4 J, upload 23 dBm (0.19953 W) x its
    # time on the air, the uplink symbols of t_ul: 16/70 t_ul
    assert data["energy_j_per_device_round"] == pytest.approx(2e-4 + 10 ** 2.3 / 1000 * 16 / 70 * t_ul)
    assert data["arrived_fraction"] == 1.0 and data["duplex"] == "tdd"
    for bad, needle in ((["--rho", "2"], "--rho applies to the normalized systems"),
                        (["--radio", "bs_power_w=-1"], "radio bs_power_w must be a finite number in [1e-09, 10000], got -1")):
        assert main(argv[:7] + bad) == 2
        err = capsys.readouterr()[1]
        assert needle in err and len(err.strip().splitlines()) == 1


def test_round_time_on_a_moving_cell_is_the_runs_network(capsys):
    """``round-time`` binds the cell as a run does: ``speed_kmh`` moves the devices (it used to be
    read and ignored), and the times are those of ``simulate_rounds`` on ``PhysicalSystem.bind``'s
    network; speed 0 is the static cell's numbers."""
    import json

    from scenarios.cli.main import main
    from scenarios.cli.round_time import CELL_MODEL_BITS, CELL_SAMPLES
    from scenarios.definitions.cells import get_cell_system
    from scenarios.definitions.seeds import seed_streams
    from scenarios.cli.common import parse_options

    found = {}
    for speed in ("0", "30"):
        argv = ["round-time", "--system", "uma-3.5ghz", "--devices", "8", "--rounds", "3", "--json", "--radio", f"speed_kmh={speed}"]
        assert main(argv) == 0
        found[speed] = json.loads(capsys.readouterr()[0])["simulated_mean_s"]
        system = get_cell_system("uma-3.5ghz", "barrier", None, parse_options([f"speed_kmh={speed}"], "--radio"))
        network_seq = seed_streams(0).network
        network, channel_rng = system.bind(np.full(8, CELL_SAMPLES), network_seq)
        records, _ = simulate_rounds([round_plan(8, 1, CELL_MODEL_BITS)] * 3, network, CELL_MODEL_BITS, np.random.default_rng(network_seq),
                                     keep_trace=False, channel_rng=channel_rng)
        assert found[speed] == pytest.approx(np.mean([r.duration for r in records]), rel=1e-12)
    assert found["30"] != found["0"]
