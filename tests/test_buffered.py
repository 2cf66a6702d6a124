"""Buffered asynchronous aggregation on the clock (``netsim.buffered``, ``learning.asynchronous``):
event traces with fixed durations, the synchronous round as its special case, renewal theory."""

from __future__ import annotations

import math

import numpy as np
import pytest
import simpy

from learning.asynchronous import AsyncRule, BufferedServer
from netsim import NetworkSystem
from netsim.budget import Budget
from netsim.buffered import Buffered, NetworkOnly, run_buffered
from netsim.engine import RunOptions, run_cosimulation
from netsim.scripted import Scripted, ScriptedSystem
from netsim.transport import Tdma
from tests.tiny_learners import build, scalar_data, values


def test_tdma_grants_one_transfer_at_a_time_first_come_first_served():
    env = simpy.Environment()
    medium, ends = Tdma(env), []

    def transfer(name, ready, airtime):
        yield env.timeout(ready)
        start = yield medium.transmit(airtime)
        ends.append((name, start, env.now))

    for name, ready, airtime in (("a", 0, 2), ("b", 0, 1), ("c", 0.5, 1), ("d", 5, 1)):
        env.process(transfer(name, ready, airtime))
    env.run()
    assert ends == [("a", 0, 2), ("b", 2, 3), ("c", 3, 4), ("d", 5, 6)]


@pytest.mark.parametrize("mode", ["pipelined", "barrier"])
def test_fedbuff_with_k_n_and_no_staleness_weight_is_the_fedavg_run(mode):
    """K = N, full concurrency, s = 1, eta_g = 1: every version goes to everyone in one broadcast
    and is aggregated when the last update arrived: FedAvg's models; on the pipelined system (no
    barrier inside the round: a device uploads when it is done) the same clock, draw for draw."""
    data = scalar_data([[1.0, 2.0], [4.0], [6.0, 7.0, 8.0], [10.0]])
    system = NetworkSystem(rho=0.5, t_min=1.0, inv_mu=2.0, mode=mode)
    fedavg = build("fedavg", data)
    rounds, _ = run_cosimulation(fedavg, system, 3, np.random.default_rng(5))
    fedbuff = build("fedavg", data)
    server = BufferedServer(fedbuff, AsyncRule("fedbuff", server_lr=1.0, staleness_exponent=0.0))
    versions, trace = run_buffered(server, NetworkSystem(rho=0.5, t_min=1.0, inv_mu=2.0), Buffered(4), 3, np.random.default_rng(5))
    assert [v.server_round for v in versions] == [0, 1, 2, 3]
    assert all(v.arrived == (0, 1, 2, 3) and v.num_streams == 1 for v in versions[1:])
    assert all(u.staleness(v.server_round - 1) == 0 for v in versions for u in v.updates)
    np.testing.assert_allclose(values(fedbuff.theta), values(fedavg.theta), rtol=1e-6)
    assert [e.kind for e in trace if e.kind == "downlink"] == ["downlink"] * 3  # one broadcast per version
    if mode == "pipelined":
        assert [(v.start, v.end) for v in versions] == [(r.start, r.end) for r in rounds]
    else:  # the barrier waits for the slowest before anyone uploads: FedBuff's rounds end no later
        assert all(v.end <= r.end for v, r in zip(versions, rounds)) and versions[-1].end < rounds[-1].end


