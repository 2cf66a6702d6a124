"""Which lambda for my system? (journal IV-C, eq. 12, and V-D, Fig. 6)

The user-centric set-up gives the silhouette curve ``s_k``; Algorithm 2 picks
``k*(lambda) = argmax_k s_k - lambda k``, a staircase that never rises with lambda (over several
seeds: of the mean silhouette curve). Each k on the staircase (or every k from 1 to m, or a
list) is trained once per seed (user-centric with k streams); its recorded plans are re-timed on
every normalized system, a preset or one with overrides (``wired:rho=10,mode=barrier``)
(``netsim.retime_plans``: no outage there, so the learning does not depend on the system). On a
cell, where outages drop devices and so change the learning, each k is trained on the cell
itself. This gives the time to a target accuracy of that k on each system, in the system's own
unit (``T_dl``, or seconds on a cell). The answer per system: the lambdas whose k reaches the
target on the most seeds, soonest.
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


def measure(folders: dict[str, dict[int, dict[int, str]]], systems: dict, target: float | None) -> tuple[list[dict], list[dict], float | None]:
    """Per k, seed and system (``runs``) and per k and system over the seeds (``rows``): final
    accuracy, time and bits to ``target`` (default 90% of the best mean final accuracy of any k
    on any system), from ``folders[system][k][seed]``: on a cell the run trained there, as it
    ran; on a normalized system a run re-timed with its own network seed (so a system's
    re-timed times are that system's own run times), in the system's time unit. Over seeds:
    mean and sample std, the seeds that never reach the target censored at their run's end
    (``scenarios.reports.over_seeds``)."""
    from scenarios.records.result_folder import read_run
    from scenarios.reports.over_seeds import first_reach, mean_std, to_target
    from scenarios.reports.retime import retimed_curve

    curves = {name: {k: {seed: read_run(folder) for seed, folder in by_seed.items()} for k, by_seed in by_k.items()}
              for name, by_k in folders.items()}
    finals = [mean_std([c.summary["final_mean_accuracy"] for c in by_seed.values()])[0]
              for by_k in curves.values() for by_seed in by_k.values()]
    finals = [f for f in finals if f is not None]
    if target is None and finals:
        target = round(0.9 * max(finals), 4)
    runs, rows = [], []
    for k in next(iter(folders.values())):
        for name, system in systems.items():
            measured = []
            for seed, curve in curves[name][k].items():
                bits = np.add(curve.downlink_bits, curve.uplink_bits).tolist()
                # a cell's own run as it ran; a normalized system's re-timing with the run's own network stream
                timed = curve if system.records_energy else retimed_curve(folders[name][k][seed], system)
                hit = first_reach(timed, target) if target is not None else None
                measured.append({
                    "k": k, "system": name, "seed": seed, "time_unit": timed.time_unit,
                    "final_mean_accuracy": curve.summary["final_mean_accuracy"],
                    "time_to_target": None if hit is None else timed.time[hit], "bits_to_target": None if hit is None else bits[hit],
                    "total_time": timed.time[-1], "total_bits": bits[-1], "run": Path(folders[name][k][seed]).name,
                })
            runs += measured
            censored = {key: [m[f"total_{key}"] if m[f"{key}_to_target"] is None else m[f"{key}_to_target"] for m in measured]
                        for key in ("time", "bits")}  # per seed, the seeds that never reach the target at their end
            time = to_target([m["time_to_target"] for m in measured], [m["total_time"] for m in measured])
            bits = to_target([m["bits_to_target"] for m in measured], [m["total_bits"] for m in measured])
            accuracy = mean_std([m["final_mean_accuracy"] for m in measured])
            rows.append({
                "k": k, "system": name, "time_unit": measured[0]["time_unit"], "seeds": len(measured),
                "final_mean_accuracy": accuracy[0], "final_mean_accuracy_std": accuracy[1],
                "time_to_target": time.mean, "time_to_target_std": time.std, "reached": time.reached,
                "censored": time.censored, "bits_to_target": bits.mean, "bits_to_target_std": bits.std,
                "total_time": float(np.mean([m["total_time"] for m in measured])),
                "total_bits": float(np.mean([m["total_bits"] for m in measured])),
                **{f"{key}_{end}": pick(values) for key, values in censored.items() for end, pick in (("min", min), ("max", max))},
            })
    return rows, runs, target


def choices(steps: list[Step], rows: list[dict], systems) -> list[dict]:
    """Per system, the k on the staircase that reaches the target soonest: on the most seeds,
    then the lowest mean time (censored seeds at their run's end), then fewer bits, then fewer
    streams; and the lambdas that pick it; no k, and ``why``, when none reaches the target on
    any seed or none trained is on the staircase (a k off it, trained with ``--k``, is no
    lambda's choice)."""
    answer, picked = [], [s.k for s in steps]
    for name in systems:
        mine = [r for r in rows if r["system"] == name]
        reached = [r for r in mine if r["reached"] and r["k"] in picked]
        if not reached:
            on = [r["k"] for r in mine if r["k"] in picked]
            why = (f"no k trained is on the staircase (trained: {', '.join(str(r['k']) for r in mine)}; the staircase's: "
                   f"{', '.join(map(str, picked))}): no lambda picks one" if not on else
                   f"no k of the staircase trained ({', '.join(map(str, on))}) reached the target on any seed")
            answer.append({"system": name, "k": None, "lambda_from": None, "lambda_to": None, "time_unit": None,
                           "time_to_target": None, "time_to_target_std": None, "reached": 0, "censored": None,
                           "bits_to_target": None, "why": why})
            continue
        best = min(reached, key=lambda r: (-r["reached"], r["time_to_target"], r["bits_to_target"], r["k"]))
        step = next(s for s in steps if s.k == best["k"])
        answer.append({"system": name, "k": best["k"], "lambda_from": step.lambda_from, "lambda_to": step.lambda_to,
                       **{key: best[key] for key in ("time_unit", "time_to_target", "time_to_target_std", "reached",
                                                     "censored", "bits_to_target")}})
    return answer
