"""``fl-cosim penalty RESULT_DIR...``: the weakest-member penalty of runs on a physical cell."""

from __future__ import annotations

from scenarios.cli.common import add_json, table


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "penalty",
        help="downlink seconds per round on a cell against the normalized model",
        description="For runs on a physical cell: the downlink seconds per round (set-up round left out) against "
        "the normalized model's, which prices every model sent at T_dl = the cell's mean unicast airtime of one "
        "model. A multicast runs at its weakest member's rate, so the ratio (the penalty) grows with the streams' "
        "sizes: a broadcast to every device costs several T_dl.",
    )
    parser.add_argument("result_dirs", nargs="+", metavar="RESULT_DIR")
    add_json(parser)


def execute(args):
    from scenarios.reports.penalty import downlink_penalty

    rows = [downlink_penalty(folder) for folder in args.result_dirs]
    names_header, names = run_names(rows)
    ms = lambda seconds: "-" if seconds is None else f"{seconds * 1e3:.2f}"  # noqa: E731  (None: undefined, a note says why)
    body = [[*name, r["streams"], f"{r['models_per_round']:.2f}", ms(r["downlink_s_per_round"]),
             ms(r["normalized_downlink_s_per_round"]), "-" if r["penalty"] is None else f"{r['penalty']:.2f}",
             f"{r['simulated_time_s']:.2f}", f"{r['final_mean_accuracy']:.3f}", f"{r['energy_j']:.3g}"] for name, r in zip(names, rows)]
    header = [*names_header, "streams", "models/round", "DL ms/round", "normalized ms/round", "penalty", "time (s)", "mean acc", "energy (J)"]
    notes = list(dict.fromkeys(cell_note(r) for r in rows))
    notes += [f"{' '.join(name)}: {r['undefined_why']}" for name, r in zip(names, rows) if r["t_dl_s"] is not None and r["undefined_why"]]
    return {"runs": rows}, table(header, body) + "\n\n" + "\n".join(notes)


def cell_note(row: dict) -> str:
    """The cell's ``T_dl`` and one broadcast of a run (they depend on its seed's layout); why
    ``T_dl`` is undefined where it is (``downlink_penalty``)."""
    name = f"{row['system']} seed {row['seed']}"
    t, b = row["t_dl_s"], row["broadcast_s"]
    broadcast = "no broadcast heard" if b is None else f"one broadcast {b * 1e3:.3f} ms"
    if t is None:
        return f"{name}: {row['undefined_why']}; {broadcast}"
    return f"{name}: T_dl = {t * 1e3:.3f} ms (mean unicast airtime of one model), " + (broadcast if b is None else f"{broadcast} = {b / t:.2f} T_dl")


def run_names(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    """(header, cells per row) naming each run: its label, system and seed, the stream formation
    where a run has one, and its folder where these leave two rows alike, so that every row is
    told apart without --json."""
    from pathlib import Path

    formation = any(r["formation"] is not None for r in rows)
    header = ["run", "system", "seed"] + (["formation"] if formation else [])
    cells = [[r["label"], r["system"], str(r["seed"])] + ([r["formation"] or "-"] if formation else []) for r in rows]
    if len({tuple(c) for c in cells}) < len(cells):
        header.append("folder")
        cells = [c + [Path(r["result_dir"]).name] for c, r in zip(cells, rows)]
    return header, cells
