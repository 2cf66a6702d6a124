"""One device's life on the clock, step by step: receive a stream, compute, upload, each a plain
SimPy generator function that asks the channel what the step takes (``links``, a
``netsim.transport.media.Links``: the normalized systems' ``NormalizedLinks`` or a cell's
``netsim.radio.physical_links.PhysicalLinks``) and reads the device's state (``Presence``: availability and
battery, issue 56 item 3) when the step happens. ``round_device`` composes them into a device's
part of a synchronous round, the one device process of the normalized reference
(``netsim.transport.reference``) and of the cell (``netsim.transport.physical_round``): receive its own streams
(with a ``Presence``), wait for the model, compute, (barrier mode: wait for everyone), upload;
``send_stream`` is the one downlink step of them all (``send_streams``: a round's streams). The buffered
orchestrators (``netsim.clock.buffered``,
``netsim.clock.tiered``) run the same steps for each dispatch, so a step is cut the same way under
FedBuff, FedAsync and FedAT as in a round.

A step is cut by the round's deadline, the device switching off (its next switch after the
round's start, ``Presence.leaves``) or its battery running flat (the charge it has left, read
when the step starts): its energy, linear in time (receive, compute, transmit power:
``netsim.radio.energy``), is spent until then, and the device is dropped with reason ``deadline``,
``unavailable`` or ``battery``; it does nothing after. Without a ``Presence`` (no availability,
no batteries) nothing but the deadline cuts a step, and the events are those of a device that is
always on: the same SimPy events, in the same order, as the vectorized rounds
(``netsim.transport.timeline``, ``netsim.transport.physical_timeline``) are tested against.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import simpy

from netsim.transport.shared_uplink import SHARED_ACCESS
from netsim.transport.trace import TraceEvent

DEADLINE = "deadline"
UPLINK_OUTAGE = "uplink-outage"
DOWNLINK_OUTAGE = "downlink-outage"
UNAVAILABLE, BATTERY = "unavailable", "battery"


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
    in), ``idle_j`` (each participant's waiting energy, charged at the round's end). ``Presence({})``
    is a device always on with no battery."""

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

    def unreachable(self, env: simpy.Environment, device: int) -> str | None:
        """Why ``device`` cannot be reached now besides its switching off and its battery (None:
        it can). A synchronous round reads coverage at its start (``netsim.dynamics.rounds``):
        none here; the buffered orchestrators read it at each upload's start and grant
        (``netsim.clock.buffered``)."""
        return None


@dataclass(frozen=True)
class SharedRound:
    """What every device process of one round shares: the clock, the barrier (barrier mode:
    everyone computed; None pipelined), the uplink queue of each device (device -> its
    receiver's ``netsim.transport.media.ResourceBlocks``, or an ``SharedUplink``), the ``links``
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


@dataclass(frozen=True)
class Device:
    """One device in one round: what it shares with the others, who it is, its state."""

    shared: SharedRound
    device: int
    presence: Presence

    @property
    def env(self) -> simpy.Environment:
        return self.shared.env

    def event(self, kind: str, start: float, bits: float = 0.0, joules: float = 0.0, why: str = "") -> None:
        """A ``kind`` event of this device on the round's trace, from ``start`` to now."""
        self.shared.trace.append(TraceEvent(self.shared.server_round, kind, self.device, start, self.env.now, bits, joules, why))

    def leave(self, why: str, start: float | None = None, bits: float = 0.0, joules: float = 0.0) -> bool:
        """The device leaves the round now (``why``): a ``dropped`` event, spanning the step it
        cut (from ``start``, ``bits`` through and ``joules`` spent) or at this instant. False."""
        now = self.env.now
        self.event("dropped", now if start is None else start, bits, joules, why)
        if joules:
            self.presence.spend(self.device, joules)
        self.presence.gone[self.device] = (now, why)
        return False

    def on_air(self, start: float, end: float) -> None:
        """The device receives or sends from ``start`` to ``end`` (said when the transfer starts,
        its planned end, and again when it is cut, its end then). A synchronous round counts its
        waiting from the events at its end: nothing here; a buffered run, whose waiting is settled
        at aggregations that may fall within a transfer, keeps them (``netsim.clock.buffered``)."""


def wait(me: Device, event):
    """Wait for ``event`` (None: nothing to wait for) or the device's switching off, whichever is
    first: True if it left."""
    env, presence = me.env, me.presence
    leave = presence.leaves.get(me.device)
    if event is not None and leave is not None and isinstance(event, simpy.events.Condition) and event.callbacks is not None:
        relay = env.event()  # SimPy strips a nested condition's checks when the outer one fires first: wait on a plain event
        event.callbacks.append(lambda _: relay.succeed())
        event = relay
    if event is not None:
        yield event if leave is None else (event | leave.event)
    return presence.left(env, me.device)


