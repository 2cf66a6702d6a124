"""Semi-asynchronous tiered aggregation, FedAT (``netsim.clock.tiered``, ``learning.asynchronous.TieredServer``):
a new orchestrator on the buffered lifecycle. One tier is synchronous FedAvg; two tiers by hand;
the tiering by latency; the lifecycle's invariants on a cell in time."""

from __future__ import annotations

import numpy as np
import pytest

from learning.asynchronous import TieredServer
from netsim import NetworkSystem
from netsim.clock.engine import RunOptions, run_cosimulation
from netsim.normalized.scripted import Scripted, ScriptedSystem
from netsim.clock.tiered import Tiered, expected_latency_s, latency_tiers, run_tiered
from scenarios.definitions.cells import get_cell_system
from tests.test_buffered_dynamics import Ledger, check_invariants
from tests.tiny_learners import build, scalar_data, values


def test_one_tier_is_fedavg_in_pipelined_rounds():
    """M = 1: every round sends the global model to every device and ends with the last
    update; FedAT's cross-tier sum is the tier's FedAvg: the synchronous pipelined run, draw
    for draw, the same models."""
    data = scalar_data([[1.0, 2.0], [4.0], [6.0, 7.0, 8.0], [10.0]])
    fedavg = build("fedavg", data)
    rounds, _ = run_cosimulation(fedavg, NetworkSystem(rho=0.5, t_min=1.0, inv_mu=2.0), 3, np.random.default_rng(5))
    fedat = build("fedavg", data)
    tiers = ((0, 1, 2, 3),)
    versions, _ = run_tiered(TieredServer(fedat, tiers), NetworkSystem(rho=0.5, t_min=1.0, inv_mu=2.0), Tiered(tiers), 3,
                             np.random.default_rng(5))
    assert [(v.start, v.end) for v in versions] == [(r.start, r.end) for r in rounds]
    np.testing.assert_allclose(values(fedat.theta), values(fedavg.theta), rtol=1e-6)


def test_two_tiers_by_hand():
    """Four devices (means 10, 20, 30, 40, one sample each; local step y = x + 0.2 (mean - x)),
    tiers (0, 1) and (2, 3), T_dl = T_ul = 1 on TDMA links. Tier 0 computes 1, tier 1 5.

    t=0-1 v0 to tier 0, 1-2 to tier 1. Tier 0 uploads 2-3, 3-4: w_0 = (2 + 4) / 2 = 3, T = (1, 0),
    v1 = (T_2 / T) w_0 + (T_1 / T) w_1 = 0 x 3 + 1 x 0 = 0 (tier 1's model: still the initial one).
    v1 to tier 0 4-5, computes 5-6, uploads 6-7, 7-8: v2 = 0 again. Tier 1 is done at 7 and
    uploads 8-9, 9-10 (behind device 1): w_1 = (6 + 8) / 2 = 7, T = (2, 1),
    v3 = (1/3) x 3 + (2/3) x 7 = 17/3, its updates two versions stale."""
    data = scalar_data([[10.0], [20.0], [30.0], [40.0]])
    system = ScriptedSystem(rho=1.0, t_min=0.0, inv_mu=0.0, script=Scripted([1, 1, 5, 5, 1, 1, 1, 1, 5, 5, 9, 9]))
    learner = build("fedavg", data)
    tiers = ((0, 1), (2, 3))
    versions, trace = run_tiered(TieredServer(learner, tiers), system, Tiered(tiers), 3, np.random.default_rng(0))
    assert [(v.server_round, v.end, v.arrived, [u.staleness(v.server_round - 1) for u in v.updates]) for v in versions[1:]] == [
        (1, 4.0, (0, 1), [0, 0]), (2, 8.0, (0, 1), [0, 0]), (3, 10.0, (2, 3), [2, 2])]
    assert [(e.entity, e.start, e.end) for e in trace if e.kind == "uplink"] == [
        (0, 2, 3), (1, 3, 4), (0, 6, 7), (1, 7, 8), (2, 8, 9), (3, 9, 10)]
    np.testing.assert_allclose(values(learner.theta), [17 / 3] * 4, rtol=1e-6)


def test_tiers_split_the_devices_sorted_by_expected_latency():
    assert latency_tiers([3.0, 1.0, 2.0, 1.0], 2) == ((1, 3), (0, 2))
    assert latency_tiers([3.0, 1.0, 2.0], 2) == ((1, 2), (0,))
    with pytest.raises(ValueError, match=r"tiers must be in 1..3"):
        latency_tiers([3.0, 1.0, 2.0], 4)
    with pytest.raises(ValueError, match="each of the 3 devices once"):
        Tiered(((0, 1), (1, 2))).check(3)
    network, _ = get_cell_system("umi-3.5ghz").bind(np.full(6, 100.0), np.random.SeedSequence(0))
    latency = expected_latency_s(network, 6, 1e6)
    assert latency.shape == (6,) and np.all(latency > network.expectations(6, 1e6, 1e6).compute_s)
    assert np.all(expected_latency_s(NetworkSystem(rho=2.0, t_min=1.0, inv_mu=0.5), 3, 1e6) == 1.0 + 0.5 + 1.0 + 2.0)


@pytest.mark.parametrize("radio", [{}, {"speed_kmh": 30.0, "mean_on_s": 20.0, "mean_off_s": 20.0, "battery_j": 0.2}])
def test_fedat_on_a_cell_in_time_keeps_the_lifecycle_invariants(radio):
    network, channel_rng = get_cell_system("umi-3.5ghz", overrides=radio).bind(np.full(6, 100.0), np.random.SeedSequence(5))
    tiers = latency_tiers(expected_latency_s(network, 6, 2e5), 2)
    trace = []
    ledger = Ledger(6, 2e5, trace)
    versions, _ = run_tiered(ledger, network, Tiered(tiers), 20, np.random.default_rng(0), RunOptions(channel_rng=channel_rng), trace)
    check_invariants(versions, trace, ledger, network.dynamics, capacity_j=radio.get("battery_j"))
    assert all(len({t for t, tier in enumerate(tiers) if set(v.arrived) & set(tier)}) == 1 for v in versions[1:])  # one tier each
