"""Every run setting is declared once (``scenarios.definitions.settings.RunSpec``, the training
table's entries in ``LocalTraining``): each declaration, new ones included, reaches a run from
the command line (``run``), from sweep files and from the API, and the docs' command reference
is the declarations'."""

from __future__ import annotations

import dataclasses
import sys

import pytest

from learning.algorithms import ALGORITHMS
from learning.options import doc_of, field_setting
from scenarios import api
from scenarios.cli.common import option_flags
from scenarios.cli.main import build_parser
from scenarios.cli.run import run_specs
from scenarios.definitions.registry import SCENARIOS
from scenarios.definitions.systems import DEFAULT_SYSTEM
from scenarios.definitions.settings import DEFAULT_SCENARIO, SWEEP_KEYS, RunSpec, check_spec, declared, reference
from scenarios.execution.sweep import expand

ALGORITHM, OPTIONS = "fedprox", {"mu": 0.25}  # the identity fields: a registered algorithm and one of its options
SCENARIO = next(name for name in SCENARIOS if name != DEFAULT_SCENARIO)


def sample(cls: type, f: dataclasses.Field):
    """A value of the declared field ``f`` other than its default, from its declaration alone."""
    if f.name == "scenario":
        return SCENARIO
    setting = field_setting(cls, f)
    if setting.kind is dict:
        return {"key": 1}
    if setting.kind is str:
        words = [w for w in setting.choices if w != f.default]
        return words[0] if words else "text"
    if setting.kind is bool:
        return not f.default
    low = 0 if setting.low is None else setting.low
    if setting.kind is int:
        return int(low) + 1 if f.default != int(low) + 1 else int(low) + 2
    return (low + setting.high) / 2 if setting.high is not None else low + 0.5


def cases() -> list[tuple[str, str | None, object]]:
    """(RunSpec field, training entry or None, value) for every declaration."""
    found = []
    for f in declared():
        entries = f.metadata.get("entries")
        if entries:
            found += [(f.name, e.name, sample(entries(), e)) for e in dataclasses.fields(entries())]
        else:
            found.append((f.name, None, ALGORITHM if f.name == "algorithm" else OPTIONS if f.name == "options" else sample(RunSpec, f)))
    return found


CASES = cases()
IDS = [name + (f".{entry}" if entry else "") for name, entry, _ in CASES]


def expected(name: str, entry: str | None, value):
    return {entry: value} if entry else value


def command_line(name: str, entry: str | None, value) -> list[str]:
    """The ``run`` arguments that give this value, from the declaration's flag."""
    fields = {f.name: f for f in declared()}
    f = next(e for e in dataclasses.fields(fields[name].metadata["entries"]())
             if e.name == entry) if entry else fields[name]
    flag = f.metadata["flag"]
    if isinstance(value, dict):
        return [a for key, v in value.items() for a in (flag, f"{key}={v}")]
    return [flag, str(value)]


@pytest.mark.parametrize("name,entry,value", CASES, ids=IDS)
def test_every_setting_reaches_a_run_from_the_command_line(name, entry, value):
    argv = ["run"] + (["--algorithm", ALGORITHM] if name != "algorithm" else []) + command_line(name, entry, value)
    specs = run_specs(build_parser().parse_args(argv))
    assert len(specs) == 1 and getattr(specs[0], name) == expected(name, entry, value)


@pytest.mark.parametrize("name,entry,value", CASES, ids=IDS)
def test_every_setting_reaches_a_run_from_a_sweep_file(name, entry, value):
    given = expected(name, entry, value)
    if name in SWEEP_KEYS:  # [settings], [grid] and [[run]] alike
        runs = [{"settings": {name: given}, "algorithm": [{"name": ALGORITHM}]},
                {"grid": {name: {k: [v] for k, v in given.items()} if isinstance(given, dict) else [given]},
                 "algorithm": [{"name": ALGORITHM}]},  # a table's grid: a list per entry
                {"run": [{"algorithm": ALGORITHM, name: given}]}]
    else:  # what a sweep file gives in its own way: the algorithm and its options, the seeds
        ways = {"algorithm": {"algorithm": [{"name": value}]}, "options": {"algorithm": [{"name": ALGORITHM, "options": value}]},
                "seed": {"seeds": [value], "algorithm": [{"name": ALGORITHM}]}}
        runs = [ways[name]]
    for config in runs:
        specs = expand(config)
        assert len(specs) == 1 and getattr(specs[0], name) == given, config


