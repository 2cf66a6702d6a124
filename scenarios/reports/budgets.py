"""Accuracy within a budget: what each run reached by a given simulated time, bits or energy,
beside the time to a target (``scenarios.execution.compare``), over seeds.

A run's accuracy within budget ``B`` on an axis (``time`` in its curve's unit, ``downlink_bits``,
``uplink_bits``, ``energy_j`` of all devices) is its mean accuracy at its last evaluation whose
cumulative spending is at most ``B``. A run that ended before spending ``B`` (its rounds ran out
first) is censored: its cell is the accuracy at its end, marked ``>=`` (more budget could only
have been spent on more rounds; the mark says the number is not what ``B`` buys). Read with
``--budget time=5,10,20``, one or several axes (``parse_budget_axes``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

from scenarios.errors import UsageError
from scenarios.reports.over_seeds import mean_std, pm

AXES = ("time", "downlink_bits", "uplink_bits", "energy_j")


def parse_budgets(text: str, name: str = "--budget") -> tuple[str, tuple[float, ...]]:
    """``AXIS=B1,B2,...`` -> (axis, budgets); UsageError naming ``name`` (where the text was given)
    and what is wrong."""
    axis, _, values = str(text).partition("=")
    if not isinstance(text, str) or axis not in AXES:
        raise UsageError(f"{name} must be AXIS=B1,B2,... with AXIS one of {', '.join(AXES)}, got {text!r}")
    try:
        budgets = tuple(float(v) for v in values.split(","))
    except ValueError:
        budgets = ()
    if not budgets or not all(math.isfinite(b) and b > 0 for b in budgets):
        raise UsageError(f"{name} {axis}= takes finite numbers > 0 separated by commas, got {values!r}")
    return axis, tuple(sorted(set(budgets)))


def parse_budget_axes(texts, name: str = "--budget") -> dict[str, tuple[float, ...]]:
    """One or several ``AXIS=B1,B2,...`` (``--budget`` repeated: ``--budget time=5,10 --budget
    uplink_bits=1e7``) -> axis -> budgets, in the order given; UsageError for a bad one
    (``parse_budgets``) or an axis given twice."""
    axes: dict[str, tuple[float, ...]] = {}
    for text in [texts] if isinstance(texts, str) else list(texts):
        axis, budgets = parse_budgets(text, name)
        if axis in axes:
            raise UsageError(f"{name} {axis}= is given twice; give each axis once, its budgets separated by commas")
        axes[axis] = budgets
    return axes


def check_budget_runs(axes, curves) -> None:
    """UsageError (one line, before anything is written) where a budget's axis is one a run does
    not record: ``energy_j`` needs runs on a cell."""
    if "energy_j" in axes:
        bare = next((c for c in curves if c.energy_j is None), None)
        if bare is not None:
            raise UsageError(f"--budget energy_j needs runs that record energy (a cell); {bare.folder or bare.label} does not")


def _spent(curve, axis: str) -> tuple[list[float], float]:
    """The cumulative spending at each evaluation and at the run's end, on ``axis``."""
    if axis == "time":
        return curve.time, curve.end_time
    if axis == "energy_j":
        if curve.energy_j is None:
            raise UsageError(f"--budget energy_j needs runs that record energy (a cell); {curve.label} does not")
        return curve.energy_j, float(curve.summary["energy_j"])
    return getattr(curve, axis), float(curve.summary[axis])


@dataclass(frozen=True)
class WithinBudget:
    """One run's accuracy within a budget and whether it ended before spending it."""

    accuracy: float | None
    censored: bool


def within(curve, axis: str, budget: float) -> WithinBudget:
    spent, end = _spent(curve, axis)
    accuracy = None
    for value, acc in zip(spent, curve.mean_accuracy):
        if value <= budget and acc is not None and math.isfinite(acc):
            accuracy = acc
    return WithinBudget(accuracy, end < budget)


def budget_table(curves: Mapping[str, Sequence], axis: str, budgets: Sequence[float]) -> tuple[list[str], list[list[str]]]:
    """One row per label (its seeds' curves), one column per budget: mean accuracy % (sample std
    over seeds), ``>=`` where a seed ended before spending the budget; finished runs only."""
    header = ["algorithm"] + [f"acc % within {axis} {b:g}" for b in budgets]
    body = []
    for label, cs in curves.items():
        done = [c for c in cs if c.summary.get("status", "finished") == "finished"]
        row = [label]
        for b in budgets:
            found = [within(c, axis, b) for c in done]
            cell = pm(mean_std([f.accuracy for f in found]), ".1f", 100)
            row.append((">= " if any(f.censored for f in found) else "") + cell)
        body.append(row)
    return header, body


def budget_numbers(curves: Mapping[str, Sequence], axis: str, budgets: Sequence[float]) -> list[dict]:
    """The same as plain numbers, one dict per label and budget (for CSV and the studies)."""
    rows = []
    for label, cs in curves.items():
        done = [c for c in cs if c.summary.get("status", "finished") == "finished"]
        for b in budgets:
            found = [within(c, axis, b) for c in done]
            mean, std = mean_std([f.accuracy for f in found])
            rows.append({"algorithm": label, "axis": axis, "budget": b, "accuracy": mean, "accuracy_std": std,
                         "censored": sum(f.censored for f in found), "seeds": len(done)})
    return rows
