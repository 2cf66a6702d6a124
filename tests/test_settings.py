"""Typed settings: one spec per algorithm that matches what it declares, typed values, ranges,
no non-finite numbers, one line naming the key and the allowed range."""

import math

import pytest

from learning.algorithms import ALGORITHMS
from scenarios.errors import UsageError
from scenarios.definitions.registry import SCENARIOS
from scenarios.definitions.settings import RUN_SETTINGS, Setting


def test_every_algorithm_option_is_typed_and_documented():
    for name, cls in ALGORITHMS.items():
        options = cls.Options
        assert set(options.settings()) == set(options.defaults()) == set(options.docs()), name
        assert all(options.docs().values()), name
        assert options.resolve(options.defaults(), owner=name).as_dict() == options.defaults()  # the defaults are allowed


def test_scenario_defaults_are_allowed():
    for scenario in SCENARIOS.values():
        for algorithm, options in scenario.algorithm_options.items():
            ALGORITHMS[algorithm].Options.resolve({}, options, owner=algorithm)


@pytest.mark.parametrize("setting,value,message", [
    (Setting(int, low=1), 2.7, "x must be an integer in 1..10000, got 2.7"),
    (Setting(int, low=1), True, "x must be an integer in 1..10000, got True"),
    (Setting(int, low=1, high=5), 6, "x must be an integer in 1..5, got 6"),
    (Setting(float, low=0), math.nan, "x must be a finite number >= 0, got nan"),
    (Setting(float, low=0), math.inf, "x must be a finite number >= 0, got inf"),
    (Setting(float, low=0, high=1, low_open=True), 0.0, "x must be a finite number in (0, 1], got 0.0"),
    (Setting(float, low=0, low_open=True), "fast", "x must be a finite number > 0, got 'fast'"),
    (Setting(str, choices=("a", "b")), "c", "x must be one of a, b, got 'c'"),
    (Setting(int, low=1, choices=("auto",)), "many", "x must be an integer in 1..10000 or 'auto', got 'many'"),
    (Setting(bool), 1, "x must be true or false, got 1"),
    (Setting(float), None, "x must be a finite number, got none"),
])
def test_refusals_name_the_key_and_the_range(setting, value, message):
    with pytest.raises(UsageError) as error:
        setting.check("x", value)
    assert str(error.value) == message


def test_values_are_converted_to_their_kind():
    assert Setting(float, low=0).check("x", 2) == 2.0 and isinstance(Setting(float).check("x", 2), float)
    assert Setting(int, low=1, choices=("auto",)).check("x", "auto") == "auto"
    assert Setting(int, none=True).check("x", None) is None
    assert RUN_SETTINGS["seed"].check("seed", 2**40) == 2**40


def test_unknown_option_names_the_known_ones():
    with pytest.raises(UsageError, match="fedprox has no option 'nu'; its options: mu"):
        ALGORITHMS["fedprox"].Options.resolve({"nu": 1.0}, owner="fedprox")


