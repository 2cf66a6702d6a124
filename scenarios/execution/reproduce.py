"""The journal's experiment set (user-centric FL, section V, Tables I and II, Fig. 2, 3, 5, 6)
at a chosen scale, run through ``run_experiment`` in worker processes; finished runs are reused.

Rounds, training settings and algorithm options are the registry's (read when the command runs);
a scale only chooses how many rounds (a fraction of the scenario's), seeds and evaluations.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from pathlib import Path

from scenarios.definitions.registry import get_scenario
from scenarios.execution.build import scenario_data
from scenarios.execution.runner import prepare, resolve, run_experiment
from scenarios.execution.spec import RunSpec, run_label
from scenarios.definitions.settings import MAX_SEEDS, Setting
from scenarios.execution.pool import run_calls
from scenarios.execution.scales import Scale

# Tables I and II, Fig. 2 and 5: the three image scenarios (MNIST stands in for EMNIST)
TABLE_SCENARIOS = ("mnist-label-shift", "mnist-rotation", "cifar10-concept-shift")
TEXT_SCENARIO = "stackoverflow-tags"  # Fig. 3
TIME_SCENARIO = "mnist-rotation"  # Fig. 6, re-timed on the three systems
TIME_SYSTEMS = ("wireless-slow-ul", "wireless-fast-ul", "wired")
SYSTEM = "wireless-slow-ul"  # where every run trains; learning does not depend on it (no deadline)

# (algorithm, options) in the paper's Table I row order, then Table II's extra columns; oracle
# only where the scenario has true groups
TABLE_VARIANTS = (
    ("user-centric", {"streams": None}),
    ("user-centric", {"streams": 4}),
    ("scaffold", {}),
    ("ditto", {}),
    ("pfedme", {}),
    ("fedprox", {}),
    ("local", {}),
    ("fedavg", {}),
    ("oracle", {}),
    ("cfl", {}),
    ("fedfomo", {}),
)
# Fig. 3 (V-B): full personalization and 16 streams against the baselines
TEXT_VARIANTS = (
    ("user-centric", {"streams": None}),
    ("user-centric", {"streams": 16}),
    ("fedfomo", {}),
    ("cfl", {}),
    ("ditto", {}),
    ("pfedme", {}),
    ("scaffold", {}),
    ("fedprox", {}),
    ("fedavg", {}),
    ("local", {}),
)
# the algorithms whose local updates of a round from theta^0 are FedAvg's (the same jobs, kept
# by learning.reuse): their runs of a scenario and seed run in turn in one worker
FIRST_UPDATES_ALIKE = ("fedavg", "cfl", "local", "oracle", "fedfomo", "ditto")
# Fig. 6: the labels drawn (a readable subset of the rotation runs)
TIME_LABELS = ("user-centric k=m", "user-centric k=4", "oracle", "cfl", "fedfomo", "fedavg", "local")


@dataclass(frozen=True)
class Cell:
    """One algorithm variant on one scenario, over the seeds."""

    scenario: str
    label: str
    specs: tuple[RunSpec, ...]


@dataclass
class Plan:
    scale: Scale
    seeds: int
    rounds: dict[str, int]  # per scenario
    scenario_rounds: dict[str, int]  # the registry's
    evaluate_every: dict[str, int]
    cells: list[Cell]
    silhouette_specs: list[RunSpec]  # Fig. 5: the user-centric set-up per scenario and seed
    has_groups: dict[str, bool]


@dataclass
class Outcome:
    plan: Plan
    folders: dict[tuple[str, str], list[str]]  # (scenario, label) -> result folder per seed
    silhouette: dict[str, dict[int, dict[int, float]]]  # scenario -> seed -> k -> s_k
    ran: int
    reused: int
    timings: dict[str, tuple[float, float]] = field(default_factory=dict)  # folder name -> (wall s, CPU s), runs run now


def make_plan(scale: Scale, seeds: int | None, data_dir: str | None) -> Plan:
    """Every run of the experiment set at ``scale``; builds each scenario's data once (seed 0)
    to fail early on missing files and to know which scenarios have true groups."""
    seeds = scale.seeds if seeds is None else Setting(int, low=1, high=MAX_SEEDS).check("--seeds", seeds)
    scenarios = (*TABLE_SCENARIOS, TEXT_SCENARIO)
    has_groups = {name: scenario_data(name, 0, data_dir).groups is not None for name in scenarios}
    scenario_rounds = {name: get_scenario(name).rounds for name in scenarios}
    rounds = {name: scale.rounds(r) for name, r in scenario_rounds.items()}
    every = {name: scale.evaluate_every(r) for name, r in rounds.items()}
    cells = []
    for name in scenarios:
        variants = TEXT_VARIANTS if name == TEXT_SCENARIO else TABLE_VARIANTS
        for algorithm, options in variants:
            if algorithm == "oracle" and not has_groups[name]:
                continue
            specs = tuple(RunSpec(name, algorithm, SYSTEM, rounds[name], seed, dict(options), evaluate_every=every[name],
                                  participation=scale.participation)
                          for seed in range(seeds))
            cells.append(Cell(name, run_label(specs[0]), specs))
    silhouette = [RunSpec(name, "user-centric", SYSTEM, rounds[name], seed) for name in TABLE_SCENARIOS for seed in range(seeds)]
    return Plan(scale, seeds, rounds, scenario_rounds, every, cells, silhouette, has_groups)


def _run(spec: RunSpec, out_root: Path, data_dir: str | None, progress) -> tuple[str, bool, float, float]:
    """(result folder, reused, wall seconds, CPU seconds of this process): the times are
    reported (how long the scale takes), never part of a result."""
    wall, cpu = time.perf_counter(), time.process_time()
    summary = run_experiment(spec, out_root, data_dir, progress)
    return summary["result_dir"], bool(summary["reused"]), time.perf_counter() - wall, time.process_time() - cpu


def _silhouette(spec: RunSpec, out_root: Path, data_dir: str | None) -> dict[int, float]:
    from scenarios.execution.silhouette import setup_silhouette, silhouette_spec

    return setup_silhouette(prepare(resolve(silhouette_spec(spec)), data_dir), cache_dir=out_root)


def _work(spec: RunSpec, samples: dict[str, int]) -> float:
    """A rough cost, only to start the longest runs first (it changes no number). Not
    ``learning.engine.auto``'s estimate: replayed on the quick scale's recorded times, ordering
    by it ends no sooner, as it cannot see the runs that share their first updates."""
    heavy = {"pfedme": 15.0, "scaffold": 5.0, "ditto": 2.0, "fedfomo": 1.5, "user-centric": 1.5}
    return samples[spec.scenario] * (spec.rounds or 1) * heavy.get(spec.algorithm, 1.0)


def _in_turn(calls: list) -> list:
    """Each call's result, one after another in one process (so they share what they compute alike)."""
    return [call() for call in calls]


