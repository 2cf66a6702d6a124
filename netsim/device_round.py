"""One device's part of a round as a SimPy process, shared by the normalized reference
(``netsim.reference``) and the cell (``netsim.physical_round``): wait for the model, compute,
(barrier mode: wait for everyone), upload. What the network decides comes in through ``links``:
whether the device can upload (outage), its upload's airtime and grant (resource blocks of its
receiver, held while it sends: one of one on the normalized systems), or an FDMA share, and
the energies (0 on the normalized systems).

On a cell with availability or batteries (``Presence``) the device's state is read as each step
happens (issue 56 item 3): it receives its own streams, and a device that switches off (at its
next switch after the round's start) or whose battery cannot pay for a step leaves the round at
that instant: the step running then is cut there (its energy, linear in time, spent until then),
and it is dropped with reason ``unavailable`` or ``battery``; it does nothing after.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import simpy

from netsim.trace import TraceEvent

DEADLINE = "deadline"
UPLINK_OUTAGE = "uplink-outage"
UNAVAILABLE, BATTERY = "unavailable", "battery"


class Transfer(NamedTuple):
    """An upload as the links serve it from its start (``links.upload``): its airtime (s; to its
    cut if ``lost``), whether the device lost its link in it (a moving cell's transfer in
    segments, ``netsim.links``: below the outage floor or out of coverage), the bits through."""

    airtime_s: float
    lost: bool
    bits: float


@dataclass(frozen=True)
class Deadline:
    """A time on the clock and the event that fires then: the round's deadline, or the time a
    device switches off (``Presence.leaves``)."""

    at: float
    event: simpy.Event


@dataclass
class Presence:
    """Each participant's state in a round on a cell with availability or batteries.

    ``leaves``: device -> the ``Deadline`` at which it switches off in the round (its next switch
    after the round's start; a device with none stays on); ``batteries``: the run's
    ``netsim.dynamics.battery.Batteries`` (None: none), drained as each step is charged
    (``spend``), so a step reads the charge left when it starts. Filled as the round runs:
    ``stream_starts`` (the event that fires at each stream's start with its airtime), ``gone``
    (device -> (when, why) it left), ``unheard`` (the devices that left before their model was
    in), ``idle_j`` (each participant's waiting energy, charged at the round's end)."""

    leaves: dict
    batteries: object = None
    stream_starts: list = field(default_factory=list)
    gone: dict = field(default_factory=dict)
    unheard: set = field(default_factory=set)
    idle_j: dict = field(default_factory=dict)

    @classmethod
    def start(cls, env: simpy.Environment, participants, availability, batteries) -> "Presence":
        """At the round's start (``env.now``), when each of the ``participants`` (all switched on)
        switches off (``availability.next_switch_s``; None: always on) and their ``batteries``."""
        now = env.now
        off_s = {d: availability.next_switch_s(d, now) for d in participants} if availability is not None else {}
        leaves = {d: Deadline(now + (t - now), env.timeout(t - now)) for d, t in off_s.items() if t != float("inf")}
        return cls(leaves, batteries)

    def charge_j(self, device: int) -> float:
        """The energy ``device``'s battery has left (inf: no battery)."""
        return float("inf") if self.batteries is None else float(self.batteries.remaining_j[device])

    def spend(self, device: int, joules: float) -> None:
        if self.batteries is not None and joules:
            self.batteries.drain({device: joules})

    def left(self, env: simpy.Environment, device: int) -> bool:
        """Whether ``device`` has switched off by now."""
        leave = self.leaves.get(device)
        return leave is not None and (leave.event.processed or env.now >= leave.at)


@dataclass(frozen=True)
class SharedRound:
    """What every device process of one round shares: the clock, the barrier (barrier mode:
    everyone computed; None pipelined), the uplink queue of each device (device -> its
    receiver's ``netsim.transport.ResourceBlocks``, or an ``FdmaUplink``), the ``links``
    (outages, airtimes, grants, energies), the deadline (None: none), the trace the round
    appends to, and the participants' ``Presence`` (None: always on, no batteries)."""

    env: simpy.Environment
    barrier: simpy.Event | None
    uplink: dict
    links: object
    deadline: Deadline | None
    trace: list
    server_round: int
    presence: Presence | None = None


def device_process(shared: SharedRound, device: int, received, computed, compute_s: float, compute_j: float, uplink_bits: float,
                   streams: tuple = ()):
    """Wait for the model (``received``), compute for ``compute_s`` (spending ``compute_j``
    joules), tell ``computed``, (barrier mode: wait for everyone), upload ``uplink_bits``.

    Returns True when the update arrived; a device still computing at the deadline, or whose
    upload would end after it, is dropped and sends nothing; a device in uplink outage computes
    but cannot upload. On FDMA, an upload still running at the deadline is cut there.

    With a ``Presence`` the device first receives its own ``streams`` (indices into the plan's,
    the events ``Presence.stream_starts``), then waits for ``received`` (None: starts at once),
    and leaves as ``present_device`` says.
    """
    if shared.presence is not None:
        return (yield from present_device(shared, device, received, computed, compute_s, compute_j, uplink_bits, streams))
    env, barrier, uplink, links = shared.env, shared.barrier, shared.uplink[device], shared.links
    deadline, trace, server_round = shared.deadline, shared.trace, shared.server_round
    yield received
    start = env.now
    computing = env.timeout(compute_s)
    if deadline:
        yield computing | deadline.event
    else:
        yield computing
    done = 1.0 if compute_s == 0 else (env.now - start) / compute_s
    trace.append(TraceEvent(server_round, "compute", device, start, env.now, 0.0, compute_j * done))
    if env.now < start + compute_s:  # the deadline came first
        computed.succeed(False)
        trace.append(TraceEvent(server_round, "dropped", device, env.now, env.now, 0.0, 0.0, DEADLINE))
        return False
    computed.succeed(True)
    if barrier is not None:
        yield barrier
    if not links.can_upload(device, uplink_bits > 0):
        trace.append(TraceEvent(server_round, "dropped", device, env.now, env.now, 0.0, 0.0, UPLINK_OUTAGE))
        return False
    if links.uplink_access == "fdma":
        if uplink_bits == 0:
            return True
        return (yield from _fdma_upload(shared, device, uplink_bits)) is None
    uplink_s = links.uplink_s(device, uplink_bits)  # 0: nothing to send
    if uplink_s == 0:
        return True
    with uplink.request(links.grant_prbs(device)) as slot:
        yield slot
        start = env.now
        uplink_s, lost, through = links.upload(device, uplink_bits, start)  # on a moving cell: in segments from now
        if deadline and env.now + uplink_s > deadline.at:
            trace.append(TraceEvent(server_round, "dropped", device, env.now, env.now, 0.0, 0.0, DEADLINE))
            return False
        yield env.timeout(uplink_s)
        joules = links.transmit_j(device, uplink_s, start)
        if lost:  # its link fell below the floor (or out of coverage) in the upload: cut there
            trace.append(TraceEvent(server_round, "dropped", device, start, env.now, through, joules, UPLINK_OUTAGE))
            return False
        trace.append(TraceEvent(server_round, "uplink", device, start, env.now, uplink_bits, joules))
    return True


def _fdma_upload(shared: SharedRound, device: int, bits: float):
    """An FDMA upload, cut by the deadline or (with a ``Presence``) the device switching off:
    returns why it was cut (None: it arrived). With a ``Presence`` its energy is drained from
    the battery at its end (its power changes with the sharing: the charge is not read within it)."""
    env, uplink, links, deadline, presence = shared.env, shared.uplink[device], shared.links, shared.deadline, shared.presence
    trace, server_round = shared.trace, shared.server_round
    leave = presence.leaves.get(device) if presence is not None else None
    start = env.now
    sent = uplink.transmit(device, bits)
    ends = [sent] + ([deadline.event] if deadline else []) + ([leave.event] if leave else [])
    yield env.any_of(ends) if len(ends) > 1 else sent
    if not sent.processed:  # the deadline (or its leaving) came first: the upload is cut, its airtime spent
        got, drawn = uplink.abort(device)
        why = DEADLINE if deadline and deadline.event.processed else UNAVAILABLE
        event = TraceEvent(server_round, "dropped", device, start, env.now, got, links.upload_j(drawn), why)
    else:
        why, event = None, TraceEvent(server_round, "uplink", device, start, env.now, bits, links.upload_j(sent.value))
    trace.append(event)
    if presence is not None:
        presence.spend(device, event.energy_j)
        if why == UNAVAILABLE:
            presence.gone[device] = (env.now, why)
    return why


def _wait(shared: SharedRound, device: int, event):
    """Wait for ``event`` or the device's switching off, whichever is first: True if it left."""
    env, presence = shared.env, shared.presence
    leave = presence.leaves.get(device)
    if event is not None and leave is not None and isinstance(event, simpy.events.Condition) and event.callbacks is not None:
        relay = env.event()  # SimPy strips a nested condition's checks when the outer one fires first: wait on a plain event
        event.callbacks.append(lambda _: relay.succeed())
        event = relay
    if event is not None:
        yield event if leave is None else (event | leave.event)
    return presence.left(env, device)


def _step(shared: SharedRound, device: int, run_s: float, energy_j: float, deadline: Deadline | None):
    """A step of ``run_s`` seconds costing ``energy_j`` joules, linear in time (receive power,
    compute power, transmit power: ``netsim.energy``), run from now: cut by ``deadline``, the
    device switching off, or its battery running flat (when the charge it has left is spent,
    ``run_s x charge / energy_j`` in). Returns (joules spent, None or why it was cut)."""
    env, presence = shared.env, shared.presence
    start = env.now
    charge = presence.charge_j(device)
    flat = energy_j > charge
    delay = run_s * charge / energy_j if flat else run_s
    timer = env.timeout(delay)
    leave = presence.leaves.get(device)
    ends = [timer] + ([deadline.event] if deadline else []) + ([leave.event] if leave else [])
    yield env.any_of(ends) if len(ends) > 1 else timer
    if env.now >= start + delay:  # the step's own end (the natural one, or flat) came first or with the others
        return (charge, BATTERY) if flat else (energy_j, None)
    why = DEADLINE if deadline is not None and deadline.event.processed else UNAVAILABLE
    return energy_j * (env.now - start) / run_s, why


def _leave(shared: SharedRound, device: int, why: str, start: float | None = None, bits: float = 0.0, joules: float = 0.0) -> bool:
    """``device`` leaves the round now (``why``): a ``dropped`` event, spanning the step it cut
    (from ``start``, ``bits`` through and ``joules`` spent) or at this instant. False."""
    env = shared.env
    now = env.now
    shared.trace.append(TraceEvent(shared.server_round, "dropped", device, now if start is None else start, now, bits, joules, why))
    shared.presence.spend(device, joules)
    shared.presence.gone[device] = (now, why)
    return False


def present_device(shared: SharedRound, device: int, start_signal, computed, compute_s: float, compute_j: float, uplink_bits: float,
                   streams: tuple):
    """``device_process`` reading the device's state as each step happens (``Presence``): it
    receives its streams (each at its airtime from the stream's start, receive power), waits for
    ``start_signal``, computes, (waits for the barrier,) uploads. Switching off while it waits,
    it leaves at that instant; in a step, the step is cut there (energy prorated); a battery that
    cannot pay for a step runs flat in it, the step cut when the charge is spent (its energy: that
    charge). Either way it is dropped (``unavailable``, ``battery``) and does nothing after: a
    stream it is still to receive is missed, and it sends nothing. Each step's energy is drained
    from the battery when the step ends, as it goes on the trace."""
    env, barrier, uplink, links = shared.env, shared.barrier, shared.uplink[device], shared.links
    deadline, trace, server_round, presence = shared.deadline, shared.trace, shared.server_round, shared.presence
    for index in streams:
        if (yield from _wait(shared, device, presence.stream_starts[index])):
            presence.unheard.add(device)
            computed.succeed(False)
            return _leave(shared, device, UNAVAILABLE)
        start = env.now
        airtime, bits = presence.stream_starts[index].value
        joules, why = yield from _step(shared, device, airtime, links.receive_j(device, airtime), None)
        if why is not None:
            presence.unheard.add(device)
            computed.succeed(False)
            return _leave(shared, device, why, start, bits * (env.now - start) / airtime, joules)
        trace.append(TraceEvent(server_round, "receive", device, start, env.now, bits, joules))
        presence.spend(device, joules)
    if (yield from _wait(shared, device, start_signal)):
        computed.succeed(False)
        return _leave(shared, device, UNAVAILABLE)
    start = env.now
    joules, why = yield from _step(shared, device, compute_s, compute_j, deadline)
    trace.append(TraceEvent(server_round, "compute", device, start, env.now, 0.0, joules))
    presence.spend(device, joules)
    if why is not None:
        computed.succeed(False)
        if why == DEADLINE:
            trace.append(TraceEvent(server_round, "dropped", device, env.now, env.now, 0.0, 0.0, DEADLINE))
            return False
        return _leave(shared, device, why)
    computed.succeed(True)
    if (yield from _wait(shared, device, barrier)):
        return _leave(shared, device, UNAVAILABLE)
    if not links.can_upload(device, uplink_bits > 0):
        trace.append(TraceEvent(server_round, "dropped", device, env.now, env.now, 0.0, 0.0, UPLINK_OUTAGE))
        return False
    if links.uplink_access == "fdma":
        if uplink_bits == 0:
            return True
        return (yield from _fdma_upload(shared, device, uplink_bits)) is None
    uplink_s = links.uplink_s(device, uplink_bits)  # 0: nothing to send
    if uplink_s == 0:
        return True
    with uplink.request(links.grant_prbs(device)) as slot:
        if (yield from _wait(shared, device, slot)):
            return _leave(shared, device, UNAVAILABLE)
        start = env.now
        uplink_s, lost, through = links.upload(device, uplink_bits, start)  # on a moving cell: in segments from now
        if deadline and env.now + uplink_s > deadline.at:
            trace.append(TraceEvent(server_round, "dropped", device, env.now, env.now, 0.0, 0.0, DEADLINE))
            return False
        joules, why = yield from _step(shared, device, uplink_s, links.transmit_j(device, uplink_s, start), deadline)
        if why is not None:
            return _leave(shared, device, why, start, through * (env.now - start) / uplink_s, joules)
        if lost:  # its link fell below the floor (or out of coverage) in the upload: cut there
            trace.append(TraceEvent(server_round, "dropped", device, start, env.now, through, joules, UPLINK_OUTAGE))
            presence.spend(device, joules)
            return False
        trace.append(TraceEvent(server_round, "uplink", device, start, env.now, uplink_bits, joules))
        presence.spend(device, joules)
    return True
