"""One upload of B bits over M PRBs through the NR link layer: MCS, transport blocks, HARQ draws,
airtime and energy.

Each slot carries one transport block on all M PRBs (the last one padded). Per block: the inner
loop picks the MCS at the outer loop's offset (``netsim.radio.link.adaptation``); its first transmission
and up to ``max_transmissions - 1`` chase-combined retransmissions (``netsim.radio.link.harq``) each fail
with the transport-block BLER at the combined SINRs, one ``rng.random()`` draw per transmission in
order; the first transmission's ACK/NACK updates the outer loop (frozen at the table's ends,
``OuterLoop.update``). The bits of a block that fails
all its transmissions go again in the next block, from a fresh HARQ process and at the MCS the
outer loop then gives (RLC acknowledged mode's ARQ, TS 38.322 5.3, simplified to an immediate
resend); the failed block stays in the result, charged like any other.

Every transmission is charged in time and energy: airtime ``n_symbols / 14`` of a slot (TS 38.211
4.3.2, normal cyclic prefix) at ``tx_power_w``; the completion time counts the slots the blocks and
their retransmissions occupy with ``HarqTiming``'s round trip and 16 HARQ processes.

Outage: when even MCS 0 after ``max_transmissions`` combined copies misses the BLER target on these
SINRs, nothing is sent (``outage`` True, no blocks, zero time and energy).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from netsim.radio.link.adaptation import Allocation, OuterLoop
from netsim.radio.link.harq import MAX_TRANSMISSIONS, HarqTiming, SlotSchedule
from netsim.radio.link.mcs_tables import MCS_TABLES


@dataclass(frozen=True)
class LinkConfig:
    """The MCS table (``MCS_TABLES`` name), HARQ timing, the PUSCH's symbols and DMRS per PRB,
    and the most HARQ transmissions of a block (4: TS 38.321 allows up to 4 redundancy versions)."""

    table: str = "pusch-tp-64qam"
    timing: HarqTiming = field(default_factory=HarqTiming)
    n_symbols: int = 14
    dmrs_re_per_prb: int = 12
    max_transmissions: int = MAX_TRANSMISSIONS

    def __post_init__(self) -> None:
        if self.table not in MCS_TABLES:
            raise ValueError(f"unknown MCS table {self.table!r}; there are: {', '.join(MCS_TABLES)}")
        if not 1 <= self.max_transmissions <= MAX_TRANSMISSIONS:
            raise ValueError(f"1 to {MAX_TRANSMISSIONS} HARQ transmissions, not {self.max_transmissions}")

    @property
    def transmission_s(self) -> float:
        """Airtime of one transmission: ``n_symbols`` of the slot's 14 symbols."""
        return self.timing.slot_s * self.n_symbols / 14


@dataclass(frozen=True)
class UploadResult:
    """Per transport block: ``mcs``, ``tbs_bits``, ``transmissions``, ``delivered`` (False: all
    HARQ transmissions failed, its bits went again in a later block), ``first_bler`` (its first
    transmission's BLER, the chance of the NACK the outer loop saw); and the totals."""

    mcs: np.ndarray
    tbs_bits: np.ndarray
    transmissions: np.ndarray
    delivered: np.ndarray
    first_bler: np.ndarray
    airtime_s: float
    completion_s: float
    energy_j: float
    outage: bool
    lost: bool = False  # the link was lost while it was sent (``upload_blocks``): cut there

    @property
    def n_blocks(self) -> int:
        return int(self.mcs.size)


