"""Which lambda for my system? (journal IV-C, eq. 12, and V-D, Fig. 6)

The user-centric set-up gives the silhouette curve ``s_k``; Algorithm 2 picks
``k*(lambda) = argmax_k s_k - lambda k``, a staircase that never rises with lambda. Each k on
the staircase is trained once (user-centric with k streams); its recorded plans are re-timed on
every network system (``netsim.retime_plans``, valid without deadline), which gives the time
to a target accuracy of that k on each system; bits to the target do not depend on the system.
The answer per system: the lambdas whose k reaches the target soonest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from learning.weights import choose_stream_count


@dataclass(frozen=True)
class Step:
    """``k*(lambda) = k`` for ``lambda_from <= lambda < lambda_to`` (``lambda_to`` None: no end)."""

    k: int
    lambda_from: float
    lambda_to: float | None


def staircase(silhouette: dict[int, float]) -> list[Step]:
    """The exact staircase of Algorithm 2's choice over ``lambda >= 0``.

    ``k*`` can only change where two lines ``s_k - lambda k`` cross, at
    ``(s_i - s_j) / (i - j)``; between consecutive crossings it is constant, so one evaluation
    per interval gives the whole curve. Ties go to fewer streams (``choose_stream_count``).
    """
    ks = sorted(silhouette)
    crossings = sorted({(silhouette[i] - silhouette[j]) / (i - j) for i in ks for j in ks if i > j
                        and (silhouette[i] - silhouette[j]) / (i - j) > 0})
    edges = [0.0] + crossings
    steps: list[Step] = []
    for index, start in enumerate(edges):
        end = edges[index + 1] if index + 1 < len(edges) else None
        k = choose_stream_count(silhouette, (start + end) / 2 if end is not None else start + 1.0)
        if steps and steps[-1].k == k:
            steps[-1] = Step(k, steps[-1].lambda_from, end)
        else:
            steps.append(Step(k, start, end))
    return steps


def first_reach(times, accuracies, bits, target: float):
    """(time, bits) of the first evaluation at or above ``target``; None if never."""
    for t, acc, b in zip(times, accuracies, bits):
        if acc >= target:
            return float(t), float(b)
    return None


def measure(folders: dict[int, str], systems: dict, seed: int, target: float | None) -> tuple[list[dict], float | None]:
    """Per k and system: final accuracy, time and bits to ``target`` (default 90% of the best
    final mean accuracy), from each k's run re-timed on every system with the run's own
    network seed (so a system's re-timed times are that system's own run times)."""
    from figures.retime import retimed_curve
    from scenarios.result_folder import read_run
    from scenarios.seeds import seed_streams

    curves = {k: read_run(folder) for k, folder in folders.items()}
    finals = [c.summary["final_mean_accuracy"] for c in curves.values() if c.summary["final_mean_accuracy"] is not None]
    if target is None and finals:
        target = round(0.9 * max(finals), 4)
    rows = []
    for k, curve in curves.items():
        bits = [d + u for d, u in zip(curve.downlink_bits, curve.uplink_bits)]
        for name, system in systems.items():
            timed = retimed_curve(folders[k], system, np.random.default_rng(seed_streams(seed).network))
            hit = first_reach(timed.time, timed.mean_accuracy, bits, target) if target is not None else None
            rows.append({
                "k": k, "system": name, "final_mean_accuracy": curve.summary["final_mean_accuracy"],
                "time_to_target": hit[0] if hit else None, "bits_to_target": hit[1] if hit else None,
                "total_time": timed.time[-1], "total_bits": bits[-1], "run": Path(folders[k]).name,
            })
    return rows, target


def choices(steps: list[Step], rows: list[dict], systems) -> list[dict]:
    """Per system, the k that reaches the target soonest (ties: fewer bits, then fewer streams)
    and the lambdas that pick it; no k when none reaches the target."""
    answer = []
    for name in systems:
        reached = [r for r in rows if r["system"] == name and r["time_to_target"] is not None]
        if not reached:
            answer.append({"system": name, "k": None, "lambda_from": None, "lambda_to": None,
                           "time_to_target": None, "bits_to_target": None})
            continue
        best = min(reached, key=lambda r: (r["time_to_target"], r["bits_to_target"], r["k"]))
        step = next(s for s in steps if s.k == best["k"])
        answer.append({"system": name, "k": best["k"], "lambda_from": step.lambda_from, "lambda_to": step.lambda_to,
                       "time_to_target": best["time_to_target"], "bits_to_target": best["bits_to_target"]})
    return answer

