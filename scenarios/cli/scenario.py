"""``fl-cosim scenario NAME``: devices, groups, per-device sizes and labels, model size."""

from __future__ import annotations

from scenarios.cli.common import add_data_dir, add_json


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("scenario", help="describe one scenario", description="Describe a scenario's devices, groups, data and model.")
    parser.add_argument("name", help="scenario name (see 'fl-cosim list')")
    parser.add_argument("--seed", type=int, default=0, help="partition seed (default 0)")
    add_data_dir(parser)
    add_json(parser)


def execute(args):
    from scenarios.datasets import resolve_data_dir
    from scenarios.describe import describe_scenario

    from scenarios.settings import RUN_SETTINGS

    RUN_SETTINGS["seed"].check("--seed", args.seed)
    info = describe_scenario(args.name, resolve_data_dir(args.data_dir), args.seed)
    lines = [f"{k}: {v}" for k, v in info.items() if not isinstance(v, (list, dict))]
    for key, value in info.items():
        if isinstance(value, list):
            lines.append(f"{key}:")
            lines += [f"  {item}" for item in value]
    return info, "\n".join(lines)
