"""Buffered aggregation on a cell in time (``netsim.clock.buffered`` with ``netsim.dynamics``): every
step reads the device's state and the channel when it happens; nothing is silently lost
(dispatched = arrived + dropped with a reason + in flight); the choice of idle devices and the
staleness bound."""

from __future__ import annotations

import math

import numpy as np
import pytest

from learning.asynchronous import AsyncRule, BufferedServer
from netsim.clock.budget import Budget
from netsim.clock.buffered import Buffered, BufferedRun, NetworkOnly, run_buffered
from netsim.dynamics.availability import TraceAvailability
from netsim.dynamics.battery import Batteries
from netsim.dynamics.rounds import Dynamics
from netsim.clock.engine import RunOptions
from netsim.normalized.scripted import Scripted, ScriptedSystem
from netsim.radio.physical_links import SEGMENT_S, PhysicalLinks
from scenarios.definitions.cells import get_cell_system
from tests.shannon_link import SHANNON
from tests.test_buffered import HandCell, OneSector
from tests.tiny_learners import build, scalar_data, values

STEPS = ("receive", "compute", "uplink")


class Ledger(NetworkOnly):
    """A network-only learner that keeps what the orchestrator tells it, with the trace's length
    at each message: the dispatches, the updates that arrived, the aggregations."""

    def __init__(self, num_devices, model_bits, trace):
        super().__init__(num_devices, model_bits)
        self.trace, self.messages = trace, []

    def dispatch(self, message):
        self.messages.append((len(self.trace), "dispatch", message.device, message.version))

    def local_update(self, update):
        self.messages.append((len(self.trace), "update", update.device, update.sequence))

    def aggregate(self, version, updates):
        self.messages.append((len(self.trace), "aggregate", version, tuple(u.sequence for u in updates)))


def check_invariants(versions, trace, ledger, dynamics=None, capacity_j=None):
    """Time monotone; every dispatch ends in exactly one update or one drop with a reason, or is
    in flight at the end; each update aggregated at most once; bits and joules of the recorded
    versions counted once; no device receives, trains or uploads while switched off or flat."""
    assert [v.server_round for v in versions] == list(range(len(versions)))
    assert all(a.end == b.start and b.start <= b.end for a, b in zip(versions, versions[1:]))
    assert all(e.start <= e.end for e in trace)
    assert [e.end for e in trace] == sorted(e.end for e in trace)  # appended as the clock reaches them
    # every dispatch: one outcome
    events = sorted([(at, 1, n, kind, a, b) for n, (at, kind, a, b) in enumerate(ledger.messages)]
                    + [(i + 1, 0, i, "dropped", e.entity, e.reason) for i, e in enumerate(trace) if e.kind == "dropped"])
    outstanding, aggregated, arrived = {}, set(), set()
    for *_, kind, a, b in events:
        if kind == "dispatch":
            assert a not in outstanding  # one dispatch at a time per device
            outstanding[a] = b
        elif kind == "update":
            assert outstanding.pop(a, None) is not None
            arrived.add(b)
        elif kind == "dropped":
            assert b  # a reason
            outstanding.pop(a, None)  # a dispatch lost, or an idle device passed over
        else:
            assert set(b) <= arrived and not set(b) & aggregated
            aggregated |= set(b)
    last = versions[-1].server_round
    kept = [e for e in trace if e.round <= last]
    assert sum(v.downlink_bits for v in versions) == sum(e.bits for e in kept if e.kind == "downlink")
    assert sum(v.uplink_bits for v in versions) == sum(e.bits for e in kept if e.kind == "uplink")
    if versions[-1].energy_j is not None or len(versions) == 1:
        recorded = sum(sum((v.energy_j or {}).values()) for v in versions)
        assert recorded == pytest.approx(sum(e.energy_j for e in kept))
    if dynamics is not None and dynamics.batteries is not None:
        spent = np.zeros(dynamics.batteries.remaining_j.size)
        for e in trace:
            spent[e.entity if e.kind != "downlink" else 0] += e.energy_j if e.kind != "downlink" else 0.0
        np.testing.assert_allclose(dynamics.batteries.remaining_j, capacity_j - spent, atol=1e-12)
    for e in trace:
        if e.kind not in STEPS:
            continue
        if dynamics is not None and dynamics.availability is not None:
            assert dynamics.availability.available(e.start)[e.entity], e
        if capacity_j is not None:
            before = sum(x.energy_j for x in trace if x.entity == e.entity and x.kind != "downlink" and x.end <= e.start)
            assert before < capacity_j, e
    return outstanding


