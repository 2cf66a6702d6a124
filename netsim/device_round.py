"""One device's part of a round as a SimPy process, shared by the normalized reference
(``netsim.reference``) and the cell (``netsim.physical_round``): wait for the model, compute,
(barrier mode: wait for everyone), upload. What the network decides comes in through ``links``:
whether the device can upload (outage), its upload's airtime and grant (resource blocks of its
receiver, held while it sends: one of one on the normalized systems), or an FDMA share, and
the energies (0 on the normalized systems).
"""

from __future__ import annotations

from dataclasses import dataclass

import simpy

from netsim.trace import TraceEvent

DEADLINE = "deadline"
UPLINK_OUTAGE = "uplink-outage"


@dataclass(frozen=True)
class Deadline:
    """The round's deadline: its time on the clock and the event that fires then."""

    at: float
    event: simpy.Event


@dataclass(frozen=True)
class SharedRound:
    """What every device process of one round shares: the clock, the barrier (barrier mode:
    everyone computed; None pipelined), the uplink queue of each device (device -> its
    receiver's ``netsim.transport.ResourceBlocks``, or an ``FdmaUplink``), the ``links``
    (outages, airtimes, grants, energies), the deadline (None: none) and the trace the round
    appends to."""

    env: simpy.Environment
    barrier: simpy.Event | None
    uplink: dict
    links: object
    deadline: Deadline | None
    trace: list
    server_round: int


def device_process(shared: SharedRound, device: int, received, computed, compute_s: float, compute_j: float, uplink_bits: float):
    """Wait for the model (``received``), compute for ``compute_s`` (spending ``compute_j``
    joules), tell ``computed``, (barrier mode: wait for everyone), upload ``uplink_bits``.

    Returns True when the update arrived; a device still computing at the deadline, or whose
    upload would end after it, is dropped and sends nothing; a device in uplink outage computes
    but cannot upload. On FDMA, an upload still running at the deadline is cut there.
    """
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
        return (yield from _fdma_upload(env, device, uplink, links, uplink_bits, deadline, trace, server_round))
    uplink_s = links.uplink_s(device, uplink_bits)  # 0: nothing to send
    if uplink_s == 0:
        return True
    with uplink.request(links.grant_prbs(device)) as slot:
        yield slot
        if deadline and env.now + uplink_s > deadline.at:
            trace.append(TraceEvent(server_round, "dropped", device, env.now, env.now, 0.0, 0.0, DEADLINE))
            return False
        start = env.now
        yield env.timeout(uplink_s)
        trace.append(TraceEvent(server_round, "uplink", device, start, env.now, uplink_bits, links.transmit_j(device, uplink_s)))
    return True


def _fdma_upload(env, device, uplink, links, bits, deadline, trace, server_round):
    start = env.now
    sent = uplink.transmit(device, bits)
    if deadline:
        yield sent | deadline.event
    else:
        yield sent
    if not sent.processed:  # the deadline came first: the upload is cut, its airtime spent
        got, drawn = uplink.abort(device)
        trace.append(TraceEvent(server_round, "dropped", device, start, env.now, got, links.upload_j(drawn), DEADLINE))
        return False
    trace.append(TraceEvent(server_round, "uplink", device, start, env.now, bits, links.upload_j(sent.value)))
    return True