def upload(bits: int, sinr_prb_linear, rng: np.random.Generator, tx_power_w: float,
           loop: OuterLoop | None = None, link: LinkConfig | None = None) -> UploadResult:
    """Send ``bits`` over the PRBs whose linear SINRs are ``sinr_prb_linear`` (one per PRB).

    ``loop`` carries the outer loop's state across uploads (updated in place; a fresh one at 10%
    BLER when None); ``link`` the table and timing (PUSCH with transform precoding at mu = 1 when None).
    """
    link = link or LinkConfig()
    loop = loop if loop is not None else OuterLoop()
    sinr = np.asarray(sinr_prb_linear, dtype=float)
    if bits < 1 or sinr.ndim != 1 or sinr.size < 1 or tx_power_w < 0:
        raise ValueError("an upload needs bits >= 1, one SINR per PRB (at least one) and tx_power_w >= 0")
    allocation = Allocation(link.table, sinr, link.n_symbols, link.dmrs_re_per_prb)
    if allocation.combined_bler(0, link.max_transmissions) > loop.bler_target:
        empty = np.zeros(0, dtype=int)
        return UploadResult(empty, empty, empty, empty.astype(bool), empty.astype(float), 0.0, 0.0, 0.0, True)
    return upload_blocks(bits, lambda slot: (allocation, tx_power_w), rng, loop, link)


def upload_blocks(bits: int, channel_at, rng: np.random.Generator, loop: OuterLoop, link: LinkConfig) -> UploadResult:
    """``upload``'s blocks on a channel that may change while they are sent: ``channel_at(slot)``
    is ``(Allocation, tx_power_w)`` of the uplink slot ``slot`` (counted from the first
    transmission), or None where the link is lost from that slot on.

    Each block is chosen (MCS at the outer loop's offset) and drawn on the allocation of the slot
    its first transmission takes (``SlotSchedule.next_start``); its retransmissions are decoded
    on the same allocation (chase combining of copies of one grant) and sent at its power. Where
    a slot that a new block or a retransmission would take is lost, the upload is cut there
    (``lost``): what was sent before is charged, a block counts as delivered when its decoding
    transmission came before the cut, and ``completion_s`` is the cut slot's start."""
    schedule = SlotSchedule(link.timing.round_trip_slots)
    mcs, tbs, sent, delivered, first, power_w = [], [], [], [], [], []
    checked = 0  # transmissions whose slots are known not lost

    def first_lost(then: int | None = None) -> int | None:
        """The first lost slot among the transmissions sent since the last look (the
        retransmissions the schedule sent before a new block) and ``then``."""
        nonlocal checked
        for checked in range(checked, len(schedule.sent)):
            if channel_at(schedule.sent[checked][0]) is None:
                return schedule.sent[checked][0]
        checked = len(schedule.sent)
        return then if then is not None and channel_at(then) is None else None

    remaining, cut = bits, None
    draw, max_transmissions = rng.random, link.max_transmissions
    while remaining > 0:
        slot = schedule.next_start()
        cut = first_lost(slot)
        if cut is not None:
            break
        allocation, tx_power_w = channel_at(slot)
        chosen = allocation.select(loop)
        block_mcs, bler = chosen.mcs, allocation.combined_bler
        first_bler = bler(block_mcs, 1)
        decoded = draw() >= first_bler
        loop.update(decoded, block_mcs == 0, block_mcs == len(allocation.grants) - 1)
        k = 1
        while not decoded and k < max_transmissions:
            k += 1
            decoded = draw() >= bler(block_mcs, k)
        schedule.add(k)
        mcs.append(block_mcs)
        tbs.append(chosen.segmentation.tbs_bits)
        sent.append(k)
        delivered.append(decoded)
        first.append(first_bler)
        power_w.append(tx_power_w)
        if decoded:
            remaining -= chosen.segmentation.tbs_bits
    if cut is None:
        slots = schedule.end()
        cut = first_lost()  # a retransmission after the last new block
    if cut is not None:
        slots = cut
        before = np.zeros(len(sent), dtype=int)
        for t, block in schedule.sent:
            if t < cut:
                before[block] += 1
        delivered = [d and n == s for d, n, s in zip(delivered, before.tolist(), sent)]
        sent = before.tolist()
    by_power: dict[float, int] = {}
    for n, p in zip(sent, power_w):
        by_power[p] = by_power.get(p, 0) + n
    airtime_s = sum(sent) * link.transmission_s
    energy_j = sum(n * link.transmission_s * p for p, n in by_power.items())
    return UploadResult(np.array(mcs, dtype=int), np.array(tbs, dtype=int), np.array(sent, dtype=int), np.array(delivered, dtype=bool),
                        np.array(first, dtype=float), airtime_s, slots * link.timing.slot_s, energy_j, False, cut is not None)