def needed(name: str) -> dict:
    """The other settings' values under which ``name`` has an effect (its ``requires``: for a
    ``Needs``, the first of the other setting's words that meets it)."""
    from contract.setting import holds

    fields = {f.name: f for f in declared()}
    found = {}
    for other, wanted in fields[name].metadata["requires"].items():
        words = field_setting(RunSpec, fields[other]).choices
        found[other] = next(word for word in words if holds(wanted, word)) if words else wanted
    return found


@pytest.mark.parametrize("name,entry,value", CASES, ids=IDS)
def test_every_setting_reaches_a_run_from_the_api(name, entry, value):
    assert api.RunSpec is RunSpec
    values = {"scenario": SCENARIO, "algorithm": ALGORITHM, **needed(name), name: expected(name, entry, value)}
    spec = api.RunSpec(**values)
    assert getattr(spec, name) == expected(name, entry, value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):  # a number goes through the checks as it is
        assert check_spec(spec, knobs=[f.name for f in declared("scenario")])[name] == expected(name, entry, value)


def test_the_declarations_are_whole():
    """Every field has a section, a doc and (but the training table, given by its entries) a flag;
    flags and destinations are unique, the algorithm options' flags among them."""
    flags, names = [], []
    for f in declared():
        assert f.metadata["section"] and doc_of(f)
        entries = f.metadata.get("entries")
        for g in dataclasses.fields(entries()) if entries else [f]:
            assert g.metadata["flag"], g.name
            flags.append(g.metadata["flag"])
            names.append(g.name)
    flags += list(option_flags())
    names += [f.name for _, f in option_flags().values()]
    declaring = {(f.metadata["flag"], f.name) for a in ALGORITHMS.values() for f in dataclasses.fields(a.Options) if f.metadata.get("flag")}
    assert declaring == {(flag, f.name) for flag, (_, f) in option_flags().items()}  # every algorithm's flags, and no other
    assert len(set(flags)) == len(flags) and len(set(names)) == len(names)
    assert {f.name for f in declared() if f.name not in SWEEP_KEYS} == {"algorithm", "options", "seed"}
    assert RunSpec(SCENARIO, ALGORITHM).system == DEFAULT_SYSTEM  # the command line's default is the API's


def test_a_bad_value_names_its_setting_in_one_line():
    for f in declared("network") + declared("run"):
        if field_setting(RunSpec, f).kind in (int, float):
            with pytest.raises(api.UsageError, match=f"^{f.name.replace('_', '-')} must be "):
                check_spec(RunSpec(SCENARIO, ALGORITHM, **{f.name: float("nan")}), knobs=[])


def test_the_docs_reference_is_the_declarations():
    """docs/cli.md holds the generated table; it has a row per declaration (and per algorithm
    option with a flag), in order, with its flag, default, allowed values and doc; ``run --help``
    shows each flag (the parser is built from the same declarations)."""
    from doc_blocks import ROOT

    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        import cli_reference
    finally:
        sys.path.pop(0)
    assert cli_reference.SETTINGS_MARKER in (ROOT / "docs" / "cli.md").read_text()
    rows = cli_reference.settings_markdown().splitlines()[2:]
    declared_rows = reference()
    assert len(rows) == len(declared_rows) + len(option_flags())
    for line, row in zip(rows, declared_rows):
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        assert cells[0] == f"`{row['flag']}`" and cells[2] == f"`{row['setting']}`"
        assert cells[3] == row["default"] and cells[4] == row["allowed"].replace("|", "\\|")
        assert cells[5] == row["doc"].replace("|", "\\|")
    run_help = next(a for a in build_parser()._actions if a.dest == "command").choices["run"].format_help()
    assert all(f"{row['flag']} " in run_help or f"{row['flag']}\n" in run_help for row in declared_rows if row["flag"] != "--algorithm")


RADIO_NEEDS = {"speed_kmh": 3.0, "interference": True, "mean_off_s": 60.0, "ul_power_control": "fractional",
               "uplink_access": "tdma", ("ul_interference", "uplink_access"): "pf"}  # what they need (one parameter's own: keyed by it)


