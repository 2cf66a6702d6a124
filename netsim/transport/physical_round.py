"""A round on a physical network, one SimPy process per participant (the reference style of
``netsim.transport.reference``, with what a cell adds): streams at their weakest listener's rate,
downlink and uplink outages, a TDMA uplink or a shared one (FDMA, PF:
``netsim.transport.shared_uplink``) per receiver (each sector of the site, or the site:
``PhysicalNetwork.uplink_queue``; one shared uplink for every receiver under
``ul_interference=clock``), and every device's energy on the trace. On TDMA
each upload holds its grant's resource blocks (``RoundChannel.allocated_prbs``) of its
receiver's band (``netsim.transport.media.ResourceBlocks``): grants that fit together send together.

A listener in downlink outage misses its model (no compute, no upload; dropped with reason
``downlink-outage``); a device in uplink outage computes but cannot upload
(``uplink-outage``); with a deadline, late devices are dropped as on the normalized systems
(``deadline``; an FDMA upload still running at it is cut there, its airtime paid). On FDMA the
uplink outage is tested on the narrowest share the round can give (the band split among all the
round's uploaders of its queue that received their model). Trace
events carry the device's energy: ``receive`` (one per device and stream it got), ``compute``
(prorated when cut), ``uplink`` and cut uploads (``dropped``). With availability or batteries
(a ``netsim.transport.lifecycle.Presence``) a device that switches off or runs flat in the round leaves
at that instant, the step it was in cut there (``unavailable``, ``battery``).
"""

from __future__ import annotations

import numpy as np

from contract import RoundOutcome, RoundPlan
from netsim.radio import energy
from netsim.transport.lifecycle import BATTERY, Deadline, Presence, SharedRound, round_device, send_streams
from netsim.radio.physical_links import PhysicalLinks
from netsim.transport.shared_uplink import SHARED_ACCESS
from netsim.transport.trace import TraceEvent
from netsim.transport.media import ResourceBlocks
from netsim.physical_protocol import PhysicalNetworkProtocol

ENERGY_KINDS = ("receive", "compute", "uplink", "dropped", "idle")


def grant_waits(events, barrier: bool) -> dict[int, float]:
    """Each device's wait for its uplink grant with data pending, from a round's trace events:
    from when its update is ready (its ``compute`` event's end; in barrier mode not before the
    last one's) to the start of its upload (an ``uplink`` event, or a cut upload: ``dropped``
    with airtime). A device whose upload never started has none."""
    computed = {e.entity: e.end for e in events if e.kind == "compute"}
    barrier_at = max(computed.values(), default=0.0) if barrier else None
    waits = {}
    for e in events:
        if e.entity in computed and (e.kind == "uplink" or (e.kind == "dropped" and e.end > e.start)):
            ready = computed[e.entity] if barrier_at is None else max(computed[e.entity], barrier_at)
            waits[e.entity] = max(e.start - ready, 0.0)
    return waits


def idle_events(links, plan: RoundPlan, start: float, end: float, upload_s: dict, server_round: int,
                grant_wait_s: dict | None = None) -> list[TraceEvent]:
    """Each participant's waiting in the round (TR 38.840's state model, ``PhysicalNetwork.idle_power_w``;
    none when it is 0): the round's time from ``start`` to ``end`` less its time receiving the
    streams it got and sending its upload (``upload_s``: device -> its upload's airtime), at the
    waiting power; under ``ue_energy`` ``slots`` its wait for a grant (``grant_wait_s``, from
    ``grant_waits``) at PDCCH monitoring (``PhysicalNetwork.grant_wait_w``). Both simulators call
    it with the same numbers, so their energies agree bit for bit."""
    power = links.network.idle_power_w
    wait_w = links.network.grant_wait_w
    grant_wait_s = grant_wait_s or {}
    if not power:
        return []
    busy = dict.fromkeys(plan.participants, 0.0)
    t = start  # the streams go one after another from the round's start (``downlink_process``)
    for stream in plan.streams:
        airtime = links.stream_s(stream.devices, stream.bits, t)
        t += airtime
        for device in stream.devices:
            if device in busy and airtime > 0 and links.receives(device):
                busy[device] += airtime
    return [TraceEvent(server_round, "idle", device, start, end, 0.0,
                       energy.idle_energy_j(power, end - start, s + upload_s.get(device, 0.0), grant_wait_s.get(device, 0.0), wait_w))
            for device, s in busy.items()]


def present_idle_events(links, presence, participants, events, start: float, end: float, server_round: int,
                        barrier: bool = False) -> list[TraceEvent]:
    """``idle_events`` of a round with a ``Presence``: each participant waits from ``start`` until
    it left the round (``Presence.gone``), else ``end``, less its time on the air in ``events``
    (its receptions and uploads, whole or cut), its grant wait (``grant_waits``) charged as
    ``idle_events`` does; each one's energy also in ``Presence.idle_j``."""
    power = links.network.idle_power_w
    if not power:
        return []
    wait_w = links.network.grant_wait_w
    waits = grant_waits(events, barrier) if wait_w else {}
    busy = dict.fromkeys(participants, 0.0)
    for e in events:
        if e.entity in busy and (e.kind in ("receive", "uplink") or (e.kind == "dropped" and e.end > e.start)):
            busy[e.entity] += e.end - e.start
    idle = []
    for device, busy_s in busy.items():
        until = presence.gone[device][0] if device in presence.gone else end
        presence.idle_j[device] = joules = energy.idle_energy_j(power, until - start, busy_s, waits.get(device, 0.0), wait_w)
        idle.append(TraceEvent(server_round, "idle", device, start, until, 0.0, joules))
    return idle


