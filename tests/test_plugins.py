"""The tutorial is a test: the example plugin folder of ``docs/extending.md`` (an algorithm, a
scenario with its data builder and model, a network system, a scheduling policy, a codec) runs
through ``run``, ``compare`` and ``sweep`` (process workers and Ray), and a plugin installed as a
package is found through its entry point."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from child_env import checkout_environment
from learning.algorithms import ALGORITHMS
from scenarios import plugins
from scenarios.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "plugin"
PLUGIN_MODULES = ("tempered_fedavg", "mirrored_digits", "slow_half_uplink", "half_precision", "fl_cosim_example_entry",
                  "clash", "empty_plugin", "codec_clash", "not_a_codec", "modelless", "helped_plugin", "plugin_helper",
                  "chatty", "quitter", "badly_named", "zero_time_unit", "round_robin", "strongest_first", "renamed_plugin",
                  "fedbuff_periodic")
# on the CPU: runs compared file for file are the same run on one device (a GPU's reductions need not be)
SMALL = ["--scenario", "mirrored-digits", "--system", "slow-half-uplink", "--rounds", "2", "--quiet", "--device", "cpu"]


@pytest.fixture(autouse=True)
def registries(plugin_registries):
    """Each test loads its plugins afresh and leaves the registries as it found them
    (``plugin_registries``), the modules its plugins imported forgotten too."""
    yield
    for name in PLUGIN_MODULES:
        sys.modules.pop(name, None)


def folder_of(summary: dict) -> Path:
    return Path(summary["result_dir"])


def run_json(capsys, argv: list[str]) -> dict:
    assert main(argv + ["--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_run_records_the_plugins_and_power_one_is_fedavg(capsys, tmp_path):
    out = ["--out", str(tmp_path), "--no-figure"]
    runs = run_json(capsys, ["run", "--plugin", str(EXAMPLE), "--algorithm", "tempered-fedavg", "fedavg",
                             "--option", "power=1", *SMALL, *out])["runs"]
    tempered, fedavg = (folder_of(r) for r in runs)
    for name in ("rounds.csv", "trace.csv", "plans.jsonl"):  # n ** 1 = n: the same run as FedAvg's
        assert (tempered / name).read_bytes() == (fedavg / name).read_bytes()
    config = json.loads((tempered / "config.json").read_text())
    assert config["algorithm_options"] == {"power": 1.0}
    assert config["system"] == {"name": "slow-half-uplink", "mode": "pipelined", "deadline": None, "t_dl": 1.0, "rho": 2.0,
                                "t_min": 1.0, "inv_mu": 0.5}
    recorded = config["plugins"]
    assert {kind: entry["module"] for kind, entry in recorded.items()} == {
        "algorithm": "tempered_fedavg", "scenario": "mirrored_digits", "model": "mirrored_digits", "system": "slow_half_uplink"}
    assert recorded["scenario"]["version"] == "1.0" and recorded["algorithm"]["version"] is None
    import hashlib

    assert recorded["algorithm"]["sha256"] == hashlib.sha256((EXAMPLE / "tempered_fedavg.py").read_bytes()).hexdigest()
    halved = run_json(capsys, ["run", "--plugin", str(EXAMPLE), "--algorithm", "tempered-fedavg", "--option", "power=0.5",
                               *SMALL, *out])["runs"][0]
    assert (folder_of(halved) / "rounds.csv").read_bytes() != (tempered / "rounds.csv").read_bytes()


def test_a_scheduling_policy_from_a_plugin_file_chooses_each_round_s_participants(capsys, tmp_path):
    """round-robin: 6 devices at participation 0.5, three a round in turn; the plans say so."""
    argv = ["run", "--plugin", str(EXAMPLE / "round_robin.py"), "--scheduler", "round-robin", "--participation", "0.5",
            "--scenario", "digits-rotation", "--devices", "6", "--algorithm", "fedavg", "--rounds", "4", "--backend", "loop",
            "--quiet", "--no-figure", "--out", str(tmp_path)]
    run = run_json(capsys, argv)["runs"][0]
    plans = [json.loads(line)["plan"] for line in (folder_of(run) / "plans.jsonl").read_text().splitlines()]
    assert [plan["participants"] for plan in plans[1:]] == [[0, 1, 2], [3, 4, 5], [0, 1, 2], [3, 4, 5]]
    config = json.loads((folder_of(run) / "config.json").read_text())
    assert config["communication"] == {"scheduler": "round-robin"} and "sched=round-robin" in run["label"]
    assert config["plugins"]["scheduler"]["module"] == "round_robin"


def test_a_scheduling_policy_is_refused_where_the_network_lacks_what_it_needs(capsys, tmp_path):
    plugin = tmp_path / "strongest_first.py"
    plugin.write_text("from netsim.scheduling import BestChannel\n\n\nclass StrongestFirst(BestChannel):\n"
                      "    name = 'strongest-first'\n\n\nSCHEDULERS = [StrongestFirst]\n")
    argv = ["run", "--plugin", str(plugin), "--scheduler", "strongest-first", "--participation", "0.5", "--scenario",
            "digits-rotation", "--algorithm", "fedavg", "--rounds", "1", "--quiet", "--no-figure", "--out", str(tmp_path / "out")]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().endswith("scheduler strongest-first needs a cell's channel reports; choose a cell system")
    assert not (tmp_path / "out").exists()


def test_a_plugin_codec_codes_the_uplink_at_16_bits_a_coordinate(capsys, tmp_path):
    """The tutorial's codec: each upload of the 2,410-parameter perceptron (64 x 32 + 32 +
    32 x 10 + 10) is 16 x 2,410 = 38,560 bits instead of 32 x 2,410 = 77,120; the downlink's
    broadcast keeps its 77,120 bits; the run records the codec's spec and its plugin."""
    out = ["--out", str(tmp_path), "--no-figure"]
    plain, half = (folder_of(run_json(capsys, ["run", "--plugin", str(EXAMPLE), "--algorithm", "fedavg", *codec, *SMALL, *out])
                             ["runs"][0]) for codec in ([], ["--uplink-codec", "half"]))
    for folder, uplink_bits in ((plain, 77120.0), (half, 38560.0)):
        plans = [json.loads(line)["plan"] for line in (folder / "plans.jsonl").read_text().splitlines()][1:]
        assert [set(plan["uplink_bits"].values()) for plan in plans] == [{uplink_bits}] * 2
        assert [[stream["bits"] for stream in plan["streams"]] for plan in plans] == [[77120.0]] * 2
    config = json.loads((half / "config.json").read_text())
    assert config["communication"] == {"uplink_codec": "half:ef=0,format=float16"}
    assert config["plugins"]["uplink_codec"]["module"] == "half_precision" and "communication" not in json.loads(
        (plain / "config.json").read_text())
    assert main(["run", "--plugin", str(EXAMPLE), "--algorithm", "fedavg", "--uplink-codec", "half:format=fp8", *SMALL,
                 "--out", str(tmp_path / "refused")]) == 2
    error = capsys.readouterr().err
    assert error == "fl-cosim: error: uplink-codec: codec half parameter format must be one of float16, bfloat16, got 'fp8'\n"
    assert not (tmp_path / "refused").exists()


