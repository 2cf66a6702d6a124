"""Buffered asynchronous aggregation on the clock (``netsim.clock.buffered``, ``learning.asynchronous``):
event traces with fixed durations, the synchronous round as its special case, renewal theory."""

from __future__ import annotations

import dataclasses
import math
import types

import numpy as np
import pytest
import simpy

from learning.asynchronous import AsyncRule, BufferedServer
from netsim import NetworkSystem
from netsim.clock.budget import Budget
from netsim.radio.cell import Cell, CellLayout
from netsim.clock.buffered import Buffered, NetworkOnly, run_buffered
from netsim.clock.engine import RunOptions, run_cosimulation
from netsim.radio.physical import LinkBudget, PhysicalSystem
from netsim.normalized.scripted import Scripted, ScriptedSystem
from netsim.transport.media import ResourceBlocks, Tdma, Transfer
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


def test_a_device_that_reports_twice_before_k_arrivals_is_in_the_buffer_twice():
    """FedBuff buffers updates, not devices (Nguyen et al. 2022, Alg. 1). Four devices, K = 3,
    T_dl = T_ul = 1 on unshared links, one sample each (means 10, 20, 30, 40), eta_g = 1,
    s(tau) = (1 + tau)^-1/2; compute 1, 1, 1, 1.5 (version 0), then 10, 11, 12 (devices 0-2,
    version 1) and 0.5 (device 3, version 1).

    t=0-1 v0 to all; d0-d2 upload 2-3: v1 at 3 (x1 = (2 + 4 + 6) / 3 = 4), v1 to d0-d2 3-4.
    t=3.5 d3 arrives from v0 (tau 1), is sent v1 3.5-4.5, computes 4.5-5, arrives again 6 (tau 0).
    t=15 d0 arrives (from v1): the third update, v2 = x1 + (8 / sqrt 2 + 0.2 (40 - 4) + 0.2 (10 - 4)) / 3."""
    data = scalar_data([[10.0], [20.0], [30.0], [40.0]])
    system = ScriptedSystem(rho=1.0, t_min=0.0, inv_mu=0.0, script=Scripted([1, 1, 1, 1.5, 10, 11, 12, 0.5, 9, 9, 9, 9]))
    learner = build("fedavg", data)
    settings = Buffered(3, downlink_access="unshared", uplink_access="unshared")
    versions, _ = run_buffered(BufferedServer(learner, AsyncRule("fedbuff")), system, settings, 2, np.random.default_rng(0))
    assert [(v.server_round, v.end, [(u.device, u.base_version, u.sequence) for u in v.updates]) for v in versions[1:]] == [
        (1, 3.0, [(0, 0, 0), (1, 0, 1), (2, 0, 2)]), (2, 15.0, [(3, 0, 3), (3, 1, 4), (0, 1, 5)])]
    np.testing.assert_allclose(values(learner.theta), [4 + (8 / math.sqrt(2) + 7.2 + 1.2) / 3] * 4, rtol=1e-6)


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
    from netsim.clock.buffered import BufferedRun

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


def test_on_a_cell_two_narrow_grants_send_side_by_side_and_a_whole_band_one_waits():
    """The 51-block sector of ``test_physical_engine``'s headroom grants (20 MHz at 30 kHz, 30 dBm
    uplink, no fading, outage floor 1 bit/s/Hz), its downlink 20 dB stronger (50 dBm); no compute. Whole-band
    uplink SNR -4, -4 and 3 dB: grants of 20, 20 and 51 blocks. One broadcast of version 0
    (16 dB at the weakest), then all three ask at once: devices 0 and 1 send side by side (40
    of 51 blocks), device 2 (the whole band) starts when both gave theirs back; K = 3 aggregates then."""
    snr_db = np.array([-4.0, -4.0, 3.0])
    loss = 30.0 + 174.0 - 10 * math.log10(20e6) - snr_db
    layout = CellLayout(np.full(3, 50.0), np.zeros(3), np.ones(3, bool), np.zeros(3), loss)
    system = PhysicalSystem(Cell(distances_m=(50.0,) * 3), LinkBudget(20e6, 100.0, 0.0), LinkBudget(20e6, 1.0, 0.0),
                            fading="none", min_bps_per_hz=1.0, max_bps_per_hz=6.0, subcarrier_spacing_hz=30e3,
                            bandwidth_occupancy=51 * 12 * 30e3 / 20e6, ul_allocation="headroom")
    net = system.network(layout, np.zeros(3))
    assert net.draw_round(np.random.default_rng(0)).allocated_prbs.tolist() == [20, 20, 51]

    def rate(m, snr):
        return 12 * 30e3 * m * math.log2(1 + 10 ** (snr / 10) * 51 / m)

    versions, trace = run_buffered(NetworkOnly(3, 1e6), net, Buffered(3), 1, np.random.default_rng(0),
                                   RunOptions(channel_rng=np.random.default_rng(1)))
    down = 1e6 / rate(51, 16.0)
    narrow, whole = down + 1e6 / rate(20, -4.0), 1e6 / rate(51, 3.0)
    uploads = [(e.entity, e.start, e.end) for e in trace if e.kind == "uplink"]
    assert uploads == [(0, pytest.approx(down), pytest.approx(narrow)), (1, pytest.approx(down), pytest.approx(narrow)),
                       (2, pytest.approx(narrow), pytest.approx(narrow + whole))]
    assert versions[1].arrived == (0, 1, 2) and versions[1].end == pytest.approx(narrow + whole)