def execute_plan(plan: Plan, out_root: Path, data_dir: str | None, jobs: int,
                 progress: bool = False) -> Outcome:
    """Run (or reuse) every run and compute every silhouette curve, in ``jobs`` worker
    processes (one torch thread each); results do not depend on ``jobs``. The user-centric
    runs of a scenario and seed and its curve take the same set-up gradients (eq. 10), and the
    ``FIRST_UPDATES_ALIKE`` runs the same first local updates: each set runs in turn in one
    worker, which computes them once (``learning.reuse``)."""
    specs = [s for cell in plan.cells for s in cell.specs]
    samples = {name: sum(d.num_train for d in scenario_data(name, 0, data_dir).devices) for name in plan.rounds}
    runs = {i: functools.partial(_run, spec, out_root, data_dir, progress) for i, spec in enumerate(specs)}
    curves = {("curve", i): functools.partial(_silhouette, spec, out_root, data_dir) for i, spec in enumerate(plan.silhouette_specs)}
    groups: dict[tuple, list] = {}  # (scenario, seed) of the set-up, of the first local updates, or the run alone -> its call keys
    for i, spec in enumerate(specs):
        if spec.algorithm == "user-centric":
            group = (spec.scenario, spec.seed)
        elif spec.algorithm in FIRST_UPDATES_ALIKE:
            group = (spec.scenario, spec.seed, "first local updates")
        else:
            group = (i,)
        groups.setdefault(group, []).append(i)
    for i, spec in enumerate(plan.silhouette_specs):
        groups.setdefault((spec.scenario, spec.seed), []).append(("curve", i))
    order = sorted(groups.values(), key=lambda keys: -sum(_work(specs[k], samples) for k in keys if not isinstance(k, tuple)))
    every = {**runs, **curves}
    done = run_calls([functools.partial(_in_turn, [every[k] for k in keys]) for keys in order], jobs)  # the heaviest first
    found = {k: result for keys, results in zip(order, done) for k, result in zip(keys, results)}
    results: dict[int, tuple[str, bool, float, float]] = {i: found[i] for i in runs}
    folders: dict[tuple[str, str], list[str]] = {}
    position = 0
    for cell in plan.cells:
        folders[(cell.scenario, cell.label)] = [results[position + k][0] for k in range(len(cell.specs))]
        position += len(cell.specs)
    silhouette: dict[str, dict[int, dict[int, float]]] = {}
    for i, spec in enumerate(plan.silhouette_specs):
        silhouette.setdefault(spec.scenario, {})[spec.seed] = found[("curve", i)]
    reused = sum(1 for r in results.values() if r[1])
    timings = {Path(r[0]).name: (r[2], r[3]) for r in results.values() if not r[1]}
    return Outcome(plan, folders, silhouette, ran=len(results) - reused, reused=reused, timings=timings)
