"""One links protocol (``netsim.transport.media.Links``) and one device lifecycle (``netsim.transport.lifecycle``):
every system's links answer the same questions, a transfer reads its airtime at its grant's
start, and a device's steps run on the clock with exact SimPy times."""

from __future__ import annotations

import numpy as np
import simpy

from netsim import NetworkSystem
from netsim.radio.cell import Cell, CellLayout
from netsim.transport.lifecycle import Presence, SharedRound, round_device
from netsim.radio.physical import LinkBudget, PhysicalSystem
from netsim.transport.media import Links, NormalizedLinks, ResourceBlocks, Tdma, Transfer, Unshared

MEMBERS = [name for name in vars(Links) if not name.startswith("_")] + list(Links.__annotations__)


def small_cell():
    layout = CellLayout(np.full(3, 50.0), np.zeros(3), np.ones(3, bool), np.zeros(3), np.full(3, 120.0))
    system = PhysicalSystem(Cell(distances_m=(50.0,) * 3), LinkBudget(20e6, 1.0, 0.0), LinkBudget(20e6, 0.2, 0.0),
                            fading="none", min_bps_per_hz=0.1, max_bps_per_hz=6.0)
    return system.network(layout, np.zeros(3))


def test_every_system_gives_links_that_answer_the_whole_protocol():
    """A normalized system's links and a cell's, from the network (``transfer_links``), have every
    member the protocol declares; the normalized ones: one receiver, the whole band as each grant,
    everyone receives and uploads, no energy, the orchestrator's access schemes."""
    normalized = NetworkSystem(rho=2.0, t_min=1.0, inv_mu=1.0).transfer_links(1e6, None, 0.0, ("unshared", "tdma"))
    cell = small_cell().transfer_links(1e6, np.random.default_rng(0), 0.0)
    assert {"stream_s", "receives", "compute_s", "compute_j", "can_upload", "grant_prbs", "uplink_s", "transmit_j",
            "receive_j", "uplink_queue", "band_prbs", "downlink_medium", "uplink_medium"} <= set(MEMBERS)
    for links in (normalized, cell):
        assert all(hasattr(links, name) for name in MEMBERS), [name for name in MEMBERS if not hasattr(links, name)]
    assert isinstance(normalized, NormalizedLinks)
    assert (normalized.downlink_access, normalized.uplink_access) == ("unshared", "tdma")
    assert [normalized.uplink_queue[d] for d in (0, 7, 99)] == [0, 0, 0]
    assert normalized.grant_prbs(5) == normalized.band_prbs == 1
    assert normalized.receives(3) and normalized.can_upload(3, True)
    assert (normalized.stream_s((0, 1), 1e6), normalized.uplink_s(0, 1e6)) == (1.0, 2.0)
    assert (normalized.compute_j(0, 1.0), normalized.transmit_j(0, 2.0), normalized.receive_j(0, 1.0)) == (0.0, 0.0, 0.0)
    env = simpy.Environment()
    assert isinstance(normalized.downlink_medium(env), Unshared) and isinstance(normalized.uplink_medium(env), Tdma)
    uplink = cell.uplink_medium(env)
    assert isinstance(uplink, ResourceBlocks) and uplink.capacity == cell.band_prbs
    assert cell.downlink_medium(env).capacity == 1


def test_a_transfer_reads_its_airtime_when_its_grant_starts():
    """Three transfers ask at 0: on TDMA (its own process) and on a receiver's blocks (held by the
    asking process) each one's airtime is asked when its grant starts (0, 2, 3) and it ends then
    plus that airtime; on an unshared medium all start at once."""
    for make, expected in ((Tdma, [(0.0, 2.0), (2.0, 3.0), (3.0, 6.0)]), (lambda env: ResourceBlocks(env, 1), None),
                           (Unshared, [(0.0, 2.0), (0.0, 1.0), (0.0, 3.0)])):
        env = simpy.Environment()
        medium, asked, ends = make(env), [], []
        airtime = {"a": 2.0, "b": 1.0, "c": 3.0}

        def transfer(name):
            def timing():
                asked.append((name, env.now))
                return airtime[name]
            start = yield from medium.carry(1, timing)
            ends.append((start, env.now))

        for name in "abc":
            env.process(transfer(name))
        env.run()
        want = expected or [(0.0, 2.0), (2.0, 3.0), (3.0, 6.0)]
        assert sorted(ends) == sorted(want)
        assert asked == [(name, start) for name, (start, _) in zip("abc", want)]


