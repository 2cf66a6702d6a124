"""A round on a physical network with a TDMA uplink, vectorized: the fast path of
``netsim.transport.physical_round`` (whose per-device SimPy processes stay the reference).

The cell decides the durations (streams at their weakest listener not in outage, compute in
cycles, uploads at each device's own rate) and who is out (downlink and uplink outages); the
timing is then the normalized engine's vectorized timeline (``netsim.transport.timeline``) over the
devices that received their model, one queue per uplink receiver (``PhysicalNetwork.uplink_queue``)
whose grants share its resource blocks (``netsim.transport.block_queue``): a device in uplink outage
computes and then sends nothing.
Outcome, round end and per-device energies are bit for bit those of the processes (energies
summed in the processes' order: receptions stream by stream, compute, upload); the trace holds
the same events, in time order (ties may be listed in another order than the processes').
FDMA rounds (a processor-sharing band) run as processes.
"""

from __future__ import annotations

from itertools import chain, repeat

import numpy as np

from contract import RoundOutcome, RoundPlan
from netsim.transport.block_queue import Receivers
from netsim.transport.hold import hold_until
from netsim.radio.physical_links import DEADLINE, DOWNLINK_OUTAGE, UPLINK_OUTAGE, PhysicalLinks, in_segments
from netsim.transport.physical_round import grant_waits, idle_events, physical_round_process
from netsim.transport.durations import RoundDurations
from netsim.transport.timeline import ARRIVED, DROPPED_COMPUTING, round_timeline
from netsim.transport.trace import TraceEvent
from netsim.physical_protocol import PhysicalNetworkProtocol


def physical_round_fast(env, plan: RoundPlan, network: PhysicalNetworkProtocol, model_bits: float, rng: np.random.Generator, trace,
                        server_round, channel_rng=None):
    """Same contract and same random draws as ``physical_round_process``; FDMA rounds and rounds
    whose transfers are served in segments (a moving cell: ``netsim.radio.physical_links.in_segments``, each
    transfer's airtime depends on when it starts) go there."""
    if network.system.uplink_access != "tdma" or in_segments(network):
        return (yield from physical_round_process(env, plan, network, model_bits, rng, trace, server_round, channel_rng))
    participants = plan.participants
    draws = network.compute.sample(rng, len(participants))
    links = PhysicalLinks.draw(network, channel_rng, env.now)
    round_ = PhysicalRound(plan, links, np.asarray(draws, dtype=float))
    end, result = round_.resolve(env.now, network.mode, network.deadline, trace, server_round)
    yield from hold_until(env, end)
    return result


