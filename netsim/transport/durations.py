"""What a network system says one round's parts take: the one place durations come from.

The round engine (fast timeline and reference processes alike) asks the system for a
``RoundDurations`` and never computes an airtime or a compute time itself, so a system with
another physics (per-stream rates, per-device uplinks) only has to fill these arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from contract import RoundPlan


TIMING_MODES = ("barrier", "pipelined")

# The network's parameters are bounded by what the clock can hold. Simulated time is a float64
# on which rounds add up; past 2**53 of the time unit an added T_dl (one model on the downlink)
# is lost to rounding, so the largest run must end below EXACT_TIME. What each parameter can
# add to the end of the largest run (MAX_ROUNDS rounds of MAX_DEVICES devices, contract.setting):
# - rho: every device uploads at most 2 models a round (SCAFFOLD's model and control variate),
#   one after another: 2 rho MAX_DEVICES MAX_ROUNDS = 2e10 rho T_dl, below 2**53 up to
#   rho = 4.5e5: MAX_RHO = 1e5.
# - t_min and 1/mu: a round lasts at most t_min + 45/mu of compute (45 bounds numpy's largest
#   Exp(1) draw: its ziggurat tail adds -ln(2**-53) = 36.7 to 7.7): 46 MAX_ROUNDS x below 2**53
#   up to 2e9: MAX_COMPUTE_TIME = 1e9.
# - deadline: a round with a drop lasts until the deadline: MAX_ROUNDS x below 2**53 up to 9e10:
#   MAX_DEADLINE = 1e10 (T_dl, or seconds on a cell).
# Bits are counts of models (at most MAX_DEVICES streams of a few models a round) times the
# model's bits, far below overflow; a run whose numbers still stop being finite is diverged.
EXACT_TIME = 2.0**53
MAX_RHO = 1e5
MAX_COMPUTE_TIME = 1e9
MAX_DEADLINE = 1e10


class NonFiniteTime(ValueError):
    """A duration the system computed is infinite or NaN: the run's clock can go no further."""


@dataclass(frozen=True, eq=False)
class RoundDurations:
    """Durations of one round in the system's time unit.

    ``stream_s[k]``: airtime of ``plan.streams[k]`` on the shared downlink.
    ``compute_s[i]``: compute time of ``plan.participants[i]``, compute scale applied.
    ``uplink_s[i]``: airtime of its upload on the shared uplink; 0 means it sends nothing.
    """

    stream_s: np.ndarray
    compute_s: np.ndarray
    uplink_s: np.ndarray

    def __post_init__(self) -> None:
        for name in ("stream_s", "compute_s", "uplink_s"):
            values = np.asarray(getattr(self, name), dtype=float)
            if values.ndim != 1:
                raise ValueError(f"{name} must be one-dimensional, got shape {values.shape}")
            if values.size and not np.all(np.isfinite(values)):
                raise NonFiniteTime(f"{name} must be finite and >= 0")
            if values.size and values.min() < 0:
                raise ValueError(f"{name} must be finite and >= 0")
            object.__setattr__(self, name, values)
        if self.compute_s.shape != self.uplink_s.shape:
            raise ValueError(f"{self.compute_s.size} compute times for {self.uplink_s.size} uplink airtimes")

    def check(self, plan: RoundPlan) -> None:
        """ValueError unless the arrays match the plan's streams and participants."""
        if self.stream_s.size != len(plan.streams):
            raise ValueError(f"{self.stream_s.size} stream airtimes for {len(plan.streams)} streams")
        if self.compute_s.size != len(plan.participants):
            raise ValueError(f"{self.compute_s.size} compute times for {len(plan.participants)} participants")


class TimedSystem(Protocol):
    """What the round engine asks of a network system."""

    mode: str  # one of TIMING_MODES: "barrier" or "pipelined"
    deadline: float | None  # from the round start, in the system's time unit

    def round_durations(self, plan: RoundPlan, model_bits: float, rng: np.random.Generator) -> RoundDurations: ...