def hand_cell(monkeypatch, script, dynamics, upload_s=None):
    monkeypatch.setattr(BufferedRun, "_draw_links", lambda run: OneSector(upload_s or {0: 1.0, 1: 1.0}))
    cell = HandCell(0.0, Scripted(script))
    cell.dynamics = dynamics
    return cell


def test_a_device_switched_off_is_passed_over_until_it_is_back_and_one_that_switches_off_loses_its_model(monkeypatch, tmp_path):
    """FedAsync, C = 2, the hand cell (stream 1 s, uploads 1 s side by side). Device 0 is on
    0-4 and 6-100, device 1 from 2.5. t=0 device 1 is passed over (unavailable) and v0 goes to
    device 0 alone (compute 1): 0-1, 1-2, upload 2-3: v1 at 3. t=2.5 device 1 is back: v0 to it
    2.5-3.5, compute 5, upload 8.5-9.5. t=3 v1 to device 0 waits for the downlink, 3.5-4.5: it
    switches off at 4, so it loses its model, cut at that instant as ``netsim.transport.lifecycle`` cuts a
    step (dropped 3.5-4 with half the bit and 0.5 W x 0.5 s = 0.25 J; the stream goes on to
    4.5). t=9.5 device 1's update (tau 1) makes v2, sent to both 9.5-10.5 (device 0 is on
    again), computes 1, uploads 11.5-12.5: v3."""
    import json

    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"devices": {"0": {"active": [0, 6], "inactive": [4, 100], "finish_time": 100},
                                            "1": {"active": [2.5], "inactive": [100], "finish_time": 100}}}))
    dynamics = Dynamics(availability=TraceAvailability.load(path, 2))
    cell = hand_cell(monkeypatch, [1.0, 5.0, 2.0, 1.0, 1.0, 9, 9], dynamics)
    trace = []
    ledger = Ledger(2, 1.0, trace)
    versions, _ = run_buffered(ledger, cell, Buffered(1), 3, np.random.default_rng(0), RunOptions(channel_rng=np.random.default_rng(1)), trace)
    assert [(e.kind, e.entity, e.start, e.end, e.reason) for e in trace if e.kind in ("downlink", "dropped", "uplink")] == [
        ("dropped", 1, 0.0, 0.0, "unavailable"), ("downlink", 0, 0.0, 1.0, ""), ("uplink", 0, 2.0, 3.0, ""),
        ("downlink", 0, 2.5, 3.5, ""), ("dropped", 0, 3.5, 4.0, "unavailable"), ("downlink", 1, 3.5, 4.5, ""),
        ("uplink", 1, 8.5, 9.5, ""), ("downlink", 2, 9.5, 10.5, ""), ("uplink", 0, 11.5, 12.5, ""), ("uplink", 1, 11.5, 12.5, "")]
    assert [(e.bits, e.energy_j) for e in trace if e.kind == "dropped" and e.entity == 0] == [(0.5, 0.25)]
    assert [(v.server_round, v.start, v.end, v.outcome.dropped) for v in versions[1:]] == [
        (1, 0.0, 3.0, {1: "unavailable"}), (2, 3.0, 9.5, {0: "unavailable"}), (3, 9.5, 12.5, {})]
    assert versions[2].energy_j == {0: 0.25, 1: 0.5 + 1.0}  # device 0: its cut reception alone
    check_invariants(versions, trace, ledger, dynamics)


