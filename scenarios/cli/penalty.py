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
    body = [[*name, r["streams"], f"{r['models_per_round']:.2f}",
             f"{r['downlink_s_per_round'] * 1e3:.2f}", f"{r['normalized_downlink_s_per_round'] * 1e3:.2f}",
             f"{r['penalty']:.2f}" if r["penalty"] is not None else "-", f"{r['simulated_time_s']:.2f}",
             f"{r['final_mean_accuracy']:.3f}", f"{r['energy_j']:.3g}"] for name, r in zip(names, rows)]
    header = [*names_header, "streams", "models/round", "DL ms/round", "normalized ms/round", "penalty", "time (s)", "mean acc", "energy (J)"]
    cells = sorted({(r["system"], r["t_dl_s"], r["broadcast_s"]) for r in rows})
    notes = [f"{name}: T_dl = {t * 1e3:.3f} ms (mean unicast airtime of one model), one broadcast {b * 1e3:.3f} ms = {b / t:.2f} T_dl"
             for name, t, b in cells]
    return {"runs": rows}, table(header, body) + "\n\n" + "\n".join(notes)



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
