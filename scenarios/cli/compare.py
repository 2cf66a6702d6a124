"""``fl-cosim compare``: every algorithm over several seeds; Tables I and II, time and bits to target."""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path

from scenarios.cli.common import add_run_settings, route_options, show_progress, spec_settings, table
from scenarios.errors import UsageError
from scenarios.definitions.settings import JOBS, MAX_SEEDS, TARGET, Setting

SEEDS = Setting(int, low=1, high=MAX_SEEDS)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="compare algorithms over seeds: accuracy tables, time and bits to a target",
        description="Run (or reuse finished runs of) each algorithm over N seeds; print and write "
        "(CSV and Markdown) the average per-device accuracy (Table I) and worst-device accuracy "
        "(Table II), mean and sample standard deviation over seeds, and the simulated time (T_dl, or "
        "seconds on a physical cell), bits and (on a cell) energy to reach a target mean accuracy, the "
        "seeds that never reach it counted at their run's end (censored, the mean then a lower bound); "
        "energy per device and in total, never-scheduled devices and Jain's index where the runs have "
        "them; and a CSV with one row per run and seed. Diverged runs are marked and left out of the means.",
    )
    parser.add_argument("--algorithm", nargs="+", metavar="A", help="algorithms (default: all registered; "
                        "user-centric runs with k = m and k = auto unless --streams is given)")
    parser.add_argument("--seeds", type=int, default=3, help="number of seeds, 0..N-1 (default 3)")
    parser.add_argument("--target", type=float, help="target mean accuracy (default: 90%% of the best final mean accuracy)")
    parser.add_argument("--budget", metavar="AXIS=B1,B2", action="append", help="also the accuracy each algorithm reaches "
                        "within these budgets on AXIS (time in the clock's unit, downlink_bits, uplink_bits, energy_j: a cell's), "
                        ">= where a run ended before spending one (scenarios.reports.budgets); repeat it for several axes, "
                        "each once: --budget time=5,10 --budget uplink_bits=1e7")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="runs in parallel worker processes (default: 2, or 1 on a 1-core machine)")
    add_run_settings(parser)


def specs(args) -> dict[str, list[RunSpec]]:
    from learning.algorithms import ALGORITHMS
    from scenarios.definitions.registry import get_algorithm, get_scenario
    from scenarios.execution.spec import RunSpec, run_label

    get_scenario(args.scenario)
    SEEDS.check("--seeds", args.seeds)
    TARGET.check("--target", args.target)
    JOBS.check("--jobs", args.jobs)
    if args.budget is not None:
        from scenarios.reports.budgets import parse_budget_axes

        parse_budget_axes(args.budget)
    names = args.algorithm or list(ALGORITHMS)
    variants = []
    for name in names:
        get_algorithm(name)
        if name == "user-centric" and args.streams is None:
            variants += [(name, {"streams": None}), (name, {"streams": "auto"})]
        else:
            variants.append((name, {}))
    out = {}
    for name, options in route_options(args, variants):
        runs = [RunSpec(algorithm=name, seed=seed, options=options, **spec_settings(args)) for seed in range(args.seeds)]
        out[run_label(runs[0])] = runs
    return out


def execute(args):
    from scenarios.execution.compare import compare, legend, markdown, numeric_rows, table_rows
    from scenarios.execution.pool import start_pool_server
    from scenarios.datasets import resolve_data_dir
    from scenarios.records.atomic import (atomic_write_text, check_output_dir, check_replaceable, csv_text, make_output_dir,
                                          remove_stale_staging, sha256_text)
    from scenarios.execution.runner import prepare, resolve
    from scenarios.execution.spec import file_word
    from scenarios.reports.budgets import parse_budget_axes
    from scenarios.reports.tables import rows_csv, run_columns, run_row

    plan = specs(args)
    data_dir = str(resolve_data_dir(args.data_dir))
    start_pool_server(args.jobs, sum(len(runs) for runs in plan.values()))  # its imports run beside the checks
    out = check_output_dir(Path(args.out))
    names = []
    for runs in plan.values():  # every run checked (data, learner) before anything is written
        for spec in runs:
            prepared = prepare(resolve(spec), data_dir)
            if args.budget is not None and "energy_j" in parse_budget_axes(args.budget) and not prepared.network.records_energy:
                raise UsageError(f"--budget energy_j needs runs that record energy (a cell); {args.system} does not")
            names.append(prepared.name)
    for name in names:  # a folder name taken by a file or a link is found before any run trains
        check_replaceable(out / name)
    make_output_dir(out)
    remove_stale_staging(out)
    rows, target, curves = compare(plan, out, data_dir, args.target, show_progress(args), args.jobs, reuse=not args.force)
    header, body = table_rows(rows)
    tag = sha256_text("\n".join(names) + f"\ntarget={args.target}")[:10]
    stem = out / f"compare_{args.scenario}_{file_word(args.system)}_{args.seeds}seeds_{tag}"
    paths = {kind: stem.with_name(stem.name + suffix) for kind, suffix in
             (("csv", ".csv"), ("markdown", ".md"), ("runs_csv", "_runs.csv"))}
    atomic_write_text(paths["csv"], csv_text(*numeric_rows(rows)))
    atomic_write_text(paths["markdown"], legend(target) + "\n\n" + markdown(header, body))
    per_run = [run_row({**c.summary, "result_dir": c.folder}) for cs in curves.values() for c in cs]
    atomic_write_text(paths["runs_csv"], rows_csv(per_run, run_columns([c.summary for cs in curves.values() for c in cs])))
    data = {"scenario": args.scenario, "system": args.system, "seeds": args.seeds, "target": target,
            "rows": [asdict(r) for r in rows], **{k: str(p) for k, p in paths.items()}}
    text = f"{args.scenario} on {args.system}, {args.seeds} seeds. {legend(target)}\n" + table(header, body)
    if args.budget is not None:
        text += budget_section(parse_budget_axes(args.budget), curves, data)
    diverged = sum(row.diverged for row in rows)
    return data, text + f"\n\nwrote {paths['csv']}, {paths['markdown']} and {paths['runs_csv']}", (1 if diverged else 0)


def budget_section(axes: dict, curves: dict, data: dict, who: str = "a seed") -> str:
    """The accuracy-within-budget tables (``axes``: ``--budget``'s axis -> budgets, one table
    each), added to the command's text and data (``within_budget``: every axis's rows)."""
    from scenarios.reports.budgets import budget_numbers, budget_table

    data["within_budget"], text = [], ""
    for axis, budgets in axes.items():
        data["within_budget"] += budget_numbers(curves, axis, budgets)
        text += f"\n\naccuracy within a budget (>=: {who} ended before spending it)\n" + table(*budget_table(curves, axis, budgets))
    return text
