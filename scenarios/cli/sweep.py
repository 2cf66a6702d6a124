"""``fl-cosim sweep CONFIG.toml``: a grid or list of runs from a TOML file, on local worker
processes or a Ray cluster; resumable; one results table with a row per run and seed."""

from __future__ import annotations

import os
from pathlib import Path

from scenarios.cli.common import add_data_dir, add_json, add_quiet, show_progress
from scenarios.errors import UsageError
from scenarios.definitions.settings import JOBS, Setting

GPU_SHARE = Setting(float, low=0, high=1, low_open=True)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "sweep",
        help="run a grid or list of runs from a TOML file (resumable; local cores or Ray)",
        description="Expand CONFIG.toml into runs (a grid over settings, algorithms and their options, "
        "training settings, systems and seeds; and/or a list of runs), check every one, then run those "
        "without a complete result folder, on local worker processes (default) or a Ray cluster. "
        "A killed sweep resumes where it stopped. Writes one table with a row per run and seed "
        "(CSV, and Parquet when pyarrow is importable), and a summary with a row per grid point aggregated "
        "over its seeds (CSV and Markdown: accuracies with their sample std, time, bits and energy to the "
        "target with censored seeds counted, the accuracy within --budget's budgets, the wireless columns "
        "where the runs have them). "
        "docs/sweep-files.md lists the file's keys.",
    )
    parser.add_argument("config", metavar="CONFIG.toml", help="the sweep file")
    parser.add_argument("--out", help="output folder (default results/<file name without .toml>)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="local worker processes, or CPUs of a local Ray instance (default 2)")
    parser.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                        help="run on Ray: a local instance started here (no ADDRESS) or the cluster at ADDRESS "
                        "(e.g. auto, ray://host:10001); needs pip install 'fl-cosim[ray]'")
    parser.add_argument("--gpu-share", type=float, default=None, metavar="FRACTION",
                        help="with --ray: the share of a GPU each run on CUDA asks for (default 1: one run per GPU; "
                        "0.25: four runs share one)")
    parser.add_argument("--target", help="target mean accuracy of the summary's to-target columns, or a fraction of "
                        "each group's best grid point (0.9*best); replaces the file's [summary] target (default: 90%% of "
                        "the best grid point's mean final accuracy of each group: a scenario, and a value of each "
                        "[summary] group setting)")
    parser.add_argument("--budget", metavar="AXIS=B1,B2", action="append", help="also the accuracy each grid point reaches "
                        "within these budgets on AXIS (time in the clock's unit, downlink_bits, uplink_bits, energy_j), as "
                        "summary columns with the seeds that ended before spending one counted (censored); repeat it for "
                        "several axes, each once; replaces the file's [summary] budget (scenarios.reports.budgets)")
    add_quiet(parser)
    add_data_dir(parser)
    add_json(parser)


def execute(args):
    from scenarios.execution.sweep import run_sweep

    JOBS.check("--jobs", args.jobs)
    if args.gpu_share is not None:
        if args.ray is None:
            raise UsageError("--gpu-share needs --ray (local workers share this machine's GPU as they are)")
        GPU_SHARE.check("--gpu-share", args.gpu_share)
    data = run_sweep(Path(args.config), args.out, args.data_dir, args.jobs, args.ray,
                     {"target": args.target, "budget": args.budget}, show_progress(args),
                     1.0 if args.gpu_share is None else args.gpu_share)
    text = (f"{data['runs']} runs ({data['ran']} run now, {data['reused']} reused, {data['diverged']} diverged) "
            f"in {data['out']}/\nwrote {', '.join(data['tables'])}")
    return data, text, (1 if data["diverged"] else 0)  # as run: done, but a run diverged