# --- a setting without effect is refused; lists name each value once; numbers are read strictly (issue 57, item 5) ---
RUN = ["run", "--algorithm", "fedavg", "--rounds", "1", "--out", "out"]
CELL = RUN + ["--system", "umi-3.5ghz"]
SWEEPS = {  # a sweep file's text: what it sets twice or names twice
    "mode_in_settings_and_system_in_grid": '[settings]\nmode = "pipelined"\n[grid]\nsystem = ["wired:mode=barrier"]\n'
                                           '[[algorithm]]\nname = "fedavg"\n',
    "system_in_settings_and_mode_in_grid": '[settings]\nsystem = "wired:mode=barrier"\n[grid]\nmode = ["pipelined"]\n'
                                           '[[algorithm]]\nname = "fedavg"\n',
    "seeds_twice": 'seeds = [0, 0]\n[[algorithm]]\nname = "fedavg"\n',
    "grid_value_twice": '[grid]\nrho = [1, 1.0]\n[[algorithm]]\nname = "fedavg"\n',
    "option_grid_value_twice": '[[algorithm]]\nname = "user-centric"\ngrid = { streams = [2, 2] }\n',
}
WITHOUT_EFFECT = [
    # an orchestrator's options under another orchestrator
    (RUN + ["--orchestrator", "fedbuff", "--participation", "0.5"],
     "--participation has an effect only with --orchestrator sync (this run has --orchestrator fedbuff)"),
    (RUN + ["--orchestrator", "fedasync", "--participation", "0.5"], "--participation has an effect only with --orchestrator sync"),
    (RUN + ["--orchestrator", "fedbuff", "--mixing-alpha", "0.3"],
     "--mixing-alpha has an effect only with --orchestrator fedasync (this run has --orchestrator fedbuff)"),
    (RUN + ["--orchestrator", "fedasync", "--server-lr", "2"], "--server-lr has an effect only with --orchestrator fedbuff"),
    (RUN + ["--orchestrator", "fedasync", "--buffer-k", "1"], "--buffer-k has an effect only with --orchestrator fedbuff"),
    (RUN + ["--orchestrator", "fedbuff", "--mode", "barrier"], "--mode has an effect only with --orchestrator sync"),
    (RUN + ["--orchestrator", "fedasync", "--system", "wired:mode=barrier"], "--mode has an effect only with --orchestrator sync"),
    (["compare", "--algorithm", "fedavg", "--seeds", "1", "--rounds", "1", "--out", "out", "--orchestrator", "fedbuff",
      "--mixing-alpha", "0.3"], "--mixing-alpha has an effect only with --orchestrator fedasync"),
    # radio parameters a static cell (or an isolated one, or no power control) never reads
    (CELL + ["--radio", "mean_on_s=5"], "radio mean_on_s has an effect only with mean_off_s above 0 (on/off availability)"),
    (CELL + ["--radio", "handover_margin_db=3"], "radio handover_margin_db has an effect only with speed_kmh above 0 (a moving cell)"),
    (CELL + ["--radio", "handover_filter_k=2"], "radio handover_filter_k has an effect only with speed_kmh above 0"),
    (CELL + ["--radio", "handover_ttt_s=0.16"], "radio handover_ttt_s has an effect only with speed_kmh above 0"),
    (CELL + ["--radio", "csi_delay_s=0.01"], "radio csi_delay_s has an effect only with speed_kmh above 0"),
    (CELL + ["--radio", "coverage=site"], "radio coverage has an effect only with speed_kmh above 0"),
    (CELL + ["--radio", "speed_kmh=30", "--radio", "csi_delay_s=0.5", "--scheduler", "age-based", "--participation", "0.5"],
     "radio csi_delay_s has an effect only with --scheduler a policy that reads the channel report"),  # rounds.csv and trace.csv identical at 0 and 0.5 s
    (CELL + ["--radio", "coverage=site", "--radio", "speed_kmh=3", "--radio", "interference=off"],
     "radio coverage has an effect only with interference on (the 19-site layout)"),
    (CELL + ["--radio", "ul_power_control=off", "--radio", "alpha=1"], "radio alpha has an effect only with ul_power_control='fractional'"),
    (RUN + ["--system", "umi-3.5ghz:coverage=site"], "radio coverage has an effect only with speed_kmh above 0"),
    (["cell", "umi-3.5ghz", "--radio", "handover_margin_db=3"], "radio handover_margin_db has an effect only with speed_kmh above 0"),
    (["lambda-study", "--systems", "umi-3.5ghz", "--rho", "2", "--out", "out"], "--rho re-times the normalized systems"),
    # a list option that names a value twice
    (["lambda-study", "--rho", "1", "1", "--out", "out"], "--rho names 1.0 twice; give each once"),
    (["lambda-study", "--mode", "barrier", "barrier", "--out", "out"], "--mode names barrier twice; give each once"),
    (["lambda-study", "--systems", "wired", "wired", "--out", "out"], "--systems names wired twice"),
    (["lambda-study", "--k", "1,1", "--out", "out"], "--k names 1 twice; give each once"),
    (["run", "--algorithm", "fedavg", "fedavg", "--rounds", "1", "--out", "out"], "--algorithm names fedavg twice"),
    (["compare", "--algorithm", "fedavg", "fedprox", "fedavg", "--out", "out"], "--algorithm names fedavg twice"),
    (["streams", "--lambda", "0.5", "0.5", "--out", "out"], "--lambda names 0.5 twice"),
    (["plot", "x", "--x", "time", "time"], "--x names time twice"),
    (["retime", "x", "--systems", "wired", "wired"], "--systems names wired twice"),
    (["sweep", "{mode_in_settings_and_system_in_grid}", "--out", "out"], "mode is set twice, in system 'wired:mode=barrier' and as mode = 'pipelined'"),
    (["sweep", "{system_in_settings_and_mode_in_grid}", "--out", "out"], "mode is set twice, in system 'wired:mode=barrier'"),
    (RUN + ["--mode", "pipelined", "--system", "wired:mode=barrier"], "system 'wired:mode=barrier': mode is given twice (also --mode)"),
    (["sweep", "{seeds_twice}", "--out", "out"], "seeds names 0 twice; give each once"),
    (["sweep", "{grid_value_twice}", "--out", "out"], "[grid]: rho names 1.0 twice; give each once"),
    (["sweep", "{option_grid_value_twice}", "--out", "out"], "grid: streams names 2 twice; give each once"),
    # numbers written as the docs write them, nothing looser
    (RUN + ["--orchestrator", "fedbuff", "--buffer-k", " 2"], "argument --buffer-k: invalid int value: ' 2'"),
    (RUN + ["--rounds", "1_0"], "invalid int value: '1_0'"),
    (RUN + ["--eval-every", "\u0663"], "invalid int value: '\u0663'"),  # an Arabic-Indic 3
    (RUN + ["--participation", "0.5 "], "invalid float value: '0.5 '"),
    (["run", "--algorithm", "fedprox", "--rounds", "1", "--out", "out", "--option", "mu= 1"], "option mu must be a finite number >= 0, got ' 1'"),
    (CELL + ["--radio", "cpu_hz= 1e9"], "radio cpu_hz must be a finite number in [1000, 1000000000000], got ' 1e9'"),
    (RUN + ["--system", "wired:rho= 2"], "rho must be a finite number"),
    (RUN + ["--uplink-codec", "qsgd:bits= 4"], "codec qsgd parameter bits must be an integer"),
    (["compare", "--seeds", "2 ", "--out", "out"], "argument --seeds: invalid int value: '2 '"),
]


