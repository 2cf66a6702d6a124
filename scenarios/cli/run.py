"""``fl-cosim run``: run algorithms on a scenario over a network system; summary table, figure."""

from __future__ import annotations

from pathlib import Path

from scenarios.cli.common import add_run_settings, bits, route_options, show_progress, spec_settings, table
from scenarios.errors import WriteError
from scenarios.records.health import flag_note
from scenarios.log import LOGGER

DEFAULT_RUNS = (
    ("fedavg", {}),
    ("local", {}),
    ("oracle", {}),
    ("user-centric", {"streams": None}),
    ("user-centric", {"streams": "auto"}),
)
TIME_COLUMNS = {"T_dl": "time/T_dl", "s": "time (s)"}
DIVERGED_EXIT = 1
FIGURE_FAILED_EXIT = 2  # the runs are written and shown, their figure could not be


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run algorithms on a scenario and network system",
        description="Co-simulate federated learning over the network. With no options: the default "
        "scenario on the slow-uplink system for FedAvg, Local, Oracle, user-centric with k = m and "
        "with the k that Algorithm 2 picks. Exit status 1 when a run diverged (its folder says where).",
    )
    parser.add_argument("--algorithm", nargs="+", metavar="A", help="one or more algorithms (default: the five runs above)")
    parser.add_argument("--no-figure", action="store_true", help="do not write the accuracy-vs-time figure")
    add_run_settings(parser, seed=True)


def run_specs(args) -> list[RunSpec]:
    from scenarios.definitions.registry import get_algorithm, get_scenario
    from scenarios.execution.runner import RunSpec

    get_scenario(args.scenario)
    if args.algorithm:
        for name in args.algorithm:
            get_algorithm(name)
        variants = [(name, {}) for name in args.algorithm]
    else:
        variants = list(DEFAULT_RUNS)
    return [RunSpec(algorithm=name, options=options, **spec_settings(args))
            for name, options in route_options(args, variants)]


def execute(args):
    from figures.accuracy_time import PlotOptions, figure_name, plot_accuracy_vs_time
    from scenarios.datasets import resolve_data_dir
    from scenarios.records.atomic import check_output_dir, check_replaceable, remove_stale_staging
    from scenarios.execution.runner import prepare, resolve, run_prepared
    from scenarios.execution.spec import file_word
    from scenarios.reports.over_seeds import TIME_FORMATS
    from scenarios.reports.retime import curves_by_system

    specs = run_specs(args)
    data_dir = str(resolve_data_dir(args.data_dir))
    out = check_output_dir(Path(args.out))
    prepared = [prepare(resolve(spec), data_dir) for spec in specs]  # every run built (and so checked) before anything is written
    for run in prepared:
        check_replaceable(out / run.name)
    remove_stale_staging(out)
    summaries = [run_prepared(run, out, progress=show_progress(args), reuse=not args.force) for run in prepared]
    figure, failed = None, None
    if not args.no_figure:
        folders = [s["result_dir"] for s in summaries]
        options = PlotOptions(title=f"{args.scenario} on {args.system}", x_axes=("time", "energy"),
                              command=getattr(args, "command_line", None))
        try:
            name = figure_name(f"accuracy_vs_time_{args.scenario}_{file_word(args.system)}", folders)
            figure = plot_accuracy_vs_time(curves_by_system(folders), out / name, options)
        except WriteError as error:  # the runs are written: show them, then say what failed
            failed = error
    keys = ("algorithm", "label", "status", "streams", "final_mean_accuracy", "final_worst_accuracy", "simulated_time",
            "downlink_bits", "uplink_bits", "result_dir")
    extra = ("clustering_ari", "estimation_error", "diverged", "training_flags", "training_notes", "time_unit", "dropped", "energy_j",
             "device_energy_j", "stopped", "orchestrator", "staleness_mean")
    runs = [{k: s[k] for k in keys} | {k: v for k, v in s.items() if k in extra} for s in summaries]
    data = {"runs": runs, "figure": str(figure) if figure else None}
    unit = next((s["time_unit"] for s in summaries if "time_unit" in s), "T_dl")  # one system: one unit
    energy = any("energy_j" in s for s in summaries)  # a network that records energy (and drops devices)
    rows = [[s["label"], s["streams"], _acc(s["final_mean_accuracy"]), _acc(s["final_worst_accuracy"]),
             _number(_in_unit(s["simulated_time"], p.run.system.time_scale), TIME_FORMATS[unit]), bits(s["downlink_bits"]),
             bits(s["uplink_bits"]), _status(s)]
            + ([_number(s["energy_j"], ".4g"), sum(s["dropped"].values())] if energy else []) for s, p in zip(summaries, prepared)]
    header = ["algorithm", "streams", "mean acc", "worst acc", TIME_COLUMNS[unit], "downlink", "uplink", "status"]
    text = table(header + (["energy (J)", "dropped"] if energy else []), rows)
    if figure:
        text += f"\n\nresults in {out}/, figure {figure}"
    diverged = [s for s in summaries if s["status"] == "diverged"]
    for s in diverged:
        LOGGER.warning(f"{s['label']} diverged at round {s['diverged']['round']}: {s['diverged']['reason']} "
                       f"(written to {s['result_dir']})")
    for s in summaries:
        for flag in (s.get("training_flags") or ()) if s["status"] != "diverged" else ():  # said above
            LOGGER.warning(f"{s['label']} flagged, {flag} (written to {s['result_dir']})")
        for note in s.get("training_notes") or ():
            LOGGER.info(f"{s['label']} noted, {note} (not a failure)")
    if failed is not None:
        LOGGER.error(f"error: {failed} (the runs are written)")
        return data, text, FIGURE_FAILED_EXIT
    return data, text, (DIVERGED_EXIT if diverged else 0)


def _acc(value) -> str:
    return _number(value, ".3f")


def _in_unit(time: float | None, scale: float) -> float | None:
    """A run's clock in its system's time unit (``SystemKind.time_scale``: T_dl, or 1 on a cell)."""
    return None if time is None else time / scale


def _number(value, spec: str) -> str:
    """``value`` formatted by ``spec``, or "-" where there is no number (a diverged run's)."""
    return "-" if value is None else format(value, spec)


def _status(summary: dict) -> str:
    if summary["status"] == "diverged":
        return f"diverged (round {summary['diverged']['round']})"
    note = flag_note(summary.get("training_flags") or ())
    status = summary["status"] + _stopped(summary)
    return f"{status}, flagged: {note}" if note else status


def _stopped(summary: dict) -> str:
    """Why a run ended, where a budget ended it: `` at the time budget 20 after 26 rounds``."""
    stopped = summary.get("stopped") or {}
    if stopped.get("reason") == "stalled":
        return f" stalled after {summary['rounds']} rounds: every device missed the model"
    if stopped.get("reason") != "budget":
        return ""
    text = f" at the {stopped['budget']} budget {stopped['limit']:g} after {summary['rounds']} rounds"
    over = summary.get("budget_overshoot")
    if over:  # the accuracies shown are the last evaluation within the budget (scenarios.execution.runner.within_budget)
        text += f" (round {over['round']} went past it, to {over['spent']:.4g}: accuracy as of round {summary['final_round']})"
    return text