def test_a_three_device_fedasync_trace_by_hand():
    """T_dl = T_ul = 1, one sample per device (means 10, 20, 30), local SGD x + 0.2 (mean - x),
    alpha = 0.5, s(tau) = (1 + tau)^-1/2, compute times 1, 2, 4 (version 0), then 3 (device 0,
    version 1), 1.5 (device 1, version 2), 2 (device 2, version 3).

    t=0-1 version 0 broadcast; computes end at 2, 3, 5; uploads 2-3 (d0), 3-4 (d1), 5-6 (d2).
    t=3 d0 arrives (from v0, tau 0): v1; v1 to d0 3-4, computes 4-7, waits for d1, uploads 7.5-8.5.
    t=4 d1 arrives (v0, tau 1): v2; v2 to d1 4-5, computes 5-6.5, uploads 6.5-7.5.
    t=6 d2 arrives (v0, tau 2): v3; v3 to d2 6-7, computes 7-9, uploads 9-10.
    t=7.5 d1 arrives (v2, tau 1): v4, the last asked for: the run ends there (d0's upload unfinished).
    """
    data = scalar_data([[10.0], [20.0], [30.0]])
    system = ScriptedSystem(rho=1.0, t_min=0.0, inv_mu=0.0, script=Scripted([1, 2, 4, 3, 1.5, 2, 9, 9, 9]))
    learner = build("fedavg", data)
    rule = AsyncRule("fedasync", mixing_alpha=0.5, staleness_exponent=0.5)
    versions, trace = run_buffered(BufferedServer(learner, rule), system, Buffered(1), 4, np.random.default_rng(0))
    events = [(e.kind, e.entity, e.start, e.end) for e in trace if e.kind in ("downlink", "uplink")]
    assert events == [("downlink", 0, 0, 1), ("uplink", 0, 2, 3), ("uplink", 1, 3, 4), ("downlink", 1, 3, 4),
                          ("downlink", 2, 4, 5), ("uplink", 2, 5, 6), ("downlink", 3, 6, 7), ("uplink", 1, 6.5, 7.5)]
    assert [(v.server_round, v.end, v.arrived, [u.base_version for u in v.updates]) for v in versions[1:]] == [
        (1, 3, (0,), [0]), (2, 4, (1,), [0]), (3, 6, (2,), [0]), (4, 7.5, (1,), [2])]
    a = lambda tau: 0.5 / math.sqrt(1 + tau)  # noqa: E731
    x1 = 0.5 * 0 + 0.5 * 2.0  # d0 from 0: 0 + 0.2 * 10
    x2 = (1 - a(1)) * x1 + a(1) * 4.0  # d1 from 0: 0.2 * 20
    x3 = (1 - a(2)) * x2 + a(2) * 6.0  # d2 from 0: 0.2 * 30
    x4 = (1 - a(1)) * x3 + a(1) * (x2 + 0.2 * (20 - x2))  # d1 from the model of version 2
    np.testing.assert_allclose(values(learner.theta), [x4] * 3, rtol=1e-6)


def test_arrivals_under_full_asynchrony_match_renewal_theory():
    """No contention on either link, K = 1, every device always training: each device's updates
    are a renewal process of cycle T_dl + T_min + Exp(mu) + rho T_dl, so updates arrive at rate
    N / E[cycle] (the elementary renewal theorem); measured over 10,000 arrivals."""
    system = NetworkSystem(rho=2.0, t_min=3.0, inv_mu=1.5)
    devices, arrivals = 10, 10_000
    settings = Buffered(1, downlink_access="unshared", uplink_access="unshared")
    versions, _ = run_buffered(NetworkOnly(devices, 1e6), system, settings, arrivals, np.random.default_rng(1))
    cycle = system.t_dl + system.t_min + system.inv_mu + system.t_ul
    rate = arrivals / versions[-1].end
    assert rate == pytest.approx(devices / cycle, rel=0.01)
    assert len(versions) == arrivals + 1


def test_a_shared_uplink_makes_updates_wait_and_arrive_more_slowly():
    """The same system with a TDMA uplink (rho T_dl = 2 per update, 10 devices): at most one
    update per 2 T_dl, below the renewal rate 10 / 7.5."""
    system = NetworkSystem(rho=2.0, t_min=3.0, inv_mu=1.5)
    versions, _ = run_buffered(NetworkOnly(10, 1e6), system, Buffered(1, downlink_access="unshared"), 2000, np.random.default_rng(1))
    assert 2000 / versions[-1].end <= 1 / system.t_ul


@pytest.mark.parametrize("orchestrator", ["sync", "fedbuff"])
def test_a_time_budget_stops_the_clock_there_and_keeps_only_what_finished(orchestrator):
    data = scalar_data([[1.0], [2.0], [3.0]])
    system = NetworkSystem(rho=1.0, t_min=1.0, inv_mu=1.0)
    budget = Budget({"time": 9.5})
    learner = build("fedavg", data)
    options = RunOptions(budget=budget)
    if orchestrator == "sync":
        records, _ = run_cosimulation(learner, system, 100, np.random.default_rng(2), options)
    else:
        records, _ = run_buffered(BufferedServer(learner, AsyncRule()), system, Buffered(2), 100, np.random.default_rng(2), options)
    assert budget.stopped == "time" and records[-1].end <= 9.5 < records[-1].end + 10
    assert budget.summary(9.5) == {"reason": "budget", "budget": "time", "limit": 9.5, "spent": 9.5}


