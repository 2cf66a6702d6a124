"""Arguments and parsing helpers shared by several subcommands."""

from __future__ import annotations

import argparse
import functools

from contract.setting import parse_number, parse_value
from scenarios.errors import UsageError


class _Once:
    """An option's action that refuses the option given a second time (argparse would keep the
    last value silently). What was given is kept per parse on the parser (``OnceParser``)."""

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string is not None:
            shown = " ".join(map(str, values)) if isinstance(values, list) else values
            if self.dest in parser.given:
                first, flag = parser.given[self.dest]
                both = f" ({first} and {shown})" if shown not in (None, "") else ""
                parser.error(f"{flag if flag == option_string else f'{flag} / {option_string}'} is given twice{both}; give it once")
            parser.given[self.dest] = (shown, option_string)
        super().__call__(parser, namespace, values, option_string)


class OnceParser(argparse.ArgumentParser):
    """argparse whose every option is given at most once: each single-valued action (a value,
    a list of values, a flag) refuses a second occurrence; ``append`` options are the ones
    meant to repeat (``--plugin``, ``--option``, ``--radio``: their keys are checked once by
    ``parse_options``). A list option (``nargs``: ``--algorithm``, ``--systems``, ``--rho``,
    ``--lambda``...) names each value once: a value given twice would run, re-time or draw the same
    thing twice, or be silently dropped. Numbers (``type=int``/``float``) are read strictly
    (``contract.setting.parse_number``: ``' 2'`` is not 2)."""

    ONCE = (None, "store", "store_const", "store_true", "store_false", "count")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.given: dict = {}
        for name in self.ONCE:
            base = self._registry_get("action", name)
            self.register("action", name, type(f"Once{base.__name__}", (_Once, base), {}))
        for kind in (int, float):  # argparse looks a type up here first: the error still names int/float
            self.register("type", kind, functools.partial(parse_number, kind=kind))

    def _get_values(self, action, arg_strings):
        values = super()._get_values(action, arg_strings)
        if isinstance(values, list) and action.option_strings:  # a command's own positional lists check themselves (plot's folders)
            seen: list = []
            for value in values:
                if value in seen:
                    name = "/".join(action.option_strings)
                    self.error(f"{name} names {value} twice; give each once")
                seen.append(value)
        return values

    def parse_known_args(self, args=None, namespace=None):
        self.given = {}
        namespace, extras = super().parse_known_args(args, namespace)
        # what was given, not left at its default (a subcommand's parser hands its own up with its values)
        namespace.given_dests = frozenset(getattr(namespace, "given_dests", frozenset()) | set(self.given))
        return namespace, extras


