"""The physical network system: a cell, link budgets, block fading (Ricean LOS, Rayleigh NLOS;
flat or over independent subbands), Shannon rates with a gap, a cap and an outage floor, FDD or
TDD, compute in CPU cycles, and energy. Time is in seconds, energy in joules.

A ``PhysicalSystem`` is the configuration (what a preset names); ``network`` places the devices
(one layout per run) and gives the ``PhysicalNetwork`` the engine drives (``bind``: from a run's
network seed). Each round the
network draws one ``RoundChannel``: every device's downlink and uplink fading for the round
(block fading: constant within the round, independent across rounds; under FDD independent
across directions, under TDD the same draw both ways: one carrier, a reciprocal channel).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
from dataclasses import MISSING, dataclass
from typing import Callable, Literal, Sequence

import numpy as np

from contract.seeds import ChannelSeeds, harq_downlink_seed, harq_seed, interference_seed, motion_seed
from contract.setting import Needs, among, check_declared, option, recorded
from netsim import scheduling
from netsim.radio import duplex, energy, fading, harq_downlink, harq_uplink, link_budget
from netsim.radio.cell import LAYOUT, MOVING, Cell, CellLayout
from netsim.normalized.distributions import ShiftedExponential
from netsim.dynamics.rounds import RoundInTime, dynamics_of
from netsim.transport.durations import MAX_DEADLINE, TIMING_MODES
from netsim.kind import Network, SystemKind
from netsim.radio.link.abstraction import expected_efficiency
from netsim.radio.physical_links import PhysicalLinks
from netsim.transport.physical_round import physical_round_process
from netsim.transport.physical_timeline import physical_round_fast
from netsim.scheduling import ChannelReport, Expectations

FADING_MODELS = fading.FADING_MODELS
FADING_IN_TIME = ("block", "doppler")
PLANNING_DRAWS = 1000
PLANNING_BLOCK = 100  # planning draws per block (bounds memory: block x devices x subbands)
UPLINK_ACCESS = ("tdma", "fdma", "pf")
UL_POWER_CONTROL = ("off", "fractional")
UL_ALLOCATIONS = ("whole-band", "headroom", "power-limit")
UPLINK_QUEUES = ("sector", "site")
UL_INTERFERENCE = ("full-buffer", "clock")  # the uplink interference: the calibration's loaded network, or the run's own uploads
LINK_ABSTRACTIONS = ("shannon", "attenuated-shannon", "nr", "nr-harq")
PRB_REFERENCE_HZ = 180e3  # 12 subcarriers at 15 kHz: 2^mu M_RB of these span an allocation of M_RB PRBs at 15 2^mu kHz
P0_RANGE_DBM = (-202.0, 24.0)  # TS 38.331 PUSCH-ConfigCommon p0-NominalWithGrant


def pusch_power_dbm(p_cmax_dbm: float, p0_dbm_per_prb: float, alpha: float, allocation_hz: float, coupling_loss_db) -> np.ndarray:
    """TS 38.213 Sec. 7.1.1 open-loop PUSCH power (no closed-loop or MCS term):
    ``min(P_CMAX, P0 + 10 log10(2^mu M_RB) + alpha PL)`` dBm, ``2^mu M_RB = allocation / 180 kHz``
    and ``PL`` the coupling loss the device measures (reference signal power minus RSRP)."""
    p0_total = p0_dbm_per_prb + 10.0 * np.log10(allocation_hz / PRB_REFERENCE_HZ)
    return np.minimum(p_cmax_dbm, p0_total + alpha * np.asarray(coupling_loss_db, dtype=float))


def dft_s_ofdm_prbs(prbs) -> np.ndarray:
    """The largest PRB count ``2^a 3^b 5^c`` at most ``prbs`` (each at least 1): the sizes a
    transform-precoded PUSCH may occupy (TS 38.211 6.3.1.4, ``M_RB = 2^a2 3^a3 5^a5``)."""
    prbs = np.asarray(prbs, dtype=np.int64)
    if np.any(prbs < 1):
        raise ValueError(f"a DFT-s-OFDM allocation holds at least 1 PRB, got {int(prbs.min())}")
    sizes = _dft_sizes(int(prbs.max(initial=1)))
    return sizes[np.searchsorted(sizes, prbs, side="right") - 1]


def water_fill_prbs(caps_prbs, band_prbs: int) -> np.ndarray:
    """``uplink_access=pf``'s grants: the ``band_prbs`` blocks of a receiver shared among the
    devices with data pending (one each at least: at most ``band_prbs`` of them), device ``i``
    capped by ``caps_prbs[i]`` (its power headroom limit, ``PhysicalSystem.power_limit_prbs``,
    taken as at least 1 and at most the band). Water-filling: the largest integer level ``L``
    with ``sum_i min(cap_i, L) <= band`` (everyone at its cap where the caps fit), each grant
    ``min(cap_i, L)`` rounded down to a DFT-s-OFDM size (TS 38.211 6.3.1.4, ``dft_s_ofdm_prbs``);
    then the blocks left over, one raise at a time: the device with the fewest blocks (the
    earlier in ``caps_prbs`` on a tie) whose next DFT-s-OFDM size is within its cap and the
    blocks left is raised to it, until none can be. The grants sum to at most the band."""
    band = int(band_prbs)
    caps = np.clip(np.asarray(caps_prbs, dtype=np.int64), 1, band)
    if caps.size > band:
        raise ValueError(f"{caps.size} devices cannot each hold one of {band} blocks")
    if caps.size == 0:
        return caps
    levels = np.arange(1, band + 1)
    fits = np.minimum(caps[None, :], levels[:, None]).sum(axis=1) <= band
    grants = dft_s_ofdm_prbs(np.minimum(caps, levels[fits].max()))
    sizes = _dft_sizes(band)
    left = band - int(grants.sum())
    while left > 0:
        for i in sorted(range(caps.size), key=lambda j: (grants[j], j)):
            larger = sizes[np.searchsorted(sizes, grants[i], side="right"):]
            if larger.size and larger[0] <= caps[i] and larger[0] - grants[i] <= left:
                left -= int(larger[0] - grants[i])
                grants[i] = larger[0]
                break
        else:
            break
    return grants


@functools.lru_cache(maxsize=8)
def _dft_sizes(largest: int) -> np.ndarray:
    """Every ``2^a 3^b 5^c`` from 1 to ``largest``, ascending."""
    sizes, two = [], 1
    while two <= largest:
        three = two
        while three <= largest:
            five = three
            while five <= largest:
                sizes.append(five)
                five *= 5
            three *= 3
        two *= 2
    return np.array(sorted(sizes), dtype=np.int64)


@dataclass(frozen=True)
class LinkBudget:
    """One direction: its bandwidth, the transmitter's power, the receiver's noise figure."""

    bandwidth_hz: float = option(MISSING, "bandwidth of the channel", low=1e3, high=1e10)
    tx_power_w: float = option(MISSING, "transmit power (-60 to 70 dBm)", low=1e-9, high=1e4)
    noise_figure_db: float = option(MISSING, "receiver's noise figure", low=0.0, high=100.0)

    def check(self, direction: str) -> None:
        check_declared(self, f"{direction} ")

    @property
    def tx_power_dbm(self) -> float:
        return float(link_budget.w_to_dbm(self.tx_power_w))


# what csi_delay_s needs to have any effect besides a moving cell: a run whose scheduler reads the report
READS_REPORT = Needs(lambda scheduler: isinstance(scheduler, str) and scheduling.reads_channel(scheduler),
                     "a policy that reads the channel report (best-channel, proportional-fair, deadline-aware)")
# what mean_on_s needs to have any effect (its ``requires``): the on/off availability, mean_off_s above 0
ON_OFF = Needs(lambda mean_off_s: isinstance(mean_off_s, (int, float)) and mean_off_s > 0, "above 0 (on/off availability)")


@dataclass(frozen=True)
class PhysicalSystem(SystemKind):
    """A cell with its radio links and devices' CPUs (all numbers in SI units).

    Downlink: the base station sends each stream at the rate of its weakest listener that is not
    in outage (a multicast is only as fast as its worst receiver). Uplink receive combining:
    ``bs_rx_antennas`` = N branches per sector, maximum-ratio combined (``combined_uplink_fade``):
    the post-combining SINR is the sum of the branches' SINRs, ``SINR |h_1|^2 + ... + SINR
    |h_N|^2``, with the interference spatially white (taken at its mean, as on one antenna);
    ``mean_snr_db``'s uplink carries the array gain ``10 log10 N`` and the round's uplink fade
    is ``(|h_1|^2 + ... + |h_N|^2) / N``, the branches independent with the link's fading model
    (Rayleigh: diversity order N). Uplink: ``tdma`` (each upload
    on its grant, ``ul_allocation``: the whole band, one device at a time, the blocks on which
    ``P_CMAX`` reaches the outage floor (``headroom``), or its power headroom limit in
    DFT-s-OFDM sizes (``power-limit``: ``RoundChannel.allocated_prbs``), concurrent grants side
    by side while their blocks fit in the band, first come first served:
    ``netsim.transport.media.ResourceBlocks``), ``fdma`` (the band split equally
    among the devices transmitting at that moment, each at its power for its share) or ``pf``
    (the gNB's proportional-fair scheduler: at every change the band water-filled among the
    devices with data pending, each capped by its power headroom and rounded to a DFT-s-OFDM
    size, ``water_fill_prbs``; ``netsim.transport.shared_uplink``).

    A link's spectral efficiency in a round is the mean over ``subbands`` independently faded
    subbands of ``min(max_bps_per_hz, log2(1 + SNR |h_s|^2 / gap))`` (``subbands = 1``: flat
    fading); its rate is that times its bandwidth times its duplex share (FDD 1; TDD the
    pattern's downlink or uplink share of the one carrier, ``netsim.radio.duplex``), times the part of
    the channel its resource blocks occupy (``bandwidth_occupancy``, TS 38.101-1 Table 5.3.2-1)
    and the part of those left for data (``1 - overhead``, TS 38.306 4.1.2). A link whose
    efficiency is below ``min_bps_per_hz`` is in outage (on FDMA, tested on the share the device
    gets when it starts), whatever the gap: the threshold SNR is ``gap (2^min - 1)``. A device in
    downlink outage misses its model (it neither computes nor uploads); in uplink outage it
    computes but cannot upload. Uplink power: ``ul_power_control`` ``off``, every device at the
    UE power (``uplink.tx_power_w``); ``fractional``, each device's open-loop PUSCH power for the
    whole band, capped at that power (``pusch_power_dbm``, ``p0_dbm_per_prb`` and ``alpha``), and
    in the 19-site network each interfering device's from its own coupling loss; on FDMA a device
    keeps that power in its share. In the network each serving sector is a receiver of its own
    (``uplink_queues`` ``sector``): its devices queue (TDMA) or share the band (FDMA) among
    themselves, the sectors at once; ``site`` puts a whole site in one queue, one upload at a
    time. A static drop's devices are all the centre site's; a moving device under
    ``coverage`` ``network`` queues at whichever site's sector serves it (``uplink_queue``). Compute: ``cycles_per_sample x samples / cpu_hz`` plus an
    exponential extra delay of mean ``compute_extra_s`` (the shifted exponential of the
    normalized model, now in seconds), both times the plan's compute scale.
    """

    cell: Cell
    downlink: LinkBudget
    uplink: LinkBudget
    fading: str = "rayleigh"
    fading_in_time: Literal[FADING_IN_TIME] = option(
        "block", "what a device's fading does from round to round: block, an independent draw each round, held through it "
                 "(the block fading of the wireless-FL literature; at any speed); doppler, a sum of sinusoids at the device's "
                 "Doppler shift (Zheng and Xiao 2003), constant at speed 0 (docs/channel-in-time.md)", omit_default=True)
    snr_gap_db: float = option(0.0, "SNR gap to the Shannon bound", low=0.0, high=100.0)
    max_bps_per_hz: float | None = option(None, "rate cap (none: no cap)", low=1e-3, high=100.0)
    min_bps_per_hz: float | None = option(None, "outage floor (none: no outage)", low=1e-3, high=100.0)
    uplink_access: str = "tdma"
    subbands: int = option(1, "independently faded subbands (1: flat fading)", low=1)
    bs_antenna_gain_dbi: float = option(0.0, "base station antenna gain (isolated cell)", low=-100.0, high=100.0)
    ue_antenna_gain_dbi: float = option(0.0, "device antenna gain", low=-100.0, high=100.0)
    bs_rx_antennas: int = option(1, "base station receive antennas per sector: uplink maximum-ratio combining (array gain "
                                    "10 log10 N, N independently faded branches)", low=1, high=64, omit_default=True)
    duplex: str = "fdd"
    tdd_pattern: str = "DDDSU"
    tdd_special_symbols: str = "10:2:2"
    cycles_per_sample: float = option(0.0, "CPU cycles per training sample", low=0.0, high=1e12)
    cpu_hz: float = option(1e9, "device CPU clock", low=1e3, high=1e12)
    kappa: float = option(0.0, "effective switched capacitance: compute energy kappa cycles f^2", low=0.0, high=1e-20)
    compute_extra_s: float = option(0.0, "mean of the exponential extra compute delay", low=0.0, high=1e6)
    receive_power_w: float = option(0.0, "device power while receiving (power_unit_w 0)", low=0.0, high=1e4)
    power_unit_w: float = option(0.0, "one relative unit of TR 38.840 Table 8.1-1's device power model (0: radiated power "
                                      "and receive_power_w only)", low=0.0, high=10.0)
    ue_energy: Literal[energy.UE_ENERGY] = option(
        "airtime", "how the device states charge a transfer and a grant wait: airtime, each transfer its own direction's "
                   "symbols only and a grant wait as waiting (light sleep); slots, under TDD the transfer's other slots too "
                   "(PDCCH monitoring in an upload, micro sleep in a reception) and a grant wait with data pending at "
                   "PDCCH monitoring (TR 38.840 Table 8.1-1; needs power_unit_w > 0; docs/physical-layer.md)",
        omit_default=True)
    bandwidth_occupancy: float = option(1.0, "share of the channel its resource blocks occupy", low=0.0, low_open=True, high=1.0)
    downlink_overhead: float = option(0.0, "share of the downlink's resource elements not carrying data", low=0.0, high=1.0,
                                         high_open=True)
    uplink_overhead: float = option(0.0, "share of the uplink's resource elements not carrying data", low=0.0, high=1.0,
                                       high_open=True)
    subcarrier_spacing_hz: float = option(15e3, "subcarrier spacing: a resource block is 12 subcarriers (TS 38.211 4.4.4)",
                                          low=15e3, high=240e3)
    ul_power_control: str = "off"
    link_abstraction: str = "shannon"  # rate per SNR: Shannon with a gap and the CQI cap, TR 36.942 A.2's, or NR's MCS/BLER/HARQ (efficiency)
    ul_allocation: Literal[UL_ALLOCATIONS] = option("whole-band", "TDMA grant: every resource block (whole-band), the widest reaching the outage floor at "
                                              "P_CMAX (headroom) or the power headroom limit (power-limit): RoundChannel.allocated_prbs",
                                requires={"uplink_access": "tdma"})
    uplink_queues: Literal[UPLINK_QUEUES] = option(
        "sector", "the uplink receivers: one queue per serving sector (sector) or one per serving site (site)",
        omit_default=True)
    ul_interference: Literal[UL_INTERFERENCE] = option(
        "full-buffer", "the uplink interference: full-buffer, one unfaded device per sector of the other sites transmitting "
                       "all the time (the calibration setting); clock, the run's own devices uploading at the other receivers "
                       "at each instant, faded (the 19-site layout; docs/physical-layer.md)",
        omit_default=True, requires={"uplink_access": among("fdma", "pf"), "interference": LAYOUT})
    p0_dbm_per_prb: float = option(-92.2, "open-loop PUSCH power per resource block (scenarios.definitions.cells [PC])",
                                      low=P0_RANGE_DBM[0], high=P0_RANGE_DBM[1], requires={"ul_power_control": "fractional"})
    alpha: float = option(0.8, "path-loss compensation of the uplink power control", low=0.0, high=1.0, requires={"ul_power_control": "fractional"})
    mode: Literal[TIMING_MODES] = option("pipelined", "timing mode")
    deadline: float | None = option(None, "round deadline (s)", low=0, low_open=True, high=MAX_DEADLINE)
    # the cell in time (netsim.dynamics): the scheduler's channel knowledge, availability, batteries
    csi_delay_s: float = option(0.0, "age of the channel report a scheduler reads on a moving cell (0: perfect at the round's start; "
                                     "a CSI report period, TS 38.214 5.2.1.4)", low=0.0, high=60.0, omit_default=True,
                                requires={"speed_kmh": MOVING, "scheduler": READS_REPORT})
    mean_on_s: float = option(600.0, "devices' mean available period of the on/off availability (with mean_off_s > 0)",
                              low=0.0, low_open=True, high=1e9, omit_default=True, requires={"mean_off_s": ON_OFF})
    mean_off_s: float = option(0.0, "devices' mean unavailable period: on/off Markov availability (0: always available)",
                               low=0.0, high=1e9, omit_default=True)
    availability_trace: str | None = option(None, "a JSON file of per-device availability intervals (FedScale's client "
                                                  "behaviour trace format: netsim.dynamics.availability)", pattern=r".+\.json",
                                            pattern_text="a path to a .json file", omit_default=True)
    battery_j: float | None = option(None, "each device's battery; an empty device takes no more part (none: no battery)",
                                     low=0.0, low_open=True, high=1e9, omit_default=True)

    time_unit = "s"
    records_energy = True
    time_scale = 1.0

    def __post_init__(self) -> None:
        """The declared bounds (``option``), then what no single field's bounds say."""
        check_declared(self)
        self.downlink.check("downlink")
        self.uplink.check("uplink")
        if self.fading not in FADING_MODELS:
            raise ValueError(f"unknown fading model {self.fading!r}; choose from {', '.join(FADING_MODELS)}")
        if self.uplink_access not in UPLINK_ACCESS:
            raise ValueError(f"unknown uplink access {self.uplink_access!r}; choose from {', '.join(UPLINK_ACCESS)}")
        if None not in (self.min_bps_per_hz, self.max_bps_per_hz) and self.min_bps_per_hz >= self.max_bps_per_hz:
            raise ValueError(f"outage floor {self.min_bps_per_hz:g} must be below the rate cap {self.max_bps_per_hz:g} bit/s/Hz")
        if self.duplex not in duplex.DUPLEX_MODES:
            raise ValueError(f"unknown duplex mode {self.duplex!r}; choose from {', '.join(duplex.DUPLEX_MODES)}")
        if self.duplex == "tdd":
            duplex.tdd_shares(self.tdd_pattern, self.tdd_special_symbols)
            if self.downlink.bandwidth_hz != self.uplink.bandwidth_hz:
                raise ValueError(f"TDD shares one carrier: downlink and uplink bandwidth must be equal, got "
                                 f"{self.downlink.bandwidth_hz:g} and {self.uplink.bandwidth_hz:g} Hz")
        if self.link_abstraction not in LINK_ABSTRACTIONS:
            raise ValueError(f"unknown link abstraction {self.link_abstraction!r}; choose from {', '.join(LINK_ABSTRACTIONS)}")
        if self.link_abstraction == "nr-harq":
            self._check_harq()
        if self.ul_power_control not in UL_POWER_CONTROL:
            raise ValueError(f"unknown uplink power control {self.ul_power_control!r}; choose from {', '.join(UL_POWER_CONTROL)}")
        if self.ul_allocation == "power-limit" and self.uplink_access == "tdma" and self.ul_power_control != "fractional":
            raise ValueError("ul_allocation=power-limit sizes TDMA grants by TS 38.213 7.1.1's open-loop power: it needs "
                             "ul_power_control=fractional (with ul_power_control=off give ul_allocation=headroom or whole-band)")
        if self.ul_interference not in UL_INTERFERENCE:
            raise ValueError(f"unknown uplink interference {self.ul_interference!r}; choose from {', '.join(UL_INTERFERENCE)}")
        if self.ul_interference == "clock":
            self._check_clock_interference()
        if self.uplink_access == "pf" and self.ul_power_control != "fractional":
            raise ValueError("uplink_access=pf caps each device's blocks by its power headroom (TS 38.213 7.1.1's open-loop "
                             "power): it needs ul_power_control=fractional")
        if self.ue_energy == "slots" and not self.power_unit_w:
            raise ValueError("ue_energy=slots charges TR 38.840's device states: it needs power_unit_w > 0 (with "
                             "power_unit_w=0 only radiated power is charged: give ue_energy=airtime with it)")
        if self.mean_off_s > 0 and self.availability_trace is not None:
            raise ValueError("give on/off availability (mean_off_s > 0) or an availability_trace, not both")
        if self.fading_in_time == "doppler" and self.fading == "none":
            raise ValueError("fading_in_time=doppler times a fading the cell does not have (fading=none); drop one of them")
        if self.bs_rx_antennas > 1 and self.fading_in_time == "doppler":
            raise ValueError("bs_rx_antennas above 1 needs block fading: the Doppler processes are one branch "
                             "(netsim.dynamics); give fading_in_time=block or bs_rx_antennas=1")

    def _check_harq(self) -> None:
        """``nr-harq`` serves each TDMA upload through the NR link layer (``netsim.radio.harq_uplink``;
        on a moving cell step by step, ``harq_uplink.transfer_in_steps``) and each FDMA or PF upload
        at its grant's expected HARQ goodput (``RoundChannel.harq_share_bps``; FDMA's grants
        ``fdma_grant_prbs``; under ``ul_interference=clock`` a transmitter pushed below MCS 0's
        target stalls, ``netsim.transport.shared_uplink``): refused at a spacing without an NR
        numerology for data (mu 0-3)."""
        if self.subcarrier_spacing_hz not in harq_uplink.NUMEROLOGIES:
            raise ValueError(f"link_abstraction=nr-harq needs a subcarrier spacing of 15, 30, 60 or 120 kHz (TS 38.211 4.2, "
                             f"mu 0-3), not {self.subcarrier_spacing_hz:g} Hz (or give link_abstraction=nr)")

    @classmethod
    def from_dict(cls, data: dict) -> "PhysicalSystem":
        """From ``dataclasses.asdict`` form (as recorded in a result folder's config); fields a
        record lacks take their defaults."""
        fields = {f: data[f] for f in cls.__dataclass_fields__ if f not in ("cell", "downlink", "uplink") and f in data}
        cell = dict(data["cell"])
        if cell.get("distances_m") is not None:
            cell["distances_m"] = tuple(cell["distances_m"])
        return cls(cell=Cell(**cell), downlink=LinkBudget(**data["downlink"]), uplink=LinkBudget(**data["uplink"]), **fields)

    def _check_clock_interference(self) -> None:
        """What ``ul_interference=clock`` needs: uploads sharing a band on the clock (``fdma``,
        ``pf``: one shared uplink serves every receiver), the 19-site layout's receivers, one per
        sector."""
        if self.uplink_access not in ("fdma", "pf"):
            raise ValueError("ul_interference=clock recomputes the uploads' interference at every start and end on the "
                             "shared uplink: it needs uplink_access=pf or fdma")
        if not self.cell.interference:
            raise ValueError("ul_interference=clock sums the devices uploading at the other sectors of the 19-site layout: "
                             "it needs interference=on")
        if self.uplink_queues != "sector":
            raise ValueError("ul_interference=clock takes each sector as a receiver of its own: it needs uplink_queues=sector")

    @property
    def compute(self) -> ShiftedExponential:
        """The random part of the compute time (drawn like the normalized model's, in seconds)."""
        return ShiftedExponential(0.0, self.compute_extra_s)

    def record(self, name: str) -> dict:
        """The cell as a run's config records it: every parameter (those declared ``omit_default``
        only when set: ``contract.setting.recorded``), ``kind: physical``, ``time_unit: s``."""
        return {"name": name, "kind": "physical", "time_unit": "s", **recorded(self)}

    def with_overrides(self, rho: float | None = None, t_min: float | None = None, inv_mu: float | None = None):
        """Itself: the normalized parameters do not apply to a cell (ValueError when any is given)."""
        if (rho, t_min, inv_mu) != (None, None, None):
            raise ValueError("--rho, --t-min and --inv-mu apply to the normalized systems, not to a physical cell")
        return self

    def check_compute(self, samples: np.ndarray, limit: float) -> None:
        """ValueError when a device's local update (cycles per sample times its samples over the
        CPU clock) lasts longer than ``limit`` seconds."""
        longest_s = float(self.cycles_per_sample) * float(max(samples, default=0.0)) / float(self.cpu_hz)
        if longest_s > limit:
            raise ValueError(f"radio cpu_hz={self.cpu_hz:g} with cycles_per_sample={self.cycles_per_sample:g} makes a local "
                             f"update of {max(samples):g} samples last {longest_s:.3g} s, above the {limit:g} s a round "
                             "may add to the clock")

    def bind(self, samples: np.ndarray, network_seq: np.random.SeedSequence) -> tuple["PhysicalNetwork", np.random.Generator]:
        """(network, fading generator) of one run: the devices placed and the base station's
        planning draws from the channel child of ``network_seq`` (``channel_seeds``); a layout
        the cell cannot hold raises ValueError."""
        layout_seq, fading_seq, planning_seq = channel_seeds(network_seq)
        layout = self.cell.place(samples.size, np.random.default_rng(layout_seq))
        network = self.network(layout, samples, np.random.default_rng(planning_seq))
        if self.ul_interference == "clock":  # its own stream: the other streams draw what they drew under full-buffer
            network = dataclasses.replace(network, interference_rng=np.random.default_rng(interference_seed(network_seq)))
        if self.link_abstraction == "nr-harq":
            network = dataclasses.replace(network, link_state=harq_uplink.LinkState(harq_seed(network_seq)),
                                          stream_state=harq_downlink.HarqStreams(harq_downlink_seed(network_seq)))
        if self.in_time:
            network = dataclasses.replace(network, dynamics=dynamics_of(self, layout, np.random.default_rng(motion_seed(network_seq))))
        return network, np.random.default_rng(fading_seq)

    @property
    def in_time(self) -> bool:
        """Whether the cell lives in time (``netsim.dynamics``): moving devices, availability or batteries."""
        return self.channel_in_time or self.mean_off_s > 0 or self.availability_trace is not None or self.battery_j is not None

    @property
    def channel_in_time(self) -> bool:
        """Whether the channel is read at the clock's instants (``netsim.dynamics.motion``): moving
        devices, or fading correlated in time (``fading_in_time`` ``doppler``, at any speed)."""
        return self.cell.moving or self.fading_in_time == "doppler"

    def network(self, layout: CellLayout, samples_per_update: Sequence[float],
                planning_rng: np.random.Generator | None = None) -> "PhysicalNetwork":
        """The network of one run: this system with its devices placed and their data sizes;
        ``planning_rng`` draws the fading samples of ``multicast_airtime_s_per_bit``."""
        samples = np.asarray(samples_per_update, dtype=float)
        if samples.shape != (layout.num_devices,):
            raise ValueError(f"{samples.size} sample counts for {layout.num_devices} devices")
        efficiency = None
        if planning_rng is not None and self.fading != "none":
            mean_dl = self.mean_snr_db(layout)[0]
            efficiency = np.concatenate([
                self.efficiency(mean_dl, self.draw_fades(planning_rng, layout.k_factor, (PLANNING_BLOCK,)))
                for _ in range(PLANNING_DRAWS // PLANNING_BLOCK)])
        return PhysicalNetwork(self, layout, samples, efficiency)

    @property
    def shares(self) -> tuple[float, float]:
        """(downlink, uplink) fraction of the time each direction has its carrier: 1 and 1
        under FDD; the slot pattern's shares under TDD (``netsim.radio.duplex.tdd_shares``)."""
        if self.duplex == "tdd":
            return duplex.tdd_shares(self.tdd_pattern, self.tdd_special_symbols)
        return 1.0, 1.0

    @property
    def data_fractions(self) -> tuple[float, float]:
        """(downlink, uplink) fraction of a direction's carrier-time that carries data: duplex
        share x bandwidth occupancy x (1 - overhead); the rate is this x bandwidth x efficiency."""
        dl, ul = self.shares
        return (dl * self.bandwidth_occupancy * (1.0 - self.downlink_overhead),
                ul * self.bandwidth_occupancy * (1.0 - self.uplink_overhead))

    @property
    def outage_snr_db(self) -> float | None:
        """The flat-fading SNR below which a link is in outage: ``gap (2^min - 1)`` in dB."""
        if self.min_bps_per_hz is None:
            return None
        return float(link_budget.efficiency_snr_db(self.min_bps_per_hz, self.snr_gap_db))

    def coupling_loss_db(self, layout: CellLayout) -> np.ndarray:
        """Per device, the loss to its serving base station, both antennas' gains included (what
        it measures as reference signal power minus RSRP)."""
        bs_gain = self.bs_antenna_gain_dbi if layout.bs_gain_db is None else layout.bs_gain_db
        return -(layout.gain_db + bs_gain + self.ue_antenna_gain_dbi)

    def uplink_power_dbm(self, layout: CellLayout) -> np.ndarray:
        """Per device, its transmit power (dBm): the UE power, or its open-loop PUSCH power."""
        if self.ul_power_control == "off":
            return np.full(layout.num_devices, self.uplink.tx_power_dbm)
        return self._pusch_power_dbm(self.coupling_loss_db(layout))

    @property
    def uplink_allocation_hz(self) -> float:
        """The uplink's resource blocks in Hz: the band times its occupancy."""
        return self.uplink.bandwidth_hz * self.bandwidth_occupancy

    @property
    def downlink_prbs(self) -> int:
        """The downlink's resource blocks (its band times the occupancy, 12 subcarriers each; at least 1)."""
        return max(1, int(round(self.downlink.bandwidth_hz * self.bandwidth_occupancy / (12 * self.subcarrier_spacing_hz), 6)))

    @property
    def uplink_prbs(self) -> int:
        """The uplink's resource blocks (12 subcarriers each; at least 1): 51 at 20 MHz and 30 kHz."""
        return max(1, int(round(self.uplink_allocation_hz / (12 * self.subcarrier_spacing_hz), 6)))

    def _pusch_power_dbm(self, coupling_loss_db, allocation_hz: float | None = None) -> np.ndarray:
        """``pusch_power_dbm`` on ``allocation_hz`` (default: every resource block)."""
        allocation_hz = self.uplink_allocation_hz if allocation_hz is None else allocation_hz
        return pusch_power_dbm(self.uplink.tx_power_dbm, self.p0_dbm_per_prb, self.alpha, allocation_hz, coupling_loss_db)

    def share_power_dbm(self, full_band_dbm, coupling_loss_db, sharing) -> np.ndarray:
        """FDMA: a device's power on ``1/sharing`` of the resource blocks. Under ``fractional``
        power control TS 38.213 7.1.1 sets it for the allocation (``10 log10(2^mu M_RB)`` with the
        share's blocks: the same power per block as on the whole band, until ``P_CMAX``); ``off``:
        its whole power ``full_band_dbm``."""
        if self.ul_power_control == "off":
            return np.asarray(full_band_dbm, dtype=float)
        return self._pusch_power_dbm(coupling_loss_db, self.uplink_allocation_hz / np.asarray(sharing, dtype=float))

    def grant_gain_db(self, prbs, full_band_power_dbm, coupling_loss_db=None) -> np.ndarray:
        """A device's mean SINR on a TDMA grant of ``prbs`` of the ``M`` blocks over its SINR on the
        whole band (the noise and the interference fall with the grant's bandwidth): ``M / m``
        times ``grant_power_dbm`` over its whole-band power; 0 dB on the whole band."""
        prbs = np.asarray(prbs, dtype=float)
        power_dbm = self.grant_power_dbm(prbs, full_band_power_dbm, coupling_loss_db)
        return link_budget.linear_to_db(self.uplink_prbs / prbs) + power_dbm - full_band_power_dbm

    def grant_power_dbm(self, prbs, full_band_power_dbm, coupling_loss_db=None) -> np.ndarray:
        """A device's power on a TDMA grant of ``prbs`` blocks. ``headroom``, ``whole-band``: its
        whole-band power on the whole band; ``P_CMAX`` on a headroom grant narrower than the band
        (the closed-loop term of TS 38.213 7.1.1 raises it to the maximum its power headroom
        report shows). ``power-limit``: TS 38.213 7.1.1's open-loop power on the grant's blocks,
        ``min(P_CMAX, P0 + 10 log10(2^mu m) + alpha PL)`` (``coupling_loss_db``: its PL)."""
        if self.ul_allocation == "power-limit":
            if coupling_loss_db is None:  # np.asarray(None, float) is nan: a power of nan would pass on silently
                raise ValueError("ul_allocation=power-limit sets a grant's power from the device's coupling loss: give coupling_loss_db")
            prbs = np.asarray(prbs, dtype=float)
            return self._pusch_power_dbm(coupling_loss_db, self.uplink_allocation_hz * prbs / self.uplink_prbs)
        return np.where(np.asarray(prbs) < self.uplink_prbs, self.uplink.tx_power_dbm, full_band_power_dbm)

    def power_limit_prbs(self, coupling_loss_db) -> np.ndarray:
        """The power headroom limit: per device, the most PRBs ``m`` on which TS 38.213 7.1.1's
        open-loop power ``P0 + 10 log10(2^mu m) + alpha PL`` stays at most ``P_CMAX``, i.e.
        ``floor(10^((P_CMAX - P0 - alpha PL) / 10) / 2^mu)`` (the power headroom TS 38.321 5.4.6
        reports, turned into blocks); 0 where even one block needs more than ``P_CMAX``, and
        not capped at the band."""
        loss_db = np.asarray(coupling_loss_db, dtype=float)
        per_prb_hz = self.uplink_allocation_hz / self.uplink_prbs  # 12 subcarriers: 2^mu x 180 kHz
        headroom_db = self.uplink.tx_power_dbm - self.p0_dbm_per_prb - self.alpha * loss_db  # P_CMAX less the power on 180 kHz
        blocks = 10.0 ** (headroom_db / 10.0) * PRB_REFERENCE_HZ / per_prb_hz
        return np.floor(blocks * (1.0 + 1e-12)).astype(np.int64)  # the tolerance: a limit of exactly m blocks is m

    def power_limited_grant_prbs(self, coupling_loss_db) -> np.ndarray:
        """``ul_allocation=power-limit``'s grant: the power headroom limit (``power_limit_prbs``),
        at least 1 block and at most the band, rounded down to a DFT-s-OFDM size (``dft_s_ofdm_prbs``;
        51 blocks: 50)."""
        return dft_s_ofdm_prbs(np.clip(self.power_limit_prbs(coupling_loss_db), 1, self.uplink_prbs))

    def fdma_grant_prbs(self, caps_prbs) -> np.ndarray:
        """``uplink_access=fdma`` under ``nr-harq``: the blocks of each device transmitting at one
        receiver (in arrival order), an equal split in whole DFT-s-OFDM sizes (TS 38.211 6.3.1.4),
        each capped by ``caps_prbs`` (``RoundChannel.harq_decodable_prbs``: the widest grant on
        which it still has a goodput, as a gNB does not widen a grant past where MCS 0 decodes):
        ``water_fill_prbs``, i.e. the largest size at most ``M // n`` each where the caps allow,
        the blocks a cap leaves to the others, then the blocks left over handed out by its rule
        (the one with the fewest, the earlier arrival on a tie, raised to its next size while it
        fits). Uncapped on 51 blocks: 50 alone, 25 + 25 for two, 18 + 16 + 16 for three. No power
        headroom cap (FDMA splits the band whatever the power: ``ul_power_control=off`` too)."""
        return water_fill_prbs(caps_prbs, self.uplink_prbs)

    def pf_grant_prbs(self, coupling_loss_db) -> np.ndarray:
        """``uplink_access=pf``: the blocks of each device with data pending on one receiver (their
        coupling losses, in arrival order), ``water_fill_prbs`` capped by each one's power headroom
        limit (``power_limit_prbs``, TS 38.213 7.1.1 / TS 38.321 5.4.6)."""
        return water_fill_prbs(self.power_limit_prbs(coupling_loss_db), self.uplink_prbs)

    def uplink_interference_dbm(self, layout: CellLayout) -> np.ndarray | None:
        """Per device, the uplink interference at its serving sector (dBm; None: no network): one
        device per sector of the other sites, each at its own power (full, or set by its own
        coupling loss under power control), times the load."""
        if layout.uplink_interference_db is None:
            return None
        if self.ul_power_control == "off":
            return self.uplink.tx_power_dbm + layout.uplink_interference_db + self.ue_antenna_gain_dbi
        power_dbm = self._pusch_power_dbm(layout.interferer_coupling_loss_db - self.ue_antenna_gain_dbi)
        received = link_budget.db_to_linear(power_dbm[:, None] + layout.interferer_gain_db + self.ue_antenna_gain_dbi)
        with np.errstate(divide="ignore"):
            return link_budget.linear_to_db(self.cell.interference_load * received[:, layout.sector].sum(axis=0))

    def mean_snr_db(self, layout: CellLayout) -> tuple[np.ndarray, np.ndarray]:
        """Per device, the downlink and uplink SNR without small-scale fading (its mean, since
        ``E|h|^2 = 1``): transmit power (the uplink's per device, ``uplink_power_dbm``), both
        antennas' gains, large-scale gain, noise. In the 19-site network, the SINR: the serving
        sector's antenna gain towards the device, and the other cells' interference
        (``netsim.radio.multicell.Served``; uplink: ``uplink_interference_dbm``) added to the noise;
        fading acts on the wanted signal, the interference is taken at its mean. Under
        ``ul_interference=clock`` the uplink's is the SNR (no interference): the round adds its
        own uploads' interference at each instant (``RoundChannel.uplink_share_efficiency``)."""
        gain = layout.gain_db
        bs_gain = self.bs_antenna_gain_dbi if layout.bs_gain_db is None else layout.bs_gain_db
        antennas = bs_gain + self.ue_antenna_gain_dbi
        dl = link_budget.snr_db(self.downlink.tx_power_dbm, gain, self.downlink.bandwidth_hz, self.downlink.noise_figure_db, antennas)
        ul = link_budget.snr_db(self.uplink_power_dbm(layout), gain, self.uplink.bandwidth_hz, self.uplink.noise_figure_db, antennas)
        if layout.downlink_interference_db is not None:
            dl = link_budget.sinr_db(dl, self.downlink.tx_power_dbm + layout.downlink_interference_db + self.ue_antenna_gain_dbi,
                               self.downlink.bandwidth_hz, self.downlink.noise_figure_db)
            if self.ul_interference == "full-buffer":  # clock: the interference is the round's own (RoundChannel.uplink_share_efficiency)
                ul = link_budget.sinr_db(ul, self.uplink_interference_dbm(layout), self.uplink.bandwidth_hz, self.uplink.noise_figure_db)
        return dl, ul + link_budget.linear_to_db(self.bs_rx_antennas)

    def efficiency(self, snr_db, fades=None, direction: str = "downlink") -> np.ndarray:
        """Spectral efficiency (bit/s/Hz) of links of mean SNR ``snr_db`` (..., devices): the mean
        over the last axis of ``fades`` (..., devices, subbands) of the link abstraction's
        efficiency at ``SNR |h_s|^2``; without fades, at the SNR itself. ``link_abstraction``
        ``shannon``: ``log2(1 + SNR / gap)`` capped at ``max_bps_per_hz``; ``attenuated-shannon``:
        TR 36.942 A.2's for the ``direction`` (``link_budget.attenuated_shannon``), also capped; ``nr`` and
        ``nr-harq``: the NR link layer's delivered efficiency at 10% BLER with HARQ (``netsim.radio.link.abstraction``),
        also capped (``nr-harq`` serves the TDMA uploads themselves per transfer: ``netsim.radio.harq_uplink``)."""
        snr = link_budget.db_to_linear(snr_db)
        if fades is not None:
            snr = snr[..., None] * fades
        if self.link_abstraction in ("attenuated-shannon", "nr", "nr-harq"):
            nr = self.link_abstraction != "attenuated-shannon"
            efficiency = expected_efficiency(snr, direction) if nr else link_budget.attenuated_shannon(snr, direction)
            if self.max_bps_per_hz is not None:
                efficiency = np.minimum(efficiency, self.max_bps_per_hz)
        else:
            efficiency = link_budget.spectral_efficiency(snr, self.snr_gap_db, self.max_bps_per_hz)
        return efficiency if fades is None else efficiency.mean(axis=-1)

    def rate_bps(self, bandwidth_hz, snr_db) -> np.ndarray:
        """Shannon rate of a flat link at ``snr_db`` with all its band all the time (no share)."""
        return link_budget.shannon_rate_bps(bandwidth_hz, link_budget.db_to_linear(snr_db), self.snr_gap_db, self.max_bps_per_hz)

    def below_floor(self, efficiency) -> np.ndarray:
        """Outage: the efficiency is below ``min_bps_per_hz`` (never without a floor)."""
        efficiency = np.asarray(efficiency, dtype=float)
        if self.min_bps_per_hz is None:
            return np.zeros(efficiency.shape, dtype=bool)
        return efficiency < self.min_bps_per_hz

    def in_outage(self, snr_db) -> np.ndarray:
        """Outage of flat links at ``snr_db``."""
        return self.below_floor(self.efficiency(snr_db))

    def draw_fades(self, rng: np.random.Generator, k_factor: np.ndarray, draws: tuple[int, ...] = ()) -> np.ndarray:
        """``|h|^2`` of shape ``draws + (devices, subbands)`` under this system's fading."""
        return fading.power_gains(rng, self.fading, k_factor, tuple(draws) + (np.size(k_factor), self.subbands))

    def combined_uplink_fade(self, rng: np.random.Generator, k_factor: np.ndarray, first: np.ndarray) -> np.ndarray:
        """The uplink's fade after maximum-ratio combining over ``bs_rx_antennas`` = N branches:
        ``(|h_1|^2 + ... + |h_N|^2) / N`` (mean 1; the array gain is in ``mean_snr_db``), ``first``
        the first branch's ``|h_1|^2`` (under TDD the downlink's draw), the other N - 1 drawn
        after it, independent (antennas far enough apart for independent scattering; a LOS
        link's K-factor on every branch). N = 1: ``first`` itself, nothing drawn."""
        if self.bs_rx_antennas == 1:
            return first
        others = self.draw_fades(rng, k_factor, (self.bs_rx_antennas - 1,))
        return (first + others.sum(axis=0)) / self.bs_rx_antennas


@dataclass(frozen=True, eq=False)
class PhysicalNetwork(Network):
    """A physical system bound to one run's layout and per-device samples per local update.

    Each round draws its channel (its round process is ``netsim.transport.physical_round`` or its fast
    path, fading from the run's channel generator), reports energy, and the base station
    learns the round's channel before it starts (``channel_report``)."""

    system: PhysicalSystem
    layout: CellLayout
    samples_per_update: np.ndarray
    planning_efficiency: np.ndarray | None = None  # draws x devices: downlink bit/s/Hz samples for airtime estimates
    dynamics: object = None  # netsim.dynamics.rounds.Dynamics: the cell in time (None: static, i.i.d. fading per round)
    # ul_interference=clock: the rounds' fading of every device's link to every receiver (contract.seeds.interference_seed)
    interference_rng: np.random.Generator | None = None
    link_state: harq_uplink.LinkState | None = None  # nr-harq: each device's outer loop and uploads sent (bind)
    stream_state: harq_downlink.HarqStreams | None = None  # nr-harq: each listener's streams heard (bind)

    time_unit = "s"
    records_energy = True
    reports_channel = True

    @property
    def has_outages(self) -> bool:
        """Whether a device can miss a round by its channel (an outage threshold is set, or
        ``nr-harq``'s: MCS 0 missing the BLER target after four transmissions)."""
        return self.system.outage_snr_db is not None or self.system.link_abstraction == "nr-harq"

    def round_process(self, simulator: str, channel_rng: np.random.Generator | None = None) -> Callable:
        """The round on the cell, its fading drawn from ``channel_rng``: vectorized (TDMA;
        ``netsim.transport.physical_timeline``) or per-device processes (``netsim.transport.physical_round``)."""
        process = physical_round_fast if simulator == "timeline" else physical_round_process
        if self.dynamics is not None:
            return functools.partial(RoundInTime(process), channel_rng=channel_rng)
        return functools.partial(process, channel_rng=channel_rng)

    def transfer_links(self, model_bits: float, channel_rng: np.random.Generator | None, now_s: float,
                       access: tuple[str, str] = ("tdma", "tdma")) -> PhysicalLinks:
        """The cell's links of a fading draw from ``channel_rng`` (a moving cell: its channel at
        ``now_s``); its media are the cell's own (``PhysicalLinks.downlink_access``, ``uplink_access``),
        whatever ``access`` an orchestrator would choose."""
        return PhysicalLinks.draw(self, channel_rng, now_s)

    def channel_report(self, channel_rng: np.random.Generator | None, now_s: float = 0.0) -> ChannelReport:
        """The round's channel as the base station learns it at the round's start: the fading
        draw the round will use (drawn from a copy of the generator, so the round draws it
        again), each rate 0 in outage. A moving cell: the channel at ``now_s - csi_delay_s``
        (a report that old; ``netsim.dynamics``)."""
        if channel_rng is None:
            return ChannelReport()
        if self.dynamics is not None and self.dynamics.motion is not None:
            channel = self.draw_round(copy.deepcopy(channel_rng), now_s - self.system.csi_delay_s)
        else:
            channel = self.draw_round(copy.deepcopy(channel_rng))
        return ChannelReport(np.where(channel.uplink_outage, 0.0, channel.uplink_bps),
                             np.where(channel.downlink_outage, 0.0, channel.downlink_bps))

    def expectations(self, num_devices: int, model_bits: float, uplink_bits: float) -> Expectations:
        """Each device's mean compute time (its cycles and the mean extra delay); its airtimes
        come from each round's channel report."""
        compute_s = np.array([self.compute_s(d, self.system.compute_extra_s) for d in range(num_devices)])
        return Expectations(compute_s, model_bits, uplink_bits)

    @property
    def mode(self) -> str:
        return self.system.mode

    @property
    def deadline(self) -> float | None:
        return self.system.deadline

    @property
    def compute(self) -> ShiftedExponential:
        return self.system.compute

    @functools.cached_property
    def _mean_downlink_snr_db(self) -> np.ndarray:
        return self.system.mean_snr_db(self.layout)[0]

    def multicast_airtime_s_per_bit(self, devices: Sequence[int]) -> float:
        """The base station's estimate of a multicast's downlink seconds per bit for a group,
        from the devices' mean SNRs (long-term channel reports): the mean, over its own fading
        samples, of ``1 / rate of the weakest member not in outage`` (samples where every member
        is in outage send nothing and are left out). Without fading: ``1 / rate(min SNR)``."""
        members = list(devices)
        if self.planning_efficiency is None:
            efficiency = self.system.efficiency(self._mean_downlink_snr_db[members])[None, :]
        else:
            efficiency = self.planning_efficiency[:, members]
        rates = self.downlink_bps(efficiency)
        rates = np.where(self.system.below_floor(efficiency), np.inf, rates).min(axis=1)
        sent = np.isfinite(rates)
        if not sent.any():
            return float("inf")
        return float(np.mean(1.0 / rates[sent]))

    def downlink_bps(self, efficiency) -> np.ndarray:
        """Downlink rate at ``efficiency`` bit/s/Hz: its bandwidth times its data fraction
        (duplex share, occupancy, overhead: ``PhysicalSystem.data_fractions``)."""
        return self.system.data_fractions[0] * self.system.downlink.bandwidth_hz * np.asarray(efficiency, dtype=float)

    def uplink_bps(self, efficiency, sharing: int = 1) -> np.ndarray:
        """Uplink rate on ``1/sharing`` of the band at ``efficiency``: bandwidth / sharing times its data fraction."""
        return self.system.data_fractions[1] * (self.system.uplink.bandwidth_hz / sharing) * np.asarray(efficiency, dtype=float)

    def draw_round(self, rng: np.random.Generator, now_s: float = 0.0) -> "RoundChannel":
        """One round's block fading, downlink first; TDD: the uplink sees the same draw
        (reciprocity); FDD: its own. A cell in time (``netsim.dynamics.motion``): the large-scale
        channel at ``now_s``, the round's start (the network's layout that of ``now_s``, its
        serving sectors the association's then), and under ``fading_in_time``
        ``block`` the round's fading drawn here from ``rng`` as on a static cell, with the
        K-factors of that instant (the same draws: a static cell is a cell in time that does not
        move); under ``doppler`` the fading processes at ``now_s``, held for the round.
        The uplink's fade is combined over the receive antennas (``combined_uplink_fade``; TDD: the
        downlink's draw is the first branch's)."""
        network = self
        if self.dynamics is not None and self.dynamics.motion is not None:
            layout, downlink, uplink, _ = self.dynamics.motion.at(now_s)
            network = dataclasses.replace(self, layout=layout)
            if downlink is not None:
                return RoundChannel(network, downlink, uplink)
        k = network.layout.k_factor
        downlink = self.system.draw_fades(rng, k)
        uplink = downlink if self.system.duplex == "tdd" else self.system.draw_fades(rng, k)
        return RoundChannel(network, downlink, self.system.combined_uplink_fade(rng, k, uplink))

    def cycles(self, device: int, scale: float = 1.0) -> float:
        return scale * self.system.cycles_per_sample * float(self.samples_per_update[device])

    def compute_s(self, device: int, extra_s: float, scale: float = 1.0) -> float:
        """``scale x (cycles / f + extra)``; ``extra_s`` is the drawn random part."""
        base = energy.compute_time_s(self.system.cycles_per_sample * float(self.samples_per_update[device]), self.system.cpu_hz)
        return scale * (base + extra_s)

    @functools.cached_property
    def uplink_queue(self) -> np.ndarray:
        """Each device's uplink queue, the receiver that serves it: in the network its serving
        sector, ``3 site + orientation`` over TR 38.901's 57 (``uplink_queues`` ``sector``: each
        sector a cell with its own receiver and resource blocks), or its serving site
        (``site``: one queue per site); a moving device served by another site's sector
        (``Cell.coverage`` ``network``) queues there, not at the centre's, and its queue is its
        serving sector of the instant the layout is read (a handover moves it). The isolated
        cell: 0 (its one base station)."""
        layout = self.layout
        if layout.sector is None:
            return np.zeros(layout.num_devices, dtype=np.int64)
        site = np.zeros(layout.num_devices, dtype=np.int64) if layout.site is None else np.asarray(layout.site, dtype=np.int64)
        if self.system.uplink_queues == "site":
            return site
        return 3 * site + np.asarray(layout.sector, dtype=np.int64)

    @functools.cached_property
    def receiver_gain(self) -> np.ndarray:
        """``ul_interference=clock``: devices x 57, each device's linear gain to each sector's
        receiver (``CellLayout.receiver_gain_db``, the sector's antenna gain in it) times its own
        antenna gain: the radiated power (W) times this is the power received there."""
        if self.layout.receiver_gain_db is None:
            raise ValueError("ul_interference=clock needs the layout's gains to every receiver (a 19-site layout the cell placed)")
        return link_budget.db_to_linear(self.layout.receiver_gain_db + self.system.ue_antenna_gain_dbi)

    def draw_interference_fade(self) -> np.ndarray:
        """``ul_interference=clock``: one round's fading of every device's link to every receiver
        (devices x 57, ``|h|^2`` of Rayleigh fading, unit mean: exponential), block fading as the
        wanted links', from ``interference_rng``."""
        if self.interference_rng is None:
            raise ValueError("ul_interference=clock needs an interference generator (PhysicalSystem.bind: its own channel stream)")
        return self.interference_rng.exponential(1.0, self.receiver_gain.shape)

    @functools.cached_property
    def uplink_power_dbm(self) -> np.ndarray:
        """Each device's transmit power on the whole band (dBm): ``PhysicalSystem.uplink_power_dbm``."""
        return self.system.uplink_power_dbm(self.layout)

    @functools.cached_property
    def uplink_power_w(self) -> np.ndarray:
        """Each device's transmit power on the whole band (W)."""
        return link_budget.dbm_to_w(self.uplink_power_dbm)

    @functools.cached_property
    def coupling_loss_db(self) -> np.ndarray:
        return self.system.coupling_loss_db(self.layout)

    @functools.cached_property
    def power_limited_grant_prbs(self) -> np.ndarray:
        """Each device's ``ul_allocation=power-limit`` grant (``PhysicalSystem.power_limited_grant_prbs``):
        fixed by its coupling loss, so for the run on a static cell."""
        return self.system.power_limited_grant_prbs(self.coupling_loss_db)

    def share_power_dbm(self, devices, sharing: int) -> np.ndarray:
        """FDMA: the devices' power (dBm) on ``1/sharing`` of the band (``PhysicalSystem.share_power_dbm``)."""
        return self.system.share_power_dbm(self.uplink_power_dbm[devices], self.coupling_loss_db[devices], sharing)

    def share_power_w(self, devices, sharing: int) -> np.ndarray:
        """FDMA: the devices' power drawn on ``1/sharing`` of the band (``transmit_state_w`` of its radiated power)."""
        return self.transmit_state_w(link_budget.dbm_to_w(self.share_power_dbm(devices, sharing)))

    def upload_j(self, power_seconds):
        """Transmit energy of an upload that drew ``power_seconds`` (W s of wall clock, its power
        changing with its share: FDMA, ``share_power_w``): the uplink's duplex share of it."""
        return energy.transmit_energy_j(1.0, power_seconds, self.system.shares[1])

    def upload_off_j(self, airtime_s):
        """``ue_energy`` ``slots``: what an FDMA upload of ``airtime_s`` (wall clock) adds for the
        pattern's other slots (``off_slot_w``); 0 otherwise."""
        return energy.transmit_energy_j(0.0, airtime_s, self.system.shares[1], self.off_slot_w[1])

    def transmit_j(self, airtime_s, devices):
        """Transmit energy of the ``devices``' uploads lasting ``airtime_s`` (wall clock, s): each
        one's power times the uplink's duplex share of that time (TDD: its uplink symbols only;
        FDD: all of it). Scalars or arrays."""
        return energy.transmit_energy_j(self.transmit_state_w(self.uplink_power_w[devices]), airtime_s, self.system.shares[1],
                                        self.off_slot_w[1])

    @property
    def receive_power_w(self) -> float:
        """The device's power while it receives: TR 38.840's PDCCH + PDSCH state (300 units), or
        ``receive_power_w`` without the state model."""
        unit = self.system.power_unit_w
        return unit * energy.TR38840_UNITS["pdsch"] if unit else self.system.receive_power_w

    @property
    def idle_power_w(self) -> float:
        """The device's power while it waits in a round (TR 38.840's light sleep, 20 units: C-DRX
        between its PDCCH occasions); 0 without the state model."""
        return self.system.power_unit_w * energy.TR38840_UNITS[energy.WAITING_STATE]

    @functools.cached_property
    def off_slot_w(self) -> tuple[float, float]:
        """(reception, upload): the device's power in a transfer's off-direction slots under
        ``ue_energy`` ``slots`` and TDD (``energy.OFF_SLOT_STATE``: micro sleep in a reception's
        U slots, PDCCH monitoring in an upload's D slots; TR 38.840 Table 8.1-1, its reference
        values unscaled: docs/physical-layer.md); (0, 0) otherwise."""
        system = self.system
        if system.ue_energy != "slots" or system.duplex != "tdd":
            return 0.0, 0.0
        unit = system.power_unit_w
        return unit * energy.TR38840_UNITS[energy.OFF_SLOT_STATE["downlink"]], unit * energy.TR38840_UNITS[energy.OFF_SLOT_STATE["uplink"]]

    @property
    def grant_wait_w(self) -> float:
        """The device's power while it waits for its grant with data pending under ``ue_energy``
        ``slots`` (TR 38.840's PDCCH-only state, 100 units: active time); 0 otherwise (waiting)."""
        if self.system.ue_energy != "slots":
            return 0.0
        return self.system.power_unit_w * energy.TR38840_UNITS[energy.GRANT_WAIT_STATE]

    def transmit_state_w(self, radiated_w):
        """The device's power while it sends at ``radiated_w`` (``energy.pusch_state_w``), or the
        radiated power itself without the state model."""
        unit = self.system.power_unit_w
        return energy.pusch_state_w(unit, radiated_w) if unit else radiated_w

    def receive_j(self, listening_s):
        """Receive energy of streams lasting ``listening_s``: the downlink's share of that time."""
        return energy.receive_energy_j(self.receive_power_w, listening_s, self.system.shares[0], self.off_slot_w[0])

    def compute_j(self, device: int, scale: float = 1.0) -> float:
        return energy.compute_energy_j(self.system.kappa, self.cycles(device, scale), self.system.cpu_hz)


@dataclass(frozen=True, eq=False)
class RoundChannel:
    """Every device's fading in one round (``|h|^2``, devices x subbands, each direction), and
    what follows: efficiencies, rates, outages, airtimes."""

    network: PhysicalNetwork
    downlink_fade: np.ndarray
    uplink_fade: np.ndarray

    @property
    def system(self) -> PhysicalSystem:
        return self.network.system

    @functools.cached_property
    def _mean_snr_db(self) -> tuple[np.ndarray, np.ndarray]:
        return self.system.mean_snr_db(self.network.layout)

    @functools.cached_property
    def downlink_efficiency(self) -> np.ndarray:
        """bit/s/Hz per device: the mean over its subbands."""
        return self.system.efficiency(self._mean_snr_db[0], self.downlink_fade)

    @functools.cached_property
    def allocated_prbs(self) -> np.ndarray:
        """Each device's TDMA grant this round, in resource blocks. ``ul_allocation``
        ``whole-band``: all ``M``. ``headroom``: a device whose efficiency on the whole band is
        below the outage floor is granted, as a scheduler that reads its power headroom report
        (TS 38.321 5.4.6) and the round's channel (its sounding) would, the most blocks ``m`` on
        which it reaches the floor at ``P_CMAX`` (``PhysicalSystem.grant_gain_db``); where even
        one block does not, one block (its best). The others keep the whole band.
        ``power-limit``: every device the most blocks its open-loop power reaches within
        ``P_CMAX`` (TS 38.213 7.1.1), rounded down to a DFT-s-OFDM size, at least 1, at most the
        band (``PhysicalSystem.power_limited_grant_prbs``; the channel plays no part). The grants
        of a receiver held at once share its blocks (TS 38.214 6.1.2.2; ``netsim.transport.media.ResourceBlocks``):
        narrow grants that fit together send together, a whole-band grant sends alone."""
        system, total = self.system, self.system.uplink_prbs
        if system.ul_allocation == "power-limit":
            return self.network.power_limited_grant_prbs
        prbs = np.full(self.uplink_fade.shape[0], total)
        if system.ul_allocation == "whole-band" or system.min_bps_per_hz is None:
            return prbs
        short = np.flatnonzero(system.below_floor(system.efficiency(self._mean_snr_db[1], self.uplink_fade, "uplink")))
        if short.size:
            blocks = np.arange(1, total + 1)[:, None]  # candidate m x short devices
            gain = system.grant_gain_db(blocks, self.network.uplink_power_dbm[short][None, :])
            reached = ~system.below_floor(system.efficiency(self._mean_snr_db[1][short] + gain, self.uplink_fade[short], "uplink"))
            prbs[short] = np.where(reached.any(axis=0), total - np.argmax(reached[::-1], axis=0), 1)
        return prbs

    @functools.cached_property
    def _grant_power_dbm(self) -> np.ndarray:
        return self.system.grant_power_dbm(self.allocated_prbs, self.network.uplink_power_dbm, self.network.coupling_loss_db)

    @functools.cached_property
    def _grant_gain_db(self) -> np.ndarray:
        return self.system.grant_gain_db(self.allocated_prbs, self.network.uplink_power_dbm, self.network.coupling_loss_db)

    @functools.cached_property
    def uplink_power_w(self) -> np.ndarray:
        """Each device's transmit power on its TDMA grant this round (W)."""
        return link_budget.dbm_to_w(self._grant_power_dbm)

    def transmit_j(self, airtime_s, devices):
        """Transmit energy of the ``devices``' TDMA uploads lasting ``airtime_s`` (wall clock):
        their power on their grant times the uplink's duplex share of that time."""
        return energy.transmit_energy_j(self.network.transmit_state_w(self.uplink_power_w[devices]), airtime_s, self.system.shares[1],
                                        self.network.off_slot_w[1])

    @functools.cached_property
    def uplink_efficiency(self) -> np.ndarray:
        """bit/s/Hz per device on its TDMA grant (``allocated_prbs``)."""
        return self.system.efficiency(self._mean_snr_db[1] + self._grant_gain_db, self.uplink_fade, "uplink")

    @property
    def downlink_snr_db(self) -> np.ndarray:
        """Effective SNR: the flat SNR of the same efficiency (before the cap), per device."""
        return self._effective_snr_db(self._mean_snr_db[0], self.downlink_fade)

    @property
    def uplink_snr_db(self) -> np.ndarray:
        return self._effective_snr_db(self._mean_snr_db[1] + self._grant_gain_db, self.uplink_fade)

    def _effective_snr_db(self, mean_db, fades) -> np.ndarray:
        if fades.shape[-1] == 1:
            return mean_db + link_budget.linear_to_db(fades[:, 0])
        uncapped = link_budget.spectral_efficiency(link_budget.db_to_linear(mean_db)[:, None] * fades, self.system.snr_gap_db).mean(axis=-1)
        return link_budget.efficiency_snr_db(uncapped, self.system.snr_gap_db)

    @functools.cached_property
    def downlink_bps(self) -> np.ndarray:
        return self.network.downlink_bps(self.downlink_efficiency)

    @functools.cached_property
    def uplink_bps(self) -> np.ndarray:
        """Each device's rate alone on its TDMA grant (the whole band, or its headroom's blocks)."""
        return self.network.uplink_bps(self.uplink_efficiency) * (self.allocated_prbs / self.system.uplink_prbs)

    @functools.cached_property
    def downlink_outage(self) -> np.ndarray:
        """Below the floor; under ``nr-harq`` (a static cell) also where MCS 0 misses the BLER
        target after four PDSCH copies on the whole band (``harq_downlink.in_outage``)."""
        out = self.system.below_floor(self.downlink_efficiency)
        if self.harq_downlink:
            link = self.harq_downlink_link
            out = out | np.array([harq_downlink.in_outage(self.downlink_sinr_prb(d), link) for d in range(out.size)], dtype=bool)
        return out

    @property
    def harq_downlink(self) -> bool:
        """Whether the streams go through the link layer: ``nr-harq`` where the channel does not
        live in time (with moving devices or Doppler fading the streams stay on the ``nr`` curve)."""
        return self.system.link_abstraction == "nr-harq" and not self.system.channel_in_time

    @functools.cached_property
    def harq_downlink_link(self):
        """``nr-harq``: the downlink's link configuration (PDSCH) at the cell's numerology."""
        return harq_downlink.link_config(harq_uplink.NUMEROLOGIES[self.system.subcarrier_spacing_hz])

    def downlink_sinr_prb(self, device: int) -> np.ndarray:
        """``nr-harq``: the linear SINR of each PRB of the whole downlink band (its mean SNR, ``downlink_snr_db``'s
        before fading, times its subband's fade; ``harq_uplink.grant_sinr``)."""
        prbs = self.system.downlink_prbs
        return harq_uplink.grant_sinr(float(self._mean_snr_db[0][device]), self.downlink_fade[device], prbs, prbs)

    @functools.cached_property
    def uplink_outage(self) -> np.ndarray:
        """Outage alone on its TDMA grant; under ``nr-harq`` also where MCS 0 misses the BLER target
        after four transmissions on the grant's PRBs (``harq_sinr``; ``harq_uplink.in_outage``)."""
        out = self.system.below_floor(self.uplink_efficiency)
        if self.system.link_abstraction == "nr-harq":
            link = self.harq_link
            out = out | np.array([harq_uplink.in_outage(self.harq_sinr(d), link) for d in range(out.size)], dtype=bool)
        return out

    @functools.cached_property
    def harq_uplink_bps(self) -> np.ndarray:
        """``nr-harq``: each device's expected upload rate alone on its TDMA grant at the grant's
        EESM MCS (``harq_uplink.expected_bps`` on ``harq_sinr``, the uplink's duplex share); 0 in
        outage (also below the floor)."""
        link, share = self.harq_link, self.system.shares[1]
        rates = np.array([harq_uplink.expected_bps(self.harq_sinr(d), link, share) for d in range(self.allocated_prbs.size)])
        return np.where(self.uplink_outage, 0.0, rates)

    @functools.cached_property
    def harq_link(self):
        """``nr-harq``: the uplink's link configuration at the cell's numerology."""
        return harq_uplink.link_config(self.system.subcarrier_spacing_hz)

    def harq_sinr(self, device: int, prbs: int | None = None) -> np.ndarray:
        """``nr-harq``: the linear SINR of each PRB of the device's TDMA grant, or of a grant of
        ``prbs`` blocks (``harq_uplink.grant_sinr``: its mean SINR on the grant, ``uplink_snr_db``'s
        before fading, times its subband's fade)."""
        if prbs is None or prbs == self.allocated_prbs[device]:
            prbs, gain_db = int(self.allocated_prbs[device]), self._grant_gain_db[device]
        else:
            network = self.network
            gain_db = self.system.grant_gain_db(prbs, network.uplink_power_dbm[device], network.coupling_loss_db[device])
        mean_db = float(self._mean_snr_db[1][device] + gain_db)
        return harq_uplink.grant_sinr(mean_db, self.uplink_fade[device], self.system.uplink_prbs, int(prbs))

    def stream_rate_bps(self, devices: Sequence[int]) -> float:
        """The rate of the weakest listener not in outage; 0 when every listener is."""
        listeners = [d for d in devices if not self.downlink_outage[d]]
        if not listeners:
            return 0.0
        return float(self.downlink_bps[listeners].min())

    def stream_airtime_s(self, devices: Sequence[int], bits: float) -> float:
        """``bits / weakest rate``; a stream none of whose listeners can receive is not sent (0).
        ``nr-harq`` on a static cell: through the link layer (``harq_stream``)."""
        if self.harq_downlink:
            listeners = [d for d in dict.fromkeys(devices) if not self.downlink_outage[d]]
            if not listeners or bits <= 0:
                return 0.0
            if self.network.stream_state is None:
                raise ValueError("link_abstraction=nr-harq needs the run's stream state (PhysicalSystem.bind)")
            result = self.harq_stream(listeners, bits, self.network.stream_state.rngs(listeners))
            return harq_downlink.stream_airtime_s(result, self.harq_downlink_link, self.system.shares[0])
        rate = self.stream_rate_bps(devices)
        return bits / rate if rate > 0 else 0.0

    @functools.cached_property
    def harq_downlink_bps(self) -> np.ndarray:
        """``nr-harq``: each device's expected stream rate alone on the whole band (``harq_downlink.expected_bps``); 0 in outage."""
        link, share = self.harq_downlink_link, self.system.shares[0]
        return np.array([0.0 if self.downlink_outage[d] else harq_downlink.expected_bps(self.downlink_sinr_prb(d), link, share)
                         for d in range(self.downlink_outage.size)])

    @functools.cached_property
    def harq_broadcast_bps(self) -> float:
        """``nr-harq``: the expected rate of one stream to every device not in outage (0: none can receive)."""
        listeners = np.flatnonzero(~self.downlink_outage)
        if not listeners.size:
            return 0.0
        sinr = np.array([self.downlink_sinr_prb(d) for d in listeners])
        return harq_downlink.expected_bps(sinr, self.harq_downlink_link, self.system.shares[0])

    def harq_stream(self, listeners: Sequence[int], bits: float, rngs: list) -> "harq_downlink.StreamResult":
        """``nr-harq``: ``bits`` to ``listeners`` (none in outage) on the whole band, each drawing from its generator."""
        sinr = np.array([self.downlink_sinr_prb(d) for d in listeners])
        return harq_downlink.stream(int(math.ceil(bits)), sinr, rngs, self.harq_downlink_link)

    def uplink_share_efficiency(self, devices, sharing: int, interference_w=None) -> np.ndarray:
        """FDMA: efficiency on ``1/sharing`` of the band at the device's power there
        (``PhysicalNetwork.share_power_dbm``): the noise and the interference fall with the
        share, so its SNR is ``sharing`` times the full-band SNR times its share's power over its
        full-band power (a device or an array). Under power control below ``P_CMAX`` the power
        falls with the share as much: the same SNR as on the whole band. ``interference_w``
        (``ul_interference=clock``): the power received over the whole band from the other
        receivers' transmitters (``PhysicalLinks.clock_interference_w``), its share falling with
        the share as the noise's: the SINR is the SNR less ``10 log10(1 + I / N)``."""
        return self.system.efficiency(self.uplink_share_snr_db(devices, sharing, interference_w), self.uplink_fade[devices], "uplink")

    def uplink_share_snr_db(self, devices, sharing, interference_w=None) -> np.ndarray:
        """``uplink_share_efficiency``'s mean SINR (dB, before fading) on ``1/sharing`` of the band."""
        power_db = self.network.share_power_dbm(devices, sharing) - self.network.uplink_power_dbm[devices]
        snr_db = self._mean_snr_db[1][devices] + link_budget.linear_to_db(sharing) + power_db
        if interference_w is not None:
            uplink = self.system.uplink
            noise_w = link_budget.dbm_to_w(link_budget.noise_power_dbm(uplink.bandwidth_hz, uplink.noise_figure_db))
            snr_db = snr_db - link_budget.linear_to_db(1.0 + np.asarray(interference_w, dtype=float) / noise_w)
        return snr_db

    def uplink_share_bps(self, devices, sharing: int, interference_w=None):
        """FDMA: the devices' rates on ``1/sharing`` of the band each (a device or an array);
        ``interference_w``: ``uplink_share_efficiency``'s (``ul_interference=clock``), where a rate
        the interference brings below the outage floor is 0 (the shared uplink's stall rule,
        ``netsim.transport.shared_uplink``): below the floor with it, at or above it without. A
        share below the floor without any interference (FDMA's share widened past what the
        round's test on its narrowest share saw) keeps its rate, as it does off the clock, so a
        device alone (no interference) never has a rate of 0. ``nr-harq`` (FDMA, PF):
        ``harq_share_bps``."""
        if self.system.link_abstraction == "nr-harq":
            return self.harq_share_bps(devices, sharing, interference_w)
        efficiency = self.uplink_share_efficiency(devices, sharing, interference_w)
        rates = self.network.uplink_bps(efficiency, sharing)
        if interference_w is None or self.system.min_bps_per_hz is None:
            return rates
        pushed = self.system.below_floor(efficiency) & ~self.system.below_floor(self.uplink_share_efficiency(devices, sharing))
        return np.where(pushed, 0.0, rates)

    def harq_share_sinr(self, device: int, prbs: int, mean_sinr_db: float) -> np.ndarray:
        """``nr-harq`` on a shared uplink: the linear SINR of each PRB of a grant of ``prbs``
        blocks placed as a TDMA grant (the ``prbs`` consecutive PRBs of largest summed fade,
        ``harq_uplink.grant_sinr``) at the grant's mean SINR ``mean_sinr_db`` (TS 38.213 7.1.1's
        power on ``prbs`` blocks; ``uplink_share_snr_db``)."""
        return harq_uplink.grant_sinr(mean_sinr_db, self.uplink_fade[device], self.system.uplink_prbs, int(prbs))

    def harq_share_bps(self, devices, sharing, interference_w=None) -> np.ndarray:
        """``nr-harq`` under ``uplink_access=pf`` or ``fdma``: each device's expected HARQ goodput on its grant
        of ``m = M / sharing`` blocks (PF: ``PhysicalSystem.pf_grant_prbs``; FDMA: ``fdma_grant_prbs``) (``harq_uplink.expected_bps``: the EESM MCS of the grant's
        per-PRB SINRs, ``harq_share_sinr``, at the device's outer loop, ``TBS (1 - p_1 p_2 p_3 p_4)
        / (E[T] slot)`` on the uplink's duplex share; 0 where MCS 0 misses the target after four
        copies, which ``PhysicalLinks.pf_outage`` and ``fdma_outage`` keep off the uplink without
        interference; ``interference_w``, ``ul_interference=clock``: ``uplink_share_snr_db``'s, where
        the other receivers' uploads can bring it to 0, the shared uplink's stall rule). Charged at
        its expected value, not drawn block by block: the shares change while blocks are in flight
        (docs/link-layer.md)."""
        devices = np.atleast_1d(np.asarray(devices))
        sharing = np.broadcast_to(np.asarray(sharing, dtype=float), devices.shape)
        snr_db = np.atleast_1d(self.uplink_share_snr_db(devices, sharing, interference_w))
        state, link, share = self.network.link_state, self.harq_link, self.system.shares[1]
        rates = []
        for d, k, db in zip(devices.tolist(), sharing.tolist(), snr_db.tolist()):
            loop = state.loop(d) if state is not None else None
            key = (d, round(self.system.uplink_prbs / k), db, None if loop is None else (loop.offset_db, loop.bler_target))
            if key not in self._harq_share_rates:  # a shared uplink asks again at each change of its transmitters
                self._harq_share_rates[key] = harq_uplink.expected_bps(self.harq_share_sinr(d, key[1], db), link, share, loop=loop)
            rates.append(self._harq_share_rates[key])
        return np.array(rates)

    @functools.cached_property
    def _harq_share_rates(self) -> dict:
        """``harq_share_bps``'s rates kept: (device, PRBs, mean SINR in dB, outer loop's offset and target) -> bit/s."""
        return {}

    @functools.cached_property
    def _harq_decodable(self) -> dict:
        """``harq_decodable_prbs``'s answers kept: (device, widest PRBs) -> PRBs."""
        return {}

    def harq_decodable_prbs(self, device: int, widest_prbs: int) -> int:
        """``nr-harq`` under PF or FDMA: the widest DFT-s-OFDM size of at most ``widest_prbs``
        blocks up to which every size carries the device as a TDMA grant's outage test asks: not
        below the outage floor on it (``uplink_share_outage``) and MCS 0 meeting the BLER target
        after four copies (``harq_uplink.in_outage``). The grant's placement and the power per
        block, so its SINR, change with the size: under power control below ``P_CMAX`` the power
        per block is the same, above it and without power control it falls as the grant widens.
        0 where one block does not carry it. Without interference."""
        key = (int(device), int(widest_prbs))
        if key not in self._harq_decodable:
            band, decodable = self.system.uplink_prbs, 0
            for prbs in _dft_sizes(key[1]).tolist():
                if self.uplink_share_outage(key[0], band / prbs) or harq_uplink.in_outage(
                        self.harq_share_sinr(key[0], prbs, float(self.uplink_share_snr_db(key[0], band / prbs))), self.harq_link):
                    break
                decodable = prbs
            self._harq_decodable[key] = decodable
        return self._harq_decodable[key]

    def harq_share_outage(self, device: int, widest_prbs: int) -> bool:
        """``nr-harq`` under PF: some grant the scheduler can give the device, a DFT-s-OFDM size of
        at most ``widest_prbs`` blocks, does not carry it (below the floor, or MCS 0 missing the
        BLER target after four copies): ``harq_decodable_prbs`` short of the widest."""
        return self.harq_decodable_prbs(device, widest_prbs) < int(dft_s_ofdm_prbs(widest_prbs))

    def uplink_share_outage(self, device: int, sharing: int) -> bool:
        """FDMA: outage tested on the SNR of the share (``sharing`` times the full-band SNR)."""
        return bool(self.system.below_floor(self.uplink_share_efficiency(device, sharing)))


def channel_seeds(network_seq: np.random.SeedSequence) -> ChannelSeeds:
    """(layout, fading, planning) seeds of the network seed's channel child (``contract.seeds``:
    the one split of a run seed). Planning draws are the base station's own fading samples for
    estimating airtimes (never the round's)."""
    return ChannelSeeds.of(network_seq)
