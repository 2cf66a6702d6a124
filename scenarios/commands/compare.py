"""``fl-cosim compare``: every algorithm over several seeds; Tables I and II, time and bits to target."""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path

from scenarios.commands.common import add_data_dir, add_json, add_training, parse_streams, table, training_overrides
from scenarios.errors import UsageError
from scenarios.registry import DEFAULT_SCENARIO, get_algorithm, get_scenario
from scenarios.runner import RunSpec, stderr_progress
from scenarios.systems import DEFAULT_SYSTEM


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="compare algorithms over seeds: accuracy tables, time and bits to a target",
        description="Run (or reuse finished runs of) each algorithm over N seeds; print and write "
        "(CSV and Markdown) the average per-device accuracy (Table I) and worst-device accuracy "
        "(Table II), mean and std over seeds, and the simulated time (T_dl; seconds on a cell) and bits to reach a "
        "target mean accuracy.",
    )
    parser.add_argument("--scenario", default=DEFAULT_SCENARIO, help=f"scenario (default {DEFAULT_SCENARIO})")
    parser.add_argument("--algorithm", nargs="+", metavar="A", help="algorithms (default: all registered; "
                        "user-centric runs with k = m and k = auto)")
    parser.add_argument("--seeds", type=int, default=3, help="number of seeds, 0..N-1 (default 3)")
    parser.add_argument("--rounds", type=int, help="training rounds (default: the scenario's)")
    parser.add_argument("--system", default=DEFAULT_SYSTEM, help=f"network system (default {DEFAULT_SYSTEM})")
    parser.add_argument("--radio", action="append", default=[], metavar="KEY=VALUE",
                        help="override a physical cell preset's parameter, repeatable (see 'fl-cosim cell')")
    parser.add_argument("--target", type=float, help="target mean accuracy (default: 90%% of the best final mean accuracy)")
    parser.add_argument("--eval-every", type=int, default=1, help="evaluate every N rounds (default 1)")
    parser.add_argument("--out", default="results", help="output folder (default ./results)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="runs in parallel worker processes (default: 2, or 1 on a 1-core machine)")
    add_training(parser)
    add_data_dir(parser)
    add_json(parser)


def specs(args) -> dict[str, list[RunSpec]]:
    from learning.algorithms import ALGORITHMS

    get_scenario(args.scenario)
    if args.seeds < 1:
        raise UsageError(f"--seeds must be >= 1, got {args.seeds}")
    if args.target is not None and not 0 < args.target <= 1:
        raise UsageError(f"--target must be in (0, 1], got {args.target}")
    radio = dict(parse_option(text) for text in args.radio)
    from scenarios.systems import get_system

    get_system(args.system, radio=radio)  # refuse a bad system before anything runs
    names = args.algorithm or list(ALGORITHMS)
    variants = []
    for name in names:
        get_algorithm(name)
        if name == "user-centric":
            variants += [(name, {"streams": parse_streams("m")}), (name, {"streams": "auto"})]
        else:
            variants.append((name, {}))
    training = training_overrides(args)
    out = {}
    for name, options in variants:
        runs = [RunSpec(args.scenario, name, args.system, args.rounds, seed, options, evaluate_every=args.eval_every,
                        training=training)
                for seed in range(args.seeds)]
        out[runs[0].label] = runs
    return out


def execute(args):
    from scenarios.compare import compare, markdown, table_rows
    from scenarios.datasets import resolve_data_dir
    from scenarios.results import atomic_write_text, csv_text, ensure_writable_dir

    plan = specs(args)
    out = ensure_writable_dir(Path(args.out))
    if args.jobs < 1:
        raise UsageError(f"--jobs must be >= 1, got {args.jobs}")
    rows, target = compare(plan, out, str(resolve_data_dir(args.data_dir)), args.target, stderr_progress, args.jobs)
    header, body = table_rows(rows)
    stem = out / f"compare_{args.scenario}_{args.system}_{args.seeds}seeds"
    atomic_write_text(stem.with_suffix(".csv"), csv_text(header, body))
    atomic_write_text(stem.with_suffix(".md"), f"Target mean accuracy: {target}\n\n" + markdown(header, body))
    data = {"scenario": args.scenario, "system": args.system, "seeds": args.seeds, "target": target,
            "rows": [asdict(r) for r in rows], "csv": str(stem.with_suffix(".csv")), "markdown": str(stem.with_suffix(".md"))}
    text = f"{args.scenario} on {args.system}, {args.seeds} seeds, target mean accuracy {target}\n" + table(header, body)
    return data, text + f"\n\nwrote {stem.with_suffix('.csv')} and {stem.with_suffix('.md')}"
