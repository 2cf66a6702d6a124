"""``fl-cosim list``: registered scenarios, algorithms (with their options), the run settings, network systems, codecs and orchestrators."""

from __future__ import annotations

from scenarios.cli.common import add_json


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("list", help="scenarios, algorithms and systems", description="List what can be named.")
    add_json(parser)


def from_plugin(kind: str, name: str) -> str:
    """`` [plugin MODULE VERSION]`` for a thing a plugin added, else nothing."""
    from scenarios.plugins import origin

    found = origin(kind, name)
    return "" if found is None else f" [plugin {found['module']}" + (f" {found['version']}" if found["version"] else "") + "]"


def execute(args):
    from learning.algorithms import ALGORITHMS
    from learning.algorithms.base import first_sentence, summary
    from learning.codecs import CODECS
    from learning.options import allowed_text as allowed
    from scenarios.definitions.orchestrators import ORCHESTRATORS
    from scenarios.definitions.settings import reference
    from scenarios.definitions.registry import SCENARIOS
    from scenarios.definitions.cells import CELLS
    from scenarios.plugins import ORIGINS
    from scenarios.definitions.systems import SYSTEMS, system_names

    options = {name: cls.Options.defaults() for name, cls in ALGORITHMS.items()}
    ranges = {name: {key: allowed(s, cls.Options.requirements()[key]) for key, s in cls.Options.settings().items()}
              for name, cls in ALGORITHMS.items()}
    docs = {name: cls.Options.docs() for name, cls in ALGORITHMS.items()}
    data = {"scenarios": list(SCENARIOS), "algorithms": list(ALGORITHMS), "systems": system_names(), "algorithm_options": options,
            "algorithm_option_ranges": ranges, "algorithm_option_docs": docs,
            "codecs": {name: cls.defaults() for name, cls in CODECS.items()},
            "orchestrators": {name: {"doc": o.doc, "reads": sorted(o.reads)} for name, o in ORCHESTRATORS.items()},
            "plugins": [{"kind": kind, "name": name, **record} for (kind, name), record in ORIGINS.items()],
            "run_settings": reference()}
    lines = ["scenarios:"] + [f"  {s.name} (v{s.version}): {s.description}{from_plugin('scenario', s.name)}" for s in SCENARIOS.values()]
    lines += ["algorithms (options with defaults; set with --option KEY=VALUE):"]
    for name, cls in ALGORITHMS.items():
        settings = "\n      ".join(f"{k}={v!r} ({ranges[name][k]}): {docs[name][k]}" for k, v in options[name].items())
        lines.append(f"  {name}: {summary(cls)}{from_plugin('algorithm', name)}" + (f"\n      {settings}" if settings else ""))
    lines += ["run settings (run and compare flags, and as [settings] KEY the key a sweep file's [settings] and [grid] "
              "take; with defaults):"]
    lines += [f"  {row['flag'] or '-'} ({sweep_words(row)}): {row['allowed']}; default {row['default']}: {row['doc']}"
              for row in data["run_settings"]]
    lines += ["systems (normalized, time in T_dl):"]
    lines += [f"  {p.name}: {p.description}{from_plugin('system', p.name)}" for p in SYSTEMS.values()]
    lines += ["systems (physical cells, time in seconds; 'fl-cosim cell NAME' describes one):"]
    lines += [f"  {p.name}: {p.description}" for p in CELLS.values()]
    lines += ["codecs (--uplink-codec, --downlink-codec NAME[:KEY=VALUE,...]):"]
    for name, cls in CODECS.items():
        parameters = "".join(f"\n      {key}={value!r} ({allowed(setting, {})}): {cls.docs()[key]}"
                             for (key, value), setting in zip(cls.defaults().items(), cls.settings().values()))
        lines.append(f"  {name}: {first_sentence(cls.__doc__ or name)}{from_plugin('codec', name)}{parameters}")
    lines += ["orchestrators (--orchestrator NAME; the settings each reads):"]
    lines += [f"  {name}: {o.doc} ({', '.join(sorted(o.reads)) or 'none'}){from_plugin('orchestrator', name)}"
              for name, o in ORCHESTRATORS.items()]
    return data, "\n".join(lines)


# the settings a sweep file gives outside [settings] and [grid] (RunSpec's fields declared sweep=False)
ELSEWHERE_IN_SWEEPS = {"algorithm": "[[algorithm]] name", "seed": "top-level seeds", "options": "[[algorithm]] options"}


def sweep_words(row: dict) -> str:
    """How a sweep file gives the setting of ``row`` (``reference``): its [settings] key, or where
    else it goes (never a key that sweeps refuse)."""
    if row["sweep"]:
        table, _, entry = row["sweep"].partition(".")
        return f"[settings] {table}" + (f" = {{ {entry} = ... }}" if entry else "")
    return "not a [settings] key; a sweep file's " + ELSEWHERE_IN_SWEEPS.get(row["setting"], "own table")
