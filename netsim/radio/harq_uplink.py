"""The cell's TDMA uploads through the NR link layer (``link_abstraction`` ``nr-harq``): per
transfer, the grant's per-PRB SINRs, EESM link adaptation with the device's outer loop, drawn
block errors and HARQ (``netsim.radio.link.upload``), and the upload's wall-clock time and energy.

**The grant's PRBs.** The band's ``M`` PRBs (``PhysicalSystem.uplink_prbs``) are split in order
over the cell's ``S`` subbands, PRB ``i`` in subband ``floor(i S / M)``; each subband has the
round's fade of the device (``RoundChannel.uplink_fade``, after receive combining). A grant of
``m`` PRBs (``RoundChannel.allocated_prbs``) is one contiguous run: PUSCH with transform
precoding allows only resource allocation type 1, a start and a length (TS 38.214 6.1.2.2.2,
TS 38.211 6.3.1.4), and the gNB, which sounds the channel (SRS, TS 38.214 6.2.1), places it on
the ``m`` consecutive PRBs of largest summed fade (the lowest start on a tie). A whole-band grant
holds every PRB. Each PRB's SINR is the grant's mean SINR as ``RoundChannel`` computes it (power
control on ``m`` PRBs, path loss, antenna gains, interference at its mean, receive array gain)
times its subband's fade.

**Time.** ``upload`` counts the slots its transmissions and retransmissions occupy
(``UploadResult.completion_s``, one transmission a slot, 14 symbols, HARQ round trip of the
numerology). Those are slots of the uplink: under TDD the uplink has the pattern's share of the
carrier's time (``PhysicalSystem.shares``, ``netsim.radio.duplex``), so the upload's wall-clock
time is ``completion_s / share`` (FDD: share 1). What the cell counts otherwise as overhead is
counted here once: the resource blocks' occupancy of the channel is the PRB count itself; the
DMRS (12 resource elements a PRB) is taken out of every transport block (TS 38.214 5.1.3.2's
``N_RE``), so ``uplink_overhead`` (TS 38.306's ``OH``, which stands for the same) is not applied
again.

**Energy.** Every transmission, first or repeated, at the device's state power on its grant
(``PhysicalNetwork.transmit_state_w`` of the TS 38.213 7.1.1 power on ``m`` PRBs) for its slot;
under ``ue_energy`` ``slots`` the rest of the wall-clock time (the pattern's other slots and the
uplink slots left empty while a retransmission is due) at ``off_slot_w`` (PDCCH monitoring).

**State and draws.** ``LinkState``, one per run (``PhysicalSystem.bind``, on the
``PhysicalNetwork``, so every orchestrator's rounds and dispatches carry it alike), holds each
device's outer loop (OLLA) and how many uploads it has sent. A device's k-th sent upload draws
its block errors from its own child ``(device, k)`` of the run's HARQ stream
(``contract.seeds.harq_seed``): the same draws whichever path computes it (the SimPy processes or
the vectorized timeline), whichever devices share the round and whichever orchestrator runs it.
An upload is computed without changing the state (``transfer``) and committed when it is charged
(``commit``: sent on the air); one dropped before it is sent changes nothing.

**On a moving cell** (transfers in segments, ``netsim.radio.physical_links.SEGMENT_S``) an upload
is served step by step (``transfer_in_steps``): uplink slot ``n`` of the upload lies at wall-clock
``start + n slot / share`` (the uplink's share of the time, as above), so in the step holding that
instant; each block is chosen (MCS at the device's outer loop) and drawn (the draws continue on the
upload's ``(device, k)`` child) on the grant's per-PRB SINRs of the step of its first
transmission, its retransmissions decoded on the same copies' SINRs and charged at that step's
power (a block's HARQ transmissions span a few round trips, 10-30 ms of wall clock under TDD,
against the step's 200 ms). Where a new block or a retransmission would fall in a step whose link
is in outage (below the floor, or MCS 0 missing the target after four copies) or out of the
parameter server's coverage, the upload is lost from that step's start, as every transfer in
segments; what was sent before is charged and the device's outer loop keeps its blocks' feedback.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from contract.seeds import child
from netsim.radio import link_budget
from netsim.radio.link import HarqTiming, LinkConfig, OuterLoop, UploadResult, upload
from netsim.radio.link.adaptation import Allocation, block_error, grant
from netsim.radio.link.upload import upload_blocks

UPLINK_TABLE = "pusch-tp-64qam"  # TS 38.214 Table 6.1.4.1-1: PUSCH with transform precoding
NUMEROLOGIES = {15e3 * 2 ** mu: mu for mu in range(4)}  # subcarrier spacing (Hz) -> mu, TS 38.211 4.2


@dataclass(frozen=True)
class HarqTransfer:
    """One upload through the link layer: the library's ``result``, the device's outer loop after
    it, its wall-clock time (s) and its energy (J)."""

    result: UploadResult
    loop_after: OuterLoop
    wall_s: float
    energy_j: float


@dataclass
class LinkState:
    """A run's uplink link-layer state: the HARQ stream (``contract.seeds.harq_seed``), each
    device's outer loop and its count of uploads sent."""

    seed: np.random.SeedSequence
    loops: dict[int, OuterLoop] = field(default_factory=dict)
    sent: dict[int, int] = field(default_factory=dict)

    def count(self, device: int) -> int:
        return self.sent.get(device, 0)

    def rng(self, device: int) -> np.random.Generator:
        """The generator of the device's next upload: child ``(device, k)`` of the stream."""
        return np.random.default_rng(child(child(self.seed, device), self.count(device)))

    def loop(self, device: int) -> OuterLoop:
        """A copy of the device's outer loop (a fresh one at 10% BLER before its first upload)."""
        return copy.copy(self.loops.get(device, OuterLoop()))

    def commit(self, device: int, transfer: HarqTransfer) -> None:
        """The upload was sent: its outer loop is the device's, its count one more."""
        self.loops[device] = transfer.loop_after
        self.sent[device] = self.count(device) + 1