def test_plugin_things_are_listed_and_checked_like_built_ins(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # loading a plugin writes no bytecode beside it either
    listed = run_json(capsys, ["list", "--plugin", str(EXAMPLE)])
    assert "tempered-fedavg" in listed["algorithms"] and "mirrored-digits" in listed["scenarios"]
    assert "slow-half-uplink" in listed["systems"]
    assert listed["algorithm_option_ranges"]["tempered-fedavg"] == {"power": "a finite number >= 0"}
    assert listed["codecs"]["half"] == {"format": "float16", "ef": 0}
    assert listed["codecs"]["qsgd"] == {"bits": 4, "bucket": 512}
    base = ["run", "--plugin", str(EXAMPLE), "--algorithm", "tempered-fedavg", *SMALL, "--out", str(tmp_path)]
    for option, message in (("power=-1", "tempered-fedavg option power must be a finite number >= 0, got -1"),
                            ("power=nan", "tempered-fedavg option power must be a finite number >= 0, got nan"),
                            ("mu=1", "no algorithm of this run takes option 'mu'")):
        assert main(base + ["--option", option]) == 2
        error = capsys.readouterr().err
        assert message in error and error.count("\n") == 1
    clash = tmp_path / "clash.py"
    clash.write_text("from learning.algorithms.fedavg import FedAvg\n\nclass Again(FedAvg):\n    name = 'fedavg'\n\n"
                     "ALGORITHMS = [Again]\n")
    modelless = tmp_path / "modelless.py"
    modelless.write_text((EXAMPLE / "mirrored_digits.py").read_text().replace("MODELS = ", "_ = ")
                         .replace('"two-layer-perceptron",', '"three-layer-perceptron",').replace('"mirrored-digits"', '"modelless"'))
    empty = tmp_path / "empty_plugin.py"
    empty.write_text("X = 1\n")
    codec_clash = tmp_path / "codec_clash.py"
    codec_clash.write_text("from dataclasses import dataclass\nfrom typing import ClassVar\nfrom learning.codecs import QSGD\n\n"
                           "@dataclass(frozen=True)\nclass Again(QSGD):\n    name: ClassVar[str] = 'qsgd'\n\nCODECS = [Again]\n")
    not_a_codec = tmp_path / "not_a_codec.py"
    not_a_codec.write_text("CODECS = [int]\n")
    for plugin, message in ((tmp_path / "absent.py", "absent.py' is not a .py file, a folder of them or a module name"),
                            (clash, "plugin clash: algorithm 'fedavg' is already registered (by a built-in one)"),
                            (empty, "plugin empty_plugin declares nothing"),
                            (codec_clash, "plugin codec_clash: codec 'qsgd' is already registered (by a built-in one)"),
                            (not_a_codec, "CODECS holds <class 'int'>, not a learning.codecs.Codec dataclass with its own name"),
                            (modelless, "scenario 'modelless' names model 'three-layer-perceptron', which is neither built in nor"),
                            ("no_such_module_here", "plugin 'no_such_module_here' is neither a file, a folder nor")):
        assert main(["list", "--plugin", str(plugin)]) == 2
        error = capsys.readouterr().err
        assert message in error and error.count("\n") == 1
    assert "fedavg" in ALGORITHMS and ALGORITHMS["fedavg"].__module__ == "learning.algorithms.fedavg"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clash.py", "codec_clash.py", "empty_plugin.py", "modelless.py",
                                                          "not_a_codec.py"]  # nothing written


