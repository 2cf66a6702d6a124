"""``fl-cosim lambda-study``: which lambda for my system? The silhouette curve, the staircase
k*(lambda), and time and bits to a target accuracy for each k on each network system."""

from __future__ import annotations

import os
from pathlib import Path

from scenarios.cli.common import (add_data_dir, add_declared, add_json, add_quiet, add_setting, add_training, parse_options, seed_range,
                                  show_progress, table, training_overrides)
from contract.setting import parse_number
from scenarios.errors import UsageError
from scenarios.definitions.settings import JOBS, TARGET, Setting

RETIMED = ("rho", "t_min", "inv_mu", "mode")  # the normalized parameters the study re-times on, lists crossed with --systems


def add_parser(subparsers) -> None:
    from scenarios.definitions.settings import RunSpec, declared
    from scenarios.definitions.systems import SYSTEMS

    parser = subparsers.add_parser(
        "lambda-study",
        help="which lambda for my system: silhouette, k*(lambda), time and bits to accuracy per k and system",
        description="The user-centric set-up's silhouette curve; the staircase k*(lambda) of Algorithm 2; one "
        "training per k (those on the staircase, every k with --k all, or a list) and seed (on --system), re-timed on "
        "every system of --systems from its recorded plans (a system: NAME or NAME:KEY=VALUE,..., as 'fl-cosim retime' "
        "takes; --rho, --t-min, --inv-mu and --mode take several values each, crossed with every system that has them); "
        "the time (in each system's own unit: T_dl, or seconds on a physical cell) and bits to the target "
        "accuracy of each k on each system, over seeds (seeds that never reach it counted at their run's end, "
        "censored); and per system the lambdas that reach the target soonest. Writes a JSON file, CSV and "
        "Markdown tables and a figure page (one time panel per unit).",
    )
    add_declared(parser, "scenario")
    parser.add_argument("--seed", type=int, default=0, help="first run seed (default 0)")
    parser.add_argument("--seeds", type=int, default=1,
                        help="number of seeds, --seed onwards (default 1): the silhouette curve is their mean (with its "
                        "min-max band), each k trains on every seed, times are mean and sample std over seeds")
    add_declared(parser, "rounds", "system")  # of each k's training
    parser.add_argument("--systems", nargs="+", metavar="SYSTEM", default=list(SYSTEMS),
                        help="systems to re-time on, NAME or NAME:KEY=VALUE,... (default: the normalized ones); a cell "
                        "trains each k on itself")
    parser.add_argument("--k", metavar="K", help="the k to train: all (1..m), a list (1,2,4,8), or by default those on the staircase")
    group = parser.add_argument_group("the systems' parameters to re-time on (each a list, crossed with --systems)")
    fields = {f.name: f for f in declared()}
    for name in RETIMED:
        add_setting(group, RunSpec, fields[name], None, "the system's", many=True)
    parser.add_argument("--target", type=float, help="target mean accuracy (default: 90%% of the best final mean accuracy)")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="user-centric option, repeatable (not streams or lam: the study varies k)")
    parser.add_argument("--out", default="results", help="output folder (default ./results)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="trainings in parallel (default 2)")
    parser.add_argument("--force", action="store_true", help="train again even when identical finished runs exist")
    add_quiet(parser)
    add_training(parser)
    add_data_dir(parser)
    add_json(parser)


def execute(args):
    from figures.lambda_study import plot_lambda_study
    from learning import reuse
    from scenarios.execution.compare import run_all
    from scenarios.execution.pool import start_pool_server
    from scenarios.datasets import resolve_data_dir
    from scenarios.execution.lambda_study import choices, measure, staircase
    from scenarios.records.reading import read_json
    from scenarios.records.atomic import (atomic_write_text, check_output_dir, check_replaceable, json_text, make_output_dir,
                                          remove_stale_staging, sha256_text)
    from scenarios.execution.runner import RunSpec, prepare, resolve
    from scenarios.execution.silhouette import setup_silhouette
    from scenarios.reports.over_seeds import CENSORED, SPREAD, mean_std
    from scenarios.definitions.systems import parse_systems
    from scenarios.reports.retime import retime_systems
    from scenarios.reports.tables import rows_csv

    JOBS.check("--jobs", args.jobs)
    TARGET.check("--target", args.target)
    seeds = seed_range(args)
    asked = parse_k(args.k)
    specs_of = parse_systems(system_texts(args))
    cells = {text for text, s in specs_of.items() if s.build().records_energy}  # trained on themselves
    systems = {**retime_systems([t for t in specs_of if t not in cells]), **{t: specs_of[t].build() for t in cells}}
    systems = {text: systems[text] for text in specs_of}  # in the order given
    options = parse_options(args.option, "--option")
    for key in ("streams", "lam"):
        if key in options:
            raise UsageError(f"lambda-study varies {key} itself; leave out --option {key}=...")
    training = training_overrides(args)
    data_dir = str(resolve_data_dir(args.data_dir))
    out = check_output_dir(Path(args.out))
    start_pool_server(args.jobs, 2)  # its imports run beside the silhouette curves

    def spec(streams, seed: int, system: str | None = None) -> RunSpec:  # system: a cell of --systems, with its overrides
        return RunSpec(args.scenario, "user-centric", system=args.system if system is None else system, rounds=args.rounds,
                       seed=seed, options={**options, "streams": streams}, training=training)

    with reuse.kept():  # the curve's set-up of each seed is the one its runs take here (learning/reuse.py; --jobs 1)
        first = prepare(resolve(spec("auto", seeds[0])), data_dir)
        m = first.learner.num_devices  # the curve's k run over 1..m (learning.weights.silhouette_curve)
        listed = None if asked is None else stream_counts(asked, m, ())  # --k checked before any set-up computes
        curves = {seed: setup_silhouette(first if seed == seeds[0] else prepare(resolve(spec("auto", seed)), data_dir))
                  for seed in seeds}
        silhouette = {k: mean_std([c[k] for c in curves.values()])[0] for k in curves[seeds[0]]}
        steps = staircase(silhouette)  # Algorithm 2 on the mean curve over seeds
        ks = stream_counts(None, m, steps) if listed is None else listed
        # each k trained on --system (re-timed on the normalized systems), and on each cell itself
        trained_on = {name: name if name in cells else None for name in systems}
        where = list(dict.fromkeys(trained_on.values()))
        specs = [spec(k, seed, system) for system in where for k in ks for seed in seeds]
        names = [prepare(resolve(s), data_dir).name for s in specs]  # every training checked before anything is written
        for name in names:  # a folder name taken by a file or a link is found before any run trains
            check_replaceable(out / name)
        make_output_dir(out)
        remove_stale_staging(out)
        trained = iter(run_all(specs, out, data_dir, args.jobs, show_progress(args), not args.force))
    by_system = {system: {k: {seed: next(trained) for seed in seeds} for k in ks} for system in where}
    rows, runs, target = measure({name: by_system[trained_on[name]] for name in systems}, systems, args.target)
    answer = choices(steps, rows, systems)
    step_of = {step.k: step for step in steps}
    for row in rows:  # a k that no lambda picks (off the staircase): no lambdas
        step = step_of.get(row["k"])
        row.update(lambda_from=step and step.lambda_from, lambda_to=step and step.lambda_to)
    tag = sha256_text("\n".join(names) + f"\n{sorted(systems)}\ntarget={args.target}")[:10]
    seed_text = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]}-{seeds[-1]}"
    stem = out / (f"lambda_study_{args.scenario}_s{args.seed}" + (f"-{seeds[-1]}" if len(seeds) > 1 else "") + f"_{tag}")
    study = {"scenario": args.scenario, "seed": args.seed, "seeds": seeds, "trained_on": args.system, "systems": list(systems),
             "target": target, "spread": SPREAD, "silhouette": {str(k): v for k, v in silhouette.items()},
             "silhouette_seeds": {str(seed): {str(k): v for k, v in c.items()} for seed, c in curves.items()},
             "staircase": [step.__dict__ for step in steps], "rows": rows, "runs": runs, "choices": answer}
    paths = {"json": stem.with_suffix(".json"), "table": stem.with_name(stem.name + ".csv"),
             "choices": stem.with_name(stem.name + "_choices.csv"), "markdown": stem.with_suffix(".md"),
             "figure": stem.with_suffix(".png")}
    columns = ["k", "lambda_from", "lambda_to", "system", "time_unit", "seeds", "final_mean_accuracy",
               "final_mean_accuracy_std", "time_to_target", "time_to_target_std", "reached", "censored",
               "bits_to_target", "bits_to_target_std", "total_time", "total_bits"]
    choice_columns = ["system", "k", "lambda_from", "lambda_to", "time_unit", "time_to_target", "time_to_target_std",
                      "reached", "censored", "bits_to_target"]
    k_header, k_body = k_table(rows, list(systems), len(seeds))
    staircase_header, staircase_body = ["lambda", "k*"], [[_interval(s.lambda_from, s.lambda_to), s.k] for s in steps]
    note = (f"Target mean accuracy: {target}. Over {len(seeds)} seeds: mean ({SPREAD}); {CENSORED}."
            if len(seeds) > 1 else f"Target mean accuracy: {target}.")
    texts = {"json": json_text(study), "table": rows_csv(rows, columns), "choices": rows_csv(answer, choice_columns),
             "markdown": f"# Which lambda? {args.scenario}, {seed_text}\n\n{note}\n\n" + choice_text(answer, len(seeds), markdown) + "\n"
                         + markdown(staircase_header, [list(map(str, r)) for r in staircase_body])
                         + "\n## Time to target per k and system\n\n" + markdown(k_header, k_body)}
    written = []
    try:  # all five or none: a failed write (a full disk) takes back the files written before it
        for key, text in texts.items():
            atomic_write_text(paths[key], text)
            written.append(paths[key])
        plot_lambda_study(read_json(paths["json"]), paths["figure"])  # drawn from what the file holds
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    text = (f"{args.scenario}, {seed_text}. {note}\n\nAlgorithm 2's staircase"
            + (" (on the mean silhouette curve)" if len(seeds) > 1 else "") + "\n"
            + table(staircase_header, staircase_body) + "\n\ntime to target per k and system\n" + table(k_header, k_body)
            + "\n\nwhich lambda for my system\n" + choice_text(answer, len(seeds), table).rstrip("\n")
            + "\n\nwrote " + ", ".join(str(p) for p in paths.values()))
    # the files' paths beside the study (the choices CSV's as choices_csv: "choices" is the study's answer)
    return {**study, **{("choices_csv" if k == "choices" else k): str(p) for k, p in paths.items()}}, text


