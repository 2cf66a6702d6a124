"""Comparison tables over algorithms and seeds (journal Tables I and II), plus time and bits
to reach a target accuracy. Built from result folders, so finished runs are reused."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from scenarios.result_folder import read_run
from scenarios.execution.progress import Progress
from scenarios.atomic import number_cell
from scenarios.execution.runner import RunSpec, run_experiment
from scenarios.execution.pool import run_calls


@dataclass(frozen=True)
class Row:
    label: str
    mean_accuracy: tuple[float | None, float | None]  # mean, std over the seeds that finished
    worst_accuracy: tuple[float | None, float | None]
    time_to_target: float | None  # mean over seeds that reached it, in time_unit
    bits_to_target: float | None  # downlink + uplink
    reached: int
    seeds: int
    diverged: int
    flagged: int  # runs with a training-failure sign (scenarios.health): at chance, loss rising
    streams: int
    total_bits: float
    time_unit: str = "T_dl"  # seconds ("s") on a physical cell


def first_reach(curve, target: float) -> tuple[float, float] | None:
    """(time, downlink + uplink bits) of the first evaluation at or above ``target``."""
    for t, acc, down, up in zip(curve.time, curve.mean_accuracy, curve.downlink_bits, curve.uplink_bits):
        if acc >= target:
            return t, down + up
    return None


def run_all(specs: list[RunSpec], out_root: Path, data_dir: str | None, jobs: int,
            progress: bool = False, reuse: bool = True) -> list[str]:
    """Result folders of ``specs``, in order; with ``jobs`` > 1, runs go to that many worker
    processes (one torch thread each, killed with this process). Runs are independent, so the
    numbers do not change. A progress line counts finished runs (``progress``)."""
    bar = Progress("runs", len(specs), unit="runs") if progress else None
    try:
        calls = [functools.partial(run_experiment, spec, out_root, data_dir, False, reuse) for spec in specs]
        return [summary["result_dir"] for summary in run_calls(calls, jobs, bar.update if bar else None)]
    finally:
        if bar:
            bar.close()


def compare(
    specs_by_label: dict[str, list[RunSpec]],
    out_root: Path,
    data_dir: str | None,
    target: float | None,
    progress: bool = False,
    jobs: int = 1,
    reuse: bool = True,
) -> tuple[list[Row], float | None, dict[str, list]]:
    """Run (or reuse) every spec; the target defaults to 90% of the best mean final accuracy.
    Diverged runs count in ``diverged`` and in no mean. Returns the rows, the target and each
    label's run curves (for per-seed tables)."""
    flat = [s for specs in specs_by_label.values() for s in specs]
    folders = iter(run_all(flat, out_root, data_dir, jobs, progress, reuse))
    curves = {label: [read_run(next(folders)) for _ in specs] for label, specs in specs_by_label.items()}
    finals = {label: [c.summary["final_mean_accuracy"] for c in cs if c.summary["final_mean_accuracy"] is not None]
              for label, cs in curves.items()}
    if target is None:
        means = [float(np.mean(f)) for f in finals.values() if f]
        target = round(0.9 * max(means), 4) if means else None
    rows = []
    for label, cs in curves.items():
        done = [c for c in cs if c.summary.get("status", "finished") == "finished"]
        mean = np.array([c.summary["final_mean_accuracy"] for c in done], dtype=float)
        worst = np.array([c.summary["final_worst_accuracy"] for c in done], dtype=float)
        hits = [h for h in (first_reach(c, target) for c in done) if h is not None] if target is not None else []
        rows.append(Row(
            label=label,
            mean_accuracy=_mean_std(mean),
            worst_accuracy=_mean_std(worst),
            time_to_target=float(np.mean([h[0] for h in hits])) if hits else None,
            bits_to_target=float(np.mean([h[1] for h in hits])) if hits else None,
            reached=len(hits),
            seeds=len(cs),
            diverged=len(cs) - len(done),
            flagged=sum(1 for c in cs if c.summary.get("training_flags")),
            streams=int(cs[0].summary["streams"]),
            total_bits=float(np.mean([c.summary["downlink_bits"] + c.summary["uplink_bits"] for c in cs])),
            time_unit=cs[0].time_unit,
        ))
    return rows, target, curves


def _mean_std(values: np.ndarray) -> tuple[float | None, float | None]:
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return None, None
    return float(finite.mean()), float(finite.std())


def _pct(pair: tuple[float | None, float | None]) -> str:
    if pair[0] is None:
        return "-"
    return f"{100 * pair[0]:.1f} (±{100 * pair[1]:.1f})"


def table_rows(rows: Sequence[Row]) -> tuple[list[str], list[list[str]]]:
    """The human-readable table (Markdown and the terminal)."""
    seconds = bool(rows) and rows[0].time_unit == "s"
    header = ["algorithm", "streams", "mean acc % (Table I)", "worst acc % (Table II)",
              "time to target (s)" if seconds else "time to target / T_dl", "bits to target", "reached", "diverged",
              "flagged", "total bits"]
    body = [[r.label, str(r.streams), _pct(r.mean_accuracy), _pct(r.worst_accuracy),
             "-" if r.time_to_target is None else (f"{r.time_to_target:.3f}" if seconds else f"{r.time_to_target:.1f}"),
             "-" if r.bits_to_target is None else f"{r.bits_to_target:.4g}", f"{r.reached}/{r.seeds}",
             f"{r.diverged}/{r.seeds}", f"{r.flagged}/{r.seeds}", f"{r.total_bits:.4g}"]
            for r in rows]
    return header, body


def numeric_rows(rows: Sequence[Row]) -> tuple[list[str], list[list[str]]]:
    """The same table with plain numbers, one column each (empty cell: none), for CSV."""
    header = ["algorithm", "streams", "mean_accuracy", "mean_accuracy_std", "worst_accuracy", "worst_accuracy_std",
              "time_to_target", "bits_to_target", "reached", "diverged", "flagged", "seeds", "total_bits"]
    body = [[r.label, r.streams, number_cell(r.mean_accuracy[0]), number_cell(r.mean_accuracy[1]),
             number_cell(r.worst_accuracy[0]), number_cell(r.worst_accuracy[1]), number_cell(r.time_to_target),
             number_cell(r.bits_to_target), r.reached, r.diverged, r.flagged, r.seeds, number_cell(r.total_bits)] for r in rows]
    return header, body


def markdown(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in body]) + "\n"
