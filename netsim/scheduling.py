"""Scheduling on the clock: which devices take part in a round, chosen by the base station from
what it knows at the round's start.

On a cell it knows each device's channel for the round (``Network.channel_report``: the round's
block fading, reported before the round starts); on a normalized system only the history (who
was scheduled, who uploaded when). A policy is a ``Policy`` subclass registered by its name in
``POLICIES`` (a plugin adds its own: ``SCHEDULERS`` in ``scenarios.plugins``); it declares what
it needs (``needs_channel``, ``needs_deadline``) and ``Policy.on`` refuses a network that lacks
it. The built-in policies, each choosing ``count`` devices (ties: longest since the last upload
first, then the lowest index):

- ``random``: the learner's own uniform sample (the participation fraction; the default);
- ``best-channel``: the highest reported uplink rates (a cell only);
- ``proportional-fair``: the highest ``r_i / R_i``, ``R_i`` the running average of the rate it
  was served at, ``R_i <- (1 - 1/W) R_i + (1/W) r_i 1[scheduled]`` (Tse's scheduler; Jalali,
  Padovani and Pankaj, VTC 2000), ``R_i`` starting at the first report (a cell only);
- ``age-based``: the longest since the last upload (never: since round 0);
- ``deadline-aware``: as many devices as are expected to finish by the deadline (greedy,
  shortest expected time first): the broadcast to the chosen set at its weakest rate, each
  one's mean compute time, then their uploads one after another (TDMA, first come first
  served), all from the reports and the mean compute times (``Network.expectations``).

Jain's fairness index of per-device counts ``x``: ``(sum x)^2 / (n sum x^2)`` (Jain, Chiu and
Hawe, DEC-TR-301, 1984); 1 when all are equal, ``1/n`` when one device takes everything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Sequence

import numpy as np

PF_WINDOW_ROUNDS = 10.0


@dataclass(frozen=True)
class ChannelReport:
    """Per device, the round's uplink and downlink rates (bit/s; 0 in outage); None off a cell."""

    uplink_bps: np.ndarray | None = None
    downlink_bps: np.ndarray | None = None


def jain_index(counts: Sequence[float]) -> float | None:
    """Jain's fairness index of ``counts``, ``(sum x)^2 / (n sum x^2)`` (Jain, Chiu and Hawe,
    DEC-TR-301, 1984, eq. 1); None when every count is 0 (nobody scheduled, nothing arrived):
    0/0 is undefined, not perfectly fair."""
    x = np.asarray(counts, dtype=float)
    square_sum = float(np.sum(x * x))
    return None if square_sum == 0 else float(np.sum(x) ** 2 / (x.size * square_sum))


def reads_channel(name: str) -> bool:
    """Whether the registered policy ``name`` reads the round's channel report (``needs_channel``
    or ``reads_report``): what a report's age (a cell's ``csi_delay_s``) acts through."""
    policy = POLICIES.get(name)
    return policy is not None and (policy.needs_channel or policy.reads_report)


def participation_counts(rounds, num_devices: int) -> tuple[np.ndarray, np.ndarray]:
    """Per device, training rounds scheduled and uploads arrived, from (round, participants,
    arrived) triples (round 0, the set-up, is not counted)."""
    scheduled = np.zeros(num_devices, dtype=int)
    arrived = np.zeros(num_devices, dtype=int)
    for server_round, participants, got in rounds:
        if server_round > 0:
            scheduled[list(participants)] += 1
            arrived[list(got)] += 1
    return scheduled, arrived


@dataclass(frozen=True)
class Expectations:
    """What ``deadline-aware`` expects of each device: its mean compute time, the bits of one
    model down and of its upload, and the normalized system's airtimes per bit (None on a cell,
    where the report's rates give them)."""

    compute_s: np.ndarray
    model_bits: float
    uplink_bits: float
    downlink_s_per_bit: float | None = None
    uplink_s_per_bit: float | None = None


