"""Link adaptation to a BLER target: the inner loop picks the MCS, the outer loop (OLLA) corrects it.

Inner loop: the highest MCS whose transport-block BLER at the allocation's EESM effective SINR,
less the outer loop's offset, is at most the target (10% by default, the first-transmission target
of TS 38.214 5.2.2.1's CQI definition); the lowest MCS when none is.

Outer loop (OLLA; Pedersen et al., "Frequency domain scheduling for OFDMA with limited and noisy
channel feedback", VTC 2007-Fall; the rule Sionna SYS's ``OuterLoopLinkAdaptation`` and 5G-LENA use):
on a NACK of a first transmission the offset rises by ``step_up_db``; on an ACK it falls by
``step_down_db = step_up_db BLER_t / (1 - BLER_t)``, so that it drifts nowhere exactly when the
first-transmission BLER equals ``BLER_t``. At the table's ends the step that could not change
the MCS is not taken, as srsRAN's gNB does (``olla_algorithm::update``,
``lib/scheduler/support/outer_loop_link_adaptation.h``): no rise on a NACK at the lowest MCS, no
fall on an ACK at the highest. Without it a device whose MCS 0 fails its first transmission more
often than the target (near outage, carried by HARQ's combining) winds the offset up to its bound,
and its next upload, on a better channel, starts there and spends hundreds of blocks at MCS 0.
"""

from __future__ import annotations

import bisect
import functools
import math
from dataclasses import dataclass

import numpy as np

from netsim.radio.link.bler import sinr_at_bler_db, transport_block_bler
from netsim.radio.link.effective_sinr import eesm, eesm_beta, eesm_each, eesm_scaled
from netsim.radio.link.mcs_tables import MCS_TABLES
from netsim.radio.link.tbs import Segmentation, resource_elements, segment, transport_block_size


@dataclass
class OuterLoop:
    """OLLA state: ``offset_db`` subtracted from the effective SINR before the MCS is chosen."""

    bler_target: float = 0.1
    step_up_db: float = 0.5
    offset_db: float = 0.0
    offset_min_db: float = -20.0  # Sionna SYS OuterLoopLinkAdaptation's default bounds
    offset_max_db: float = 20.0

    def __post_init__(self) -> None:
        if not 0 < self.bler_target < 1 or self.step_up_db < 0:
            raise ValueError(f"0 < bler_target < 1 and step_up_db >= 0, not {self.bler_target}, {self.step_up_db}")
        if not self.offset_min_db <= self.offset_db <= self.offset_max_db:
            raise ValueError(f"the offset {self.offset_db} dB lies outside [{self.offset_min_db}, {self.offset_max_db}] dB")

    @property
    def step_down_db(self) -> float:
        """``step_up_db BLER_t / (1 - BLER_t)``: 0.0556 dB for 0.5 dB at 10%."""
        return self.step_up_db * self.bler_target / (1 - self.bler_target)

    def update(self, acknowledged: bool, lowest: bool = False, highest: bool = False) -> None:
        """One first transmission's HARQ feedback: ACK lowers the offset, NACK raises it, within
        ``[offset_min_db, offset_max_db]``; frozen (srsRAN's rule) on a NACK of the table's
        ``lowest`` MCS and on an ACK of its ``highest``, where the step could not change the MCS
        and would only wind the offset up."""
        if (lowest and not acknowledged) or (highest and acknowledged):
            return
        stepped = self.offset_db + (-self.step_down_db if acknowledged else self.step_up_db)
        self.offset_db = min(max(stepped, self.offset_min_db), self.offset_max_db)


@dataclass(frozen=True)
class Grant:
    """An MCS and what it carries on ``n_prb`` PRBs for one slot: its TBS and code blocks."""

    mcs: int
    segmentation: Segmentation


def grant(table: str, mcs: int, n_prb: int, n_symbols: int = 14, dmrs_re_per_prb: int = 12) -> Grant:
    """TBS (TS 38.214 5.1.3.2) and segmentation (TS 38.212 5.2.2) of ``mcs`` on ``n_prb`` PRBs."""
    entry = MCS_TABLES[table][mcs]
    n_re = resource_elements(n_prb, n_symbols, dmrs_re_per_prb)
    tbs = transport_block_size(n_re, entry.code_rate, entry.modulation_order)
    return Grant(mcs, segment(tbs, entry.code_rate))


