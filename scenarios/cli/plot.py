"""``fl-cosim plot``: accuracy against time normalized by T_dl, from result folders."""

from __future__ import annotations

from pathlib import Path

from figures.bands import X_AXES
from figures.style import WIDTHS_IN
from scenarios.cli.common import add_json
from scenarios.errors import UsageError
from scenarios.definitions.settings import RUN_SETTINGS


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "plot",
        help="accuracy vs time, bits or energy figure from result folders, ready for a paper",
        description="Average validation accuracy against simulated time / T_dl (seconds on a physical cell), "
        "bits, energy (cells) or rounds, one panel per x axis (and per system), in rows of 2 panels at column "
        "width or 3 at double width; runs of one configuration over several seeds are one line, their mean "
        "with a min-max band (the legend says over how many seeds). One IEEE column wide by default, the "
        "shipped style, a fixed colour, marker and line style per algorithm; vector PDF with TrueType fonts (PNG when the file name "
        "ends in .png); the command line is recorded in the file's metadata. Reads complete result folders "
        "only (every file matching its checksum). An existing figure is not replaced without --force.",
    )
    parser.add_argument("result_dirs", nargs="+", metavar="RESULT_DIR")
    parser.add_argument("--out", default="accuracy_vs_time.pdf", help="figure file, .pdf or .png (default accuracy_vs_time.pdf; its folder is created)")
    parser.add_argument("--x", nargs="+", default=["time"], choices=list(X_AXES), metavar="AXIS",
                        help=f"x axes, one panel each: {', '.join(X_AXES)} (default time; bits is downlink + uplink)")
    parser.add_argument("--worst", action="store_true", help="add a row of panels with the worst device's accuracy")
    parser.add_argument("--width", choices=list(WIDTHS_IN), default="column",
                        help="figure width: one IEEE column (3.5 in, the default) or both columns (7.16 in)")
    parser.add_argument("--title", help="figure title")
    parser.add_argument("--systems", nargs="+", metavar="SYSTEM",
                        help="one panel per network system and x axis, each run re-timed on it from its recorded "
                        "plans (no retraining; the runs 'fl-cosim retime' takes: synchronous, without a deadline, dropped "
                        "devices, a network-aware scheduler or a cell in time; a physical cell is re-timed without "
                        "outages, batteries, availability or motion, and --x energy draws its accuracy-vs-energy panel); a system is "
                        "NAME or NAME:KEY=VALUE,... (wireless-slow-ul:rho=10,mode=barrier), as 'fl-cosim retime' takes")
    parser.add_argument("--seed", type=int, help="when re-timing, draw every run's compute times (and a cell's layout and "
                        "fading) from this seed's network stream (default: each run's own, those it ran with)")
    parser.add_argument("--force", action="store_true", help="replace an existing figure file")
    parser.add_argument("--budget", metavar="AXIS=B1,B2", action="append", help="also print the accuracy each configuration's "
                        "runs (as recorded; seeds pooled only where they differ in the seed alone, a line of the figure each) "
                        "reached within these budgets on AXIS (time in the runs' unit, downlink_bits, uplink_bits, energy_j: "
                        "runs on a cell), >= where a run ended before spending one (scenarios.reports.budgets); repeat it for "
                        "several axes, each once; time= takes runs of one time unit")
    add_json(parser)


def check_figure_file(out, force: bool, option: str = "--out", forcing: str = "--force") -> Path:
    """``out`` as a figure to write: a .png or .pdf in a folder that is or can become writable
    (created with the figure), not replacing a file unless ``force`` (the API names its arguments ``out_file`` and ``force=True``)."""
    from scenarios.records.atomic import check_output_dir

    path = Path(out)
    if path.suffix.lower() not in (".png", ".pdf"):
        raise UsageError(f"{option} must end in .png or .pdf, got {str(out)!r}")
    check_output_dir(path.parent)  # created with the figure, as every --out folder is
    if path.exists() and not force:
        raise UsageError(f"{str(out)!r} exists; give another {option} or {forcing} to replace it")
    return path


def check_title(title: str | None, option: str = "--title") -> None:
    """A title matplotlib can draw, before any folder is read: its mathtext (``$...$``) parsed
    the way the figure will parse it (UsageError naming the parser's complaint otherwise)."""
    if not title:
        return
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure()
    FigureCanvasAgg(figure)
    figure.suptitle(title)
    try:
        figure.canvas.draw()
    except ValueError as error:
        raise UsageError(f"{option} {title!r} is not text matplotlib can draw ({str(error).strip().splitlines()[-1]})") from None


def execute(args):
    from figures.accuracy_time import PlotOptions, plot_accuracy_vs_time
    from scenarios.records.atomic import output_dir
    from scenarios.records.result_folder import ResultError
    from scenarios.reports.retime import curves_by_system, retime_systems

    out = check_figure_file(args.out, args.force)
    check_title(args.title)
    if args.seed is not None:
        RUN_SETTINGS["seed"].check("--seed", args.seed)
    budgets = None
    if args.budget is not None:
        from scenarios.reports.budgets import parse_budget_axes

        budgets = parse_budget_axes(args.budget)
    systems = retime_systems(args.systems) if args.systems else None
    try:  # every folder is read (and re-timed), and every table made, before the figure is written
        options = PlotOptions(args.title, tuple(dict.fromkeys(args.x)), args.worst, args.width, getattr(args, "command_line", None))
        curves = curves_by_system(args.result_dirs, systems, args.seed)
        data, text = {"runs": len(args.result_dirs)}, ""
        if budgets is not None:
            recorded = curves[None] if systems is None else curves_by_system(args.result_dirs)[None]
            text = budget_text(recorded, budgets, data)
        with output_dir(out.parent):
            written = plot_accuracy_vs_time(curves, out, options)
    except ResultError as error:
        raise UsageError(str(error)) from None
    except OSError as error:
        raise UsageError(f"cannot write {args.out!r}: {error.strerror or error}") from None
    return {"figure": str(written), **data}, f"wrote {written}" + text


def budget_text(curves, budgets: dict, data: dict) -> str:
    """The accuracy-within-budget tables of the runs as recorded, one per axis, a row per
    configuration (the figure's lines: ``seed_groups``, seeds pooled only where the runs differ
    in the seed alone); UsageError, before anything is written, for an axis a run does not
    record or a time budget over runs of two time units."""
    from scenarios.cli.compare import budget_section
    from scenarios.records.result_folder import seed_groups
    from scenarios.reports.budgets import check_budget_runs

    check_budget_runs(budgets, curves)
    units = sorted({c.time_unit for c in curves})
    if "time" in budgets and len(units) > 1:
        raise UsageError(f"--budget time= reads every run's time in its own unit; these runs count it in {' and '.join(units)} "
                         "(normalized systems and cells): give the runs of one unit")
    mixed = len({c.summary.get("system") for c in curves}) > 1
    return budget_section(budgets, seed_groups(curves, with_system=mixed), data, "a run")