def test_a_device_that_runs_flat_mid_upload_leaves_then_and_one_always_on_arrives():
    """``round_device`` by hand: one stream 0-1 s (0.5 W), compute 2 s (1 J), upload 2 s (1 W) on a
    one-block receiver. Device 0 (5 J) arrives at 5 s; device 1 (2 J: 0.5 + 1 spent by 3 s) runs
    flat half way through its upload, after device 0's, at 5 + 0.5 = 5.5 s."""

    class Links:
        uplink_access = "tdma"

        def can_upload(self, device, uploading=False):
            return True

        def uplink_s(self, device, bits):
            return 2.0

        def upload(self, device, bits, start_s=None):
            return Transfer(2.0, False, bits)

        def grant_prbs(self, device):
            return 1

        def transmit_j(self, device, airtime_s, start_s=None):
            return airtime_s

        def receive_j(self, device, listening_s):
            return 0.5 * listening_s

    class Battery:
        remaining_j = np.array([5.0, 2.0])

        def drain(self, spent):
            for device, joules in spent.items():
                self.remaining_j[device] -= joules

    env, trace = simpy.Environment(), []
    presence = Presence({}, Battery())
    presence.stream_starts = [env.event()]
    receiver = ResourceBlocks(env, 1)
    shared = SharedRound(env, None, {0: receiver, 1: receiver}, Links(), None, trace, 1, presence)
    computed = {d: env.event() for d in (0, 1)}
    devices = [env.process(round_device(shared, d, None, computed[d], 2.0, 1.0, 8.0, (0,))) for d in (0, 1)]

    def stream():
        presence.stream_starts[0].succeed((1.0, 8.0))
        yield env.timeout(1.0)

    env.process(stream())
    env.run()
    assert [p.value for p in devices] == [True, False]
    assert sorted((e.entity, e.kind, e.start, e.end, e.bits, e.energy_j, e.reason) for e in trace) == [
        (0, "compute", 1.0, 3.0, 0.0, 1.0, ""), (0, "receive", 0.0, 1.0, 8.0, 0.5, ""), (0, "uplink", 3.0, 5.0, 8.0, 2.0, ""),
        (1, "compute", 1.0, 3.0, 0.0, 1.0, ""), (1, "dropped", 5.0, 5.5, 2.0, 0.5, "battery"),
        (1, "receive", 0.0, 1.0, 8.0, 0.5, "")]
    assert presence.gone == {1: (5.5, "battery")}


def test_one_downlink_for_every_system_decided_by_its_links():
    """``send_streams`` with two streams, one to devices 0 and 1 (8 bits), one to nobody (4 bits).
    The normalized reference's links (``FixedLinks``: airtimes 1 and 2 s from the durations, no
    energy): both streams on the air with their bits, no receptions on the trace, both devices
    have the model at 1 s. A cell's links (device 1 in downlink outage, the stream at 0.5 W,
    nobody to hear the second: 0 s): a reception with its energy (0.5 J) for device 0, device 1
    dropped ``downlink-outage`` at 1 s, the second stream not sent (0 bits, 0 s)."""
    from contract import RoundPlan, Stream
    from netsim.transport.lifecycle import send_streams
    from netsim.transport.reference import FixedLinks

    class CellLinks:
        records_energy = True

        def stream_s(self, devices, bits, start_s=None):
            return 1.0 if devices else 0.0

        def receives(self, device):
            return device != 1

        def receive_j(self, device, listening_s):
            return 0.5 * listening_s

    plan = RoundPlan((Stream((0, 1), 8.0), Stream((), 4.0)), {0: 1.0, 1: 1.0}, (0, 1))
    for links, events, got in ((FixedLinks((0, 1), (1.0, 1.0), (1.0, 2.0)),
                                [("downlink", 0, 0.0, 1.0, 8.0, 0.0, ""), ("downlink", 1, 1.0, 3.0, 4.0, 0.0, "")], [1.0, 1.0]),
                               (CellLinks(), [("downlink", 0, 0.0, 1.0, 8.0, 0.0, ""), ("receive", 0, 0.0, 1.0, 8.0, 0.5, ""),
                                              ("dropped", 1, 1.0, 1.0, 0.0, 0.0, "downlink-outage"),
                                              ("downlink", 1, 1.0, 1.0, 0.0, 0.0, "")], [1.0, None])):
        env, trace = simpy.Environment(), []
        received = {d: env.event() for d in (0, 1)}
        at = {}
        for d, event in received.items():
            event.callbacks.append(lambda _, d=d: at.__setitem__(d, env.now))
        env.process(send_streams(env, plan, links, received, trace, 1))
        env.run()
        assert [(e.kind, e.entity, e.start, e.end, e.bits, e.energy_j, e.reason) for e in trace] == events
        assert [at.get(d) for d in (0, 1)] == got
