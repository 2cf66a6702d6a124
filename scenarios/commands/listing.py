"""``fl-cosim list``: registered scenarios, algorithms and network systems."""

from __future__ import annotations

from scenarios.commands.common import add_json


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("list", help="scenarios, algorithms and systems", description="List what can be named.")
    add_json(parser)


def execute(args):
    from learning.algorithms import ALGORITHMS
    from learning.algorithms.base import known_options, summary
    from scenarios.registry import SCENARIOS
    from scenarios.cells import CELLS
    from scenarios.systems import SYSTEMS, system_names

    from scenarios.settings import ALGORITHM_OPTIONS

    options = {name: known_options(cls) for name, cls in ALGORITHMS.items()}
    allowed = {name: {key: ALGORITHM_OPTIONS[name][key].allowed() + (", or none" if ALGORITHM_OPTIONS[name][key].none else "")
                      for key in options[name]} for name in ALGORITHMS}
    data = {"scenarios": list(SCENARIOS), "algorithms": list(ALGORITHMS), "systems": system_names(), "algorithm_options": options,
            "algorithm_option_ranges": allowed}
    lines = ["scenarios:"] + [f"  {s.name} (v{s.version}): {s.description}" for s in SCENARIOS.values()]
    lines += ["algorithms (options with defaults; set with --option KEY=VALUE):"]
    for name, cls in ALGORITHMS.items():
        settings = "\n      ".join(f"{k}={v!r}: {allowed[name][k]}" for k, v in options[name].items())
        lines.append(f"  {name}: {summary(cls)}" + (f"\n      {settings}" if settings else ""))
    lines += ["systems (normalized, time in T_dl):"] + [f"  {p.name}: {p.description}" for p in SYSTEMS.values()]
    lines += ["systems (physical cells, time in seconds; 'fl-cosim cell NAME' describes one):"]
    lines += [f"  {p.name}: {p.description}" for p in CELLS.values()]
    return data, "\n".join(lines)
