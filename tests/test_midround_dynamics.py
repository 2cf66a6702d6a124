"""A synchronous round on a cell with availability or batteries reads each device's state as
its steps happen (issue 56 item 3; ``netsim.transport.lifecycle.Presence``): a device that switches off
in the round leaves at that instant, one whose battery cannot pay for a step runs flat in it;
the step it was in is cut there, its energy spent until then; it sends nothing. Event traces by
hand, with exact SimPy times, on a hand-made cell (``HandLinks``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import simpy

from contract import RoundPlan, Stream
from netsim.dynamics.availability import TraceAvailability
from netsim.dynamics.battery import Batteries
from netsim.dynamics.rounds import Dynamics, RoundInTime
from netsim.normalized.scripted import Scripted
from tests.test_buffered import OneSector

BITS = 8e5


class HandLinks(OneSector):
    """``OneSector`` (a 1 s stream at 0.5 W, uploads side by side on 2 blocks at 1 W) with a
    compute of 4 J whatever its length (2 W over a 2 s draw) and its network's waiting power."""

    uplink_access = "tdma"

    def __init__(self, network, upload_s):
        super().__init__(upload_s)
        self.network = network
        self.uplink_queue = (0,) * len(upload_s)

    def compute_j(self, device, scale):
        return 4.0


@dataclasses.dataclass(eq=False)
class HandNetwork:
    compute: Scripted
    dynamics: Dynamics
    idle_power_w: float = 0.1
    grant_wait_w: float = 0.0  # ue_energy airtime: a grant wait is waiting
    mode: str = "barrier"
    deadline: float | None = None


def run_round(monkeypatch, network, upload_s, devices):
    """One round of ``devices`` (one stream to all of them, every one uploading) through
    ``RoundInTime``: (outcome, energy, trace)."""
    import netsim.transport.physical_round as physical_round

    monkeypatch.setattr(physical_round.PhysicalLinks, "draw", classmethod(lambda cls, net, rng, now: HandLinks(net, upload_s)))
    every = tuple(range(devices))
    plan = RoundPlan((Stream(every, BITS),), {d: BITS for d in every}, every)
    env, trace = simpy.Environment(), []
    round_process = RoundInTime(lambda *args: pytest.fail("the vectorized round ran"))
    process = env.process(round_process(env, plan, network, BITS, np.random.default_rng(0), trace, 1, np.random.default_rng(1)))
    env.run(process)
    outcome, energy, _ = process.value
    return outcome, energy, trace


def steps(trace):
    return sorted((e.entity, e.kind, e.start, e.end, e.bits, e.energy_j, e.reason) for e in trace if e.kind != "downlink")


def test_a_device_switching_off_mid_round_leaves_at_that_instant(monkeypatch):
    """Five devices, barrier mode; the stream 0-1 s; computes of 2, 2, 1, 5, 1 s from 1 s;
    uploads 1 s (device 0) and 2 s (device 2) side by side from the barrier at 3 s. Device 1
    switches off at 2 s (mid-compute: cut at half, 2 J of 4), device 2 at 4 s (mid-upload: half its
    bits, 1 J of 2), device 3 at 0.5 s (half its stream: 0.25 J, no model), device 4 at 2.5 s
    (waiting for the barrier: it computed, it leaves then). The round ends at 4 s with device 0's
    upload. Waiting at 0.1 W until each left: device 0, 4 - 1 - 1 = 2 s; device 1, 2 - 1; device 2,
    4 - 1 - 1; device 3, 0.5 - 0.5; device 4, 2.5 - 1."""
    on = {0: 100.0, 1: 2.0, 2: 4.0, 3: 0.5, 4: 2.5}
    availability = TraceAvailability([np.array([0.0])] * 5, [np.array([on[d]]) for d in range(5)], np.full(5, 1000.0))
    network = HandNetwork(Scripted([2.0, 2.0, 1.0, 5.0, 1.0]), Dynamics(availability=availability))
    outcome, energy, trace = run_round(monkeypatch, network, {0: 1.0, 1: 1.0, 2: 2.0, 3: 1.0, 4: 1.0}, 5)
    u = "unavailable"
    assert steps(trace) == sorted([
        (0, "receive", 0.0, 1.0, BITS, 0.5, ""), (1, "receive", 0.0, 1.0, BITS, 0.5, ""),
        (2, "receive", 0.0, 1.0, BITS, 0.5, ""), (4, "receive", 0.0, 1.0, BITS, 0.5, ""),
        (3, "dropped", 0.0, 0.5, BITS / 2, 0.25, u),
        (0, "compute", 1.0, 3.0, 0.0, 4.0, ""), (1, "compute", 1.0, 2.0, 0.0, 2.0, ""), (1, "dropped", 2.0, 2.0, 0.0, 0.0, u),
        (2, "compute", 1.0, 2.0, 0.0, 4.0, ""), (4, "compute", 1.0, 2.0, 0.0, 4.0, ""), (4, "dropped", 2.5, 2.5, 0.0, 0.0, u),
        (0, "uplink", 3.0, 4.0, BITS, 1.0, ""), (2, "dropped", 3.0, 4.0, BITS / 2, 1.0, u),
        (0, "idle", 0.0, 4.0, 0.0, pytest.approx(0.2), ""), (1, "idle", 0.0, 2.0, 0.0, pytest.approx(0.1), ""),
        (2, "idle", 0.0, 4.0, 0.0, pytest.approx(0.2), ""), (3, "idle", 0.0, 0.5, 0.0, 0.0, ""),
        (4, "idle", 0.0, 2.5, 0.0, pytest.approx(0.15), ""),
    ])
    assert outcome.received == (0, 1, 2, 4) and outcome.computed == (0, 2, 4) and outcome.arrived == (0,)
    assert outcome.dropped == {1: u, 2: u, 3: u, 4: u}
    assert energy == pytest.approx({0: 5.7, 1: 2.6, 2: 5.7, 3: 0.25, 4: 4.65})
    # no step starts while the device is switched off
    assert all(availability.available(e.start)[e.entity] and e.start < on[e.entity] for e in trace if e.kind in ("receive", "compute", "uplink"))