def timed_step(me: Device, run_s: float, energy_j: float, deadline: Deadline | None):
    """A step of ``run_s`` seconds costing ``energy_j`` joules, linear in time, run from now: cut
    by ``deadline``, the device switching off, or its battery running flat (when the charge it
    has left, read now, is spent: ``run_s x charge / energy_j`` in). Returns (joules spent, None
    or why it was cut)."""
    env, presence = me.env, me.presence
    start = env.now
    charge = presence.charge_j(me.device)
    flat = charge <= 0.0 or energy_j > charge  # a battery already empty (waiting drained it) takes no step
    delay = (run_s * charge / energy_j if charge > 0.0 else 0.0) if flat else run_s
    timer = env.timeout(delay)
    leave = presence.leaves.get(me.device)
    ends = [timer] + ([deadline.event] if deadline else []) + ([leave.event] if leave else [])
    yield env.any_of(ends) if len(ends) > 1 else timer
    if env.now >= start + delay:  # the step's own end (the natural one, or flat) came first or with the others
        return (max(charge, 0.0), BATTERY) if flat else (energy_j, None)
    why = DEADLINE if deadline is not None and deadline.event.processed else UNAVAILABLE
    return energy_j * ((env.now - start) / run_s), why


def receive(me: Device, started):
    """Receive a stream announced by ``started`` (an event that fires at its start, its value the
    stream's airtime from the links at that instant and its bits), at receive power for that
    airtime: True when the device has it, else it left (dropped)."""
    if (yield from wait(me, started)):
        return me.leave(UNAVAILABLE)
    airtime_s, bits = started.value
    start = me.env.now
    me.on_air(start, start + airtime_s)
    joules, why = yield from timed_step(me, airtime_s, me.shared.links.receive_j(me.device, airtime_s), None)
    if why is not None:
        me.on_air(start, me.env.now)
        return me.leave(why, start, bits * (me.env.now - start) / airtime_s, joules)
    me.event("receive", start, bits, joules)
    me.presence.spend(me.device, joules)
    return True


def compute(me: Device, compute_s: float, compute_j: float):
    """Compute for ``compute_s`` (``compute_j`` joules), cut by the deadline, the device switching
    off or its battery: True when done."""
    start = me.env.now
    joules, why = yield from timed_step(me, compute_s, compute_j, me.shared.deadline)
    if why is None:  # the share of its work done, as the vectorized rounds charge it (the clock's end, not the draw's)
        joules = compute_j * (1.0 if compute_s == 0 else (me.env.now - start) / compute_s)
    me.event("compute", start, 0.0, joules)
    me.presence.spend(me.device, joules)
    if why is None:
        return True
    if why == DEADLINE:
        me.event("dropped", me.env.now, why=DEADLINE)
        return False
    return me.leave(why)


def reachable(me: Device, links, bits: float) -> bool:
    """Whether the device can upload now on ``links``: not out of reach (``Presence.unreachable``)
    nor in uplink outage; else dropped with that reason now (False)."""
    why = me.presence.unreachable(me.env, me.device)
    if why is None and not links.can_upload(me.device, bits > 0):
        why = UPLINK_OUTAGE
    if why is None:
        return True
    me.event("dropped", me.env.now, why=why)
    return False


def upload(me: Device, bits: float):
    """Upload ``bits`` to the device's receiver: True when it arrived. In uplink outage nothing is
    sent (``uplink-outage``). TDMA: its grant's blocks (``links.grant_prbs``, its receiver and
    grant those of the links when it asks) of its receiver's, held for its airtime
    (``links.upload``, served from the grant's start by the links of that instant, when it may be
    in outage or out of reach: dropped, nothing sent; on a moving cell in segments, cut where the
    link is lost in it: ``uplink-outage``); an upload that would end after the deadline is dropped
    when granted and sends nothing. FDMA and PF (``SHARED_ACCESS``): ``shared_upload``."""
    shared, device = me.shared, me.device
    links, deadline = shared.links, shared.deadline
    if not reachable(me, links, bits):
        return False
    if links.uplink_access in SHARED_ACCESS:
        return bits == 0 or (yield from shared_upload(me, bits)) is None
    if links.uplink_s(device, bits) == 0:  # nothing to send
        return True
    with shared.uplink[device].request(links.grant_prbs(device)) as slot:
        if (yield from wait(me, slot)):
            return me.leave(UNAVAILABLE)
        links = shared.links  # the channel of the grant's start
        if not reachable(me, links, bits):
            return False
        start = me.env.now
        uplink_s, lost, through = links.upload(device, bits, start)  # on a moving cell: in segments from now
        if deadline and start + uplink_s > deadline.at:
            me.event("dropped", start, why=DEADLINE)
            return False
        me.on_air(start, start + uplink_s)
        joules, why = yield from timed_step(me, uplink_s, links.transmit_j(device, uplink_s, start), None)  # it ends by the deadline
        if why is not None:
            me.on_air(start, me.env.now)
            return me.leave(why, start, through * (me.env.now - start) / uplink_s, joules)
        if lost:  # its link fell below the floor (or out of coverage) in the upload: cut there
            me.event("dropped", start, through, joules, UPLINK_OUTAGE)
            me.presence.spend(device, joules)
            return False
        me.event("uplink", start, bits, joules)
        me.presence.spend(device, joules)
    return True