def test_a_device_that_switches_off_mid_upload_is_cut_at_that_instant_as_in_a_synchronous_round(monkeypatch, tmp_path):
    """FedAsync, C = 2, the hand cell (stream 1 s at 0.5 W, uploads 1 s side by side at 1 W,
    compute 1 s and free). Device 0 is on 0-2.5, device 1 always. t=0-1 v0 to both, computes
    1-2, uploads 2-3: device 0 switches off at 2.5, its upload cut there as
    ``netsim.transport.lifecycle.upload`` cuts it in a round (dropped 2-2.5, half the bit, 1 W x 0.5 s =
    0.5 J; it used to send to 3 and be dropped then, 1 J spent). Device 1's update makes v1 at
    3; device 0 is passed over (unavailable) and v1 goes to device 1: 3-4, 4-5, 5-6: v2."""
    import json

    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"devices": {"0": {"active": [0], "inactive": [2.5], "finish_time": 100},
                                            "1": {"active": [0], "inactive": [100], "finish_time": 100}}}))
    dynamics = Dynamics(availability=TraceAvailability.load(path, 2))
    cell = hand_cell(monkeypatch, [1.0, 1.0, 1.0, 9, 9], dynamics)
    trace = []
    ledger = Ledger(2, 1.0, trace)
    versions, _ = run_buffered(ledger, cell, Buffered(1), 2, np.random.default_rng(0), RunOptions(channel_rng=np.random.default_rng(1)), trace)
    assert [(e.kind, e.entity, e.start, e.end, e.bits, e.energy_j, e.reason) for e in trace if e.kind in ("dropped", "uplink")] == [
        ("dropped", 0, 2.0, 2.5, 0.5, 0.5, "unavailable"), ("uplink", 1, 2.0, 3.0, 1.0, 1.0, ""),
        ("dropped", 0, 3.0, 3.0, 0.0, 0.0, "unavailable"), ("uplink", 1, 5.0, 6.0, 1.0, 1.0, "")]
    assert [(v.server_round, v.end, v.arrived, v.outcome.dropped, v.energy_j) for v in versions[1:]] == [
        (1, 3.0, (1,), {0: "unavailable"}, {0: 0.5 + 0.0 + 0.5, 1: 0.5 + 0.0 + 1.0}), (2, 6.0, (1,), {0: "unavailable"}, {1: 1.5})]
    check_invariants(versions, trace, ledger, dynamics)
    # the same device in a synchronous round (``round_device``, the same links and switching off): the same cut
    import simpy

    from netsim.transport.lifecycle import Presence, SharedRound, round_device

    env, sync_trace = simpy.Environment(), []
    presence = Presence.start(env, (0,), dynamics.availability, None)
    presence.stream_starts = [env.event()]
    links = OneSector({0: 1.0, 1: 1.0})
    shared = SharedRound(env, None, {0: links.uplink_medium(env)}, links, None, sync_trace, 1, presence)
    env.process(round_device(shared, 0, None, env.event(), 1.0, 0.0, 1.0, (0,)))
    presence.stream_starts[0].succeed((1.0, 1.0))
    env.run()
    cut = [(e.start, e.end, e.bits, e.energy_j, e.reason) for e in sync_trace if e.kind == "dropped"]
    assert cut == [(e.start, e.end, e.bits, e.energy_j, e.reason) for e in trace if e.kind == "dropped"][:1]


def test_the_server_waits_for_a_device_that_may_come_back_to_fill_the_buffer(monkeypatch, tmp_path):
    """FedBuff K = 2, two devices, device 1 switched off until 5. Device 0 gets v0 0-1, computes
    1, uploads 2-3: the buffer holds one update and nobody trains, but device 1 may come back,
    so the server waits (no partial aggregation): at 5 it gets v0, 5-6, computes 1, uploads
    7-8, and v1 aggregates both at 8."""
    import json

    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"devices": {"0": {"active": [0], "inactive": [100], "finish_time": 100},
                                            "1": {"active": [5], "inactive": [100], "finish_time": 100}}}))
    dynamics = Dynamics(availability=TraceAvailability.load(path, 2))
    cell = hand_cell(monkeypatch, [1.0, 1.0, 9, 9], dynamics)
    trace = []
    ledger = Ledger(2, 1.0, trace)
    versions, _ = run_buffered(ledger, cell, Buffered(2), 1, np.random.default_rng(0), RunOptions(channel_rng=np.random.default_rng(1)), trace)
    assert [(v.server_round, v.end, v.arrived, v.outcome.dropped) for v in versions[1:]] == [(1, 8.0, (0, 1), {1: "unavailable"})]
    check_invariants(versions, trace, ledger, dynamics)