@pytest.mark.parametrize("argv,needle", WITHOUT_EFFECT, ids=[" ".join(a[-3:]) for a, _ in WITHOUT_EFFECT])
def test_a_setting_without_effect_a_list_naming_a_value_twice_or_a_loose_number_is_one_line(capsys, tmp_path, monkeypatch, argv, needle):
    """Refused before anything runs: one line, exit 2, nothing written."""
    from scenarios.cli.main import main

    files = tmp_path / "files"
    files.mkdir()
    for name, text in SWEEPS.items():
        (files / f"{name}.toml").write_text(text)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    code = main([a.format(**{name: str(files / f"{name}.toml") for name in SWEEPS}) for a in argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert needle in err, err
    assert list(work.iterdir()) == []


def test_the_api_refuses_a_setting_without_effect_before_anything_is_written(tmp_path):
    from scenarios import api

    for spec in (api.RunSpec("digits-rotation", "fedavg", orchestrator="fedbuff", mixing_alpha=0.3),
                 api.RunSpec("digits-rotation", "fedavg", system="umi-3.5ghz", radio={"handover_margin_db": 3.0})):
        with pytest.raises(api.UsageError, match="has an effect only with"):
            api.run(spec, out=tmp_path / "out")
        with pytest.raises(api.UsageError, match="has an effect only with"):
            api.compare({"a": [spec]}, out=tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_what_a_setting_applies_to_is_declared_with_it():
    """Each orchestrator's options declare the orchestrators that read them (``requires``), and a
    setting at its default is never refused (only one set is)."""
    import dataclasses

    from contract.setting import holds
    from scenarios.definitions.settings import ORCHESTRATORS, RunSpec, check_effect, declared

    readers = {f.name: [o for o in ORCHESTRATORS if holds(f.metadata["requires"]["orchestrator"], o)]
               for f in declared() if "orchestrator" in f.metadata["requires"]}
    assert readers == {"mode": ["sync"], "deadline": ["sync"], "participation": ["sync"], "scheduler": ["sync"],
                       "buffer_k": ["fedbuff"], "concurrency": ["fedbuff", "fedasync"], "server_lr": ["fedbuff"],
                       "idle_choice": ["fedbuff", "fedasync"], "max_staleness": ["fedbuff", "fedasync"], "tiers": ["fedat"],
                       "staleness_exponent": ["fedbuff", "fedasync"], "mixing_alpha": ["fedasync"]}
    defaults = {f.name: f.default for f in dataclasses.fields(RunSpec) if f.default is not dataclasses.MISSING}
    for orchestrator in ORCHESTRATORS:
        check_effect({**defaults, "orchestrator": orchestrator})  # every setting at its default: nothing refused


@pytest.mark.parametrize("text,kind,value", [("2", int, 2), ("-3", int, -3), ("+4", int, 4), ("1e7", float, 1e7), (".5", float, 0.5),
                                             ("2.", float, 2.0), ("-1.5E-3", float, -1.5e-3), ("7", float, 7.0)])
def test_numbers_the_docs_write_are_read(text, kind, value):
    from contract.setting import parse_number

    assert parse_number(text, kind) == value and type(parse_number(text, kind)) is kind


@pytest.mark.parametrize("text,kind", [(" 2", int), ("2 ", int), ("1_000", int), ("\u0663", int), ("2.0", int), ("1e3", int),
                                       ("", int), (" 1e7", float), ("1_0.5", float), ("0x10", float), ("1e", float), ("\t1", float)])
def test_looser_numbers_are_refused(text, kind):
    from contract.setting import parse_number

    with pytest.raises(ValueError):
        parse_number(text, kind)