def shared_upload(me: Device, bits: float):
    """An FDMA or PF upload (``netsim.transport.shared_uplink.SharedUplink``), cut by the deadline or the device
    switching off, and on a moving cell served in segments, each step at its share's rate of that
    step's channel, cut where its link is lost in a step (``uplink-outage``, the bits through):
    returns why it was cut (None: it arrived); in a buffered run also cut where the next
    version's draw puts it in outage (``SharedUplink.rechannel``). Its energy is drained from the battery at its end
    (its power changes with the sharing: the charge is not read within it); its time stalled on the
    shared uplink (``SharedUplink.held_s``) is charged as a grant wait (``links.upload_j``)."""
    env, shared, device = me.env, me.shared, me.device
    uplink, links, deadline = shared.uplink[device], shared.links, shared.deadline
    leave = me.presence.leaves.get(device)
    start = env.now
    me.on_air(start, float("inf"))  # (its end is known when it comes: a buffered run's waiting counts it busy until then)
    sent = uplink.transmit(device, bits)
    ends = [sent] + ([deadline.event] if deadline else []) + ([leave.event] if leave else [])
    yield env.any_of(ends) if len(ends) > 1 else sent
    if not sent.processed:  # the deadline (or its leaving) came first: the upload is cut, its airtime spent
        got, drawn = uplink.abort(device)
        why = DEADLINE if deadline and deadline.event.processed else UNAVAILABLE
        joules = links.upload_j(drawn, env.now - start, uplink.held_s.pop(device, 0.0))
        me.event("dropped", start, got, joules, why)
    elif device in uplink.lost:  # in segments, its link lost in a step: cut there
        why, joules = UPLINK_OUTAGE, links.upload_j(sent.value, env.now - start, uplink.held_s.pop(device, 0.0))
        me.event("dropped", start, uplink.lost.pop(device), joules, why)
    else:
        why, joules = None, links.upload_j(sent.value, env.now - start, uplink.held_s.pop(device, 0.0))
        me.event("uplink", start, bits, joules)
    me.on_air(start, env.now)
    me.presence.spend(device, joules)
    if why == UNAVAILABLE:
        me.presence.gone[device] = (env.now, why)
    return why


def send_stream(env: simpy.Environment, links_at, devices, bits: float, trace: list, server, medium=None):
    """One stream on the downlink: the one stream step of every orchestrator (a synchronous
    round's ``send_streams``; the buffered orchestrators' ``netsim.clock.buffered.BufferedRun.send``,
    which FedAT's builds on). It times the stream, decides who gets it and writes its events.

    At its start (now, or its grant's on ``medium``, a downlink shared by the streams of a run:
    ``netsim.transport.media.ResourceBlocks.carry``) the links of that instant (``links_at()``)
    time it for its listeners (``server.listeners(devices)``: those of ``devices`` it still sends
    to) at its weakest listener's rate (``links.stream_s``: in segments from its start on a
    moving cell, 0 when none of them can receive it), and those not in downlink outage get it
    (``links.receives``: at its start, and in segments not lost mid-way); a stream whose
    listeners all left is not sent (a planned stream, ``devices`` empty, is timed as planned).
    ``server.started(airtime, listeners, getting)`` is told at its start. At its end
    ``server.ended(bits sent)``, the ``downlink`` event (round ``server.round()``, entity ``server.entity``, its bits when it was
    on the air, 0 when nobody could receive it), then for each listener in order: one in
    downlink outage is dropped (``downlink-outage``, its event where ``server.drops(device)``:
    a device's last stream of the round, or any buffered one; then ``server.missed(device)``);
    one that got it, where ``server.hands_over`` (the device does not time its own reception,
    ``receive``), is handed it (``server.got(device)``: True for a device the round keeps) and
    has its ``receive`` event where the links record energy. Returns the airtime."""
    timed = {}

    def timing():
        links = links_at()
        listeners = server.listeners(devices)
        airtime = links.stream_s(listeners, bits, env.now) if listeners or not devices else 0.0  # in segments from its start
        getting = [d for d in listeners if links.receives(d)]
        timed.update(links=links, listeners=listeners, getting=set(getting), airtime=airtime)
        server.started(airtime, listeners, getting)
        return airtime

    if medium is None:
        start = env.now
        yield env.timeout(timing())
    else:
        start = yield from medium.carry(1, timing)
    links, airtime, getting = timed["links"], timed["airtime"], timed["getting"]
    sent_bits = bits if airtime > 0 else 0.0
    server.ended(sent_bits)
    trace.append(TraceEvent(server.round(), "downlink", server.entity, start, env.now, sent_bits))
    for device in timed["listeners"]:
        if device not in getting:
            if server.drops(device):
                now = env.now
                trace.append(TraceEvent(server.round(), "dropped", device, now, now, 0.0, 0.0, DOWNLINK_OUTAGE))
            server.missed(device)
            continue
        if server.hands_over and server.got(device) and links.records_energy:
            trace.append(TraceEvent(server.round(), "receive", device, start, env.now, bits, links.receive_j(device, airtime)))
    return airtime