def add_json(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout (nothing else)")


def add_data_dir(parser) -> None:
    parser.add_argument(
        "--data-dir",
        help="dataset folder (default: $FL_COSIM_DATA, then ~/.cache/fl-cosim/datasets)",
    )


def parse_option(text: str) -> tuple[str, object]:
    """``key=value`` with value parsed as int, float (``contract.setting.parse_number``: strictly,
    so `` 2`` stays text and is refused where a number is due), bool, none, or kept as text."""
    if "=" not in text:
        raise UsageError(f"option {text!r} must look like key=value")
    key, raw = text.split("=", 1)
    return key, parse_value(raw)


def parse_options(texts: list[str], option: str) -> dict:
    """Repeated ``--option``/``--radio`` ``KEY=VALUE`` as a dict; a key given twice is refused
    (the last would silently win)."""
    options: dict = {}
    for text in texts:
        key, value = parse_option(text)
        if key in options:
            raise UsageError(f"{option} {key} is given twice ({options[key]!r} and {value!r}); give it once")
        options[key] = value
    return options


def table(header: list[str], rows: list[list]) -> str:
    """A plain aligned text table."""
    cells = [header] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def bits(value: float | None) -> str:
    if value is None:  # no number: bits that overflowed in a diverged run
        return "-"
    for unit, scale in (("Gbit", 1e9), ("Mbit", 1e6), ("kbit", 1e3)):
        if value >= scale:
            return f"{value / scale:.2f} {unit}"
    return f"{value:.0f} bit"


def seed_range(args) -> list[int]:
    """``--seed`` and ``--seeds``: the seeds ``seed .. seed + seeds - 1``, the first and last checked."""
    from scenarios.definitions.settings import MAX_SEEDS, RUN_SETTINGS, Setting

    RUN_SETTINGS["seed"].check("--seed", args.seed)
    Setting(int, low=1, high=MAX_SEEDS).check("--seeds", args.seeds)
    RUN_SETTINGS["seed"].check("--seed + --seeds - 1", args.seed + args.seeds - 1)
    return list(range(args.seed, args.seed + args.seeds))


def add_quiet(parser) -> None:
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr (also off under --json)")


def add_setting(parser, cls: type, f, default=None, default_text: str | None = None, many: bool = False) -> None:
    """The declared field ``f`` of ``cls`` as an argument: its flag, value type, choices,
    default and help. A table (dict) is ``KEY=VALUE``, repeatable (``parse_options``); a value
    with words besides a number (``--streams auto``) is text (``parse_flag``); ``many``: one or
    more values (a list)."""
    from learning.options import field_setting, help_text

    setting = field_setting(cls, f)
    flag = f.metadata["flag"]
    kwargs = {"dest": f.name, "help": help_text(cls, f, default_text),
              "metavar": f.metadata.get("metavar") or flag.lstrip("-").upper().replace("-", "_")}
    if setting.kind is dict:
        kwargs.update(action="append", default=[])
    else:
        if setting.kind is str and setting.choices and not f.metadata.get("words"):
            kwargs.update(choices=setting.choices, metavar=None)
        elif setting.kind in (int, float) and not setting.choices and not f.metadata.get("none_word"):
            kwargs["type"] = setting.kind
        kwargs["default"] = default
        if many:
            kwargs["nargs"] = "+"
    parser.add_argument(flag, **kwargs)


def parse_flag(f, text: str):
    """A flag's text (``add_setting``) as its field's value: its ``none_word`` None, else a number,
    a word or text (``parse_option``), checked where it goes (an algorithm's options: ``Options.resolve``)."""
    return None if text == f.metadata.get("none_word") else parse_option(f"{f.name}={text}")[1]


def add_declared(parser, *names: str, **defaults) -> None:
    """The ``RunSpec`` settings ``names`` as arguments, as ``run`` has them (``defaults``: a
    command's own defaults, by name); a table declared by its entries (``training``) as one
    argument per entry."""
    import dataclasses

    from scenarios.definitions.settings import RunSpec, declared

    fields = {f.name: f for f in declared()}
    for name in names:
        f = fields[name]
        entries = f.metadata.get("entries")
        if entries:
            for entry in dataclasses.fields(entries()):
                add_setting(parser, entries(), entry, None, f.metadata.get("default_text"))
        elif name in defaults:
            add_setting(parser, RunSpec, f, defaults[name], str(defaults[name]))
        else:
            default = f.metadata.get("cli_default", None if f.default is dataclasses.MISSING else f.default)
            add_setting(parser, RunSpec, f, default, f.metadata.get("cli_default"))


def option_flags() -> dict[str, tuple[type, object]]:
    """The algorithm options with a flag of their own (``--streams``, ``--lambda``): flag ->
    (their ``Options``, the field). User-centric FL's options alone declare flags
    (``learning.user_centric_options``, declared without torch: ``run --help`` imports none;
    ``tests/test_declared_settings.py`` checks that no other algorithm declares one)."""
    import dataclasses

    from learning.user_centric_options import UserCentricOptions

    return {f.metadata["flag"]: (UserCentricOptions, f) for f in dataclasses.fields(UserCentricOptions) if f.metadata.get("flag")}


def add_run_settings(parser, seed: bool = False) -> None:
    """The settings ``run`` and ``compare`` share, one argument per declaration
    (``scenarios.definitions.settings.RunSpec``, the training table's entries, the algorithm
    options with a flag of their own), grouped by section; ``seed``: ``--seed`` too."""
    from scenarios.definitions.settings import SECTIONS, declared

    groups: dict = {}
    for f in declared():
        if f.metadata.get("command") and not (seed and f.name == "seed"):
            continue
        section = f.metadata["section"]
        if section not in groups:
            groups[section] = parser.add_argument_group(SECTIONS[section])
        add_declared(groups[section], f.name)
        if f.name == "options":
            for cls, option in option_flags().values():
                add_setting(groups[section], cls, option)
    parser.add_argument("--out", default="results", help="output folder (default ./results)")
    parser.add_argument("--force", action="store_true", help="run again even when an identical finished run exists")
    add_quiet(parser)
    add_data_dir(parser)
    add_json(parser)


def takes(algorithm: str, key: str) -> bool:
    from scenarios.definitions.registry import get_algorithm

    return key in get_algorithm(algorithm).Options.settings()


def route_options(args, variants: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    """Each (algorithm, options) variant with the command line's options routed to it:
    ``--option KEY=VALUE`` to every algorithm that takes KEY (an error if none does), an
    option's own flag (``--streams``, ``--lambda``) to the algorithms whose options declare it
    (an error if none does, or if what it ``requires`` is not given: ``--lambda`` only with
    ``--streams auto``). Identical variants are kept once."""
    from contract.setting import holds
    from learning.algorithms import ALGORITHMS
    from scenarios.definitions.registry import get_algorithm

    options = parse_options(args.options, "--option")
    names = [name for name, _ in variants]
    for key in options:
        if not any(takes(name, key) for name in names):
            raise UsageError(f"no algorithm of this run takes option {key!r} (see 'fl-cosim list' for each one's options)")
    flagged, takers = {}, {}  # option -> (its flag, its Options, its value); option -> the run's algorithms that declare the flag
    for flag, (cls, f) in option_flags().items():
        if getattr(args, f.name, None) is None:
            continue
        takers[f.name] = [name for name in names if get_algorithm(name).Options.flags().get(f.name) == flag]
        if not takers[f.name]:
            declaring = sorted(name for name, a in ALGORITHMS.items() if a.Options.flags().get(f.name) == flag)
            raise UsageError(f"{flag} applies to algorithms with {f.name} ({', '.join(declaring)}); none is in this run")
        flagged[f.name] = (flag, cls, parse_flag(f, getattr(args, f.name)))
    for key, (flag, cls, _) in flagged.items():
        for other, wanted in cls.requirements()[key].items():
            if not holds(wanted, flagged[other][2] if other in flagged else options.get(other)):
                raise UsageError(f"{flag} applies only with {cls.flags().get(other, other)} {wanted}")
        if key in options:
            raise UsageError(f"give {flag.lstrip('-')} once: {flag} or --option {key}=..., not both")
    routed, seen = [], set()
    for name, defaults in variants:
        run_options = {**defaults, **{k: v for k, v in options.items() if takes(name, k)}}
        run_options.update({key: value for key, (_, _, value) in flagged.items() if name in takers[key]})
        key = (name, tuple(sorted((k, repr(v)) for k, v in run_options.items())))
        if key not in seen:
            seen.add(key)
            routed.append((name, run_options))
    return routed


def spec_settings(args) -> dict:
    """The RunSpec fields the command line gives, one per declaration (checked when the spec is
    resolved): all but the algorithm and its options (each command's variants, ``route_options``)."""
    from scenarios.definitions.settings import declared

    values = {}
    for f in declared():
        entries = f.metadata.get("entries")
        if entries:
            values[f.name] = table_overrides(args, entries())
        elif f.name not in ("algorithm", "options") and hasattr(args, f.name):
            value = getattr(args, f.name)  # a table: its KEY=VALUE texts (add_setting)
            values[f.name] = parse_options(value, f.metadata["flag"]) if isinstance(value, list) else value
    given_once(values.get("system"), getattr(args, "given_dests", ()))
    return values


def given_once(system, given) -> None:
    """UsageError when ``--system NAME:KEY=VALUE`` sets what a flag of the command line (``given``:
    the flags' destinations given) sets too, whatever the values (``--mode pipelined --system
    wired:mode=barrier``: the default-valued flag would be lost silently)."""
    from scenarios.definitions.systems import SPEC_SEPARATOR, SYSTEM_FIELDS, parse_system

    if not isinstance(system, str) or SPEC_SEPARATOR not in system:
        return
    for key in parse_system(system).overrides:
        if key in SYSTEM_FIELDS and key in given:
            raise UsageError(f"system {system!r}: {key} is given twice (also --{key.replace('_', '-')}); give it once")


def show_progress(args) -> bool:
    return not (getattr(args, "quiet", False) or getattr(args, "json", False))


def add_training(parser) -> None:
    """The training settings (``learning.training.LocalTraining``'s declarations) that override the scenario's."""
    add_declared(parser.add_argument_group("training settings (default: the scenario's; 'fl-cosim scenario NAME' lists them)"),
                 "training")


def training_overrides(args) -> dict:
    """The training settings given on the command line (``auto`` is resolved with the run's)."""
    from learning.local_training import LocalTraining

    return table_overrides(args, LocalTraining)


def table_overrides(args, cls: type) -> dict:
    """The entries of a table (the fields of ``cls``) given on the command line."""
    import dataclasses

    return {f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if getattr(args, f.name, None) is not None}
