"""``fl-cosim cell PRESET``: describe a physical cell preset for a seed and draw it."""

from __future__ import annotations

from pathlib import Path

from scenarios.cli.common import add_declared, add_json, parse_options, table
from scenarios.errors import UsageError


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "cell",
        help="describe and draw a physical cell preset",
        description="A physical network preset for one seed: its parameters and their sources, each device's "
        "distance, LOS state, path loss, shadowing and mean SNR (the layout a run of that seed uses), and "
        "SNR, rate and outage statistics over fading rounds. Draws the devices on a map coloured by SNR and "
        "the SNR and rate histograms.",
    )
    parser.add_argument("preset", help="cell preset (see 'fl-cosim list')")
    parser.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    parser.add_argument("--devices", type=int, default=20, help="number of devices (default 20, the default scenario's)")
    add_declared(parser, "radio")
    parser.add_argument("--drop", type=int, metavar="N", help="TR 38.901 7.8.1 large-scale calibration instead: drop N devices "
                        "over the whole 19-site layout and print each one's coupling_loss_db and geometry_db (no figure; "
                        "e.g. --radio carrier_hz=6e9 for the calibration carrier)")
    parser.add_argument("--rounds", type=int, default=1000, help="fading rounds for the statistics (default 1000)")
    parser.add_argument("--out", help="figure file, .png or .pdf (default results/cell_PRESET_sSEED_HASH.png, HASH naming "
                        "the devices, rounds and radio overrides, so figures of other configurations never replace each other)")
    parser.add_argument("--force", action="store_true", help="replace an existing figure file given by --out")
    add_json(parser)


def execute(args):
    from scenarios.reports.cell import describe_cell
    from scenarios.records.atomic import check_output_dir, output_dir

    overrides = parse_options(args.radio, "--radio")
    if args.drop is not None:
        from scenarios.reports.cell import calibration_drop

        if args.out is not None or args.force:  # the drop prints a table and draws nothing: --out would be ignored
            raise UsageError("--drop prints the calibration table and draws no figure; leave out --out and --force")

        info = calibration_drop(args.preset, args.seed, args.drop, overrides)
        return info, render_drop(info)
    if args.out is None:
        check_output_dir(DEFAULT_FOLDER)  # made only once the cell is described (results/, like every command)
    else:
        out = Path(args.out)
        if out.suffix.lower() not in (".png", ".pdf"):
            raise UsageError(f"--out must end in .png or .pdf, got {str(out)!r}")
        check_output_dir(out.parent)  # created with the figure, as every --out folder is
        if out.exists() and not args.force:
            raise UsageError(f"{args.out!r} exists; give another --out or --force to replace it")
    info = describe_cell(args.preset, args.seed, args.devices, overrides, args.rounds)  # checks the overrides
    if args.out is None:
        out = DEFAULT_FOLDER / default_figure(args.preset, args.seed, args.devices, args.rounds, overrides)
    draws = info.pop("_draws")
    from figures.cell import plot_cell

    try:
        with output_dir(out.parent):
            info["figure"] = str(plot_cell(draws, out, f"{args.preset}, seed {args.seed}, {args.devices} devices"))
    except OSError as error:
        raise UsageError(f"cannot write {str(out)!r}: {error.strerror or error}") from None
    return info, render(info)


DEFAULT_FOLDER = Path("results")


def default_figure(preset: str, seed: int, devices: int, rounds: int, overrides: dict) -> str:
    """``cell_PRESET_sSEED_HASH.png``: HASH names the rest of the configuration, so the default
    figure of another configuration gets another name (the same one, the same name)."""
    import hashlib
    import json

    rest = json.dumps({"devices": devices, "rounds": rounds, "radio": overrides}, sort_keys=True, default=str,
                      allow_nan=False)
    return f"cell_{preset}_s{seed}_{hashlib.sha256(rest.encode('utf-8')).hexdigest()[:10]}.png"


def render_drop(info: dict) -> str:
    rows = [[name, f"{q['coupling_loss_db']:.1f}", f"{q['geometry_db']:.1f}"] for name, q in info["percentiles"].items()]
    return "\n".join([f"{info['preset']}: {info['drop']} devices over the 19-site layout at {info['carrier_hz'] / 1e9:g} GHz, "
                      f"seed {info['seed']} (TR 38.901 7.8.1)", table(["percentile", "coupling loss (dB)", "geometry (dB)"], rows)])


def render(info: dict) -> str:
    p, d, s = info["parameters"], info["derived"], info["summary"]
    lines = [f"{info['preset']}: {info['description']}",
             f"seed {info['seed']}, {info['devices']} devices, statistics over {info['rounds']} fading rounds", ""]
    lines += [f"{key} = {value}" for key, value in p.items()]
    lines += [f"{key} = {'none' if value is None else f'{value:.4g}'}" for key, value in d.items()]
    lines += [f"{key.replace('_', ' ')}: {info[key]}" for key in ("uplink_rates", "downlink_rates") if key in info]
    lines.append("")
    rows = [[r["device"], f"{r['distance_m']:.1f}", "LOS" if r["los"] else "NLOS", f"{r['path_loss_db']:.1f}",
             f"{r['shadowing_db']:+.1f}", f"{r['downlink_snr_db']:.1f}", f"{r['uplink_snr_db']:.1f}",
             f"{r['downlink_mbps']:.1f}", f"{r['uplink_mbps']:.1f}", f"{r['downlink_outage']:.3f}", f"{r['uplink_outage']:.3f}"]
            for r in info["device_table"]]
    lines.append(table(["device", "d (m)", "state", "PL (dB)", "SF (dB)", "DL SNR (dB)", "UL SNR (dB)", "DL Mbit/s",
                        "UL Mbit/s", "DL outage", "UL outage"], rows))
    lines.append("")
    lines += [f"{key}: {value if not isinstance(value, float) else f'{value:.4g}'}" for key, value in s.items()]
    lines.append(f"figure {info['figure']}")
    return "\n".join(lines)