def test_an_uplink_bits_budget_stops_after_the_round_that_reaches_it():
    data = scalar_data([[1.0], [2.0], [3.0]])
    learner = build("fedavg", data)
    budget = Budget({"uplink_bits": 7 * learner.model_bits})  # 3 a round: reached in round 3
    records, _ = run_cosimulation(learner, NetworkSystem(rho=1.0, t_min=1.0, inv_mu=0.0), 100, np.random.default_rng(2),
                                  RunOptions(budget=budget))
    assert records[-1].server_round == 3 and budget.stopped == "uplink_bits"
    assert budget.summary(records[-1].end)["spent"] == 9 * learner.model_bits


def test_bad_settings_and_algorithms_are_refused():
    data = scalar_data([[1.0], [2.0], [3.0]])
    system = NetworkSystem(rho=1.0, t_min=1.0, inv_mu=0.0)
    with pytest.raises(ValueError, match="buffer K must be in 1..2"):
        run_buffered(BufferedServer(build("fedavg", data), AsyncRule()), system, Buffered(3, concurrency=2), 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="one global model"):
        BufferedServer(build("local", data), AsyncRule())
    with pytest.raises(ValueError, match="deadline"):
        run_buffered(NetworkOnly(3, 1.0), NetworkSystem(rho=1.0, t_min=1.0, inv_mu=0.0, deadline=5.0), Buffered(1), 1,
                     np.random.default_rng(0))
    with pytest.raises(ValueError, match="unknown budget"):
        Budget({"rounds": 3})


class Deaf:
    """Links where ``deaf`` devices are in downlink outage (they never get a model)."""

    def __init__(self, links, deaf):
        self.links, self.deaf = links, set(deaf)

    def __getattr__(self, name):
        return getattr(self.links, name)

    def receives(self, device: int) -> bool:
        return device not in self.deaf


def test_devices_in_outage_are_dropped_and_a_run_nobody_can_train_in_stops_as_stalled(monkeypatch):
    """Devices 1 and 2 never receive: each dispatch drops them (``downlink-outage``), device 0's
    updates alone make the versions (K = 2: with nobody else training, its one update is
    aggregated); with every device deaf the run stops at once, ``stalled``."""
    from netsim.buffered import BufferedRun

    drawn = BufferedRun._draw_links
    monkeypatch.setattr(BufferedRun, "_draw_links", lambda run: Deaf(drawn(run), (1, 2)))
    system = NetworkSystem(rho=1.0, t_min=1.0, inv_mu=0.0)
    versions, trace = run_buffered(NetworkOnly(3, 1.0), system, Buffered(2), 3, np.random.default_rng(0))
    assert [(v.server_round, v.end, v.arrived) for v in versions[1:]] == [(1, 3.0, (0,)), (2, 6.0, (0,)), (3, 9.0, (0,))]
    assert versions[1].outcome.dropped == {1: "downlink-outage", 2: "downlink-outage"}
    monkeypatch.setattr(BufferedRun, "_draw_links", lambda run: Deaf(drawn(run), (0, 1, 2)))
    budget = Budget({})
    versions, _ = run_buffered(NetworkOnly(3, 1.0), system, Buffered(2), 3, np.random.default_rng(0), RunOptions(budget=budget))
    assert len(versions) == 1 and budget.summary(0.0) == {"reason": "stalled"}


@pytest.mark.parametrize("duplex, second", [("full", 4.5), ("half", 5.0)])
def test_on_a_half_duplex_system_an_upload_waits_for_the_stream_on_the_air(duplex, second):
    """Two devices, T_dl = T_ul = 1, compute 1 and 2.5: device 0's update makes v1 at 3 and v1
    goes to it 3-4; device 1 is done at 3.5: full duplex, it uploads 3.5-4.5 beside the
    stream; half duplex, one medium, it waits for the stream to end and uploads 4-5."""
    system = ScriptedSystem(rho=1.0, t_min=0.0, inv_mu=0.0, duplex=duplex, script=Scripted([1, 2.5, 9, 9]))
    versions, _ = run_buffered(NetworkOnly(2, 1.0), system, Buffered(1), 2, np.random.default_rng(0))
    assert [(v.server_round, v.end) for v in versions[1:]] == [(1, 3.0), (2, second)]
