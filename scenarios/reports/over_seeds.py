"""Numbers over seeds as every table quotes them: the mean with the **sample** standard deviation
(ddof = 1; none with one seed), and the time (bits, energy) to a target with the seeds that
never reached it **censored** at their run's end, never dropped: the mean over all seeds of
``min(first reach, run end)``, the restricted mean of survival analysis, a lower bound of the
true mean whenever a seed is censored (shown as ``>= x``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

SPREAD = "sample std over seeds"  # the label every table puts on its +- column
TIME_HEADERS = {"T_dl": "time to target / T_dl", "s": "time to target (s)"}  # one column per time unit
TIME_FORMATS = {"T_dl": ".1f", "s": ".3f"}  # how a time prints in each unit
CENSORED = ("seeds that never reached the target count at their run's end (censored): "
            "with any censored, the mean is a lower bound (>=)")


def check_seeds(label: str, curves: Sequence) -> None:
    """UsageError unless ``curves`` (``RunCurve`` s of one label, for a mean or a band) are runs
    that differ in the seed alone: no folder twice, no seed twice (a copy of a run is not another
    seed), the same resolved config but for the seed (``SEED_KEYS``)."""
    from scenarios.errors import UsageError
    from scenarios.records.result_folder import SEED_KEYS

    folders = [str(Path(c.folder).resolve()) for c in curves if c.folder]
    twice = next((f for f in folders if folders.count(f) > 1), None)
    if twice is not None:
        raise UsageError(f"{label}: folder {twice} is given twice; a mean over seeds takes each run once")
    seeds = [c.config.get("seed") for c in curves]
    twice = next((seed for seed in seeds if seeds.count(seed) > 1), None)
    if twice is not None:
        raise UsageError(f"{label}: {seeds.count(twice)} runs of seed {twice} (copies of one run); a mean over seeds "
                         "takes one run per seed")
    first = curves[0].config
    for c in curves[1:]:
        differ = sorted(k for k in {*first, *c.config} - set(SEED_KEYS) if first.get(k) != c.config.get(k))
        if differ:
            raise UsageError(f"{label}: its runs differ in more than the seed ({', '.join(differ)}); a mean over seeds "
                             "needs runs of one configuration")


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


def to_target(reach: Sequence[float | None], ends: Sequence[float]) -> ToTarget:
    """``reach``: per seed, the value at the first evaluation at or above the target (None:
    never); ``ends``: per seed, the value at the run's end (where a censored seed counts)."""
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
