"""``fl-cosim plot``: accuracy against time normalized by T_dl, from result folders."""

from __future__ import annotations

from pathlib import Path

from scenarios.commands.common import add_json
from scenarios.errors import UsageError
from scenarios.settings import RUN_SETTINGS


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "plot",
        help="accuracy vs time figure from result folders",
        description="Average validation accuracy against simulated time / T_dl (seconds on a physical cell, "
        "plus a panel against the devices' energy in joules), one labelled line per run "
        "(PNG; PDF when the file name ends in .pdf). Reads complete result folders only (every file "
        "matching its checksum). An existing figure is not replaced without --force.",
    )
    parser.add_argument("result_dirs", nargs="+", metavar="RESULT_DIR")
    parser.add_argument("--out", default="accuracy_vs_time.png", help="figure file (default accuracy_vs_time.png)")
    parser.add_argument("--title", help="figure title")
    parser.add_argument("--systems", nargs="+", metavar="SYSTEM",
                        help="one panel per network system, each run re-timed on it from its recorded plans "
                        "(no retraining; runs without a deadline or dropped devices; a physical cell adds an "
                        "accuracy-vs-energy panel and is re-timed without outages)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the compute-time draws (and a cell's layout and fading) when re-timing (default 0)")
    parser.add_argument("--force", action="store_true", help="replace an existing figure file")
    add_json(parser)


def execute(args):
    from figures.accuracy_time import plot_accuracy_vs_time
    from figures.results import ResultError
    from scenarios.systems import get_system

    out = Path(args.out)
    if out.suffix.lower() not in (".png", ".pdf"):
        raise UsageError(f"--out must end in .png or .pdf, got {args.out!r}")
    if not out.parent.exists() or not out.parent.is_dir():
        raise UsageError(f"cannot write {args.out!r}: folder {str(out.parent)!r} does not exist")
    if out.exists() and not args.force:
        raise UsageError(f"{args.out!r} exists; give another --out or --force to replace it")
    RUN_SETTINGS["seed"].check("--seed", args.seed)
    systems = {name: get_system(name) for name in args.systems} if args.systems else None
    try:  # every folder is read (and re-timed) before the figure is written
        written = plot_accuracy_vs_time(args.result_dirs, out, args.title, systems, args.seed)
    except ResultError as error:
        raise UsageError(str(error)) from None
    except OSError as error:
        raise UsageError(f"cannot write {args.out!r}: {error.strerror or error}") from None
    return {"figure": str(written), "runs": len(args.result_dirs)}, f"wrote {written}"