def test_every_radio_parameter_reaches_the_cell_from_run_sweep_and_api():
    """Each declared radio parameter (``--radio KEY=VALUE``, a sweep file's ``radio`` table,
    ``RunSpec(radio=...)``), moved off its preset's value, lands in the built system's field."""
    from contract.setting import holds
    from scenarios.definitions.cells import RADIO_BOUNDS, RADIO_FIELDS, RADIO_REQUIRES, cell_parameters, physical_system

    base = {"interference": False, "link_abstraction": "shannon"}  # nr-harq takes no spacing without a numerology
    preset = cell_parameters("uma-2.1ghz", base)
    for name, setting in RADIO_BOUNDS.items():
        now = preset[name]
        if setting.kind is int:
            value = now + 1 if setting.high is None or now + 1 <= setting.high else now - 1
        elif setting.kind is str:
            value = next((word for word in setting.choices if word != now), "trace.json")  # a word, or a path
        elif now is None:
            value = (setting.low + setting.high) / 2
        else:
            value = min(setting.top, now * 1.01 if now else setting.low + 0.01 * (setting.top - setting.low))
            value = value if value != now else now * 0.99
        if name == "ut_height_m":
            value = 2.0  # the table holds devices from 1.5 m
        argv = ["run", "--algorithm", ALGORITHM, "--system", "uma-2.1ghz", "--radio", f"{name}={value if isinstance(value, str) else repr(value)}"]
        given = run_specs(build_parser().parse_args(argv))[0].radio
        swept = expand({"settings": {"system": "uma-2.1ghz", "radio": {name: value}}, "algorithm": [{"name": ALGORITHM}]})[0].radio
        assert given == swept == RunSpec(SCENARIO, ALGORITHM, radio={name: value}).radio == {name: value}
        needs = {other: RADIO_NEEDS.get((name, other), RADIO_NEEDS[other])
                 for other in RADIO_REQUIRES.get(name, {}) if other in RADIO_FIELDS}  # a moving cell...
        assert all(holds(RADIO_REQUIRES[name][other], value) for other, value in needs.items())
        grant = {"ul_allocation": "headroom"} if name == "ul_power_control" else {}  # power-limit's grant is open-loop power's
        system = physical_system(cell_parameters("uma-2.1ghz", {**base, **grant, **needs, **given}))
        link, f = RADIO_FIELDS[name]
        holder = getattr(system, link) if link else system.cell if hasattr(system.cell, f.name) else system
        assert getattr(holder, f.name) == value, name


def test_every_recorded_setting_is_read_back_from_the_config_where_it_is_recorded():
    """A declared setting's ``recorded`` path (what a sweep's tables show) leads to the value the
    run resolved: each setting given off its default reads back as given from the real config."""
    from scenarios.definitions.settings import RunSpec, declared, recorded_value
    from scenarios.execution.runner import prepare, resolve

    given = {"mode": "barrier", "deadline": 50.0, "evaluate_every": 2, "participation": 0.5, "rho": 2.0, "t_min": 0.5,
             "inv_mu": 0.25, "devices": 8, "alpha": 0.7, "uplink_codec": "qsgd:bits=4,bucket=512", "downlink_codec": "topk:ef=0,fraction=0.5",
             "scheduler": "age-based", "duplex": "half"}
    clocks = [{"orchestrator": "fedbuff", "buffer_k": 2, "concurrency": 4, "idle_choice": "fifo", "max_staleness": 3, "server_lr": 0.5,
               "staleness_exponent": 0.0},
              {"orchestrator": "fedasync", "concurrency": 3, "mixing_alpha": 0.9},
              {"orchestrator": "fedat", "tiers": 3}]  # each orchestrator's own settings
    dynamic = {"unreached": "excluded"}  # on a cell whose devices can miss their models: a battery
    recorded = [f for f in declared() if "recorded" in f.metadata]
    assert sorted(f.name for f in recorded) == sorted({**given, **dynamic, **clocks[0], **clocks[1], **clocks[2]})
    config = prepare(resolve(RunSpec("digits-rotation", "fedavg", system="uma-3.5ghz", radio={"battery_j": 2.0}, rounds=1,
                                     training={"backend": "loop"}, **dynamic))).config
    assert {f.name: recorded_value(config, f) for f in recorded if f.name in dynamic} == dynamic
    for clock in clocks:
        config = prepare(resolve(RunSpec("digits-rotation", "fedavg", rounds=1, training={"backend": "loop"}, **clock))).config
        assert {f.name: recorded_value(config, f) for f in recorded if f.name in clock} == clock  # an asynchronous run's
    config = prepare(resolve(RunSpec("digits-rotation", "fedavg", rounds=1, training={"backend": "loop"}, **given))).config
    assert {f.name: recorded_value(config, f) for f in recorded if f.name in given} == given
    assert {f.name: recorded_value({}, f) for f in recorded} == {f.name: f.default for f in recorded}