def _interval(start: float | None, end: float | None) -> str:
    if start is None:
        return "-"
    return f"[{start:.4g}, {'inf' if end is None else f'{end:.4g}'})"


def system_texts(args) -> list[str]:
    """``--systems`` with ``--rho``, ``--t-min``, ``--inv-mu`` and ``--mode`` crossed in: each system
    once per combination of the values it has (a cell: ``mode`` alone), as ``NAME:KEY=VALUE,...``."""
    import itertools

    from scenarios.definitions.cells import CELLS

    given = {name: list(getattr(args, name)) for name in RETIMED if getattr(args, name)}  # each value once (OnceParser)
    normalized = [text for text in args.systems if text.partition(":")[0] not in CELLS]
    for name in given:
        if name != "mode" and not normalized:
            raise UsageError(f"--{name.replace('_', '-')} re-times the normalized systems (their T_ul/T_dl, compute times); "
                             f"--systems names only cells ({', '.join(args.systems)}): it would have no effect")
    texts = []
    for text in args.systems:
        keys = [k for k in given if k == "mode" or text.partition(":")[0] not in CELLS]
        for values in itertools.product(*(given[k] for k in keys)):
            extra = ",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in zip(keys, values))
            texts.append(text if not extra else text + ("," if ":" in text else ":") + extra)
    return texts