def test_batteries_drain_as_energy_is_spent_and_a_flat_device_takes_no_more_part(monkeypatch):
    """FedAsync, C = 2, 1.6 J each; receiving 0.5 J a stream (0.5 W), sending 1 J a second.
    t=0-1 v0 to both (1.1 J left); device 0 computes 1, uploads 2-3 (0.1 J left): v1 at 3; v1
    to it 3-4: it runs flat while receiving, cut at that instant as ``netsim.transport.lifecycle`` cuts a
    step: its 0.1 J last 0.1 / 0.5 = 0.2 s, dropped (battery) 3-3.2 with 0.2 of the bit and
    its last 0.1 J (the battery at 0, never below). Device 1 computes 3, uploads 4-5 (0.1 J):
    v2 at 5; device 0 is passed over (battery), v2 to device 1 5-6: flat at 5.2, dropped the
    same way. Nobody can train: the run stops, stalled."""
    dynamics = Dynamics(batteries=Batteries(2, 1.6))
    cell = hand_cell(monkeypatch, [1.0, 3.0, 1.0, 1.0, 9], dynamics)
    trace, budget = [], Budget({})
    ledger = Ledger(2, 1.0, trace)
    versions, _ = run_buffered(ledger, cell, Buffered(1), 5, np.random.default_rng(0),
                               RunOptions(channel_rng=np.random.default_rng(1), budget=budget), trace)
    left_j = 1.6 - 0.5 - 1.0  # each battery's charge after one reception and one upload (0.1 J)
    assert [(v.server_round, v.end, v.arrived, v.outcome.dropped, v.energy_j) for v in versions[1:]] == [
        (1, 3.0, (0,), {}, {0: 1.5, 1: 0.5}), (2, 5.0, (1,), {0: "battery"}, {0: left_j, 1: 1.0})]
    assert [(e.entity, e.start, e.end, e.bits, e.energy_j, e.reason) for e in trace if e.kind == "dropped"] == [
        (0, 3.0, 3.0 + left_j / 0.5, pytest.approx(left_j / 0.5), left_j, "battery"), (0, 5.0, 5.0, 0.0, 0.0, "battery"),
        (1, 5.0, 5.0 + left_j / 0.5, pytest.approx(left_j / 0.5), left_j, "battery")]
    assert budget.stopped == "stalled"
    np.testing.assert_allclose(dynamics.batteries.remaining_j, [0.0, 0.0], atol=0)
    check_invariants(versions, trace, ledger, dynamics, capacity_j=1.6)


def test_an_update_staler_than_the_bound_is_dropped_stale():
    """The three-device FedAsync trace of ``test_buffered`` with ``max_staleness`` 1: device 2's
    update from v0 arrives at 6, two versions old: dropped (stale), not trained nor aggregated;
    v2 goes to it at 6. Device 1's update from v2 (tau 0) makes v3 at 7.5."""
    data = scalar_data([[10.0], [20.0], [30.0]])
    system = ScriptedSystem(rho=1.0, t_min=0.0, inv_mu=0.0, script=Scripted([1, 2, 4, 3, 1.5, 2, 9, 9, 9]))
    learner = build("fedavg", data)
    rule = AsyncRule("fedasync", mixing_alpha=0.5, staleness_exponent=0.5)
    versions, trace = run_buffered(BufferedServer(learner, rule), system, Buffered(1, max_staleness=1), 3, np.random.default_rng(0))
    assert [(v.server_round, v.end, v.arrived, v.outcome.dropped) for v in versions[1:]] == [
        (1, 3, (0,), {}), (2, 4, (1,), {}), (3, 7.5, (1,), {2: "stale"})]
    assert [(e.entity, e.start) for e in trace if e.kind == "downlink"][-1] == (2, 6)
    a = lambda tau: 0.5 / math.sqrt(1 + tau)  # noqa: E731
    x1 = 1.0
    x2 = (1 - a(1)) * x1 + a(1) * 4.0
    x3 = (1 - a(0)) * x2 + a(0) * (x2 + 0.2 * (20 - x2))
    np.testing.assert_allclose(values(learner.theta), [x3] * 3, rtol=1e-6)