def physical_round_process(env, plan: RoundPlan, system: PhysicalNetworkProtocol, model_bits: float, rng: np.random.Generator, trace,
                           server_round, channel_rng=None):
    """One round on a physical network; returns its ``RoundOutcome`` (who received, computed,
    arrived, was dropped and why), each participant's energy in the round (J) and the bits of
    the streams actually sent.

    Compute times are drawn up front in participant order, so barrier and pipelined runs of
    the same seed see the same draws (common random numbers); a physical network then draws
    the round's fading from ``channel_rng``, so the compute draws do not depend on it.

    With availability or batteries (``system.dynamics``: a ``netsim.transport.lifecycle.Presence``) the
    participants switch off and run flat during the round as each step happens; one that left
    waits no more: its idle energy runs from the round's start to when it left, less its time
    receiving and sending. The waiting energy is drained from the batteries at the round's end:
    a device it empties loses the upload it made in the round (``battery``).
    """
    participants = plan.participants
    draws = system.compute.sample(rng, len(participants))
    links = PhysicalLinks.draw(system, channel_rng, env.now)
    links.plan_downlink(plan.streams, env.now)  # in segments: who loses a stream mid-way is known now
    trace = [] if trace is None else trace
    first_event = len(trace)
    round_start = env.now
    dynamics = system.dynamics
    presence = None
    if dynamics is not None and (dynamics.availability is not None or dynamics.batteries is not None):
        presence = Presence.start(env, participants, dynamics.availability, dynamics.batteries)
    deadline = None
    if system.deadline is not None:
        deadline = Deadline(env.now + system.deadline, env.timeout(system.deadline))
    listening = {device for stream in plan.streams for device in stream.devices}
    received = {device: env.event() for device in participants if device in listening}
    if presence is not None:
        presence.stream_starts = [env.event() for _ in plan.streams]
    downlink = env.process(send_streams(env, plan, links, received, trace, server_round, presence))
    computed = {device: env.event() for device in participants}
    barrier = env.all_of(list(computed.values())) if system.mode == "barrier" else None
    missed = {device for device in received if not links.receives(device)}
    queue_of = {device: int(links.uplink_queue[device]) for device in participants}
    if links.uplink_access in SHARED_ACCESS:
        if links.clock_interference:  # one uplink serves every receiver: a start or an end anywhere changes every rate
            every = links.clock_uplink(env)
            queues = {q: every for q in sorted(set(queue_of.values()))}
        else:
            queues = {q: links.shared_uplink(env, q) for q in sorted(set(queue_of.values()))}
        uploading = [queue_of[d] for d in participants if d not in missed and plan.uplink_bits.get(d, 0.0) > 0]
        links.fdma_sharing = {q: uploading.count(q) for q in queues}
    else:
        queues = {q: ResourceBlocks(env, links.band_prbs) for q in sorted(set(queue_of.values()))}
    uplink = {device: queues[q] for device, q in queue_of.items()}
    shared = SharedRound(env, barrier, uplink, links, deadline, trace, server_round, presence)
    processes = {}
    for device, draw in zip(participants, draws):
        if device in missed:  # it never gets its model: no compute, no upload
            computed[device].succeed(False)
            continue
        streams = ()
        if presence is not None:  # it receives its own streams, then (barrier) waits for the downlink's end
            streams = tuple(i for i, stream in enumerate(plan.streams) if device in stream.devices)
            start_signal = downlink if barrier is not None else None
        elif barrier is not None:
            start_signal = downlink
        else:  # a device that receives nothing this round starts at once
            start_signal = received[device] if device in received else env.timeout(0)
        bits = plan.uplink_bits.get(device, 0.0)
        scale = plan.compute_scale.get(device, 1.0)
        processes[device] = env.process(round_device(
            shared, device, start_signal, computed[device], links.compute_s(device, draw, scale), links.compute_j(device, scale), bits,
            streams,
        ))
    yield downlink
    yield env.all_of(list(processes.values()))
    arrived = tuple(sorted(d for d, process in processes.items() if process.value))
    if deadline and len(arrived) < len(participants) and env.now < deadline.at:
        yield deadline.event
    if presence is None:
        upload_s = {e.entity: (links.uplink_s(e.entity, e.bits, e.start) if links.uplink_access == "tdma" and not links.segmented
                              else e.end - e.start)
                    for e in trace[first_event:] if e.kind == "uplink" or (e.kind == "dropped" and e.end > e.start)}
        waits = grant_waits(trace[first_event:], barrier is not None) if links.network.grant_wait_w else None
        trace.extend(idle_events(links, plan, round_start, env.now, upload_s, server_round, waits))
    else:
        trace.extend(present_idle_events(links, presence, participants, trace[first_event:], round_start, env.now, server_round,
                                         barrier is not None))
        if presence.batteries is not None:  # the waiting, charged at the round's end, empties some: their uploads are lost
            ran_out = set(presence.batteries.drain(presence.idle_j)) & set(arrived)
            arrived = tuple(d for d in arrived if d not in ran_out)
            trace.extend(TraceEvent(server_round, "dropped", d, env.now, env.now, 0.0, 0.0, BATTERY) for d in sorted(ran_out))
    events = trace[first_event:]
    unheard = presence.unheard if presence is not None else ()
    outcome = RoundOutcome(
        received=tuple(sorted(d for d in participants if d not in missed and d not in unheard)),
        computed=tuple(sorted(d for d in participants if computed[d].value)),
        arrived=arrived,
        dropped={e.entity: e.reason for e in events if e.kind == "dropped"},
    )
    energy_j = {d: 0.0 for d in participants}
    for e in events:
        if e.kind in ENERGY_KINDS:
            energy_j[e.entity] += e.energy_j
    sent_bits = float(sum(e.bits for e in events if e.kind == "downlink"))
    return outcome, energy_j, sent_bits
