"""HARQ: chase combining of up to four transmissions, the round trip in slots from the numerology,
and the slots a train of transport blocks with retransmissions occupies.

Chase combining: every retransmission repeats the same coded bits on the same PRBs, and the
receiver adds the copies (maximum-ratio), so after k transmissions each PRB's SINR is k times its
single-transmission SINR (linear); the k-th decoding fails with the transport-block BLER at the
EESM effective SINR of those combined SINRs (the abstraction 5G-LENA's ``NrEesmCc`` applies).

Round trip (PUSCH, TS 38.214 6.1.2.1): a PUSCH in slot n is decoded by the gNB in
``gnb_processing_slots`` (1 assumed), which then sends the retransmission's uplink grant (DCI 0_1,
same HARQ process, NDI not toggled, TS 38.321 5.4.2.1); the UE transmits ``K2`` slots after it. With
the default time-domain allocation (TS 38.214 Table 6.1.2.1.1-2) ``K2 = j``, j = 1, 1, 2, 3 for
mu = 0, 1, 2, 3 (Table 6.1.2.1.1-4). So a retransmission starts ``1 + gnb_processing_slots + K2``
slots after the transmission it repeats: 3 slots (1.5 ms) at mu = 1. The PDSCH round trip is the
same with ``K1`` (PDSCH-to-HARQ-feedback, TS 38.213 9.2.3) in place of ``K2``. Every slot is taken
to be usable in the transfer's direction: a TDD pattern stretches these times, which is the
caller's (the duplex model's) business.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

MAX_TRANSMISSIONS = 4  # the initial transmission and up to 3 retransmissions (redundancy versions 0, 2, 3, 1)
HARQ_PROCESSES = 16  # per carrier, TS 38.321 5.4.2.1 / 5.3.2.1 (nrofHARQ-ProcessesForPUSCH default 16)

_J_BY_MU = {0: 1, 1: 1, 2: 2, 3: 3}  # TS 38.214 Table 6.1.2.1.1-4


@dataclass(frozen=True)
class HarqTiming:
    """Slot duration and HARQ round trip of numerology ``mu`` (subcarrier spacing 15 2^mu kHz)."""

    mu: int = 1
    k_slots: int | None = None  # K2 (PUSCH) or K1 (PDSCH); None: K2 = j(mu)
    gnb_processing_slots: int = 1

    def __post_init__(self) -> None:
        if self.mu not in _J_BY_MU:
            raise ValueError(f"numerology mu is 0-3 (FR1 and FR2 data), not {self.mu!r}")
        if (self.k_slots is not None and self.k_slots < 0) or self.gnb_processing_slots < 0:
            raise ValueError("K and the gNB's processing are whole slots >= 0")

    @property
    def slot_s(self) -> float:
        """``1 ms / 2^mu`` (TS 38.211 4.3.2: 2^mu slots per 1 ms subframe)."""
        return 1e-3 / 2 ** self.mu

    @property
    def round_trip_slots(self) -> int:
        """Slots from a transmission's start to its retransmission's: ``1 + processing + K``."""
        k = _J_BY_MU[self.mu] if self.k_slots is None else self.k_slots
        return 1 + self.gnb_processing_slots + k


def occupied_slots(transmissions: list[int], round_trip_slots: int, processes: int = HARQ_PROCESSES) -> int:
    """Slots from the first transmission's start to the last one's end, one transmission a slot.

    ``transmissions[i]`` is how often block i is sent. Each slot the scheduler sends the oldest
    retransmission that is due (its previous copy ``round_trip_slots`` or more slots back), else the
    next new block if fewer than ``processes`` HARQ processes are busy (a process is busy from its
    block's first transmission until ``round_trip_slots`` after its last), else nothing (an idle slot).
    """
    schedule = SlotSchedule(round_trip_slots, processes)
    for sent in transmissions:
        schedule.add(sent)
    return schedule.end()


class SlotSchedule:
    """``occupied_slots``'s scheduler fed one block at a time: ``next_start`` is the slot the next
    new block's first transmission would take (the retransmissions due before it sent first),
    ``add`` sends a block there, ``end`` sends what is left; ``sent`` lists every transmission as
    ``(slot, block)``. A caller that picks each block's MCS on the channel of its slot (a channel
    that changes while the upload runs) learns that slot before it draws the block."""

    def __init__(self, round_trip_slots: int, processes: int = HARQ_PROCESSES):
        if processes < 1 or round_trip_slots < 1:
            raise ValueError("at least one HARQ process and a round trip of at least one slot")
        self.round_trip_slots, self.processes = round_trip_slots, processes
        self.slot = 0
        self._blocks = 0
        self.sent: list[tuple[int, int]] = []
        self._left: dict[int, int] = {}  # block -> its transmissions still to send
        # Both queues are appended at the sending slot plus the round trip, and slots only rise:
        # each is in ascending order, so its oldest entry is its first.
        self._due: deque[tuple[int, int]] = deque()  # (slot the retransmission may go, block)
        self._released: deque[int] = deque()  # slots at which finished blocks' processes are free again (their ACK)

    def _send(self, block: int) -> None:
        self._left[block] -= 1
        self.sent.append((self.slot, block))
        if self._left[block] > 0:
            self._due.append((self.slot + self.round_trip_slots, block))
        else:
            del self._left[block]
            self._released.append(self.slot + self.round_trip_slots)
        self.slot += 1

    def _retransmit(self) -> bool:
        """Send the oldest retransmission due in this slot, if any (processes released by now let go)."""
        while self._released and self._released[0] <= self.slot:
            self._released.popleft()
        if self._due and self._due[0][0] <= self.slot:
            self._send(self._due.popleft()[1])
            return True
        return False

    def next_start(self) -> int:
        """The slot of the next new block's first transmission: the first slot with no
        retransmission due and a free HARQ process."""
        while True:
            if self._retransmit():
                continue
            if len(self._due) + len(self._released) < self.processes:
                return self.slot
            self.slot += 1  # every process busy, nothing due: an idle slot

    def add(self, transmissions: int) -> int:
        """Send a new block of ``transmissions`` from ``next_start``; returns that slot."""
        start = self.next_start()
        block = self._blocks
        self._blocks += 1
        self._left[block] = transmissions
        self._send(block)
        return start

    def end(self) -> int:
        """Send every retransmission left; the slots from the first transmission to the last one's end."""
        while self._due:
            if not self._retransmit():
                self.slot += 1
        return self.sent[-1][0] + 1 if self.sent else 0