def test_a_plugin_file_runs_as_it_reads_now_not_as_python_cached_it(capsys, tmp_path):
    """A plugin file rewritten to text of the same length at the same modification time, beside
    the bytecode Python cached of its old text (as its own import would have left it), loads
    as it reads now (scenarios/plugin_source.py)."""
    import py_compile

    plugin = tmp_path / "renamed_plugin.py"
    text = "from learning.algorithms.fedavg import FedAvg\n\nclass Renamed(FedAvg):\n    name = '{}'\n\nALGORITHMS = [Renamed]\n"
    plugin.write_text(text.format("old-fedavg"))
    py_compile.compile(str(plugin), doraise=True)  # timestamp bytecode: valid while mtime and size match
    stamp = plugin.stat().st_mtime_ns
    plugin.write_text(text.format("new-fedavg"))
    os.utime(plugin, ns=(stamp, stamp))
    algorithms = run_json(capsys, ["list", "--plugin", str(plugin)])["algorithms"]
    assert "new-fedavg" in algorithms and "old-fedavg" not in algorithms


def test_compare_runs_the_plugin_on_the_batched_backend(capsys, tmp_path):
    data = run_json(capsys, ["compare", "--plugin", str(EXAMPLE), "--algorithm", "tempered-fedavg", "local", "--seeds", "2",
                             "--jobs", "1", "--backend", "batched", *SMALL, "--out", str(tmp_path)])
    assert [row["label"] for row in data["rows"]] == ["tempered-fedavg", "local"]
    assert all(row["seeds"] == 2 and row["diverged"] == 0 for row in data["rows"])
    configs = [json.loads(path.read_text()) for path in tmp_path.glob("*/config.json")]
    assert len(configs) == 4 and {c["training"]["backend"] for c in configs} == {"batched"}


