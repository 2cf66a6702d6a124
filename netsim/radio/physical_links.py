"""One round of a physical network: every duration, reception and energy the physical round
asks about, from this round's block-fading draw (time in seconds, energy in joules).

The normalized systems answer the same questions with ``round_durations``
(``netsim.transport.durations``); a physical round also has outages, an FDMA option and energy.

On a moving cell (``in_segments``: ``netsim.dynamics.motion``, some device's speed above 0) a
transfer is served in segments (issue 56 item 2; ``docs/channel-in-time.md``, "Transfers in
segments"): the channel is read every ``SEGMENT_S`` from the links' start (the round's, or a
buffered step's: ``start_s``) and held for the step, and a transfer's part in each step runs at
the rate of that step's channel (position, large-scale channel, serving sector of the
association, interference; the fading as ``fading_in_time`` says: ``block`` the links' own
draw held, ``doppler`` the fading of the step's instant). Its airtime solves
``sum_k rate_k dt_k = bits``, its energy is ``sum_k P_k dt_k`` (TS 38.213 7.1.1: under
fractional power control the power follows the path loss step by step), a stream runs at its
weakest listener's rate step by step, and a device whose link falls below the outage floor (or
out of the parameter server's coverage) in a step loses the transfer there. On a static cell the
channel is the links' own for every transfer, and nothing of this runs.

Under ``link_abstraction`` ``nr-harq`` with ``uplink_access`` ``pf`` or ``fdma`` each transmitter's rate on its
grant (PF's water-filled grant; FDMA's equal share in whole DFT-s-OFDM sizes, each capped at its widest
decodable grant, ``fdma_prb_sharing``) is the
link layer's expected HARQ goodput there (``RoundChannel.harq_share_bps``), its energy
the shared uplink's (its state power on its grant over its time on the air). Under TDMA each upload is served by the NR link layer on its
grant's PRBs (``netsim.radio.harq_uplink``: EESM, the device's outer loop, drawn block errors,
HARQ): its airtime is the transfer's wall-clock time there and its energy every transmission's;
the device's link state moves on when the upload is charged (``transmit_j``). In segments each
block is served on the grant of its step's channel (``harq_uplink.transfer_in_steps``, the grant
held and narrowed as ``_uplink_rate``'s), and the upload is lost from a step whose link is lost.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Sequence

import numpy as np

from netsim.radio import energy, harq_uplink, link_budget
from netsim.dynamics.association import L1_PERIOD_S
from netsim.transport.lifecycle import DEADLINE, DOWNLINK_OUTAGE, UPLINK_OUTAGE  # noqa: F401 (the drop reasons, named in one place)
from netsim.physical_protocol import PhysicalNetworkProtocol, RoundChannelProtocol
from netsim.transport.shared_uplink import SHARED_ACCESS, SharedUplink
from netsim.transport.media import ResourceBlocks, Transfer

# the channel's step on a moving cell: the association's layer-1 measurement period (TS 38.133 Table 9.2.5.2-1, 200 ms),
# over which a device moves 1.7 m at 30 km/h and 6.7 m at 120 km/h, below the shortest shadowing correlation distance (7 m)
SEGMENT_S = L1_PERIOD_S
STEP_TOLERANCE = 1e-9  # of a step: an instant this close below a step's start is in that step (rounding of the clock)


def in_segments(network) -> bool:
    """Whether ``network``'s transfers are served in segments: a moving channel with a device
    whose speed is above 0 (at speed 0 the channel is constant within a transfer)."""
    dynamics = getattr(network, "dynamics", None)
    motion = getattr(dynamics, "motion", None)
    return motion is not None and bool(np.any(motion.speed_m_s > 0))


class PhysicalLinks:
    """A physical network's round: rates and outages of this round's fading draw (the
    ``netsim.transport.media.Links`` of a cell). Its downlink sends one stream at a time (TDMA); its
    uplink is the system's (``tdma``: each receiver's resource blocks; ``fdma``: the band shared
    equally; ``pf``: the proportional-fair scheduler's water-filling, ``pf_sharing``)."""

    downlink_access = "tdma"
    records_energy = True

    def __init__(self, network: PhysicalNetworkProtocol, channel: RoundChannelProtocol):
        self.network = network
        self.channel = channel
        self.uplink_access = network.system.uplink_access
        self._dl_out = channel.downlink_outage
        self._ul_out = channel.uplink_outage
        self._ul_bps = channel.uplink_bps
        self.uplink_queue = channel.network.uplink_queue  # each device's uplink queue (its sector's receiver, or the site's)
        self.fdma_sharing: dict[int, int] = {}  # FDMA: per queue, how many share its band at most this round (set by the round)
        self.start_s = 0.0  # the instant the links were read (the first step's; ``draw``)
        self.segmented = False  # transfers served in segments (a moving cell: ``in_segments``)
        self._steps: dict[int, tuple] = {}  # step -> (its channel, out of coverage per device)
        self._transfers: dict = {}
        self._dl_lost: set[int] = set()  # listeners that lost a stream mid-way (outage from then)
        self.clock_interference = network.system.ul_interference == "clock"
        self.interference_fade = None  # ul_interference=clock: the round's fading to every receiver (``draw``)
        self.harq = network.system.link_abstraction == "nr-harq"  # uploads through the NR link layer (harq_transfer)
        self._harq: dict[tuple, harq_uplink.HarqTransfer] = {}  # (device, bits, uploads sent) -> its next upload
        self._pending: dict[int, harq_uplink.HarqTransfer] = {}  # device -> the upload last computed for it
        self._charged: dict[tuple, harq_uplink.HarqTransfer] = {}  # (device, start) -> the upload charged then

    @classmethod
    def draw(cls, network: PhysicalNetworkProtocol, channel_rng: np.random.Generator | None, now_s: float = 0.0) -> "PhysicalLinks":
        """The round starting at ``now_s`` (a moving cell's channel is that instant's)."""
        if channel_rng is None:
            raise ValueError("a physical network needs a channel generator (its own child of the network seed)")
        channel = network.draw_round(channel_rng, now_s)
        links = cls(channel.network, channel)
        links.start_s, links.segmented = float(now_s), in_segments(network)
        if links.clock_interference:
            links.interference_fade = network.draw_interference_fade()
        return links

    def receives(self, device: int) -> bool:
        """Not in downlink outage at the links' start, and (in segments) no stream lost mid-way."""
        return not self._dl_out[device] and device not in self._dl_lost

    # --- segments (a moving cell) ---------------------------------------------------------
    def _step(self, k: int) -> tuple:
        """Step ``k``'s channel, read at ``start_s + k SEGMENT_S`` (step 0: the links' own), and
        who is out of the parameter server's coverage then; block fading: the links' draw held."""
        if k not in self._steps:
            if k == 0:
                self._steps[k] = (self.channel, None)
            else:
                layout, downlink, uplink, out = self.network.dynamics.motion.at(self.start_s + k * SEGMENT_S)
                if downlink is None:  # block fading: the round's (the step's) draw, held
                    downlink, uplink = self.channel.downlink_fade, self.channel.uplink_fade
                channel = type(self.channel)(dataclasses.replace(self.network, layout=layout), downlink, uplink)  # a RoundChannel
                self._steps[k] = (channel, out)
        return self._steps[k]

    def _first_step(self, start_s: float) -> int:
        return max(0, int(math.floor((start_s - self.start_s) / SEGMENT_S)))

    def _serve(self, start_s: float, bits: float, rate_of) -> tuple[list, bool]:
        """Segments ``[(k, dt_k)]`` serving ``bits`` from ``start_s`` at ``rate_of(k)`` (bit/s; 0:
        lost from the step's start), and whether it was lost: ``sum_k rate_k dt_k = bits``."""
        k, t, left, pieces = self._first_step(start_s), start_s, bits, []
        while True:
            rate = rate_of(k)
            if rate <= 0:
                return pieces, True
            end = self.start_s + (k + 1) * SEGMENT_S
            if rate * (end - t) >= left:
                pieces.append((k, left / rate))
                return pieces, False
            pieces.append((k, end - t))
            left -= rate * (end - t)
            t, k = end, k + 1

    def _uplink_rate(self, device: int, prbs: int, k: int) -> float:
        """The device's rate in step ``k`` on its grant of ``prbs`` blocks (held from its start), or
        on the step's own headroom grant where that is narrower (``RoundChannel.allocated_prbs``:
        a scheduler reading the power headroom report narrows it as the path loss grows); 0
        below the outage floor or out of coverage."""
        channel, out = self._step(k)
        if out is not None and out[device]:
            return 0.0
        prbs = min(prbs, int(channel.allocated_prbs[device]))
        if prbs == channel.allocated_prbs[device]:
            return 0.0 if channel.uplink_outage[device] else float(channel.uplink_bps[device])
        system = channel.system
        gain = system.grant_gain_db(prbs, channel.network.uplink_power_dbm[device], channel.network.coupling_loss_db[device])
        efficiency = system.efficiency(channel._mean_snr_db[1][device:device + 1] + gain, channel.uplink_fade[device:device + 1],
                                       "uplink")
        if system.below_floor(efficiency)[0]:
            return 0.0
        return float(channel.network.uplink_bps(efficiency)[0] * prbs / system.uplink_prbs)

    def _uplink_power_w(self, device: int, prbs: int, k: int) -> float:
        """The device's transmit state power on its grant in step ``k`` (``_uplink_rate``'s; TS
        38.213 7.1.1 at the step's path loss)."""
        channel = self._step(k)[0]
        prbs = min(prbs, int(channel.allocated_prbs[device]))
        radiated = link_budget.dbm_to_w(channel.system.grant_power_dbm(prbs, channel.network.uplink_power_dbm[device],
                                                                       channel.network.coupling_loss_db[device]))
        return float(self.network.transmit_state_w(radiated))

    def upload(self, device: int, bits: float, start_s: float | None = None) -> Transfer:
        """The device's TDMA upload of ``bits`` starting at ``start_s`` on its grant
        (``grant_prbs``): in segments on a moving cell (cut where its link is lost), else at its
        rate of the links' channel."""
        if not self.segmented or start_s is None or bits <= 0:
            return Transfer(self.uplink_s(device, bits), False, bits)
        if self.harq:
            sent = self._harq_in_steps(device, bits, start_s)
            result = sent.result
            through = min(bits, float(result.tbs_bits[result.delivered].sum())) if result.lost else bits
            return Transfer(sent.wall_s, result.lost, through)
        pieces, lost = self._uplink_pieces(device, bits, start_s)
        through = sum(self._uplink_rate(device, self.grant_prbs(device), k) * dt for k, dt in pieces) if lost else bits
        return Transfer(sum(dt for _, dt in pieces), lost, through)

    def _uplink_pieces(self, device: int, bits: float, start_s: float) -> tuple[list, bool]:
        key = ("up", device, bits, start_s)
        if key not in self._transfers:
            prbs = self.grant_prbs(device)
            self._transfers[key] = self._serve(start_s, bits, lambda k: self._uplink_rate(device, prbs, k))
        return self._transfers[key]

    def _stream(self, devices: Sequence[int], bits: float, start_s: float) -> tuple[float, set]:
        """A stream in segments from ``start_s``: its listeners those not in downlink outage at the
        links' start; in each step it runs at the weakest rate among those still listening, and a
        listener below the floor (or out of coverage) in a step is lost from then. (airtime, lost)."""
        key = ("down", tuple(devices), bits, start_s)
        if key not in self._transfers:
            listening = [d for d in dict.fromkeys(devices) if not self._dl_out[d]]
            lost: set[int] = set()

            def rate_of(k):
                channel, out = self._step(k)
                for d in listening:
                    if d not in lost and (channel.downlink_outage[d] or (out is not None and out[d])):
                        lost.add(d)
                rates = [channel.downlink_bps[d] for d in listening if d not in lost]
                return float(min(rates)) if rates else 0.0

            pieces, _ = self._serve(start_s, bits, rate_of) if listening else ([], False)
            self._transfers[key] = (sum(dt for _, dt in pieces), lost)
        return self._transfers[key]

    def plan_downlink(self, streams, start_s: float) -> None:
        """The round's streams, sent one after another from ``start_s`` (``downlink_process``): in
        segments, the listeners each loses mid-way are known before it starts (``receives``)."""
        if not self.segmented:
            return
        t = start_s
        for stream in streams:
            t += self.stream_s(stream.devices, stream.bits, t)

    def can_upload(self, device: int, uploading: bool = False) -> bool:
        """TDMA, or nothing to send: not in outage alone on the band (its grant); FDMA with
        something to send: not in outage on the narrowest share its queue can give it this round
        (its band split among the ``fdma_sharing`` of its queue, at most one block each); PF with
        something to send: not in outage on the widest grant the scheduler gives it (``pf_outage``)."""
        if uploading and self.uplink_access == "pf":
            return not self.pf_outage(self.channel, device)
        if uploading and self.uplink_access == "fdma" and self.fdma_sharing.get(int(self.uplink_queue[device]), 0):
            return not self.fdma_outage(self.channel, device)
        return not self._ul_out[device]

    def fdma_outage(self, channel, device: int) -> bool:
        """FDMA: whether ``device`` is below the outage floor on ``channel`` on the narrowest share
        its queue can give it this round (its band split among the ``fdma_sharing`` of its queue,
        at most one block each). ``nr-harq``: where one block does not carry it
        (``RoundChannel.harq_decodable_prbs`` 0: below the floor there, or MCS 0 missing the BLER
        target after four copies), as its share is capped at the widest that does
        (``fdma_prb_sharing``): a device admitted has a grant with a positive expected goodput."""
        if self.harq:
            return channel.harq_decodable_prbs(device, 1) == 0
        sharing = min(self.fdma_sharing.get(int(self.uplink_queue[device]), 0), self.band_prbs)
        return bool(sharing) and channel.uplink_share_outage(device, sharing)

    def pf_outage(self, channel, device: int) -> bool:
        """PF: whether ``device`` is below the outage floor on ``channel`` even on the widest grant
        the scheduler gives it, its power headroom limit in a DFT-s-OFDM size
        (``PhysicalNetwork.power_limited_grant_prbs``; 1 block at P_CMAX where one needs more).
        Its power per block is the same on any narrower grant (TS 38.213 7.1.1 below P_CMAX), so
        so is its efficiency: a device not in outage there is in outage on no grant of the round.
        ``nr-harq``: also where MCS 0 misses the BLER target after four copies on some grant the
        scheduler can give it (``RoundChannel.harq_share_outage``: where its rate,
        ``harq_share_bps``, would be 0)."""
        widest = int(channel.network.power_limited_grant_prbs[device])
        if channel.uplink_share_outage(device, self.band_prbs / widest):
            return True
        return self.harq and channel.harq_share_outage(device, widest)

    def pf_sharing(self, devices: np.ndarray, at_s: float | None = None) -> np.ndarray:
        """PF: each of ``devices`` (those with data pending on one receiver, in arrival order) the
        band over its blocks (``netsim.radio.physical.PhysicalSystem.pf_grant_prbs``: water-filled,
        capped by each one's power headroom at the path loss of the step holding ``at_s``)."""
        channel = self.channel if at_s is None or not self.segmented else self._step(self.step_at(at_s))[0]
        grants = channel.system.pf_grant_prbs(channel.network.coupling_loss_db[devices])
        return self.band_prbs / grants.astype(float)

    def fdma_prb_sharing(self, devices: np.ndarray, at_s: float | None = None) -> np.ndarray:
        """FDMA under ``nr-harq``: each of ``devices`` (those transmitting at one receiver, in
        arrival order) the band over its blocks, an equal split in whole DFT-s-OFDM sizes capped
        by each one's widest decodable grant at the step holding ``at_s``
        (``netsim.radio.physical.PhysicalSystem.fdma_grant_prbs``, ``RoundChannel.harq_decodable_prbs``)."""
        channel = self.channel if at_s is None or not self.segmented else self._step(self.step_at(at_s))[0]
        caps = [channel.harq_decodable_prbs(d, self.band_prbs) for d in np.asarray(devices).tolist()]
        return self.band_prbs / channel.system.fdma_grant_prbs(caps).astype(float)

    def share_allocator(self):
        """The shared uplink's ``allocate``: PF's water-filling, FDMA's whole-PRB equal split under
        ``nr-harq``, else None (FDMA's equal split of the band, ``sharing`` the transmitters' count)."""
        if self.uplink_access == "pf":
            return self.pf_sharing
        return self.fdma_prb_sharing if self.harq else None

    def stream_s(self, devices: Sequence[int], bits: float, start_s: float | None = None) -> float:
        """Payload over the rate of the weakest listener not in outage (0: nobody can receive); in
        segments from ``start_s`` (its listeners lost mid-way no longer ``receives``)."""
        if not self.segmented or start_s is None:
            key = ("stream", tuple(devices), bits)  # nr-harq draws a stream once (its listeners' counts move on)
            if key not in self._transfers:
                self._transfers[key] = self.channel.stream_airtime_s(devices, bits)
            return self._transfers[key]
        airtime, lost = self._stream(devices, bits, start_s)
        self._dl_lost |= lost
        return airtime

    def compute_s(self, device: int, draw: float, scale: float) -> float:
        return self.network.compute_s(device, float(draw), scale)

    def harq_transfer(self, device: int, bits: float) -> harq_uplink.HarqTransfer:
        """``nr-harq``: the device's next upload of ``bits`` on its grant (``harq_uplink.transfer``
        with the run's ``LinkState``, which it leaves as it is)."""
        state = self.network.link_state
        if state is None:
            raise ValueError("link_abstraction=nr-harq needs the run's link state (PhysicalSystem.bind)")
        key = (device, bits, state.count(device))
        if key not in self._harq:
            channel = self.channel
            state_w = float(self.network.transmit_state_w(channel.uplink_power_w[device]))
            self._harq[key] = harq_uplink.transfer(bits, channel.harq_sinr(device), state, device, channel.harq_link, state_w,
                                                   self.network.system.shares[1], self.network.off_slot_w[1])
        self._pending[device] = self._harq[key]
        return self._harq[key]

    def _harq_in_steps(self, device: int, bits: float, start_s: float) -> harq_uplink.HarqTransfer:
        """``nr-harq`` in segments: the device's next upload of ``bits`` from ``start_s``, each block
        on its step's channel (``harq_uplink.transfer_in_steps``, ``_harq_step``)."""
        state = self.network.link_state
        key = (device, bits, state.count(device), start_s)
        if key not in self._harq:
            prbs = self.grant_prbs(device)
            steps = harq_uplink.Steps(self.step_at, lambda k: self.start_s + k * SEGMENT_S, lambda k: self._harq_step(device, prbs, k))
            self._harq[key] = harq_uplink.transfer_in_steps(bits, start_s, steps, state, device, self.channel.harq_link,
                                                            self.network.system.shares[1], self.network.off_slot_w[1])
        self._pending[device] = self._harq[key]
        return self._harq[key]

    def _harq_step(self, device: int, prbs: int, k: int) -> tuple[np.ndarray, float] | None:
        """``nr-harq`` in step ``k``: the per-PRB linear SINRs of the device's grant (``prbs`` held
        from its start, or the step's own headroom grant where that is narrower, as
        ``_uplink_rate``) and its transmit state power (W); None out of coverage, below the floor
        or where MCS 0 misses the BLER target after four copies (``harq_uplink.in_outage``)."""
        channel, out = self._step(k)
        if out is not None and out[device]:
            return None
        own = int(channel.allocated_prbs[device])
        if prbs >= own:
            if channel.uplink_outage[device]:
                return None
            return channel.harq_sinr(device), float(self.network.transmit_state_w(channel.uplink_power_w[device]))
        sinr = channel.harq_sinr(device, prbs)
        gain = channel.system.grant_gain_db(prbs, channel.network.uplink_power_dbm[device], channel.network.coupling_loss_db[device])
        efficiency = channel.system.efficiency(channel._mean_snr_db[1][device:device + 1] + gain, channel.uplink_fade[device:device + 1],
                                               "uplink")
        if channel.system.below_floor(efficiency)[0] or harq_uplink.in_outage(sinr, channel.harq_link):
            return None
        radiated = link_budget.dbm_to_w(channel.system.grant_power_dbm(prbs, channel.network.uplink_power_dbm[device],
                                                                       channel.network.coupling_loss_db[device]))
        return sinr, float(self.network.transmit_state_w(radiated))

    def uplink_s(self, device: int, bits: float, start_s: float | None = None) -> float:
        """TDMA: on its grant (``grant_prbs``) at the device's own rate; in segments from
        ``start_s`` (``upload``: to its cut if it loses its link). ``nr-harq``: the wall-clock
        time of its next upload through the link layer (``harq_transfer``; with ``start_s``, that
        of the upload charged then, if any)."""
        if self.harq and bits > 0:
            charged = self._charged.get((device, start_s)) if start_s is not None else None
            if charged is None and self.segmented and start_s is not None:
                return self._harq_in_steps(device, bits, start_s).wall_s
            return (charged or self.harq_transfer(device, bits)).wall_s
        if self.segmented and start_s is not None and bits > 0:
            return self.upload(device, bits, start_s).airtime_s
        return bits / float(self._ul_bps[device]) if bits > 0 else 0.0

    def grant_prbs(self, device: int) -> int:
        """TDMA: the resource blocks its upload holds (``RoundChannel.allocated_prbs``)."""
        return int(self.channel.allocated_prbs[device])

    def uplink_share_bps(self, devices: np.ndarray, sharing: int, at_s: float | None = None) -> np.ndarray:
        """FDMA: the devices' rates on ``1/sharing`` of the band each; in segments, those of the
        step holding ``at_s`` (its channel: position, serving sector, interference, fading)."""
        channel = self.channel if at_s is None or not self.segmented else self._step(self.step_at(at_s))[0]
        return channel.uplink_share_bps(devices, sharing)

    def uplink_share_w(self, devices: np.ndarray, sharing: int, at_s: float | None = None) -> np.ndarray:
        """FDMA: the devices' transmit powers on ``1/sharing`` of the band each (W); in segments,
        at the path loss of the step holding ``at_s`` (TS 38.213 7.1.1, as ``_uplink_power_w``)."""
        network = self.network if at_s is None or not self.segmented else self._step(self.step_at(at_s))[0].network
        return network.share_power_w(devices, sharing)

    def shared_uplink(self, env, queue: int):
        """An FDMA or PF uplink receiver's medium for the round (``netsim.transport.shared_uplink.SharedUplink``:
        the band shared equally, or by ``pf_sharing``; at most one device per block, the others
        waiting in arrival order); in segments its shares' rates and powers are those of each
        step and a transmitter that loses its link in a step stops there."""
        return SharedUplink(env, self.uplink_share_bps, self.uplink_share_w, self.band_prbs, self if self.segmented else None,
                          self.share_allocator())

    def clock_interference_w(self, network, devices: np.ndarray, sharing) -> np.ndarray:
        """``ul_interference=clock``: at each of ``devices``' receivers (``uplink_queue`` of
        ``network``: the links' own, or a step's, with its powers at that step's path losses, its
        gains, and each device's serving sector then), the power
        (W, over the whole band) received from those of ``devices`` transmitting at the other
        receivers (the own site's other sectors included): ``sum_j P_j g_j,r f_j,r`` over ``j``
        at a receiver other than ``r``, ``P_j`` its radiated power on its share
        (``PhysicalNetwork.share_power_dbm``), ``g_j,r`` its gain to ``r``
        (``PhysicalNetwork.receiver_gain``), ``f_j,r`` the round's fading of that link. On one
        block it is ``(P_j / m_j) g f`` with chance ``m_j / M`` (its ``m_j`` of the ``M`` blocks at
        random positions: interference averaged over the band, the usual system-level
        assumption; SEAMCAT's OFDMA uplink weighs an interferer by its ``N_RB / M`` share of the
        victim's band the same way), ``P_j g f / M`` per block on average, which over the band
        is the sum; the noise falls with the share as it does (docs/physical-layer.md)."""
        devices = np.asarray(devices)
        power_w = link_budget.dbm_to_w(network.share_power_dbm(devices, sharing))
        receivers = network.uplink_queue[devices]
        coupling = network.receiver_gain[np.ix_(devices, receivers)] * self.interference_fade[np.ix_(devices, receivers)]  # j x i
        return (power_w[:, None] * coupling * (receivers[:, None] != receivers[None, :])).sum(axis=0)

    def clock_share_bps(self, devices: np.ndarray, sharing, at_s: float | None = None) -> np.ndarray:
        """``ul_interference=clock``: the rates of every receiver's transmitters (``devices``, each
        on ``1/sharing`` of its receiver's band), each with the interference of the others at the
        other receivers (``clock_interference_w``); in segments, on the channel of the step
        holding ``at_s`` (positions, path losses, serving sectors, the wanted links' fading; the
        interferers' fading is the round's, held)."""
        channel = self.channel if at_s is None or not self.segmented else self._step(self.step_at(at_s))[0]
        return channel.uplink_share_bps(devices, sharing, self.clock_interference_w(channel.network, devices, sharing))

    def clock_uplink(self, env):
        """``ul_interference=clock``: the round's one shared uplink, every receiver's
        (``netsim.transport.shared_uplink.SharedUplink`` with ``receivers``: each its band, shared as
        ``shared_uplink``'s), every transmitter's rate recomputed at each start or end anywhere and,
        on a moving cell, at each channel step (the queues, each device's receiver, are those of
        the round's start, as ``shared_uplink``'s)."""
        return SharedUplink(env, self.clock_share_bps, self.uplink_share_w, self.band_prbs, self if self.segmented else None,
                          self.share_allocator(), receivers=self.uplink_queue)

    def step_at(self, t_s: float) -> int:
        """The step holding ``t_s`` (a step's start, up to rounding, is its own)."""
        return max(0, int(math.floor((t_s - self.start_s) / SEGMENT_S + STEP_TOLERANCE)))

    def next_step_s(self, t_s: float) -> float:
        """The start of the step after the one holding ``t_s``."""
        return self.start_s + (self.step_at(t_s) + 1) * SEGMENT_S

    def share_lost(self, device: int, t_s: float) -> bool:
        """FDMA in segments: whether ``device`` has lost its link in the step holding ``t_s``: out
        of the parameter server's coverage, or in outage even on the narrowest share its queue
        can give this round (``can_upload``'s test, on that step's channel)."""
        channel, out = self._step(self.step_at(t_s))
        if out is not None and out[device]:
            return True
        if self.uplink_access == "pf":
            return self.pf_outage(channel, device)
        if not self.fdma_sharing.get(int(self.uplink_queue[device]), 0):
            return bool(channel.uplink_outage[device])
        return self.fdma_outage(channel, device)

    def downlink_medium(self, env) -> ResourceBlocks:
        """The cell's downlink: one stream at a time (one block, every stream's)."""
        return ResourceBlocks(env, 1)

    def uplink_medium(self, env) -> ResourceBlocks:
        """An uplink receiver's resource blocks (TDMA: each upload holds its grant's, ``grant_prbs``)."""
        return ResourceBlocks(env, self.band_prbs)

    @property
    def band_prbs(self) -> int:
        """Each receiver's resource blocks: TDMA, the most the grants held at once sum to; FDMA,
        the most devices that share the band at once (one block each at least)."""
        return self.network.system.uplink_prbs

    def upload_j(self, power_seconds: float, airtime_s: float = 0.0, held_s: float = 0.0) -> float:
        """An FDMA or PF upload of ``airtime_s`` that drew ``power_seconds`` (W s): charged for its
        uplink symbols, and under ``ue_energy`` ``slots`` its other slots (``PhysicalNetwork.upload_off_j``).
        ``held_s`` of its airtime stalled on the shared uplink (``SharedUplink.held_s``: no blocks,
        nothing radiated) are a grant wait with data pending: at PDCCH monitoring under ``slots``
        (``PhysicalNetwork.grant_wait_w``), else at the waiting power (``idle_power_w``), and
        without off-direction slots."""
        joules = self.network.upload_j(power_seconds)
        if self.network.off_slot_w[1]:
            joules = joules + self.network.upload_off_j(airtime_s - held_s)
        if held_s:
            network = self.network
            joules = joules + held_s * (network.grant_wait_w if network.system.ue_energy == "slots" else network.idle_power_w)
        return float(joules)

    def compute_j(self, device: int, scale: float) -> float:
        return self.network.compute_j(device, scale)

    def transmit_j(self, device: int, airtime_s: float, start_s: float | None = None) -> float:
        """An upload of ``airtime_s`` wall-clock seconds: charged for its uplink symbols only; in
        segments from ``start_s``, the sum over its steps of each one's power times its time.
        ``nr-harq``: the energy of the upload last computed for the device (``harq_transfer``),
        which is sent now: the device's link state moves on (once per ``(device, start_s)``)."""
        if self.harq:
            return self._charge(device, airtime_s, start_s).energy_j
        if not self.segmented or start_s is None:
            return float(self.channel.transmit_j(airtime_s, device))
        prbs, joules, t, k = self.grant_prbs(device), 0.0, start_s, self._first_step(start_s)
        end_s = start_s + airtime_s
        while t < end_s:
            step_end = min(self.start_s + (k + 1) * SEGMENT_S, end_s)
            dt = airtime_s if step_end >= end_s and t == start_s else step_end - t
            joules += energy.transmit_energy_j(self._uplink_power_w(device, prbs, k), dt, self.network.system.shares[1],
                                               self.network.off_slot_w[1])
            t, k = step_end, k + 1
        return float(joules)

    def _charge(self, device: int, airtime_s: float, start_s: float | None) -> harq_uplink.HarqTransfer:
        key = (device, start_s)
        if key not in self._charged:
            sent = self._pending.get(device)
            if sent is None or start_s is None or sent.wall_s != airtime_s:
                raise ValueError(f"device {device}: an nr-harq upload is charged with its start, after its airtime was asked")
            if sent.result.n_blocks:  # on the air (in segments an upload lost from its first step sends nothing)
                self.network.link_state.commit(device, sent)
            self._charged[key] = sent
        return self._charged[key]

    def receive_j(self, device: int, listening_s: float) -> float:
        return self.network.receive_j(listening_s)
