"""Channel-aware stream formation: airtime of a partition, the silhouette bound, never worse
than eq. 11's clustering; the base station's multicast airtime estimate."""

import math

import numpy as np
import pytest

from learning.stream_formation import channel_aware_clusters, rows_silhouette, streams_airtime
from learning.weights import kmeans_rows
from netsim.radio.cell import Cell, CellLayout
from netsim.radio.physical import LinkBudget, PhysicalSystem


def weakest_member(rates):
    """Airtime per bit of a group: 1 / its smallest rate."""
    return lambda devices: 1.0 / min(rates[d] for d in devices)


def test_streams_airtime_sums_the_weakest_members():
    rates = [1.0, 2.0, 4.0, 8.0]
    assert streams_airtime(np.array([0, 0, 1, 1]), weakest_member(rates)) == pytest.approx(1 / 1 + 1 / 4)
    assert streams_airtime(np.array([0, 1, 0, 1]), weakest_member(rates)) == pytest.approx(1 / 1 + 1 / 2)


def two_group_weights():
    """Six devices, two groups by their rows of W (0-2 and 3-5), a little noise."""
    rng = np.random.default_rng(0)
    w = np.zeros((6, 6))
    w[:3, :3] = 1 / 3
    w[3:, 3:] = 1 / 3
    w += rng.uniform(0, 0.02, w.shape)
    return w / w.sum(axis=1, keepdims=True)


def test_formation_trades_airtime_for_silhouette_within_the_bound():
    w = two_group_weights()
    # the slow devices are 0 and 3, one in each similarity group: eq. 11 pays for both
    rates = [1.0, 10.0, 10.0, 1.0, 10.0, 10.0]
    airtime = weakest_member(rates)
    labels, _ = kmeans_rows(w, 2, 0)
    base = streams_airtime(labels, airtime)
    assert base == pytest.approx(2.0)
    tight, w_tight = channel_aware_clusters(w, 2, airtime, 0, silhouette_loss=0.0)
    assert tight.airtime_s_per_bit == pytest.approx(base) and tight.silhouette >= tight.similarity_silhouette - 1e-12
    loose, w_loose = channel_aware_clusters(w, 2, airtime, 0, silhouette_loss=2.0)
    # the slow pair in one stream: 1/1 + 1/10
    assert loose.airtime_s_per_bit == pytest.approx(1.1)
    assert loose.labels[0] == loose.labels[3] and loose.silhouette < loose.similarity_silhouette
    assert len(np.unique(w_loose, axis=0)) == 2 and np.allclose(w_loose.sum(axis=1), 1)
    for loss in (0.0, 0.1, 0.3, 0.6, 2.0):
        formed, _ = channel_aware_clusters(w, 2, airtime, 0, silhouette_loss=loss)
        assert formed.airtime_s_per_bit <= base + 1e-12
        assert rows_silhouette(w, formed.labels) >= formed.similarity_silhouette - loss - 1e-12


def physical(snr_db, fading="none", outage=None, seed=None):
    n = len(snr_db)
    loss = 30.0 + 114.0 - np.asarray(snr_db, dtype=float)  # 1 W, 1 MHz, NF 0: noise -114 dBm
    layout = CellLayout(np.full(n, 50.0), np.zeros(n), np.ones(n, bool), np.zeros(n), loss)
    system = PhysicalSystem(Cell(distances_m=(50.0,) * n), LinkBudget(1e6, 1.0, 0.0), LinkBudget(1e6, 1.0, 0.0),
                            fading=fading, min_bps_per_hz=None if outage is None else math.log2(1 + 10 ** (outage / 10)))
    return system.network(layout, np.zeros(n), None if seed is None else np.random.default_rng(seed))


def test_multicast_airtime_estimate():
    net = physical([0.0, 10 * math.log10(3), 20.0], outage=2.0)
    # no fading: 1 / rate of the weakest member not in outage (device 0 at 0 dB is in outage)
    assert net.multicast_airtime_s_per_bit((1, 2)) == pytest.approx(1 / 2e6)
    assert net.multicast_airtime_s_per_bit((0, 1)) == pytest.approx(1 / 2e6)
    assert net.multicast_airtime_s_per_bit((0,)) == math.inf
    faded = physical([20.0, 20.0, 20.0], fading="rayleigh", outage=0.0, seed=1)
    one, three = faded.multicast_airtime_s_per_bit((0,)), faded.multicast_airtime_s_per_bit((0, 1, 2))
    # E[1 / log2(1 + 100 X)] over X ~ Exp(1) with X >= 1/100 (outage below 0 dB), numerically
    x = np.linspace(0.01, 40, 400001)
    density = np.exp(-x) / np.exp(-0.01)
    expected = np.trapezoid(density / np.log2(1 + 100 * x), x) / 1e6
    assert one == pytest.approx(expected, rel=0.05)
    assert three > one  # the weakest of three fades is deeper


def test_user_centric_channel_formation_needs_a_cell():
    from tiny_learners import build, scalar_data

    with pytest.raises(ValueError, match="formation=channel needs a physical cell"):
        build("user-centric", scalar_data([[1.0], [2.0], [3.0]]), streams=2, formation="channel")
    with pytest.raises(ValueError, match="formation must be one of"):
        build("user-centric", scalar_data([[1.0], [2.0], [3.0]]), streams=2, formation="fastest")