def sweep_file(folder: Path) -> Path:
    path = folder / "sweep.toml"
    path.write_text(f"""plugins = ["{os.path.relpath(EXAMPLE, folder)}"]
seeds = [0, 1]
[settings]
scenario = "mirrored-digits"
system = "slow-half-uplink"
rounds = 1
[[algorithm]]
name = "tempered-fedavg"
grid = {{ power = [0.0, 1.0] }}
""")
    return path


def sweep_rows(printed: str) -> list[dict]:
    """The rows of the sweep's CSV table (named in its --json output), less the folder column."""
    table = next(Path(t) for t in json.loads(printed)["tables"] if t.endswith(".csv"))
    with open(table) as handle:
        return [{k: v for k, v in row.items() if k != "result_dir"} for row in csv.DictReader(handle)]


def test_sweep_loads_the_plugins_it_names_in_process_workers(capsys, tmp_path):
    config = sweep_file(tmp_path)
    assert main(["sweep", str(config), "--out", str(tmp_path / "out"), "--quiet", "--jobs", "2", "--json"]) == 0
    rows = sweep_rows(capsys.readouterr().out)
    assert [(row["seed"], row["option_power"]) for row in rows] == [("0", "0.0"), ("1", "0.0"), ("0", "1.0"), ("1", "1.0")]
    assert rows[0]["final_mean_accuracy"] != rows[2]["final_mean_accuracy"]  # the option acts


def test_a_fresh_worker_process_loads_the_plugins_it_is_given(tmp_path):
    """What a Ray task runs (``--ray``): a new interpreter, told the sweep's plugin sources,
    gives the run the parent gives (same folder, same files)."""
    from scenarios.execution.runner import RunSpec, run_experiment

    plugins.load_plugins([str(EXAMPLE)])
    spec = RunSpec("mirrored-digits", "tempered-fedavg", system="slow-half-uplink", rounds=1, options={"power": 0.0},
                   training={"device": "cpu"})  # compared file for file: one device
    here = Path(run_experiment(spec, tmp_path / "here")["result_dir"])
    code = ("import sys, torch; torch.set_num_threads(1); from scenarios.execution.runner import RunSpec; from scenarios.execution.sweep import _run_on_ray; "
            f"print(_run_on_ray(RunSpec(*sys.argv[1:4], rounds=1, options={{'power': 0.0}}, training={{'device': 'cpu'}}), sys.argv[4], None, "
            "[sys.argv[5]])['result_dir'])")
    argv = [spec.scenario, spec.algorithm, spec.system, str(tmp_path / "there"), str(EXAMPLE)]
    done = subprocess.run([sys.executable, "-c", code, *argv], cwd=tmp_path, capture_output=True, text=True,
                          env=checkout_environment(), check=True, timeout=300)
    there = Path(done.stdout.strip())
    assert there.name == here.name
    assert [name for name in ("config.json", "rounds.csv", "plans.jsonl")
            if (there / name).read_bytes() != (here / name).read_bytes()] == []


ENTRY_PLUGIN = '''
from dataclasses import dataclass

from learning.algorithms.fedavg import FedAvg
from learning.options import Options, option


@dataclass(frozen=True)
class HalfOptions(Options):
    scale: float = option(1.0, "a scale", low=0, low_open=True)


class Installed(FedAvg):
    name = "installed-fedavg"
    Options = HalfOptions


ALGORITHMS = [Installed]
'''