class RoundStreams:
    """A synchronous round's side of ``send_stream`` for its stream ``index``: every device of
    the stream listens (a stream goes out as planned even if its listeners left meanwhile: the
    server learns it at the round's end); a participant that got its last stream has its model
    (``received[device]`` fires), one in downlink outage is dropped at its last stream's end.
    With a ``Presence`` the stream's start is announced (``Presence.stream_starts``: its airtime
    and bits) and each listener times its own reception (``round_device``)."""

    def __init__(self, server_round: int, index: int, bits: float, received: dict, last_stream: dict, presence: Presence | None):
        self.server_round, self.entity, self.bits = server_round, index, bits
        self.received, self.last_stream, self.presence = received, last_stream, presence
        self.hands_over = presence is None

    def round(self) -> int:
        return self.server_round

    def listeners(self, devices):
        return devices

    def started(self, airtime: float, listeners, getting) -> None:
        if self.presence is not None:
            self.presence.stream_starts[self.entity].succeed((airtime, self.bits))

    def ended(self, sent_bits: float) -> None:
        pass

    def drops(self, device: int) -> bool:
        return device in self.received and self.last_stream[device] == self.entity

    def missed(self, device: int) -> None:
        pass

    def got(self, device: int) -> bool:
        if device not in self.received:
            return False
        if self.last_stream[device] == self.entity:
            self.received[device].succeed()
        return True


def send_streams(env: simpy.Environment, plan, links, received: dict, trace: list, server_round: int, presence: Presence | None = None):
    """A synchronous round's downlink (``plan.streams``, a ``contract.RoundPlan``'s): the streams
    one after another, each the one stream step ``send_stream`` (timed at its start by the
    links: at its weakest listener's rate on a cell, 0 when none of them can receive it; the
    durations' on a normalized system), as ``RoundStreams`` hears it: a device has its model
    (``received[device]`` fires) when its last stream ends; a listener in downlink outage
    (``links.receives``) gets nothing and is dropped (``downlink-outage``) at its last
    stream's end; with a ``Presence`` each stream's start is announced and the listeners time
    their own reception (``round_device``)."""
    last_stream = {device: index for index, stream in enumerate(plan.streams) for device in stream.devices}
    for index, stream in enumerate(plan.streams):
        server = RoundStreams(server_round, index, stream.bits, received, last_stream, presence)
        yield from send_stream(env, lambda: links, stream.devices, stream.bits, trace, server)


def round_device(shared: SharedRound, device: int, start_signal, computed, compute_s: float, compute_j: float, uplink_bits: float,
                 streams: tuple = ()):
    """A device's part of a synchronous round: receive its own ``streams`` (indices into the
    plan's, each announced by ``Presence.stream_starts``; none where the downlink process hands
    the model over), wait for ``start_signal`` (None: nothing), compute for ``compute_s``
    (``compute_j`` joules), tell ``computed``, (barrier mode: wait for everyone), upload
    ``uplink_bits``. Returns True when the update arrived.

    A device still computing at the deadline, or whose upload would end after it, is dropped and
    sends nothing; one in uplink outage computes but cannot upload. With a ``Presence`` a device
    that switches off or runs flat leaves at that instant (the step it was in cut there): a
    stream it is still to receive is missed (``Presence.unheard``), and it sends nothing."""
    presence = shared.presence if shared.presence is not None else Presence({})
    me = Device(shared, device, presence)
    for index in streams:
        if not (yield from receive(me, presence.stream_starts[index])):
            presence.unheard.add(device)
            computed.succeed(False)
            return False
    if (yield from wait(me, start_signal)):
        computed.succeed(False)
        return me.leave(UNAVAILABLE)
    done = yield from compute(me, compute_s, compute_j)
    computed.succeed(done)
    if not done:
        return False
    if (yield from wait(me, shared.barrier)):
        return me.leave(UNAVAILABLE)
    return (yield from upload(me, uplink_bits))