class OneSector:
    """A cell's links by hand: one receiver of 2 blocks, every upload granted 1 (two send side by
    side); a stream takes 1 s, device d's upload ``upload_s[d]``; receiving 0.5 W, sending 1 W,
    compute free and as long as its draw."""

    uplink_queue = (0, 0)
    band_prbs = 2
    downlink_access = uplink_access = "tdma"

    def __init__(self, upload_s):
        self.upload_s = upload_s

    def downlink_medium(self, env):
        return ResourceBlocks(env, 1)

    def uplink_medium(self, env):
        return ResourceBlocks(env, self.band_prbs)

    def receives(self, device):
        return True

    def can_upload(self, device, uploading=False):
        return True

    segmented = False

    def stream_s(self, devices, bits, start_s=None):
        return 1.0

    def plan_downlink(self, streams, start_s):
        pass

    def uplink_s(self, device, bits, start_s=None):
        return self.upload_s[device]

    def upload(self, device, bits, start_s=None):
        return Transfer(self.upload_s[device], False, bits)

    def grant_prbs(self, device):
        return 1

    def compute_s(self, device, draw, scale):
        return draw

    def compute_j(self, device, scale):
        return 0.0

    def transmit_j(self, device, airtime_s, start_s=None):
        return airtime_s

    def receive_j(self, device, listening_s):
        return 0.5 * listening_s


@dataclasses.dataclass
class HandCell:
    """The cell around ``OneSector``: a TDMA uplink, no deadline, scripted compute, its waiting power."""

    idle_power_w: float
    compute: Scripted
    system = types.SimpleNamespace(uplink_access="tdma")
    deadline = None
    records_energy = True


@pytest.mark.parametrize("idle_power_w", [0.25, 0.0])
def test_waiting_on_a_cell_is_charged_per_interval_with_a_straddling_upload_split(monkeypatch, idle_power_w):
    """FedAsync, two devices, computes 1 and 1.5 s (version 0), then 1 s (device 0, version 1)
    and 9 s (device 1, version 2: the run has ended);
    uploads 1 s (device 0) and 2 s (device 1), side by side on the sector.

    t=0-1 version 0 to both; device 0 computes 1-2, uploads 2-3; device 1 computes 1-2.5, uploads
    2.5-4.5. t=3 device 0 arrives: version 1 (interval 0-3); version 1 to device 0 3-4. t=4.5
    device 1 arrives: version 2 (interval 3-4.5), the last.
    Waiting at 0.25 W, per interval: device 0, 3 - 1 - 1 = 1 s (0.25 J), then 1.5 - 1 = 0.5 s
    (0.125 J); device 1, 3 - 1 - 0.5 = 1.5 s (0.375 J: its upload's 2.5-3 only), then
    1.5 - 1.5 = 0 (its upload's 3-4.5): 1.5 s in all, its 4.5 s less 1 s receiving and 2 s
    sending. Zero waiting power: no ``idle`` events, the same other energies."""
    from netsim.clock.buffered import BufferedRun

    monkeypatch.setattr(BufferedRun, "_draw_links", lambda run: OneSector({0: 1.0, 1: 2.0}))
    cell = HandCell(idle_power_w, Scripted([1.0, 1.5, 1.0, 9.0]))
    versions, trace = run_buffered(NetworkOnly(2, 1.0), cell, Buffered(1), 2, np.random.default_rng(0),
                                   RunOptions(channel_rng=np.random.default_rng(1)))
    assert [(e.entity, e.start, e.end) for e in trace if e.kind == "uplink"] == [(0, 2.0, 3.0), (1, 2.5, 4.5)]
    assert [(v.server_round, v.start, v.end) for v in versions[1:]] == [(1, 0.0, 3.0), (2, 3.0, 4.5)]
    idle = [(e.round, e.entity, e.start, e.end, e.energy_j) for e in trace if e.kind == "idle"]
    waiting = {(1, 0): 0.25, (1, 1): 0.375, (2, 0): 0.125, (2, 1): 0.0} if idle_power_w else {}
    assert idle == [(r, d, *((0.0, 3.0) if r == 1 else (3.0, 4.5)), j) for (r, d), j in waiting.items()]
    # receive 0.5 W x 1 s per stream, transmit 1 W x airtime in the interval the upload ends in
    assert versions[1].energy_j == {0: 0.5 + 1.0 + waiting.get((1, 0), 0.0), 1: 0.5 + waiting.get((1, 1), 0.0)}
    assert versions[2].energy_j == {0: 0.5 + waiting.get((2, 0), 0.0), 1: 2.0 + waiting.get((2, 1), 0.0)}
    with pytest.raises(ValueError, match="leave the access schemes tdma"):
        run_buffered(NetworkOnly(2, 1.0), cell, Buffered(1, uplink_access="unshared"), 2, np.random.default_rng(0),
                     RunOptions(channel_rng=np.random.default_rng(1)))
