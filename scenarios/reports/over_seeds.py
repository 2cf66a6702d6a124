"""Numbers over seeds as every table quotes them: the mean with the **sample** standard deviation
(ddof = 1; none with one seed), and the time (bits, energy) to a target with the seeds that
never reached it **censored** at their run's end, never dropped: the mean over all seeds of
``min(first reach, run end)``, the restricted mean of survival analysis, a lower bound of the
true mean whenever a seed is censored (shown as ``>= x``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

SPREAD = "sample std over seeds"  # the label every table puts on its +- column
TIME_HEADERS = {"T_dl": "time to target / T_dl", "s": "time to target (s)"}  # one column per time unit
TIME_FORMATS = {"T_dl": ".1f", "s": ".3f"}  # how a time prints in each unit
CENSORED = ("seeds that never reached the target count at their run's end (censored): "
            "with any censored, the mean is a lower bound (>=)")
# how every table's accuracies score the devices (docs/results-format.md, learning.evaluation)
SCORED = ("accuracy: each device on its own validation split with the learner's model for it after the round, "
          "a device its models no longer reach with the model it holds (a label with unreached=excluded: left out)")


def mean_std(values: Sequence[float | None]) -> tuple[float | None, float | None]:
    """(mean, sample standard deviation) of the finite ``values``; std None with fewer than two."""
    finite = np.array([v for v in values if v is not None], dtype=float)
    finite = finite[np.isfinite(finite)]
    if finite.size == 0:
        return None, None
    return float(finite.mean()), (float(finite.std(ddof=1)) if finite.size > 1 else None)


@dataclass(frozen=True)
class ToTarget:
    """A quantity to the target over seeds: ``mean`` and ``std`` of ``min(reach, end)`` over
    every seed, ``reached`` of ``seeds`` reached it (the others are censored)."""

    mean: float | None
    std: float | None
    reached: int
    seeds: int

    @property
    def censored(self) -> int:
        return self.seeds - self.reached


def first_reach(curve, target: float) -> int | None:
    """Index of ``curve``'s first evaluation at or above ``target`` (None: never)."""
    return next((i for i, acc in enumerate(curve.mean_accuracy) if acc >= target), None)


def to_target(reach: Sequence[float | None], ends: Sequence[float]) -> ToTarget:
    """``reach``: per seed, the value at the first evaluation at or above the target (None:
    never); ``ends``: per seed, the value at the run's horizon, where a censored seed counts (its time budget,
    or what it spent by its end: never its last evaluation, which can stop short of it)."""
    values = [end if hit is None else hit for hit, end in zip(reach, ends)]
    mean, std = mean_std(values)
    return ToTarget(mean, std, sum(hit is not None for hit in reach), len(values))


def pm(pair: tuple[float | None, float | None], fmt: str = ".3g", scale: float = 1.0) -> str:
    """``mean (±std)``; ``-`` without a number; the mean alone with one seed."""
    mean, std = pair
    if mean is None:
        return "-"
    return f"{scale * mean:{fmt}}" + ("" if std is None else f" (±{scale * std:{fmt.lstrip('+')}})")


def target_cell(value: ToTarget, fmt: str = ".3g") -> str:
    """The table cell of a censored mean: ``>= x`` when a seed is censored, ``-`` with no seed."""
    if value.mean is None:
        return "-"
    return (">= " if value.censored else "") + pm((value.mean, value.std), fmt)