def test_a_battery_that_cannot_pay_for_a_step_runs_flat_in_it(monkeypatch):
    """Five devices, barrier mode; the stream 0-1 s (0.5 J); computes of 2 s (4 J) from 1 s;
    uploads of 2 s (2 J), two side by side. Charges: device 0 2.5 J (flat in its compute, at
    1 + 2 x 2/4 = 2 s: 2 J), device 1 5 J (flat in its upload, at 3 + 2 x 0.5/2 = 3.5 s: a
    quarter of its bits, 0.5 J), device 2 100 J (arrives at 5 s), device 3 0.25 J (flat half way
    through the stream), device 4 6.55 J (its steps cost 6.5 J: its upload 3.5-5.5 s once device 1
    left, then its waiting, 0.1 W x (5.5 - 1 - 2) s = 0.25 J, charged at the round's end, runs it
    flat: its upload is lost, ``battery``)."""
    batteries = Batteries(5, 0.0)
    batteries.remaining_j[:] = [2.5, 5.0, 100.0, 0.25, 6.55]
    capacity = batteries.remaining_j.copy()
    network = HandNetwork(Scripted([2.0] * 5), Dynamics(batteries=batteries))
    outcome, energy, trace = run_round(monkeypatch, network, dict.fromkeys(range(5), 2.0), 5)
    b = "battery"
    cut = [e for e in trace if e.kind != "idle" and e.reason == b or e.kind == "compute" and e.entity == 0]
    assert sorted((e.entity, e.kind, e.start, e.end, e.bits, e.energy_j, e.reason) for e in cut) == [
        (0, "compute", 1.0, 2.0, 0.0, 2.0, ""), (0, "dropped", 2.0, 2.0, 0.0, 0.0, b),
        (1, "dropped", 3.0, 3.5, BITS / 4, 0.5, b), (3, "dropped", 0.0, 0.5, BITS / 2, 0.25, b),
        (4, "dropped", 5.5, 5.5, 0.0, 0.0, b)]
    assert [(e.entity, e.start, e.end) for e in trace if e.kind == "uplink"] == [(2, 3.0, 5.0), (4, 3.5, 5.5)]
    assert outcome.received == (0, 1, 2, 4) and outcome.computed == (1, 2, 4) and outcome.arrived == (2,)
    assert outcome.dropped == {0: b, 1: b, 3: b, 4: b}
    spent = {d: sum(e.energy_j for e in trace if e.entity == d and e.kind != "downlink") for d in range(5)}
    assert energy == pytest.approx(spent)
    np.testing.assert_allclose(batteries.remaining_j, capacity - [spent[d] for d in range(5)], rtol=0, atol=1e-12)
    idle = {e.entity: (e.end, e.energy_j) for e in trace if e.kind == "idle"}
    assert idle == pytest.approx({0: (2.0, 0.1), 1: (3.5, 0.2), 2: (5.5, 0.25), 3: (0.5, 0.0), 4: (5.5, 0.25)})
    # each flat step took exactly the charge left: empty before its waiting was charged
    assert batteries.remaining_j[3] == 0.0 and batteries.remaining_j[0] == -0.1 and batteries.empty.tolist() == [True, True, False, True, True]


def test_the_next_round_skips_the_devices_that_left(monkeypatch):
    """A device that switched off mid-round is absent at the next round's start while still off;
    a flat one stays out."""
    availability = TraceAvailability([np.array([0.0, 10.0]), np.array([0.0])], [np.array([2.0, 20.0]), np.array([100.0])],
                                     np.full(2, 1000.0))
    network = HandNetwork(Scripted([2.0, 2.0, 2.0]), Dynamics(availability=availability))
    outcome, _, _ = run_round(monkeypatch, network, {0: 1.0, 1: 1.0}, 2)
    assert outcome.dropped == {0: "unavailable"} and outcome.arrived == (1,)
    env = simpy.Environment(initial_time=5.0)
    assert network.dynamics.absent(env.now, (0, 1)) == {0: "unavailable"}
