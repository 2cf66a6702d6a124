"""``fl-cosim list``: registered scenarios, algorithms and network systems."""

from __future__ import annotations

from scenarios.commands.common import add_json


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("list", help="scenarios, algorithms and systems", description="List what can be named.")
    add_json(parser)


def execute(args):
    from learning.algorithms import ALGORITHMS
    from scenarios.registry import SCENARIOS
    from scenarios.systems import SYSTEMS

    data = {"scenarios": list(SCENARIOS), "algorithms": list(ALGORITHMS), "systems": list(SYSTEMS)}
    lines = ["scenarios:"] + [f"  {s.name} (v{s.version}): {s.description}" for s in SCENARIOS.values()]
    lines += ["algorithms:"] + [f"  {name}" for name in ALGORITHMS]
    lines += ["systems:"] + [f"  {p.name}: {p.description}" for p in SYSTEMS.values()]
    return data, "\n".join(lines)
