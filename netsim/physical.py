"""The physical network system: a cell, link budgets, Rayleigh block fading, Shannon rates,
outages, compute in CPU cycles, and energy. Time is in seconds, energy in joules.

A ``PhysicalSystem`` is the configuration (what a preset names); ``bind`` places the devices
(one layout per run) and gives the ``PhysicalNetwork`` the engine drives. Each round the
network draws one ``RoundChannel``: every device's downlink and uplink SNR for the round
(block fading: constant within the round, independent across rounds and directions).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from netsim import energy, radio
from netsim.cell import Cell, CellLayout
from netsim.distributions import ShiftedExponential
from netsim.system import TIMING_MODES

FADING_MODELS = ("rayleigh", "none")
PLANNING_DRAWS = 1000
UPLINK_ACCESS = ("tdma", "fdma")


@dataclass(frozen=True)
class LinkBudget:
    """One direction: its bandwidth, the transmitter's power, the receiver's noise figure."""

    bandwidth_hz: float
    tx_power_w: float
    noise_figure_db: float

    def check(self, direction: str) -> None:
        if not self.bandwidth_hz > 0:
            raise ValueError(f"{direction} bandwidth must be > 0 Hz, got {self.bandwidth_hz:g}")
        if not self.tx_power_w > 0:
            raise ValueError(f"{direction} transmit power must be > 0 W, got {self.tx_power_w:g}")
        if self.noise_figure_db < 0:
            raise ValueError(f"{direction} noise figure must be >= 0 dB, got {self.noise_figure_db:g}")

    @property
    def tx_power_dbm(self) -> float:
        return float(radio.w_to_dbm(self.tx_power_w))


@dataclass(frozen=True)
class PhysicalSystem:
    """A cell with its radio links and devices' CPUs (all numbers in SI units).

    Downlink: the base station sends each stream at the rate of its weakest listener that is not
    in outage (a multicast is only as fast as its worst receiver). Uplink: ``tdma`` (one device
    at a time on the whole band, first come first served) or ``fdma`` (the band split equally
    among the devices transmitting at that moment, each putting its whole power into its share).
    A device whose SNR in the round is below ``outage_snr_db`` misses its downlink (it neither
    computes nor uploads) or cannot upload. Compute: ``cycles_per_sample x samples / cpu_hz``
    plus an exponential extra delay of mean ``compute_extra_s`` (the shifted exponential of the
    normalized model, now in seconds), both times the plan's compute scale.
    """

    cell: Cell
    downlink: LinkBudget
    uplink: LinkBudget
    fading: str = "rayleigh"
    snr_gap_db: float = 0.0
    max_bps_per_hz: float | None = None
    outage_snr_db: float | None = None
    uplink_access: str = "tdma"
    cycles_per_sample: float = 0.0
    cpu_hz: float = 1e9
    kappa: float = 0.0
    compute_extra_s: float = 0.0
    receive_power_w: float = 0.0
    mode: str = "pipelined"
    deadline: float | None = None

    def __post_init__(self) -> None:
        self.downlink.check("downlink")
        self.uplink.check("uplink")
        if self.fading not in FADING_MODELS:
            raise ValueError(f"unknown fading model {self.fading!r}; choose from {', '.join(FADING_MODELS)}")
        if self.uplink_access not in UPLINK_ACCESS:
            raise ValueError(f"unknown uplink access {self.uplink_access!r}; choose from {', '.join(UPLINK_ACCESS)}")
        if self.snr_gap_db < 0:
            raise ValueError(f"SNR gap must be >= 0 dB, got {self.snr_gap_db:g}")
        if self.max_bps_per_hz is not None and not self.max_bps_per_hz > 0:
            raise ValueError(f"rate cap must be > 0 bit/s/Hz, got {self.max_bps_per_hz:g}")
        if not self.cpu_hz > 0:
            raise ValueError(f"CPU frequency must be > 0 Hz, got {self.cpu_hz:g}")
        for name in ("cycles_per_sample", "kappa", "compute_extra_s", "receive_power_w"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name):g}")
        if self.mode not in TIMING_MODES:
            raise ValueError(f"unknown timing mode {self.mode!r}; choose from {', '.join(TIMING_MODES)}")
        if self.deadline is not None and not self.deadline > 0:
            raise ValueError(f"deadline must be > 0, got {self.deadline}")

    @classmethod
    def from_dict(cls, data: dict) -> "PhysicalSystem":
        """From ``dataclasses.asdict`` form (as recorded in a result folder's config)."""
        fields = {f: data[f] for f in cls.__dataclass_fields__ if f not in ("cell", "downlink", "uplink")}
        cell = dict(data["cell"])
        if cell.get("distances_m") is not None:
            cell["distances_m"] = tuple(cell["distances_m"])
        return cls(cell=Cell(**cell), downlink=LinkBudget(**data["downlink"]), uplink=LinkBudget(**data["uplink"]), **fields)

    @property
    def compute(self) -> ShiftedExponential:
        """The random part of the compute time (drawn like the normalized model's, in seconds)."""
        return ShiftedExponential(0.0, self.compute_extra_s)

    def bind(self, layout: CellLayout, samples_per_update: Sequence[float],
             planning_rng: np.random.Generator | None = None) -> "PhysicalNetwork":
        """The network of one run: this system with its devices placed and their data sizes;
        ``planning_rng`` draws the fading samples of ``multicast_airtime_s_per_bit``."""
        samples = np.asarray(samples_per_update, dtype=float)
        if samples.shape != (layout.num_devices,):
            raise ValueError(f"{samples.size} sample counts for {layout.num_devices} devices")
        fades = None
        if planning_rng is not None and self.fading == "rayleigh":
            fades = planning_rng.exponential(1.0, size=(PLANNING_DRAWS, layout.num_devices))
        return PhysicalNetwork(self, layout, samples, fades)

    def mean_snr_db(self, layout: CellLayout) -> tuple[np.ndarray, np.ndarray]:
        """Per device, the downlink and uplink SNR without small-scale fading (its mean under
        Rayleigh fading, which has ``E|h|^2 = 1``)."""
        gain = layout.gain_db
        dl = radio.snr_db(self.downlink.tx_power_dbm, gain, self.downlink.bandwidth_hz, self.downlink.noise_figure_db)
        ul = radio.snr_db(self.uplink.tx_power_dbm, gain, self.uplink.bandwidth_hz, self.uplink.noise_figure_db)
        return dl, ul

    def rate_bps(self, bandwidth_hz, snr_db) -> np.ndarray:
        return radio.shannon_rate_bps(bandwidth_hz, radio.db_to_linear(snr_db), self.snr_gap_db, self.max_bps_per_hz)

    def in_outage(self, snr_db) -> np.ndarray:
        snr = np.asarray(snr_db, dtype=float)
        if self.outage_snr_db is None:
            return np.zeros(snr.shape, dtype=bool)
        return snr < self.outage_snr_db


@dataclass(frozen=True, eq=False)
class PhysicalNetwork:
    """A physical system bound to one run's layout and per-device samples per local update."""

    system: PhysicalSystem
    layout: CellLayout
    samples_per_update: np.ndarray
    planning_fades: np.ndarray | None = None  # draws x devices, |h|^2 samples for airtime estimates

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
        mean_dl = self._mean_downlink_snr_db
        members = list(devices)
        if self.planning_fades is None:
            snr_db = mean_dl[members][None, :]
        else:
            snr_db = mean_dl[members][None, :] + radio.linear_to_db(self.planning_fades[:, members])
        rates = self.system.rate_bps(self.system.downlink.bandwidth_hz, snr_db)
        rates = np.where(self.system.in_outage(snr_db), np.inf, rates).min(axis=1)
        sent = np.isfinite(rates)
        if not sent.any():
            return float("inf")
        return float(np.mean(1.0 / rates[sent]))

    def draw_round(self, rng: np.random.Generator) -> "RoundChannel":
        """One round's block fading: ``|h|^2 ~ Exp(1)`` per device and direction (downlink first)."""
        n = self.layout.num_devices
        if self.system.fading == "rayleigh":
            fades = rng.exponential(1.0, size=(2, n))
        else:
            fades = np.ones((2, n))
        mean_dl, mean_ul = self.system.mean_snr_db(self.layout)
        return RoundChannel(self, mean_dl + radio.linear_to_db(fades[0]), mean_ul + radio.linear_to_db(fades[1]))

    def cycles(self, device: int, scale: float = 1.0) -> float:
        return scale * self.system.cycles_per_sample * float(self.samples_per_update[device])

    def compute_s(self, device: int, extra_s: float, scale: float = 1.0) -> float:
        """``scale x (cycles / f + extra)``; ``extra_s`` is the drawn random part."""
        base = energy.compute_time_s(self.system.cycles_per_sample * float(self.samples_per_update[device]), self.system.cpu_hz)
        return scale * (base + extra_s)

    def compute_j(self, device: int, scale: float = 1.0) -> float:
        return energy.compute_energy_j(self.system.kappa, self.cycles(device, scale), self.system.cpu_hz)


@dataclass(frozen=True, eq=False)
class RoundChannel:
    """Every device's SNR in one round, and what follows: rates, outages, airtimes."""

    network: PhysicalNetwork
    downlink_snr_db: np.ndarray
    uplink_snr_db: np.ndarray

    @property
    def system(self) -> PhysicalSystem:
        return self.network.system

    @functools.cached_property
    def downlink_bps(self) -> np.ndarray:
        return self.system.rate_bps(self.system.downlink.bandwidth_hz, self.downlink_snr_db)

    @functools.cached_property
    def uplink_bps(self) -> np.ndarray:
        """Each device's rate alone on the whole uplink band (TDMA)."""
        return self.system.rate_bps(self.system.uplink.bandwidth_hz, self.uplink_snr_db)

    @functools.cached_property
    def downlink_outage(self) -> np.ndarray:
        return self.system.in_outage(self.downlink_snr_db)

    @functools.cached_property
    def uplink_outage(self) -> np.ndarray:
        return self.system.in_outage(self.uplink_snr_db)

    def stream_rate_bps(self, devices: Sequence[int]) -> float:
        """The rate of the weakest listener not in outage; 0 when every listener is."""
        listeners = [d for d in devices if not self.downlink_outage[d]]
        if not listeners:
            return 0.0
        return float(self.downlink_bps[listeners].min())

    def stream_airtime_s(self, devices: Sequence[int], bits: float) -> float:
        """``bits / weakest rate``; a stream none of whose listeners can receive is not sent (0)."""
        rate = self.stream_rate_bps(devices)
        return bits / rate if rate > 0 else 0.0

    def uplink_share_bps(self, devices, sharing: int):
        """FDMA: the devices' rates on ``1/sharing`` of the band each, with their whole power in
        it, so their SNR there is ``sharing`` times the full-band SNR (a device or an array)."""
        snr = radio.db_to_linear(self.uplink_snr_db[devices]) * sharing
        width = self.system.uplink.bandwidth_hz / sharing
        return radio.shannon_rate_bps(width, snr, self.system.snr_gap_db, self.system.max_bps_per_hz)


def channel_seeds(network_seq: np.random.SeedSequence) -> tuple[np.random.SeedSequence, ...]:
    """(layout, fading, planning) seeds: children of the network seed's own channel child, so
    the compute draws (the network seed's generator) are the same whether the physical layer is
    on or off, and a run's layout does not depend on how many rounds it runs. Planning draws
    are the base station's own fading samples for estimating airtimes (never the round's)."""
    channel = np.random.SeedSequence(network_seq.entropy, spawn_key=tuple(network_seq.spawn_key) + (0,))
    return tuple(channel.spawn(3))