def test_fifo_dispatches_in_the_order_devices_became_idle_and_random_draws_its_own_stream():
    """Three devices, C = 1, K = 1, T_dl = T_ul = 1, compute 1: FIFO serves them in turn
    (0, 1, 2, 0, ...: the one that reported goes to the back). Random picks among the idle ones
    from its own generator: the compute draws (the same script) and the clock are those of any
    other choice, and the same seed picks the same devices."""
    def run(choice, idle_rng=None):
        system = ScriptedSystem(rho=1.0, t_min=0.0, inv_mu=0.0, script=Scripted([1.0] * 20))
        versions, _ = run_buffered(NetworkOnly(3, 1.0), system, Buffered(1, concurrency=1, idle_choice=choice), 12,
                                   np.random.default_rng(0), idle_rng=idle_rng)
        return [v.arrived[0] for v in versions[1:]], [v.end for v in versions[1:]]

    order, ends = run("fifo")
    assert order == [0, 1, 2] * 4 and ends == [3.0 * i for i in range(1, 13)]
    picked, random_ends = run("random", np.random.default_rng(4))
    assert random_ends == ends and picked != order and set(picked) == {0, 1, 2}
    assert run("random", np.random.default_rng(4))[0] == picked
    with pytest.raises(ValueError, match="idle_rng"):
        run("random")


def _cell_run(radio, versions=30, devices=6, settings=Buffered(3), monkeypatch=None):
    """FedBuff over the network alone on a ``umi-3.5ghz`` cell with ``radio``'s dynamics; the
    links each transfer read, by the time they were drawn."""
    system = get_cell_system("umi-3.5ghz", overrides=radio)
    network, channel_rng = system.bind(np.full(devices, 100.0), np.random.SeedSequence(5))
    drawn = {}
    if monkeypatch is not None:
        draw = PhysicalLinks.draw

        def recording(network, rng, now_s=0.0):
            drawn[now_s] = draw(network, rng, now_s)
            return drawn[now_s]

        monkeypatch.setattr(PhysicalLinks, "draw", staticmethod(recording))
    trace, budget = [], Budget({})
    ledger = Ledger(devices, 2e5, trace)
    versions, _ = run_buffered(ledger, network, settings, versions, np.random.default_rng(0),
                               RunOptions(channel_rng=channel_rng, budget=budget), trace, np.random.default_rng(1))
    check_invariants(versions, trace, ledger, network.dynamics, capacity_j=radio.get("battery_j"))
    return versions, trace, budget, drawn


def test_on_a_moving_cell_each_upload_is_timed_by_the_channel_at_its_start(monkeypatch):
    """30 km/h: every upload's airtime is the model's bits served in segments from the channel
    drawn at the instant it started (``netsim.radio.physical_links``: its first 200 ms at that channel's rate;
    a device's airtimes change as it moves: not one draw per run); handovers are logged; the
    invariants hold."""
    versions, trace, _, drawn = _cell_run({"speed_kmh": 30.0, **SHANNON}, monkeypatch=monkeypatch)  # a rate per step
    uploads = [e for e in trace if e.kind == "uplink"]
    assert len(versions) == 31 and len(uploads) >= 90
    for e in uploads:
        links = drawn[e.start]
        assert e.end - e.start == pytest.approx(links.uplink_s(e.entity, 2e5, e.start), rel=1e-12)
        if e.end - e.start <= SEGMENT_S:  # within its first step: the rate of its start's channel
            assert e.end - e.start == pytest.approx(links.uplink_s(e.entity, 2e5), rel=1e-12)
    airtimes = {}
    for e in uploads:
        airtimes.setdefault(e.entity, []).append(e.end - e.start)
    assert all(len(set(times)) == len(times) for times in airtimes.values())  # each upload its own channel
    assert sum(len(times) > 5 for times in airtimes.values()) >= 4
    assert any(e.kind == "handover" for e in trace)


