"""The cell's multicast streams through the NR link layer (``link_abstraction`` ``nr-harq``): one
stream, the whole downlink band, a PDSCH to every listener at once with HARQ until each has
decoded (NR MBS point-to-multipoint with HARQ feedback: TS 38.300 16.10, TS 38.321 5.3; the
clauses' text was not at hand: what was checked, in secondary sources, is that a multicast PDSCH
scheduled by a group's G-RNTI gets ACK/NACK-based or NACK-only HARQ-ACK from each UE, and a NACKed
block goes again point-to-multipoint or point-to-point).

**The grant.** Every PRB of the band; listener ``i``'s SINR on PRB ``j`` is its mean downlink SNR
(``RoundChannel``'s, before fading) times the fade of the PRB's subband (PRB ``j`` in subband
``floor(j S / M)``, as the uplink's grant: ``harq_uplink.grant_sinr``). The MCS of the PDSCH table
(TS 38.214 Table 5.1.3.1-1, ``pdsch-64qam``) is ``multicast_grant``'s at percentile 0: the highest at
which every listener meets 10% BLER at its own EESM effective SINR, without an outer loop (offset 0:
a group has no single ACK/NACK history to steer one). Every block of the stream has that MCS and
its TBS (14 symbols, one DMRS symbol).

**HARQ.** Each block goes out once to all; a listener that fails it NACKs and the block is sent
again (chase combining at each listener: its k-th copy is decoded at ``k`` times its SINR, the
block's BLER after ``k`` copies, as the uplink's ``upload``), until every listener has decoded it
or it has gone 4 times; then its bits go again in the next block (as the uplink's). A listener
draws ``u`` for each copy it still needs, and decodes at copy ``k`` where ``u >= BLER_k``; it
draws nothing for copies sent after it decoded.

**Simplified.** MBS may retransmit a PTM transport block by PTM or PTP; here every
retransmission is PTM to the whole group on the same PRBs and MCS (chase combining). No outer
loop, no per-listener link adaptation, no NACK-only feedback mode; a listener's feedback is never
lost.

**Time.** The block's copies occupy downlink slots (``harq.occupied_slots``: 16 HARQ processes,
the round trip of ``HarqTiming`` at the numerology, the uplink's formula: the PDSCH's K1 is not
modelled); the stream's wall-clock airtime is those slots on
the downlink's share of the time (TDD: the pattern's; ``PhysicalSystem.shares``).

**Draws.** Listener ``d``'s ``k``-th stream draws from its own child ``(d, k)`` of the run's
downlink HARQ stream (``contract.seeds.harq_downlink_seed``; ``HarqStreams``): its uniforms do not
depend on which other listeners share the stream (the MCS does: the weakest sets it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from contract.seeds import child
from netsim.radio.link import LinkConfig
from netsim.radio.link.adaptation import Allocation, OuterLoop, group_grant
from netsim.radio.link.harq import HarqTiming, occupied_slots

DOWNLINK_TABLE = "pdsch-64qam"  # TS 38.214 Table 5.1.3.1-1


def link_config(mu: int) -> LinkConfig:
    """PDSCH, 14 symbols, one DMRS symbol, at numerology ``mu``."""
    return LinkConfig(DOWNLINK_TABLE, HarqTiming(mu))


@dataclass(frozen=True)
class StreamResult:
    """One stream: its ``mcs`` and ``tbs_bits``; per block, ``transmissions`` (copies sent) and
    ``delivered`` (every listener decoded it); ``slots`` on the downlink."""

    mcs: int
    tbs_bits: int
    transmissions: np.ndarray
    delivered: np.ndarray
    slots: int


def in_outage(sinr_prb: np.ndarray, link: LinkConfig, bler_target: float = OuterLoop().bler_target) -> bool:
    """A listener MCS 0 misses the BLER target for after the most HARQ copies."""
    return Allocation(link.table, sinr_prb, link.n_symbols, link.dmrs_re_per_prb).combined_bler(0, link.max_transmissions) > bler_target


def stream(bits: int, sinr_by_listener, rngs: list, link: LinkConfig) -> StreamResult:
    """``bits`` to the listeners whose per-PRB linear SINRs are the rows of ``sinr_by_listener``,
    listener ``i`` drawing from ``rngs[i]`` (the reference: block by block, copy by copy)."""
    sinr = np.atleast_2d(np.asarray(sinr_by_listener, dtype=float))
    if bits < 1 or len(rngs) != sinr.shape[0] or sinr.shape[0] < 1:
        raise ValueError("a stream needs bits >= 1 and one generator per listener (at least one)")
    members = [Allocation(link.table, row, link.n_symbols, link.dmrs_re_per_prb) for row in sinr]
    chosen, _ = group_grant(members, OuterLoop(), 0.0)
    bler = np.array([[m.combined_bler(chosen.mcs, k) for k in range(1, link.max_transmissions + 1)] for m in members])
    tbs = chosen.segmentation.tbs_bits
    sent, delivered, remaining = [], [], bits
    while remaining > 0:
        copies = 0
        for i, rng in enumerate(rngs):
            for k in range(1, link.max_transmissions + 1):
                if rng.random() >= bler[i, k - 1]:
                    break
            else:
                k = link.max_transmissions + 1  # not decoded after the last copy
            copies = max(copies, k)
        ok = copies <= link.max_transmissions
        sent.append(min(copies, link.max_transmissions))
        delivered.append(ok)
        if ok:
            remaining -= tbs
    return StreamResult(chosen.mcs, tbs, np.array(sent, dtype=int), np.array(delivered, dtype=bool),
                        occupied_slots(sent, link.timing.round_trip_slots))


def expected_bps(sinr_by_listener, link: LinkConfig, downlink_share: float) -> float:
    """The expected wall-clock rate (bit/s) of a long stream to these listeners (none in outage), as
    ``stream`` draws it: MCS by ``multicast_grant`` (percentile 0); listener ``i`` still without
    the block after ``k`` copies with probability ``q_ik = p_i1 ... p_ik`` (``p_ik`` its BLER after
    ``k`` combined copies), so a block goes ``E[T] = 1 + sum_{k=1..3} (1 - prod_i (1 - q_ik))``
    times and is delivered to all with probability ``prod_i (1 - q_i4)``; the HARQ processes
    keeping every downlink slot busy: ``TBS prod_i (1 - q_i4) / (E[T] slot) x share``. One listener:
    ``E[T] = 1 + p_1 + p_1 p_2 + p_1 p_2 p_3``, the uplink's (``harq_uplink.expected_bps``)."""
    sinr = np.atleast_2d(np.asarray(sinr_by_listener, dtype=float))
    members = [Allocation(link.table, row, link.n_symbols, link.dmrs_re_per_prb) for row in sinr]
    chosen, _ = group_grant(members, OuterLoop(), 0.0)
    bler = np.array([[m.combined_bler(chosen.mcs, k) for k in range(1, link.max_transmissions + 1)] for m in members])
    still = np.cumprod(bler, axis=1)  # q_ik
    expected_transmissions = 1.0 + float(np.sum(1.0 - np.prod(1.0 - still[:, :-1], axis=0)))
    delivered = float(np.prod(1.0 - still[:, -1]))
    return chosen.segmentation.tbs_bits * delivered / expected_transmissions / link.timing.slot_s * downlink_share


@dataclass
class HarqStreams:
    """A run's downlink HARQ draws: each listener's count of streams heard, and the stream
    (``contract.seeds.harq_downlink_seed``) whose child ``(listener, k)`` its ``k``-th draws from."""

    seed: np.random.SeedSequence
    heard: dict[int, int] = field(default_factory=dict)

    def rngs(self, listeners) -> list:
        """The listeners' generators of their next stream; counted as heard."""
        out = []
        for d in listeners:
            k = self.heard.get(d, 0)
            out.append(np.random.default_rng(child(child(self.seed, int(d)), k)))
            self.heard[d] = k + 1
        return out


def stream_airtime_s(result: StreamResult, link: LinkConfig, downlink_share: float) -> float:
    """Wall-clock airtime: the stream's downlink slots on the downlink's share of the time."""
    return result.slots * link.timing.slot_s / downlink_share