def effective_sinr_db(table: str, mcs: int, sinr_prb_linear) -> float:
    """EESM effective SINR (dB) of the per-PRB linear SINRs with ``mcs``'s beta."""
    value = eesm(sinr_prb_linear, eesm_beta(MCS_TABLES[table][mcs]))
    return 10 * math.log10(value) if value > 0 else -math.inf


def block_error(table: str, chosen: Grant, sinr_prb_linear, offset_db: float = 0.0) -> float:
    """Transport-block BLER of ``chosen`` at the EESM effective SINR of the per-PRB linear SINRs,
    less ``offset_db``."""
    seg = chosen.segmentation
    return transport_block_bler(table, chosen.mcs, seg.code_block_bits, seg.n_code_blocks,
                                effective_sinr_db(table, chosen.mcs, sinr_prb_linear) - offset_db)


def select_mcs(table: str, sinr_prb_linear, loop: OuterLoop, n_symbols: int = 14, dmrs_re_per_prb: int = 12) -> Grant:
    """The inner loop: the highest MCS of ``table`` meeting ``loop.bler_target`` at the effective
    SINR less ``loop.offset_db`` (each MCS's own beta and code-block size), else MCS 0."""
    return Allocation(table, sinr_prb_linear, n_symbols, dmrs_re_per_prb).select(loop)


COPIES_AT_ONCE = 4  # the HARQ loops' most transmissions (``LinkConfig.max_transmissions``): BLERs computed together


@functools.lru_cache(maxsize=None)
def _betas(table: str) -> np.ndarray:
    """Every MCS's EESM beta of ``table``, in index order."""
    return np.array([eesm_beta(entry) for entry in MCS_TABLES[table]])


@functools.lru_cache(maxsize=4096)
def _grants(table: str, n_prb: int, n_symbols: int, dmrs_re_per_prb: int) -> tuple[Grant, ...]:
    """Every MCS's grant on ``n_prb`` PRBs (``grant``), kept: they depend on the size alone."""
    return tuple(grant(table, m, n_prb, n_symbols, dmrs_re_per_prb) for m in range(len(MCS_TABLES[table])))


@functools.lru_cache(maxsize=4096)
def _target_sinrs_db(table: str, n_prb: int, n_symbols: int, dmrs_re_per_prb: int, bler_target: float) -> tuple[float, ...]:
    """Per MCS, the SINR (dB) at which its transport block's BLER on ``n_prb`` PRBs is
    ``bler_target``: each of its ``C`` code blocks at ``1 - (1 - target)^(1/C)``
    (``transport_block_bler`` inverted); kept, as they depend on the size alone."""
    found = []
    for chosen in _grants(table, n_prb, n_symbols, dmrs_re_per_prb):
        seg = chosen.segmentation
        code_block = -math.expm1(math.log1p(-bler_target) / seg.n_code_blocks)
        found.append(sinr_at_bler_db(table, chosen.mcs, seg.code_block_bits, code_block))
    return tuple(found)