def test_an_installed_package_is_found_through_its_entry_point(capsys, tmp_path, monkeypatch):
    site = tmp_path / "site"
    (site / "fl_cosim_example_entry").mkdir(parents=True)
    (site / "fl_cosim_example_entry" / "__init__.py").write_text(ENTRY_PLUGIN)
    info = site / "fl_cosim_example_entry-0.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fl-cosim-example-entry\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text(f"[{plugins.ENTRY_POINT_GROUP}]\nexample = fl_cosim_example_entry\n")
    monkeypatch.syspath_prepend(str(site))
    plugins._installed_loaded = False
    listed = run_json(capsys, ["list"])
    assert "installed-fedavg" in listed["algorithms"]
    assert {"kind": "algorithm", "name": "installed-fedavg", "module": "fl_cosim_example_entry", "version": "0.3"}.items() \
        <= next(p for p in listed["plugins"] if p["name"] == "installed-fedavg").items()
    run = run_json(capsys, ["run", "--algorithm", "installed-fedavg", "--option", "scale=2", "--scenario", "digits-rotation",
                            "--rounds", "1", "--quiet", "--no-figure", "--out", str(tmp_path / "out")])["runs"][0]
    config = json.loads((folder_of(run) / "config.json").read_text())
    assert config["plugins"]["algorithm"]["version"] == "0.3" and config["algorithm_options"] == {"scale": 2.0}


def test_the_tutorial_shows_the_example_files_word_for_word():
    import re

    page = (ROOT / "docs" / "extending.md").read_text()
    shown = dict(re.findall(r"<!-- file: (\S+) -->\n```python\n(.*?)```\n", page, flags=re.S))
    files = sorted(p.name for p in EXAMPLE.glob("*.py"))
    assert sorted(Path(name).name for name in shown) == files
    for name, text in shown.items():
        assert (ROOT / "docs" / name).read_text() == text, name
    assert len((EXAMPLE / "tempered_fedavg.py").read_text().splitlines()) <= 30


HELPED = """
import plugin_helper
from learning.algorithms.local import Local


class HelpedLocal(Local):
    name = "helped-local"


ALGORITHMS = [HelpedLocal]
"""


