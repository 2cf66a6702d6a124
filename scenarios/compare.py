"""Comparison tables over algorithms and seeds (journal Tables I and II), plus time and bits
to reach a target accuracy. Built from result folders, so finished runs are reused."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from figures.results import read_run
from scenarios.runner import RunSpec, run_experiment


@dataclass(frozen=True)
class Row:
    label: str
    mean_accuracy: tuple[float, float]  # mean, std over seeds
    worst_accuracy: tuple[float, float]
    time_to_target: float | None  # mean over seeds that reached it, in time_unit
    bits_to_target: float | None  # downlink + uplink
    reached: int
    seeds: int
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
            progress: Callable[[str], None] | None) -> list[str]:
    """Result folders of ``specs``, in order; with ``jobs`` > 1, runs go to that many worker
    processes (one torch thread each, training in that process: no nested training workers).
    Runs are independent, so the numbers do not change."""
    if jobs <= 1 or len(specs) <= 1:
        return [run_experiment(s, out_root, data_dir, progress)["result_dir"] for s in specs]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"),
                             initializer=_one_thread) as pool:
        futures = [pool.submit(run_experiment, s, out_root, data_dir, progress) for s in specs]
        return [f.result()["result_dir"] for f in futures]


def _one_thread() -> None:
    import torch

    from learning.engine.workers import set_workers

    torch.set_num_threads(1)
    set_workers(1)


def compare(
    specs_by_label: dict[str, list[RunSpec]],
    out_root: Path,
    data_dir: str | None,
    target: float | None,
    progress: Callable[[str], None] | None = None,
    jobs: int = 1,
) -> tuple[list[Row], float]:
    """Run (or reuse) every spec; the target defaults to 90% of the best mean final accuracy."""
    flat = [s for specs in specs_by_label.values() for s in specs]
    folders = iter(run_all(flat, out_root, data_dir, jobs, progress))
    curves = {label: [read_run(next(folders)) for _ in specs] for label, specs in specs_by_label.items()}
    if target is None:
        best = max(np.mean([c.summary["final_mean_accuracy"] for c in cs]) for cs in curves.values())
        target = round(0.9 * float(best), 4)
    rows = []
    for label, cs in curves.items():
        mean = np.array([c.summary["final_mean_accuracy"] for c in cs])
        worst = np.array([c.summary["final_worst_accuracy"] for c in cs])
        hits = [h for h in (first_reach(c, target) for c in cs) if h is not None]
        rows.append(Row(
            label=label,
            mean_accuracy=(float(mean.mean()), float(mean.std())),
            worst_accuracy=(float(worst.mean()), float(worst.std())),
            time_to_target=float(np.mean([h[0] for h in hits])) if hits else None,
            bits_to_target=float(np.mean([h[1] for h in hits])) if hits else None,
            reached=len(hits),
            seeds=len(cs),
            streams=int(cs[0].summary["streams"]),
            total_bits=float(np.mean([c.summary["downlink_bits"] + c.summary["uplink_bits"] for c in cs])),
            time_unit=cs[0].time_unit,
        ))
    return rows, target


def _pct(pair: tuple[float, float]) -> str:
    return f"{100 * pair[0]:.1f} (±{100 * pair[1]:.1f})"


def table_rows(rows: Sequence[Row]) -> tuple[list[str], list[list[str]]]:
    seconds = bool(rows) and rows[0].time_unit == "s"
    header = ["algorithm", "streams", "mean acc % (Table I)", "worst acc % (Table II)",
              "time to target (s)" if seconds else "time to target / T_dl", "bits to target", "reached", "total bits"]
    body = [[r.label, str(r.streams), _pct(r.mean_accuracy), _pct(r.worst_accuracy),
             "-" if r.time_to_target is None else (f"{r.time_to_target:.3f}" if seconds else f"{r.time_to_target:.1f}"),
             "-" if r.bits_to_target is None else f"{r.bits_to_target:.4g}", f"{r.reached}/{r.seeds}", f"{r.total_bits:.4g}"]
            for r in rows]
    return header, body


def markdown(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in body]) + "\n"