def parse_k(text: str | None) -> str | list[int] | None:
    """``--k``: ``all``, a comma-separated list of stream counts, or None (the staircase's)."""
    if text is None or text == "all":
        return text
    try:
        counts = [parse_number(piece, int) for piece in text.split(",")]
    except ValueError:
        raise UsageError(f"--k must be all or a comma-separated list of stream counts, got {text!r}") from None
    twice = next((k for i, k in enumerate(counts) if k in counts[:i]), None)
    if twice is not None:
        raise UsageError(f"--k names {twice} twice; give each once")
    return counts


def stream_counts(asked: str | list[int] | None, m: int, steps) -> list[int]:
    """The k to train (``parse_k``): every k from 1 to m, the ones listed (each in 1..m), or the staircase's."""
    if asked is None:
        return [step.k for step in steps]
    if asked == "all":
        return list(range(1, m + 1))
    bound = Setting(int, low=1, high=m)
    return sorted(dict.fromkeys(bound.check(f"--k (this scenario has {m} devices)", k) for k in asked))


def k_table(rows: list[dict], systems: list[str], seeds: int = 1) -> tuple[list[str], list[list[str]]]:
    """Time to target per k (a row) and system (a column, in its unit), censored means as ``>= x``."""
    from scenarios.reports.over_seeds import TIME_FORMATS, ToTarget, target_cell

    unit = {r["system"]: r["time_unit"] for r in rows}
    header = ["k", "lambda"] + [f"{name} ({unit[name]})" for name in systems]
    body = []
    for k in sorted({r["k"] for r in rows}):
        mine = {r["system"]: r for r in rows if r["k"] == k}
        first = mine[systems[0]]
        body.append([str(k), _interval(first["lambda_from"], first["lambda_to"])]
                    + [target_cell(ToTarget(r["time_to_target"], r["time_to_target_std"], r["reached"], seeds), TIME_FORMATS[r["time_unit"]])
                       for r in (mine[name] for name in systems)])
    return header, body