def test_an_edited_plugin_helper_module_runs_again(capsys, tmp_path, monkeypatch):
    """Only the plugin file's own hash was recorded: the modules it imports are in the code digest now."""
    helper = tmp_path / "plugin_helper.py"
    helper.write_text("FACTOR = 1\n")
    plugin = tmp_path / "helped_plugin.py"
    plugin.write_text(HELPED)
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = ["run", "--plugin", str(plugin), "--algorithm", "helped-local", "--system", "wired", "--rounds", "1",
            "--no-figure", "--quiet", "--out", str(tmp_path / "out")]
    first = run_json(capsys, argv)["runs"][0]
    assert {helper, plugin} <= set(plugins.plugin_files())
    helper.write_text("FACTOR = 2\n")
    assert main(argv + ["--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith(f"fl-cosim: running {folder_of(first).name} again: its code differ (digest ")
    assert captured.err.count("\n") == 1


def test_a_printing_plugin_leaves_json_clean_and_an_exiting_one_is_one_line(capsys, tmp_path):
    chatty = tmp_path / "chatty.py"
    chatty.write_text("print('hello from a plugin')\n" + HELPED.replace("import plugin_helper", "").replace("helped-local", "chatty"))
    listed = run_json(capsys, ["list", "--plugin", str(chatty)])  # stdout is JSON only
    assert "chatty" in listed["algorithms"]
    quitter = tmp_path / "quitter.py"
    quitter.write_text("import sys\nsys.exit(0)\n")
    assert main(["list", "--json", "--plugin", str(quitter)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == f"fl-cosim: error: plugin {str(quitter)!r} called sys.exit(0) while loading\n"


@pytest.mark.parametrize("name", ["", "FedAvg", "fedavg ", "a/b", "-x", "x" * 65])
def test_plugin_names_are_validated(capsys, tmp_path, name):
    plugin = tmp_path / "badly_named.py"
    plugin.write_text(HELPED.replace("import plugin_helper", "").replace('"helped-local"', repr(name)))
    assert main(["list", "--plugin", str(plugin)]) == 2
    err = capsys.readouterr().err
    assert f"algorithm name {name!r} must be lower-case letters, digits and . _ + -" in err and err.count("\n") == 1


def test_a_system_without_a_time_unit_is_refused_before_it_runs(capsys, tmp_path):
    """A system whose t_dl is 0 once wrote a folder that plot and export then crashed on."""
    plugin = tmp_path / "zero_time_unit.py"
    plugin.write_text((EXAMPLE / "slow_half_uplink.py").read_text().replace("t_dl: float = 1.0", "t_dl: float = 0.0")
                      .replace('"slow-half-uplink"', '"zero-time-unit"'))
    assert main(["run", "--plugin", str(plugin), "--system", "zero-time-unit", "--algorithm", "fedavg", "--rounds", "1",
                 "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == ("fl-cosim: error: system 'zero-time-unit': t_dl (the time unit) must be a finite "
                                       "number > 0, got 0.0\n")
    assert not (tmp_path / "out").exists()


def plugin_folder(tmp_path: Path) -> Path:
    """A copy of the tutorial's plugin folder with a sub-folder, and files named ``_classes.py``
    and ``_ops.py`` beside the plugins that none of them imports (the relative ``__file__`` of
    ``torch.classes`` and ``torch.ops``, resolved against the working folder, once took them, or
    their absence, for the plugins' code)."""
    folder = tmp_path / "myplugins"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    for decoy in ("_classes.py", "_ops.py"):
        (folder / decoy).write_text("raise RuntimeError('not a plugin file')\n")
    (folder / "sub").mkdir()
    return folder


def example_code_files(folder: Path) -> list[str]:
    return [str(folder / path.name) for path in sorted(EXAMPLE.glob("*.py"))]


# one run takes a thing of every kind but the algorithm (codecs apply to FedAvg), the other the algorithm
EVERY_KIND = (["--algorithm", "fedavg", "--uplink-codec", "half", "--scheduler", "round-robin", "--participation", "0.5"],
              ["--algorithm", "tempered-fedavg"])


def test_plugins_of_every_kind_run_from_their_own_folder_a_sub_folder_and_elsewhere(capsys, tmp_path, monkeypatch):
    """Each run records the five plugin files as its code, wherever it is run from and however
    the plugins are named; run from elsewhere, the same run is the same folder (reused)."""
    folder = plugin_folder(tmp_path)
    common = ["--scenario", "mirrored-digits", "--system", "slow-half-uplink", "--rounds", "1", "--quiet", "--no-figure",
              "--device", "cpu", "--out", str(tmp_path / "out")]
    monkeypatch.chdir(folder)
    firsts = [folder_of(run_json(capsys, ["run", "--plugin", ".", *kind, *common])["runs"][0]) for kind in EVERY_KIND]
    uses = [set(json.loads((first / "config.json").read_text())["plugins"]) for first in firsts]
    assert uses == [{"scenario", "model", "system", "scheduler", "uplink_codec"}, {"algorithm", "scenario", "model", "system"}]
    sources = ((folder, "tempered_fedavg.py"), (folder, "./tempered_fedavg.py"), (folder / "sub", ".."),
               (folder / "sub", "../tempered_fedavg.py"), (tmp_path, "myplugins"), (tmp_path, str(folder)))
    for number, (where, source) in enumerate(sources):  # loaded once (by its path): each kind's run from every folder
        monkeypatch.chdir(where)
        run = run_json(capsys, ["run", "--plugin", source, *EVERY_KIND[number % 2], *common])["runs"][0]
        assert folder_of(run) == firsts[number % 2]
    for first in firsts:
        assert json.loads((first / "config.json").read_text())["provenance"]["code_files"] == example_code_files(folder)


def test_the_api_runs_plugins_from_a_sub_folder_of_theirs(tmp_path, monkeypatch):
    from scenarios.api import RunSpec, run

    folder = plugin_folder(tmp_path)
    monkeypatch.chdir(folder / "sub")
    plugins.load_plugins([".."])
    result = run(RunSpec("mirrored-digits", "tempered-fedavg", system="slow-half-uplink", rounds=1,
                         training={"device": "cpu"}), out=tmp_path / "out")
    assert result.config["provenance"]["code_files"] == example_code_files(folder)


def test_plugins_loaded_through_the_api_before_torch_are_their_files_alone(tmp_path):
    """A fresh interpreter in the plugins' folder: ``load_plugins`` imports torch (its
    ``torch.classes`` and ``torch.ops``, whose ``__file__`` is relative, among the first), and the
    code digest covers the plugin files alone, every one of them a file that exists."""
    folder = plugin_folder(tmp_path)
    code = ("import json, sys\nfrom scenarios import plugins\nassert 'torch' not in sys.modules\n"
            "plugins.load_plugins(['.'])\nassert 'torch.classes' in sys.modules\n"
            "print(json.dumps([[str(p) for p in files] for files in (plugins.plugin_files(), plugins.executed_files())]))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True,
                          env=checkout_environment(), timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [example_code_files(folder)] * 2


def test_a_plugin_module_past_the_size_limit_is_one_line_never_read(capsys, tmp_path, monkeypatch):
    """A plugin's modules are read as every file a user hands in: bounded (Python itself skips a
    FIFO or a device named ``helper.py``; a regular file larger than the limit is refused)."""
    from scenarios import plugin_source

    monkeypatch.setattr(plugin_source, "MAX_SOURCE_BYTES", 1000)
    helper = tmp_path / "plugin_helper.py"
    helper.write_text("# padding\n" * 200)
    plugin = tmp_path / "helped_plugin.py"
    plugin.write_text(HELPED)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["list", "--plugin", str(plugin)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == f"fl-cosim: error: {helper} is larger than 1,000 bytes\n"


def test_executed_files_resolves_each_module_s_file_as_path_resolve_does(tmp_path):
    """``executed_files`` resolves each module's folder once and then only a file that is a link:
    every module imported in this process, and modules reached through a linked folder, a linked
    file, a relative link, a dangling link and a folder, give ``Path(file).resolve()``'s path."""
    import types

    real = tmp_path / "real"
    (real / "pkg").mkdir(parents=True)
    (real / "pkg" / "a.py").write_text("")
    (real / "b.py").write_text("")
    (tmp_path / "linked").symlink_to(real)
    (real / "c.py").symlink_to("pkg/a.py")  # relative
    (real / "gone.py").symlink_to(tmp_path / "nowhere.py")
    (real / "dir.py").mkdir()
    files = [tmp_path / "linked" / "pkg" / "a.py", tmp_path / "linked" / "b.py", real / "c.py", real / "gone.py",
             real / "dir.py", tmp_path / "linked" / ".." / "real" / "b.py", "relative.py", 3]
    made = [types.SimpleNamespace(__file__=str(f) if isinstance(f, Path) else f) for f in files]
    resolve = plugins._module_paths()
    for module in [*sys.modules.values(), *made]:
        file = getattr(module, "__file__", None)
        expected = None  # the reference: an absolute .py path resolved by pathlib, where that is a file
        if isinstance(file, str) and file.endswith(".py") and os.path.isabs(file) and Path(file).resolve().is_file():
            expected = str(Path(file).resolve())
        assert resolve(module) == expected, file
        assert plugins.module_path(module) == (None if expected is None else Path(expected))
    assert [resolve(m) for m in made[:4]] == [str(real / "pkg" / "a.py"), str(real / "b.py"), str(real / "pkg" / "a.py"), None]