@pytest.mark.parametrize("radio, reasons", [({"mean_on_s": 30.0, "mean_off_s": 30.0}, {"unavailable"}),
                                            ({"battery_j": 0.05}, {"battery"}),
                                            ({"speed_kmh": 30.0, "mean_on_s": 20.0, "mean_off_s": 20.0, "battery_j": 0.05},
                                             {"unavailable", "battery"})])
def test_availability_and_batteries_drop_devices_under_fedbuff_and_the_invariants_hold(radio, reasons):
    """The cell's dynamics change the run (they were ignored: the same records with or without
    them); drops carry their reasons; a run whose batteries all ran out stops, stalled."""
    versions, trace, budget, _ = _cell_run(radio)
    plain, _, _, _ = _cell_run({})
    assert [v.end for v in versions] != [v.end for v in plain[:len(versions)]]
    found = {e.reason for e in trace if e.kind == "dropped"}
    assert reasons <= found
    if radio == {"battery_j": 0.05}:  # every battery runs out
        assert budget.stopped == "stalled" and len(versions) < 31


@pytest.mark.parametrize("name", ["umi-3.5ghz", "uma-3.5ghz"])
def test_fedbuff_at_its_defaults_on_a_cell_keeps_every_update_over_100_aggregations(name):
    """K = C / 2 (the default), 20 devices, 3 seeds, 100 aggregations each, the network alone: a
    device reports twice before K arrivals in some buffers (the server kept a buffer of devices
    and crashed: KeyError), every update is accounted for."""
    for seed in range(3):
        # FedBuff's bookkeeping, not the link: Shannon's one rate per upload (nr-harq draws each of 2 Mbit's blocks)
        network, channel_rng = get_cell_system(name, overrides=SHANNON).bind(np.full(20, 100.0), np.random.SeedSequence(seed))
        trace = []
        ledger = Ledger(20, 2e6, trace)
        versions, _ = run_buffered(ledger, network, Buffered(10), 100, np.random.default_rng(seed),
                                   RunOptions(channel_rng=channel_rng), trace, np.random.default_rng(1))
        check_invariants(versions, trace, ledger)
        assert len(versions) == 101 and any(len({u.device for u in v.updates}) < 10 for v in versions[1:])


def test_fedbuff_at_its_defaults_on_a_cell_with_a_real_learner_holds_a_device_twice():
    """The same with the learner (a tiny model the network sees as 100 kbit), 8 devices, K = 4:
    versions 2, 6, 9 and 10 aggregate a device's two updates, each from the model it was sent."""
    data = scalar_data([[float(d)] for d in range(8)])
    network, channel_rng = get_cell_system("umi-3.5ghz", overrides=SHANNON).bind(np.full(8, 100.0), np.random.SeedSequence(1))
    learner = build("fedavg", data)
    learner.model_bits = 1e5
    versions, _ = run_buffered(BufferedServer(learner, AsyncRule()), network, Buffered(4), 10, np.random.default_rng(1),
                               RunOptions(channel_rng=channel_rng), idle_rng=np.random.default_rng(1))
    twice = [v.server_round for v in versions[1:] if len({u.device for u in v.updates}) < len(v.updates)]
    assert len(versions) == 11 and twice == [2, 6, 9, 10]
    assert np.isfinite(values(learner.theta)).all()