def link_config(subcarrier_spacing_hz: float) -> LinkConfig:
    """PUSCH with transform precoding, 14 symbols, one DMRS symbol, at the numerology of the spacing."""
    return LinkConfig(UPLINK_TABLE, HarqTiming(NUMEROLOGIES[subcarrier_spacing_hz]))


def grant_subbands(fade: np.ndarray, band_prbs: int, prbs: int) -> np.ndarray:
    """The subband of each of the grant's ``prbs`` PRBs: the contiguous run of largest summed
    ``fade`` (one value per subband) among the band's ``band_prbs``, PRB ``i`` in subband
    ``floor(i S / M)``; the lowest start on a tie."""
    subbands = fade.size
    of_prb = (np.arange(band_prbs) * subbands) // band_prbs
    if prbs >= band_prbs:
        return of_prb
    sums = np.convolve(fade[of_prb], np.ones(prbs), mode="valid")  # sums[s]: PRBs s .. s + prbs - 1
    start = int(np.argmax(sums))
    return of_prb[start:start + prbs]


def grant_sinr(mean_sinr_db: float, fade: np.ndarray, band_prbs: int, prbs: int) -> np.ndarray:
    """Linear SINR of each PRB of the grant: the grant's mean SINR times its subband's fade."""
    fade = np.asarray(fade, dtype=float)
    return link_budget.db_to_linear(mean_sinr_db) * fade[grant_subbands(fade, band_prbs, prbs)]


def in_outage(sinr_prb: np.ndarray, link: LinkConfig, bler_target: float = OuterLoop().bler_target) -> bool:
    """``upload``'s outage: MCS 0 after the most HARQ transmissions misses the BLER target."""
    lowest = grant(link.table, 0, sinr_prb.size, link.n_symbols, link.dmrs_re_per_prb)
    return block_error(link.table, lowest, sinr_prb * link.max_transmissions) > bler_target


