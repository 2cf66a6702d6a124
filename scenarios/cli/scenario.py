"""``fl-cosim scenario NAME``: devices, groups, per-device sizes and labels, model size."""

from __future__ import annotations

from scenarios.cli.common import add_data_dir, add_json


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "scenario", help="describe one scenario: its training defaults, model, devices and data",
        description="Describe a scenario: its registry entry (training defaults, rounds, participation, algorithm "
        "options, model and its size) and its devices, groups and per-device data for --seed. Without its data "
        "files, the registry entry and which files it would read, where, and how to get them.")
    parser.add_argument("name", help="scenario name (see 'fl-cosim list')")
    parser.add_argument("--seed", type=int, default=0, help="partition seed (default 0)")
    add_data_dir(parser)
    add_json(parser)


def execute(args):
    from scenarios.datasets import resolve_data_dir
    from scenarios.definitions.describe import describe_scenario

    from scenarios.definitions.settings import RUN_SETTINGS

    RUN_SETTINGS["seed"].check("--seed", args.seed)
    info = describe_scenario(args.name, resolve_data_dir(args.data_dir), args.seed)
    lines = []
    for key, value in info.items():
        if isinstance(value, dict):
            lines.append(f"{key}: " + (", ".join(f"{k}={_text(v)}" for k, v in value.items()) or "-"))
        elif isinstance(value, list) and key != "datasets":
            lines.append(f"{key}:")
            lines += [f"  {item}" for item in value]
        else:
            lines.append(f"{key}: {_text(value)}")
    return info, "\n".join(lines)


def _text(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "-"
    return str(value)