class Allocation:
    """One allocation's per-PRB SINRs seen through every MCS of ``table``: each MCS's grant and
    EESM effective SINR computed once, the BLER after k chase-combined copies kept once computed.
    ``select`` is ``select_mcs`` on it, for many blocks on the same PRBs."""

    def __init__(self, table: str, sinr_prb_linear, n_symbols: int = 14, dmrs_re_per_prb: int = 12):
        self.table = table
        self.sinr = np.asarray(sinr_prb_linear, dtype=float)
        self._size = (table, self.sinr.size, n_symbols, dmrs_re_per_prb)
        self.grants = _grants(*self._size)
        self._effective_db = [10 * math.log10(value) if value > 0 else -math.inf
                              for value in eesm_each(self.sinr, _betas(table)).tolist()]
        self._bler: dict[tuple[int, int], float] = {}
        self._targets: dict[float, tuple[float, ...]] = {}
        self._highest: dict[float, list[float]] = {}

    def seen_bler(self, mcs: int, offset_db: float) -> float:
        """Transport-block BLER of ``mcs`` at the effective SINR less ``offset_db`` (what the inner loop sees)."""
        seg = self.grants[mcs].segmentation
        return transport_block_bler(self.table, mcs, seg.code_block_bits, seg.n_code_blocks, self._effective_db[mcs] - offset_db)

    def select(self, loop: OuterLoop) -> Grant:
        """The highest MCS meeting ``loop.bler_target`` at the effective SINR less the offset, else MCS 0.

        The BLER falls with the SINR, so an MCS meets the target where its effective SINR less the
        offset reaches the SINR at which its transport block's BLER is the target
        (``_target_sinr_db``); the MCS whose margin is within ``1e-9`` dB of 0 are decided by
        ``seen_bler`` itself, so the choice is the scan's from the top, MCS by MCS."""
        offset_db, targets = loop.offset_db, self._target_sinr_db(loop.bler_target)
        # Start at the highest MCS that can be within 1e-9 dB of meeting it (_highest: the largest
        # effective SINR less target at or above each MCS, so the scan's first candidates are
        # kept whatever the rounding); then the scan from the top, MCS by MCS.
        highest = self._highest[loop.bler_target]
        for mcs in range(bisect.bisect_right(highest, 2e-9 - offset_db) - 1, -1, -1):
            margin = self._effective_db[mcs] - offset_db - targets[mcs]
            if margin > 1e-9 or (margin >= -1e-9 and self.seen_bler(mcs, offset_db) <= loop.bler_target):
                return self.grants[mcs]
        return self.grants[0]

    def _target_sinr_db(self, bler_target: float) -> tuple[float, ...]:
        """``_target_sinrs_db`` of this allocation's size, and (first asked) ``_highest`` for it."""
        if bler_target not in self._targets:
            self._targets[bler_target] = found = _target_sinrs_db(*self._size, bler_target)
            above = np.maximum.accumulate((np.array(self._effective_db) - np.array(found))[::-1])[::-1]
            self._highest[bler_target] = (-above).tolist()  # ascending, for bisect
        return self._targets[bler_target]

    def combined_bler(self, mcs: int, copies: int) -> float:
        """Transport-block BLER of ``mcs`` after ``copies`` chase-combined transmissions (``block_error``
        on the SINRs times ``copies``); asked for one count of copies up to ``COPIES_AT_ONCE``, every
        count up to it is computed at once (``eesm_scaled``), as the HARQ loops ask for them in turn."""
        key = (mcs, copies)
        if key not in self._bler:
            counts = np.arange(1, COPIES_AT_ONCE + 1) if copies <= COPIES_AT_ONCE else np.array([copies])
            seg = self.grants[mcs].segmentation
            beta = eesm_beta(MCS_TABLES[self.table][mcs])
            for k, value in zip(counts.tolist(), eesm_scaled(self.sinr, beta, counts).tolist()):
                effective_db = 10 * math.log10(value) if value > 0 else -math.inf
                self._bler[(mcs, k)] = transport_block_bler(self.table, mcs, seg.code_block_bits, seg.n_code_blocks, effective_db)
        return self._bler[key]


def multicast_grant(table: str, sinr_by_member, loop: OuterLoop, percentile: float = 0.0,
                    n_symbols: int = 14, dmrs_re_per_prb: int = 12) -> tuple[Grant, int]:
    """One transmission to a group (a multicast PDSCH) on the same PRBs: ``sinr_by_member`` is
    (members, PRBs) of linear SINRs. The MCS is the highest at which at least ``100 - percentile``
    percent of the members meet ``loop.bler_target`` at their own EESM effective SINR less the
    offset: ``percentile`` 0 (default) follows the weakest member, as a broadcast must to reach all;
    a larger one leaves the weakest out. Returns the grant and the misses: the members above the
    target at that MCS (0 at percentile 0 unless even MCS 0 misses someone)."""
    members = [Allocation(table, row, n_symbols, dmrs_re_per_prb) for row in np.atleast_2d(np.asarray(sinr_by_member, dtype=float))]
    return group_grant(members, loop, percentile)


def group_grant(members, loop: OuterLoop, percentile: float = 0.0) -> tuple[Grant, int]:
    """``multicast_grant`` on the members' ``Allocation``s (built once by a caller that reads them again)."""
    if not 0 <= percentile < 100:
        raise ValueError(f"0 <= percentile < 100, not {percentile}")
    needed = math.ceil(len(members) * (100 - percentile) / 100 - 1e-9)
    for mcs in range(len(members[0].grants) - 1, -1, -1):
        misses = sum(m.seen_bler(mcs, loop.offset_db) > loop.bler_target for m in members)
        if len(members) - misses >= needed:
            break
    return members[0].grants[mcs], misses