def expected_bps(sinr_prb: np.ndarray, link: LinkConfig, uplink_share: float,
                 bler_target: float = OuterLoop().bler_target, loop: OuterLoop | None = None) -> float:
    """The expected wall-clock rate (bit/s) of an upload on these PRBs at the grant's EESM MCS:
    the inner loop's choice with the outer loop ``loop`` (default: at its start, offset 0;
    ``Allocation.select``), each block ``E[T] = 1 + p_1 + p_1 p_2 + p_1 p_2 p_3`` transmissions
    and lost with probability ``p_1 p_2 p_3 p_4`` (``p_k`` its BLER after k chase-combined
    copies, as ``upload`` draws them), the HARQ processes keeping every uplink slot busy (a long
    upload), on the uplink's ``uplink_share`` of the time:
    ``TBS (1 - p_1 ... p_4) / (E[T] slot) x share``. 0 in ``upload``'s outage (``in_outage``)."""
    allocation = Allocation(link.table, sinr_prb, link.n_symbols, link.dmrs_re_per_prb)
    if allocation.combined_bler(0, link.max_transmissions) > bler_target:
        return 0.0
    chosen = allocation.select(loop if loop is not None else OuterLoop(bler_target=bler_target))
    expected_transmissions, all_failed = 0.0, 1.0
    for copies in range(1, link.max_transmissions + 1):
        expected_transmissions += all_failed
        all_failed *= allocation.combined_bler(chosen.mcs, copies)
    delivered_bits = chosen.segmentation.tbs_bits * (1.0 - all_failed) / expected_transmissions
    return delivered_bits / link.timing.slot_s * uplink_share


def transfer(bits: float, sinr_prb: np.ndarray, state: LinkState, device: int, link: LinkConfig, state_w: float,
             uplink_share: float, off_slot_w: float) -> HarqTransfer:
    """The device's next upload of ``bits`` on these PRBs (``state`` unchanged): ``upload`` with
    its outer loop and its draws, transmissions at ``state_w``, slots on the uplink's ``uplink_share``
    of the time, the rest at ``off_slot_w``."""
    loop = state.loop(device)
    result = upload(int(math.ceil(bits)), sinr_prb, state.rng(device), state_w, loop, link)
    wall_s = result.completion_s / uplink_share
    energy_j = result.energy_j + (off_slot_w * (wall_s - result.airtime_s) if off_slot_w else 0.0)
    return HarqTransfer(result, loop, wall_s, energy_j)


@dataclass(frozen=True)
class Steps:
    """A channel read in steps: ``of(t_s)`` the step holding the instant ``t_s``, ``start_s(k)``
    step ``k``'s start, ``link(k)`` the grant's per-PRB linear SINRs and the transmit state power
    (W) in step ``k``, or None where the link is lost then."""

    of: Callable[[float], int]
    start_s: Callable[[int], float]
    link: Callable[[int], "tuple[np.ndarray, float] | None"]


def transfer_in_steps(bits: float, start_s: float, steps: Steps, state: LinkState, device: int, link: LinkConfig,
                      uplink_share: float, off_slot_w: float) -> HarqTransfer:
    """The device's next upload of ``bits`` from ``start_s`` on a channel read in ``steps``
    (``state`` unchanged). Uplink slot ``n`` lies at ``start_s + n slot / uplink_share``;
    ``upload_blocks`` serves the blocks on the allocation of each one's step. Lost
    (``result.lost``): the wall-clock time runs to the lost step's start (0 when it is the first)."""
    slot_wall_s = link.timing.slot_s / uplink_share
    seen: dict[int, tuple | None] = {}  # step -> its allocation and power (None: lost)

    def channel_at(slot: int):
        k = steps.of(start_s + slot * slot_wall_s)
        if k not in seen:
            here = steps.link(k)
            seen[k] = None if here is None else (Allocation(link.table, here[0], link.n_symbols, link.dmrs_re_per_prb), here[1])
        return seen[k]

    loop = state.loop(device)
    result = upload_blocks(int(math.ceil(bits)), channel_at, state.rng(device), loop, link)
    wall_s = result.completion_s / uplink_share
    if result.lost:
        wall_s = max(0.0, steps.start_s(steps.of(start_s + wall_s)) - start_s)
    energy_j = result.energy_j + (off_slot_w * max(0.0, wall_s - result.airtime_s) if off_slot_w else 0.0)
    return HarqTransfer(result, loop, wall_s, energy_j)
