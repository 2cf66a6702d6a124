"""A run's horizon: it stops when it has spent a budget of simulated time, downlink or uplink
bits or device energy, whichever comes first, under any orchestrator (synchronous rounds,
``netsim.clock.engine``; buffered aggregation, ``netsim.clock.buffered``).

- ``time``: the clock stops at exactly that time (the clock's unit: ``T_dl``, or seconds on a
  cell); what is in flight then (a round not finished, an update not arrived) is not counted:
  only finished rounds or aggregations are recorded.
- ``downlink_bits``, ``uplink_bits``, ``energy_j`` (all devices together, joules; a cell): the
  run stops at the end of the first round (aggregation) whose records bring the spending to the
  budget or past it; the summary gives what was spent.

``Budget.stopped`` says why a run stopped (None: it ran all its rounds; ``stalled``: buffered
aggregation where every device missed the current version by an outage).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

BUDGET_KEYS = ("time", "downlink_bits", "uplink_bits", "energy_j")


def check_limits(limits: Mapping[str, float]) -> dict[str, float]:
    """The limits as floats; ValueError naming an unknown key or a limit that is not a finite
    number > 0."""
    checked = {}
    for key, value in limits.items():
        if key not in BUDGET_KEYS:
            raise ValueError(f"unknown budget {key!r}; choose from {', '.join(BUDGET_KEYS)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise ValueError(f"budget {key} must be a finite number > 0, got {value!r}")
        checked[key] = float(value)
    return checked


@dataclass
class Budget:
    """The limits of a run (``BUDGET_KEYS`` -> a number > 0) and what it has spent so far."""

    limits: Mapping[str, float]
    spent: dict = field(default_factory=lambda: {"downlink_bits": 0.0, "uplink_bits": 0.0, "energy_j": 0.0})
    stopped: str | None = None  # the budget that ended the run

    def __post_init__(self) -> None:
        self.limits = check_limits(self.limits)

    @property
    def time(self) -> float | None:
        return self.limits.get("time")

    def spend(self, record) -> bool:
        """Add a finished round's (aggregation's) bits and energy; True when a budget is reached
        (``stopped`` then names it)."""
        self.spent["downlink_bits"] += record.downlink_bits
        self.spent["uplink_bits"] += record.uplink_bits
        self.spent["energy_j"] += float(sum((record.energy_j or {}).values()))
        for key in ("downlink_bits", "uplink_bits", "energy_j"):
            if key in self.limits and self.spent[key] >= self.limits[key]:
                self.stopped = key
                return True
        return False

    def horizon(self, env, finished, stop):
        """The event ``env.run`` runs until: the orchestrator's process ``finished``, the event
        ``stop`` (a bits or energy budget reached) or the time budget, whichever comes first."""
        ends = [finished, stop]
        if self.time is not None:
            ends.append(env.process(_alarm(env, self.time, self)))
        return env.any_of(ends)

    def summary(self, clock_end: float) -> dict:
        """``stopped``: why the run ended (``rounds``: all its rounds; else the budget, its
        limit and what was spent)."""
        if self.stopped is None:
            return {"reason": "rounds"}
        if self.stopped not in self.limits:  # an orchestrator's own end (``stalled``: nobody could train)
            return {"reason": self.stopped}
        spent = clock_end if self.stopped == "time" else self.spent[self.stopped]
        return {"reason": "budget", "budget": self.stopped, "limit": self.limits[self.stopped], "spent": spent}


def _alarm(env, at: float, budget: Budget):
    yield env.timeout(at)
    budget.stopped = "time"
