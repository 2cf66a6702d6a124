"""``fl-cosim reproduce``: the journal's experiment set at a scale, and its report folder."""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path

from scenarios.cli.common import add_data_dir, add_json, add_quiet, show_progress
from scenarios.definitions.settings import JOBS
from scenarios.errors import UsageError
from scenarios.execution.scales import SCALES, get_scale


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "reproduce",
        help="run the journal's experiment set and write its tables and figures beside the paper's numbers",
    )
    scales = "; ".join(f"{s.name}: {s.description}" for s in SCALES.values())
    parser.description = ("Run (or reuse finished runs of) the journal's experiments (section V): Tables I and II on "
                          "mnist-label-shift, mnist-rotation, cifar10-concept-shift (MNIST stands in for EMNIST), Fig. 3 on "
                          "stackoverflow-tags, Fig. 5 silhouette curves, Fig. 6 re-timed on three systems; write a report folder "
                          f"(report.md, table1.csv, table2.csv, figures as PDF and PNG). Scales: {scales}.")
    parser.add_argument("--scale", default="quick", help="quick, medium or paper (default quick)")
    parser.add_argument("--seeds", type=int, help="number of seeds, 0..N-1 (default: the scale's)")
    parser.add_argument("--out", help="report folder (default results/reproduce-SCALE/report)")
    parser.add_argument("--runs", help="where the run folders go (default results/reproduce-SCALE)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="runs in parallel worker processes (default: 2, or 1 on a 1-core machine)")
    add_quiet(parser)
    add_data_dir(parser)
    add_json(parser)


def execute(args):
    from scenarios.datasets import resolve_data_dir
    from scenarios.execution.pool import start_pool_server
    from scenarios.execution.reproduce import execute_plan, make_plan
    from scenarios.reports.reproduction import write_report
    from scenarios.records.atomic import ensure_writable_dir

    started = time.perf_counter()  # wall time of the command, for the report only
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "unknown"
    scale = get_scale(args.scale)
    JOBS.check("--jobs", args.jobs)
    data_dir = str(resolve_data_dir(args.data_dir))
    start_pool_server(args.jobs, 2)  # its imports run beside the plan's
    plan = make_plan(scale, args.seeds, data_dir)  # checks seeds and that every data set is there
    runs = Path(args.runs or f"results/reproduce-{scale.name}")
    out = Path(args.out or runs / "report")
    for path in (runs, out):
        if path.exists() and not path.is_dir():
            raise UsageError(f"cannot write to {str(path)!r}: it is a file")
    runs, out = ensure_writable_dir(runs), ensure_writable_dir(out)
    outcome = execute_plan(plan, runs, data_dir, args.jobs, show_progress(args))  # progress on stderr
    command = "fl-cosim reproduce " + " ".join(
        shlex.quote(a) for a in ("--scale", scale.name, "--seeds", str(plan.seeds), "--jobs", str(args.jobs)))
    written = write_report(outcome, out, command, time.perf_counter() - started, load)
    data = {"scale": scale.name, "seeds": plan.seeds, "rounds": plan.rounds, "runs": outcome.ran + outcome.reused,
            "ran": outcome.ran, "reused": outcome.reused, "runs_dir": str(runs), **written}
    text = (f"reproduce --scale {scale.name}: {outcome.ran} runs run, {outcome.reused} reused\n"
            f"wrote {written['report']} with Tables I and II and {len(written['figures'])} figure files in {out}")
    return data, text