class Policy:
    """A scheduling policy: its choices over a run and the history it keeps.

    A subclass sets ``name`` (what ``--scheduler`` takes) and ``choose``, and declares what it
    needs: ``needs_channel``, each round's channel report (a cell; refused on a normalized
    system); ``needs_deadline``, a deadline (``self.deadline``) and the network's
    ``self.expectations``; ``reads_report``, the channel report where the network has one (without
    needing it); ``picks_count`` False when it decides how many devices take part
    itself (so full participation leaves it something to choose). ``count``: the devices the
    participation fraction gives; ``last_upload``: each device's last round whose upload arrived.
    """

    name: ClassVar[str] = ""
    needs_channel: ClassVar[bool] = False
    needs_deadline: ClassVar[bool] = False
    reads_report: ClassVar[bool] = False  # its choice reads the channel report (besides needs_channel: a report it can do without)
    picks_count: ClassVar[bool] = True

    def __init__(self, num_devices: int, count: int, deadline: float | None = None, expectations: Expectations | None = None):
        self.num_devices = num_devices
        self.count = max(1, min(int(count), num_devices))
        self.deadline = deadline
        self.expectations = expectations
        self.last_upload = np.zeros(num_devices, dtype=int)

    @classmethod
    def on(cls, network, num_devices: int, count: int, model_bits: float, uplink_bits: float) -> "Policy":
        """This policy for a run on ``network`` (a ``netsim.kind.Network``); ValueError naming
        what it needs where the network lacks it."""
        if cls.needs_channel and not network.reports_channel:
            raise ValueError(f"scheduler {cls.name} needs a cell's channel reports; choose a cell system")
        if cls.needs_deadline and network.deadline is None:
            raise ValueError(f"scheduler {cls.name} needs --deadline")
        expectations = network.expectations(num_devices, model_bits, uplink_bits) if cls.needs_deadline else None
        return cls(num_devices, count, network.deadline, expectations)

    def choose(self, server_round: int, report: ChannelReport) -> tuple[int, ...] | None:
        """The devices scheduled in ``server_round`` (None: the learner samples its own)."""
        raise NotImplementedError

    def observe(self, server_round: int, arrived: Sequence[int]) -> None:
        """Devices whose upload arrived in ``server_round``."""
        self.last_upload[list(arrived)] = server_round

    def age(self, server_round: int) -> np.ndarray:
        """Rounds since each device's last upload arrived (since round 0: never)."""
        return server_round - self.last_upload

    def order(self, metric: np.ndarray, server_round: int) -> np.ndarray:
        """Devices by ``metric``, highest first; ties: the oldest upload, then the lowest index."""
        return np.lexsort((np.arange(self.num_devices), -self.age(server_round), -np.asarray(metric, dtype=float)))

    def top(self, metric: np.ndarray, server_round: int) -> tuple[int, ...]:
        """The ``count`` devices of highest ``metric`` (``order``), in device order."""
        return tuple(sorted(int(d) for d in self.order(metric, server_round)[: self.count]))


class Random(Policy):
    """The learner's own uniform sample of the participation fraction."""

    name = "random"

    def choose(self, server_round: int, report: ChannelReport) -> None:
        return None


class BestChannel(Policy):
    """The highest reported uplink rates."""

    name = "best-channel"
    needs_channel = True

    def choose(self, server_round: int, report: ChannelReport) -> tuple[int, ...]:
        return self.top(report.uplink_bps, server_round)


class ProportionalFair(Policy):
    """The highest rate over its served average, ``r_i / R_i`` (window ``PF_WINDOW_ROUNDS``)."""

    name = "proportional-fair"
    needs_channel = True
    average_bps: np.ndarray | None = None

    def choose(self, server_round: int, report: ChannelReport) -> tuple[int, ...]:
        if self.average_bps is None:
            self.average_bps = np.asarray(report.uplink_bps, dtype=float).copy()
        with np.errstate(divide="ignore", invalid="ignore"):
            metric = np.where(self.average_bps > 0, report.uplink_bps / self.average_bps, np.where(report.uplink_bps > 0, np.inf, 0.0))
        chosen = self.top(metric, server_round)
        served = np.zeros_like(self.average_bps)
        served[list(chosen)] = report.uplink_bps[list(chosen)]
        self.average_bps = (1 - 1 / PF_WINDOW_ROUNDS) * self.average_bps + served / PF_WINDOW_ROUNDS
        return chosen


class AgeBased(Policy):
    """The longest since the last upload arrived."""

    name = "age-based"

    def choose(self, server_round: int, report: ChannelReport) -> tuple[int, ...]:
        return self.top(self.age(server_round).astype(float), server_round)


class DeadlineAware(Policy):
    """As many devices as are expected to finish by the deadline (``expected_finish``)."""

    name = "deadline-aware"
    needs_deadline = True
    reads_report = True  # a cell's reported rates in place of the mean ones
    picks_count = False

    def choose(self, server_round: int, report: ChannelReport) -> tuple[int, ...]:
        e = self.expectations
        if report.uplink_bps is None:
            down_s = np.full(self.num_devices, e.model_bits * e.downlink_s_per_bit)
            up_s = np.full(self.num_devices, e.uplink_bits * e.uplink_s_per_bit)
        else:
            with np.errstate(divide="ignore"):
                down_s = np.where(report.downlink_bps > 0, e.model_bits / report.downlink_bps, np.inf)
                up_s = np.where(report.uplink_bps > 0, e.uplink_bits / report.uplink_bps, np.inf)
        alone = down_s + e.compute_s + up_s
        chosen: list[int] = []
        for device in self.order(-alone, server_round):
            if np.isfinite(alone[device]) and expected_finish(chosen + [int(device)], down_s, e.compute_s, up_s) <= self.deadline:
                chosen.append(int(device))
        return tuple(sorted(chosen))


POLICIES: dict[str, type[Policy]] = {policy.name: policy for policy in (Random, BestChannel, ProportionalFair, AgeBased, DeadlineAware)}


def expected_finish(devices: Sequence[int], down_s: np.ndarray, compute_s: np.ndarray, up_s: np.ndarray) -> float:
    """When the last of ``devices`` has uploaded: one broadcast at the slowest of them, then
    each computes and queues for the uplink (Lindley: ``end = max(ready, end) + upload``)."""
    index = np.asarray(devices, dtype=int)
    ready = down_s[index].max() + compute_s[index]
    end = 0.0
    for k in np.argsort(ready, kind="stable"):
        end = max(ready[k], end) + up_s[index[k]]
    return float(end)