class PhysicalRound:
    """One TDMA round's durations, outages and timeline, computed at once."""

    def __init__(self, plan: RoundPlan, links: PhysicalLinks, draws: np.ndarray):
        self.plan = plan
        self.links = links
        channel = links.channel
        network = links.network
        n = len(plan.participants)
        self.devices = np.fromiter(plan.participants, dtype=np.int64, count=n)
        sizes = np.fromiter((len(s.devices) for s in plan.streams), dtype=np.int64, count=len(plan.streams))
        self.members = np.fromiter(chain.from_iterable(s.devices for s in plan.streams), dtype=np.int64, count=int(sizes.sum()))
        self.stream_of = np.repeat(np.arange(sizes.size), sizes)
        getting = ~channel.downlink_outage[self.members]
        rates = np.where(getting, channel.downlink_bps[self.members], np.inf)
        weakest = np.full(sizes.size, np.inf)
        np.minimum.at(weakest, self.stream_of, rates)
        bits = np.array([s.bits for s in plan.streams], dtype=float)
        self.stream_bits = bits
        self.stream_sent = np.isfinite(weakest)
        self.stream_s = np.where(self.stream_sent, bits / np.where(self.stream_sent, weakest, 1.0), 0.0)
        if channel.harq_downlink:  # nr-harq: each stream through the link layer, in the plan's order (its draws)
            self.stream_s = np.array([links.stream_s(s.devices, s.bits) for s in plan.streams], dtype=float)
        self.member_gets = getting
        listening = np.isin(self.devices, self.members)
        self.missed = listening & channel.downlink_outage[self.devices]
        keep = ~self.missed
        self.kept = self.devices[keep]
        system = network.system
        samples = network.samples_per_update[self.kept]
        kept = self.kept.tolist()
        scale = np.fromiter(map(plan.compute_scale.get, kept, repeat(1.0)), dtype=float, count=len(kept))
        base = system.cycles_per_sample * samples / system.cpu_hz
        self.compute_s = scale * (base + draws[keep])
        self.compute_j = system.kappa * (scale * system.cycles_per_sample * samples) * system.cpu_hz**2
        up_bits = np.fromiter(map(plan.uplink_bits.get, kept, repeat(0.0)), dtype=float, count=len(kept))
        self.up_bits = up_bits
        self.ul_outage = channel.uplink_outage[self.kept]
        sending = (up_bits > 0) & ~self.ul_outage
        if links.harq:  # each upload through the NR link layer (netsim.radio.harq_uplink)
            self.uplink_s = np.array([links.uplink_s(d, b) if go else 0.0 for d, b, go in zip(kept, up_bits.tolist(), sending.tolist())],
                                     dtype=float)
        else:
            self.uplink_s = np.where(sending, up_bits / channel.uplink_bps[self.kept], 0.0)

    def resolve(self, start: float, mode: str, deadline_s, trace, server_round):
        """(round end, (outcome, energy per participant, bits sent)); appends the trace."""
        plan = self.plan
        reduced = RoundPlan(plan.streams, plan.uplink_bits, tuple(self.kept.tolist()), plan.compute_scale)
        links = self.links
        receivers = Receivers(links.uplink_queue[self.kept], links.channel.allocated_prbs[self.kept], links.band_prbs)
        timeline = round_timeline(reduced, RoundDurations(self.stream_s, self.compute_s, self.uplink_s), start, mode, deadline_s,
                                  receivers)
        status = timeline.status
        cut = status == DROPPED_COMPUTING
        out = self.ul_outage & ~cut
        arrived = (status == ARRIVED) & ~out
        end = timeline.end
        lost = self.missed.any() or out.any()
        if timeline.deadline_at is not None and lost and end < timeline.deadline_at:
            end = timeline.deadline_at
        dropped = {d: DOWNLINK_OUTAGE for d in self.devices[self.missed].tolist()}
        dropped.update({d: DEADLINE for d in self.kept[status != ARRIVED].tolist()})
        dropped.update({d: UPLINK_OUTAGE for d in self.kept[out].tolist()})
        outcome = RoundOutcome(
            received=tuple(sorted(self.kept.tolist())),
            computed=tuple(sorted(self.kept[~cut].tolist())),
            arrived=tuple(sorted(self.kept[arrived].tolist())),
            dropped=dropped,
        )
        energy = self._energy(timeline, cut, arrived)
        sent = arrived & (self.uplink_s > 0)
        upload_s = dict(zip(self.kept[sent].tolist(), self.uplink_s[sent].tolist()))
        events = self._trace(timeline, cut, out, server_round) if trace is not None or links.network.grant_wait_w else None
        waits = grant_waits(events, mode == "barrier") if links.network.grant_wait_w else None
        idle = idle_events(self.links, plan, start, float(end), upload_s, server_round, waits)
        for e in idle:
            energy[e.entity] += e.energy_j
        sent_bits = float(sum(np.where(self.stream_sent, self.stream_bits, 0.0).tolist()))
        if trace is not None:
            trace.extend(events + idle)
        return float(end), (outcome, energy, sent_bits)

    def _energy(self, timeline, cut, arrived) -> dict[int, float]:
        """Per participant, added in the processes' order: receptions, compute, upload."""
        links = self.links
        network = links.network
        energy = np.zeros(self.devices.size)
        got = self.member_gets & self.stream_sent[self.stream_of]
        who = self._positions(self.members[got])
        listening_s = self.stream_s[self.stream_of[got]]
        taking_part = who >= 0
        np.add.at(energy, who[taking_part], network.receive_j(listening_s[taking_part]))
        kept_at = self._positions(self.kept)
        elapsed = timeline.computed - timeline.received
        done = np.where(self.compute_s == 0, 1.0, elapsed / np.where(self.compute_s == 0, 1.0, self.compute_s))
        energy[kept_at] += self.compute_j * done
        sent = arrived & (self.uplink_s > 0)
        if links.harq:  # charged one by one: each device's link state moves on (PhysicalLinks.transmit_j)
            energy[kept_at[sent]] += [links.transmit_j(d, s, t) for d, s, t in
                                      zip(self.kept[sent].tolist(), self.uplink_s[sent].tolist(), timeline.uplink_start[sent].tolist())]
        else:
            energy[kept_at[sent]] += links.channel.transmit_j(self.uplink_s[sent], self.kept[sent])
        return dict(zip(self.devices.tolist(), energy.tolist()))

    def _positions(self, devices: np.ndarray) -> np.ndarray:
        """Each device's index in ``plan.participants`` (-1: not a participant)."""
        if self.devices.size == 0:
            return np.full(devices.size, -1, dtype=np.int64)
        order = np.argsort(self.devices, kind="stable")
        place = np.minimum(np.searchsorted(self.devices[order], devices), self.devices.size - 1)
        positions = order[place]
        return np.where(self.devices[positions] == devices, positions, -1)

    def _trace(self, timeline, cut, out, server_round) -> list[TraceEvent]:
        network = self.links.network
        events = []
        for k, stream in enumerate(self.plan.streams):
            bits = stream.bits if self.stream_sent[k] else 0.0
            events.append(TraceEvent(server_round, "downlink", k, float(timeline.stream_start[k]), float(timeline.stream_end[k]), bits))
        got = self.member_gets & self.stream_sent[self.stream_of]
        participant = set(self.devices.tolist())
        for k, d in zip(self.stream_of[got].tolist(), self.members[got].tolist()):
            if d in participant:
                start, stop = float(timeline.stream_start[k]), float(timeline.stream_end[k])
                events.append(TraceEvent(server_round, "receive", d, start, stop, self.plan.streams[k].bits,
                                         float(network.receive_j(float(self.stream_s[k])))))
        last_end = dict(zip(self.members.tolist(), timeline.stream_end[self.stream_of].tolist()))
        for d in self.devices[self.missed].tolist():
            events.append(TraceEvent(server_round, "dropped", d, last_end[d], last_end[d], 0.0, 0.0, DOWNLINK_OUTAGE))
        elapsed = timeline.computed - timeline.received
        for i, d in enumerate(self.kept.tolist()):
            c = self.compute_s[i]
            done = 1.0 if c == 0 else float(elapsed[i] / c)
            events.append(TraceEvent(server_round, "compute", d, float(timeline.received[i]), float(timeline.computed[i]), 0.0,
                                     float(self.compute_j[i]) * done))
            if cut[i]:
                events.append(TraceEvent(server_round, "dropped", d, float(timeline.computed[i]), float(timeline.computed[i]),
                                         0.0, 0.0, DEADLINE))
            elif out[i]:
                events.append(TraceEvent(server_round, "dropped", d, float(timeline.ready[i]), float(timeline.ready[i]),
                                         0.0, 0.0, UPLINK_OUTAGE))
            elif timeline.status[i] != ARRIVED:
                at = float(timeline.uplink_start[i])
                events.append(TraceEvent(server_round, "dropped", d, at, at, 0.0, 0.0, DEADLINE))
            elif self.uplink_s[i] > 0:
                events.append(TraceEvent(server_round, "uplink", d, float(timeline.uplink_start[i]), float(timeline.uplink_end[i]),
                                         float(self.up_bits[i]),
                                         self.links.transmit_j(d, float(self.uplink_s[i]), float(timeline.uplink_start[i]))))
        events.sort(key=lambda e: e.end)
        return events
