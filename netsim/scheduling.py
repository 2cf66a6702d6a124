"""Scheduling on the clock: which devices take part in a round, chosen by the base station from
what it knows at the round's start.

On a cell it knows each device's channel for the round (``channel_report``: the round's block
fading, reported before the round starts); on a normalized system only the history (who was
scheduled, who uploaded when). Policies, each choosing ``count`` devices (ties: longest since
the last upload first, then the lowest index):

- ``random``: the learner's own uniform sample (the participation fraction; the default);
- ``best-channel``: the highest reported uplink rates (a cell only);
- ``proportional-fair``: the highest ``r_i / R_i``, ``R_i`` the running average of the rate it
  was served at, ``R_i <- (1 - 1/W) R_i + (1/W) r_i 1[scheduled]`` (Tse's scheduler; Jalali,
  Padovani and Pankaj, VTC 2000), ``R_i`` starting at the first report (a cell only);
- ``age-based``: the longest since the last upload (never: since round 0);
- ``deadline-aware``: as many devices as are expected to finish by the deadline (greedy,
  shortest expected time first): the broadcast to the chosen set at its weakest rate, each
  one's mean compute time, then their uploads one after another (TDMA, first come first
  served), all from the reports and the mean compute times.

Jain's fairness index of per-device counts ``x``: ``(sum x)^2 / (n sum x^2)`` (Jain, Chiu and
Hawe, DEC-TR-301, 1984); 1 when all are equal, ``1/n`` when one device takes everything.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Sequence

import numpy as np

POLICIES = ("random", "best-channel", "proportional-fair", "age-based", "deadline-aware")
CHANNEL_POLICIES = ("best-channel", "proportional-fair")
PF_WINDOW_ROUNDS = 10.0


@dataclass(frozen=True)
class ChannelReport:
    """Per device, the round's uplink and downlink rates (bit/s; 0 in outage); None off a cell."""

    uplink_bps: np.ndarray | None = None
    downlink_bps: np.ndarray | None = None


def channel_report(network, channel_rng: np.random.Generator | None) -> ChannelReport:
    """The round's channel as the base station learns it at the round's start: the fading draw
    the round will use (drawn from a copy of the generator, so the round draws it again)."""
    draw = getattr(network, "draw_round", None)
    if draw is None or channel_rng is None:
        return ChannelReport()
    channel = draw(copy.deepcopy(channel_rng))
    return ChannelReport(np.where(channel.uplink_outage, 0.0, channel.uplink_bps),
                         np.where(channel.downlink_outage, 0.0, channel.downlink_bps))


def jain_index(counts: Sequence[float]) -> float:
    """Jain's fairness index of ``counts`` (1 when all are zero)."""
    x = np.asarray(counts, dtype=float)
    square_sum = float(np.sum(x * x))
    return 1.0 if square_sum == 0 else float(np.sum(x) ** 2 / (x.size * square_sum))


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


class Scheduler:
    """One policy's choices over a run, and the history it keeps."""

    def __init__(self, policy: str, num_devices: int, count: int, deadline: float | None = None,
                 expectations: Expectations | None = None, physical: bool = False):
        if policy not in POLICIES:
            raise ValueError(f"unknown scheduler {policy!r}; choose from {', '.join(POLICIES)}")
        if policy in CHANNEL_POLICIES and not physical:
            raise ValueError(f"scheduler {policy} needs a cell's channel reports; choose a cell system")
        if policy == "deadline-aware" and (deadline is None or expectations is None):
            raise ValueError("scheduler deadline-aware needs --deadline")
        self.policy = policy
        self.count = max(1, min(int(count), num_devices))
        self.deadline = deadline
        self.expectations = expectations
        self.last_upload = np.zeros(num_devices, dtype=int)
        self.average_bps: np.ndarray | None = None

    def choose(self, server_round: int, report: ChannelReport) -> tuple[int, ...] | None:
        """The devices scheduled in ``server_round`` (None: ``random``, the learner samples)."""
        if self.policy == "random":
            return None
        age = server_round - self.last_upload
        if self.policy == "best-channel":
            return self._top(report.uplink_bps, age)
        if self.policy == "proportional-fair":
            if self.average_bps is None:
                self.average_bps = np.asarray(report.uplink_bps, dtype=float).copy()
            with np.errstate(divide="ignore", invalid="ignore"):
                metric = np.where(self.average_bps > 0, report.uplink_bps / self.average_bps, np.where(report.uplink_bps > 0, np.inf, 0.0))
            chosen = self._top(metric, age)
            served = np.zeros_like(self.average_bps)
            served[list(chosen)] = report.uplink_bps[list(chosen)]
            self.average_bps = (1 - 1 / PF_WINDOW_ROUNDS) * self.average_bps + served / PF_WINDOW_ROUNDS
            return chosen
        if self.policy == "age-based":
            return self._top(age.astype(float), age)
        return self._fitting(report, age)

    def observe(self, server_round: int, arrived: Sequence[int]) -> None:
        """Devices whose upload arrived in ``server_round``."""
        self.last_upload[list(arrived)] = server_round

    def _order(self, metric: np.ndarray, age: np.ndarray) -> np.ndarray:
        return np.lexsort((np.arange(metric.size), -age, -np.asarray(metric, dtype=float)))

    def _top(self, metric: np.ndarray, age: np.ndarray) -> tuple[int, ...]:
        return tuple(sorted(int(d) for d in self._order(metric, age)[: self.count]))

    def _fitting(self, report: ChannelReport, age: np.ndarray) -> tuple[int, ...]:
        e = self.expectations
        n = e.compute_s.size
        if report.uplink_bps is None:
            down_s = np.full(n, e.model_bits * e.downlink_s_per_bit)
            up_s = np.full(n, e.uplink_bits * e.uplink_s_per_bit)
        else:
            with np.errstate(divide="ignore"):
                down_s = np.where(report.downlink_bps > 0, e.model_bits / report.downlink_bps, np.inf)
                up_s = np.where(report.uplink_bps > 0, e.uplink_bits / report.uplink_bps, np.inf)
        alone = down_s + e.compute_s + up_s
        chosen: list[int] = []
        for device in self._order(-alone, age):
            if np.isfinite(alone[device]) and expected_finish(chosen + [int(device)], down_s, e.compute_s, up_s) <= self.deadline:
                chosen.append(int(device))
        return tuple(sorted(chosen))


def expected_finish(devices: Sequence[int], down_s: np.ndarray, compute_s: np.ndarray, up_s: np.ndarray) -> float:
    """When the last of ``devices`` has uploaded: one broadcast at the slowest of them, then
    each computes and queues for the uplink (Lindley: ``end = max(ready, end) + upload``)."""
    index = np.asarray(devices, dtype=int)
    ready = down_s[index].max() + compute_s[index]
    end = 0.0
    for k in np.argsort(ready, kind="stable"):
        end = max(ready[k], end) + up_s[index[k]]
    return float(end)