def choice_table(answer: list[dict], seeds: int = 1) -> tuple[list[str], list[list[str]]]:
    """One time column per unit among the systems (a system's time only in its own unit's column);
    a row per system that has a choice (``choice_notes`` says why the others have none)."""
    from scenarios.reports.over_seeds import TIME_FORMATS, TIME_HEADERS, ToTarget, target_cell

    units = list(dict.fromkeys(a["time_unit"] for a in answer if a["time_unit"] is not None)) or ["T_dl"]
    header = ["system", "lambda", "k*"] + [TIME_HEADERS[u] for u in units] + ["bits to target"]
    header += ["reached"] if seeds > 1 else []
    body = []
    for a in answer:
        if a["k"] is None:  # choice_notes says why
            continue
        time = ToTarget(a["time_to_target"], a["time_to_target_std"], a["reached"], seeds)
        cells = [a["system"], "-" if a["k"] is None else _interval(a["lambda_from"], a["lambda_to"]),
                 "-" if a["k"] is None else str(a["k"])]
        cells += [target_cell(time, TIME_FORMATS[u]) if a["time_unit"] == u else "-" for u in units]
        cells.append(target_cell(ToTarget(a["bits_to_target"], None, a["reached"], seeds), ".4g"))
        cells += [f"{a['reached']}/{seeds}"] if seeds > 1 else []
        body.append(cells)
    return header, body


def choice_notes(answer: list[dict]) -> list[str]:
    """Why a system has no choice of lambda (``choices``' ``why``), one line each."""
    return [f"{a['system']}: {a['why']}" for a in answer if a["k"] is None]


def choice_text(answer: list[dict], seeds: int, render) -> str:
    """The choice table (``render``: the command's ``table`` or ``markdown``) and a line per
    system without a choice; the lines alone where no system has one (never an empty table)."""
    header, body = choice_table(answer, seeds)
    notes = "\n".join(choice_notes(answer))
    if not body:
        return "no lambda's k reached the target:\n" + notes + "\n"
    return render(header, body) + ("\n" + notes + "\n" if notes else "")


def markdown(header: list[str], body: list[list[str]]) -> str:
    from scenarios.execution.compare import markdown as md

    return md(header, body)