def test_waiting_never_draws_more_than_a_battery_has_left():
    """umi, 20 devices, devices off for 600 s on average, 0.3 J each, 30 km/h: the intervals
    between aggregations grow long while the server waits for devices to come back, and
    waiting (settled at each aggregation) could draw several joules from a 0.3 J battery; it
    stops at empty, and the run ends when every battery is."""
    system = get_cell_system("umi-3.5ghz", overrides={"mean_off_s": 600.0, "battery_j": 0.3, "speed_kmh": 30.0})
    network, channel_rng = system.bind(np.full(20, 100.0), np.random.SeedSequence(5))
    trace, budget = [], Budget({})
    ledger = Ledger(20, 1.5e5, trace)
    versions, _ = run_buffered(ledger, network, Buffered(10), 60, np.random.default_rng(0),
                               RunOptions(channel_rng=channel_rng, budget=budget), trace, np.random.default_rng(1))
    waited = np.zeros(20)
    for e in trace:
        if e.kind == "idle":
            waited[e.entity] += e.energy_j
    assert waited.max() <= 0.3 + 1e-12 and budget.stopped == "stalled"
    check_invariants(versions, trace, ledger, network.dynamics, capacity_j=0.3)


def test_switching_times_and_time_switched_on_read_from_the_availability(tmp_path):
    """A FedScale trace (device 0 on 0-4 and 6-100, repeating every 100 s) and the on/off
    process: the next switch after any time, and the seconds on in an interval, from them."""
    import json

    from netsim.dynamics.availability import OnOff

    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"devices": {"0": {"active": [0, 6], "inactive": [4, 100], "finish_time": 100}}}))
    dynamics = Dynamics(availability=TraceAvailability.load(path, 1))
    assert [dynamics.availability.next_switch_s(0, t) for t in (0.0, 4.0, 5.0, 99.0, 150.0)] == [4.0, 6.0, 6.0, 100.0, 200.0]
    assert dynamics.on_s(0, 2.0, 8.0, True) == 4.0 and dynamics.on_s(0, 5.0, 7.0, False) == 1.0
    assert dynamics.back_s(0, 4.5, "unavailable") == 6.0 and dynamics.back_s(0, 4.5, "battery") == math.inf
    flat = Dynamics(availability=dynamics.availability, batteries=Batteries(1, 0.0))
    assert flat.back_s(0, 4.5, "unavailable") == math.inf  # switched off and flat: it never comes back (no endless wake-ups)
    process = OnOff(np.random.default_rng(0), 3, 10.0, 5.0)
    for t in (0.0, 7.3, 250.0):
        switch = process.next_switch_s(1, t)
        assert switch > t and process.available(switch - 1e-9)[1] != process.available(switch)[1]


def test_under_coverage_network_each_upload_queues_at_the_sector_serving_it_when_it_asks():
    """120 km/h, whole-band grants, every site serving (coverage=network): an upload asks at its
    compute's end for the blocks of the sector serving it then (3 site + orientation of the 57);
    two uploads on the air together are at two sectors, some of them of one orientation at two
    sites (which the centre's one queue per orientation never let send together)."""
    system = get_cell_system("umi-3.5ghz", overrides={"speed_kmh": 120.0, "ul_allocation": "whole-band"})
    network, channel_rng = system.bind(np.full(12, 100.0), np.random.SeedSequence(5))
    trace = []
    ledger = Ledger(12, 2e5, trace)
    versions, _ = run_buffered(ledger, network, Buffered(4), 40, np.random.default_rng(0), RunOptions(channel_rng=channel_rng),
                               trace, np.random.default_rng(1))
    check_invariants(versions, trace, ledger, network.dynamics)
    motion = network.dynamics.motion
    asked, ups = {}, []
    for e in trace:
        if e.kind == "compute":
            asked[e.entity] = e.end
        elif e.kind == "uplink":
            ups.append((e, int(motion.serving_at(asked[e.entity])[e.entity])))
    assert len(ups) >= 100 and any(sector // 3 for _, sector in ups)
    together = [(sa, sb) for a, sa in ups for b, sb in ups if a.start < b.start < a.end]
    assert together and all(sa != sb for sa, sb in together)  # a whole-band grant holds its sector's band alone
    assert any(sa % 3 == sb % 3 for sa, sb in together)  # one orientation, two sites, on the air together
