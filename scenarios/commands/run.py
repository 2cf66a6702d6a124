"""``fl-cosim run``: run algorithms on a scenario over a network system; summary table, figure."""

from __future__ import annotations

from pathlib import Path

from scenarios.commands.common import add_data_dir, add_json, add_training, bits, parse_option, parse_streams, table, training_overrides
from scenarios.errors import UsageError
from scenarios.registry import DEFAULT_SCENARIO, get_algorithm, get_scenario
from scenarios.runner import RunSpec, run_experiment, stderr_progress
from scenarios.systems import DEFAULT_SYSTEM

DEFAULT_RUNS = (
    ("fedavg", {}),
    ("local", {}),
    ("oracle", {}),
    ("user-centric", {"streams": None}),
    ("user-centric", {"streams": "auto"}),
)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run algorithms on a scenario and network system",
        description="Co-simulate federated learning over the network. With no options: the default "
        "scenario on the slow-uplink system for FedAvg, Local, Oracle, user-centric with k = m and "
        "with the k that Algorithm 2 picks.",
    )
    parser.add_argument("--scenario", default=DEFAULT_SCENARIO, help=f"scenario name (default {DEFAULT_SCENARIO}; see 'fl-cosim list')")
    parser.add_argument("--algorithm", nargs="+", metavar="A", help="one or more algorithms (default: the five runs above)")
    parser.add_argument("--streams", help="user-centric stream count: an integer k, 'auto' (Algorithm 2) or 'm' (default m)")
    parser.add_argument("--lambda", dest="lam", type=float, help="lambda of c(k, s_k) = s_k - lambda k for --streams auto (default 0)")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="algorithm option, repeatable (e.g. mu=0.5)")
    parser.add_argument("--system", default=DEFAULT_SYSTEM, help=f"network system (default {DEFAULT_SYSTEM}; see 'fl-cosim list')")
    parser.add_argument("--mode", choices=("pipelined", "barrier"), default="pipelined", help="timing mode (default pipelined)")
    parser.add_argument("--deadline", type=float, help="round deadline (T_dl units; seconds on a physical cell); late devices are dropped from aggregation")
    parser.add_argument("--radio", action="append", default=[], metavar="KEY=VALUE",
                        help="override a physical cell preset's parameter, repeatable (e.g. uplink_access=fdma; see 'fl-cosim cell')")
    parser.add_argument("--rounds", type=int, help="training rounds after the set-up round (default: the scenario's)")
    parser.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    parser.add_argument("--eval-every", type=int, default=1, help="evaluate every N rounds (default 1)")
    parser.add_argument("--out", default="results", help="output folder (default ./results)")
    parser.add_argument("--force", action="store_true", help="run again even when an identical finished run exists")
    parser.add_argument("--no-figure", action="store_true", help="do not write the accuracy-vs-time figure")
    add_training(parser)
    add_data_dir(parser)
    add_json(parser)


def run_specs(args) -> list[RunSpec]:
    get_scenario(args.scenario)
    options = dict(parse_option(text) for text in args.option)
    radio = dict(parse_option(text) for text in args.radio)
    from scenarios.systems import get_system

    get_system(args.system, args.mode, args.deadline, radio)  # refuse a bad system before anything runs
    if args.lam is not None:
        if args.lam < 0:
            raise UsageError(f"--lambda must be >= 0, got {args.lam}")
        options["lam"] = args.lam
    if args.algorithm:
        runs = [(name, {}) for name in args.algorithm]
    else:
        runs = list(DEFAULT_RUNS)
    streams_given = args.streams is not None
    options_for = applicable_options([name for name, _ in runs], options)
    training = training_overrides(args)
    specs = []
    for name, defaults in runs:
        run_options = {**defaults, **options_for[name]}
        if name.endswith("user-centric") and (streams_given or "streams" not in run_options):
            run_options["streams"] = parse_streams(args.streams)
        if not name.endswith("user-centric"):
            run_options.pop("lam", None)
        specs.append(RunSpec(
            scenario=args.scenario, algorithm=name, system=args.system, rounds=args.rounds, seed=args.seed,
            options=run_options, mode=args.mode, deadline=args.deadline, evaluate_every=args.eval_every,
            training=training, radio=radio,
        ))
    return specs


def applicable_options(names: list[str], options: dict) -> dict[str, dict]:
    """Each algorithm gets the given options it knows; an option none of them knows is an error."""
    from learning.algorithms.base import known_options

    known = {name: known_options(get_algorithm(name)) for name in names}
    for key in options:
        if not any(key in k for k in known.values()):
            raise UsageError(f"no algorithm of this run takes option {key!r} (see 'fl-cosim list' for each one's options)")
    return {name: {k: v for k, v in options.items() if k in known[name]} for name in names}


def execute(args):
    from scenarios.datasets import resolve_data_dir

    specs = run_specs(args)
    data_dir = str(resolve_data_dir(args.data_dir))
    out = Path(args.out)
    summaries = []
    for spec in specs:
        summary = run_experiment(spec, out, data_dir, progress=stderr_progress, reuse=not args.force)
        summaries.append(summary)
    figure = None
    if not args.no_figure:
        from figures.accuracy_time import plot_accuracy_vs_time

        figure = plot_accuracy_vs_time([s["result_dir"] for s in summaries], out / f"accuracy_vs_time_{args.scenario}_{args.system}.png",
                                       title=f"{args.scenario} on {args.system}")
    keys = ("algorithm", "label", "streams", "final_mean_accuracy", "final_worst_accuracy", "simulated_time",
            "downlink_bits", "uplink_bits", "result_dir")
    extras = ("clustering_ari", "estimation_error", "time_unit", "dropped", "energy_j", "device_energy_j")
    runs = [{k: s[k] for k in keys} | {k: v for k, v in s.items() if k in extras} for s in summaries]
    data = {"runs": runs, "figure": str(figure) if figure else None}
    physical = any(s.get("time_unit") == "s" for s in summaries)
    rows = [[s["label"], s["streams"], f"{s['final_mean_accuracy']:.3f}", f"{s['final_worst_accuracy']:.3f}",
             f"{s['simulated_time']:.3f}" if physical else f"{s['simulated_time']:.1f}", bits(s["downlink_bits"]), bits(s["uplink_bits"])]
            + ([f"{s['energy_j']:.4g}", sum(s["dropped"].values())] if physical else []) for s in summaries]
    header = ["algorithm", "streams", "mean acc", "worst acc", "time (s)" if physical else "time/T_dl", "downlink", "uplink"]
    text = table(header + (["energy (J)", "dropped"] if physical else []), rows)
    if figure:
        text += f"\n\nresults in {out}/, figure {figure}"
    return data, text
