"""The orchestrators (issue 56): one recorder for every orchestrator (``netsim.clock.recorder``), each
orchestrator one object registered by name (``scenarios.definitions.orchestrators``), a plugin
kind whose records are checked as input is, and the proof that a new one is one file: the
tutorial's FedBuff with a period (``docs/examples/plugin/fedbuff_periodic.py``), hand-computed on
the clock and run by the command line from its own folder and from another."""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import simpy

from netsim import NetworkSystem
from netsim.clock.budget import Budget
from netsim.clock.buffered import Buffered, BufferedRun, NetworkOnly, drive
from netsim.clock.engine import RoundRecord, RunOptions
from netsim.clock.recorder import Recorder
from scenarios.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
PERIODIC = ROOT / "docs" / "examples" / "plugin" / "fedbuff_periodic.py"
PLUGIN_MODULES = ("fedbuff_periodic", "liar", "clashing_orchestrator", "reads_nonsense", "orchestrator_class")
SYSTEM = NetworkSystem(rho=1.0, t_min=1.0, inv_mu=0.0)  # a stream, a compute and an upload: one T_dl each


@pytest.fixture(autouse=True)
def registries(plugin_registries):
    yield
    for name in PLUGIN_MODULES:
        sys.modules.pop(name, None)


def record(server_round: int, uplink_bits: float = 0.0) -> RoundRecord:
    return RoundRecord(server_round, 0.0, 0.0, 0.0, uplink_bits, 0, (), None)


class Counting:
    """A learner whose evaluation is the round it was asked for."""

    def evaluate(self, server_round: int) -> int:
        return server_round


def test_the_recorder_evaluates_round_0_every_nth_and_the_last_and_stops_at_the_budget():
    env = simpy.Environment()
    kept = []
    recorder = Recorder(env, last=7, evaluate_every=3, on_round=kept.append, budget=Budget({"uplink_bits": 10.0}))
    assert [recorder.evaluation(Counting(), r) for r in range(8)] == [0, None, None, 3, None, None, 6, 7]
    for server_round, bits in enumerate([0.0, 4.0, 5.0]):
        recorder.keep(record(server_round, bits))
        assert not recorder.stopped  # 9 bits of 10
    recorder.keep(record(3, 1.0))
    assert recorder.stopped and recorder.budget.stopped == "uplink_bits" and recorder.records == kept
    assert [r.server_round for r in kept] == [0, 1, 2, 3]


def periodic_module(monkeypatch, period: float | None = None):
    monkeypatch.syspath_prepend(str(PERIODIC.parent))
    import fedbuff_periodic

    if period is not None:
        monkeypatch.setattr(fedbuff_periodic, "PERIOD", period)
    return fedbuff_periodic


def versions(run_class, devices: int, k: int, aggregations: int) -> list[tuple]:
    """(version, start, end, (device, base version) of each update) of each aggregation."""
    run = run_class.start(NetworkOnly(devices, 1e6), SYSTEM, Buffered(k), aggregations, np.random.default_rng(0), RunOptions())
    records, _ = drive(run)
    return [(r.server_round, r.start, r.end, tuple((u.device, u.base_version) for u in r.updates)) for r in records[1:]]


def test_fedbuff_with_a_period_aggregates_at_the_kth_arrival_or_at_t_hand_computed(monkeypatch):
    """Two devices, K = 2. FedBuff: the stream 0..1, both compute 1..2, upload 2..3 and 3..4: a
    version every 4. With T = 3.5: at 3.5 the buffer holds device 0's update (3) alone: version 1.
    Device 0 gets it 3.5..4.5, computes to 5.5, uploads 5.5..6.5; device 1 (arrived at 4) gets it
    4.5..5.5 (the downlink busy until 4.5), computes to 6.5, uploads 6.5..7.5. At 6.5 the buffer
    holds device 1's version-0 update and device 0's: the K-th arrival, version 2, before T (7.0).
    Again 6.5 + 3 = 9.5 for version 3 (device 1's at 7.5, device 0's at 9.5, before 10.0)."""
    periodic = periodic_module(monkeypatch)
    assert periodic.PERIOD == 3.5
    assert versions(BufferedRun, 2, 2, 3) == [(1, 0.0, 4.0, ((0, 0), (1, 0))), (2, 4.0, 8.0, ((0, 1), (1, 1))),
                                             (3, 8.0, 12.0, ((0, 2), (1, 2)))]
    assert versions(periodic.PeriodicRun, 2, 2, 3) == [(1, 0.0, 3.5, ((0, 0),)), (2, 3.5, 6.5, ((1, 0), (0, 1))),
                                                       (3, 6.5, 9.5, ((1, 1), (0, 2)))]


def test_a_period_no_wait_reaches_is_fedbuff_record_for_record(monkeypatch):
    periodic = periodic_module(monkeypatch, period=1e9)
    assert versions(periodic.PeriodicRun, 4, 3, 6) == versions(BufferedRun, 4, 3, 6)


def test_an_empty_buffer_at_t_is_looked_at_again_t_later(monkeypatch):
    """Three devices, K = 3, T = 1.75: the first upload ends at 3, so the buffer is empty at 1.75
    and looked at again at 3.5, where it holds device 0's update: version 1 (FedBuff: at 5)."""
    periodic = periodic_module(monkeypatch, period=1.75)
    assert versions(BufferedRun, 3, 3, 1) == [(1, 0.0, 5.0, ((0, 0), (1, 0), (2, 0)))]
    assert versions(periodic.PeriodicRun, 3, 3, 1) == [(1, 0.0, 3.5, ((0, 0),))]


def cli(capsys, argv) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


RUN = ["run", "--algorithm", "fedavg", "--system", "wired", "--rounds", "4", "--scenario", "digits-rotation", "--devices", "4",
       "--buffer-k", "4", "--backend", "loop", "--device", "cpu", "--no-figure", "--quiet", "--json"]


def test_the_periodic_plugin_runs_from_its_own_folder_and_elsewhere_and_is_recorded(capsys, tmp_path, monkeypatch):
    folder = tmp_path / "mine"
    folder.mkdir()
    shutil.copy(PERIODIC, folder / PERIODIC.name)
    out = tmp_path / "out"
    monkeypatch.chdir(folder)
    code, printed, err = cli(capsys, RUN + ["--plugin", PERIODIC.name, "--orchestrator", "fedbuff-periodic", "--out", str(out)])
    assert code == 0, err
    result = Path(json.loads(printed)["runs"][0]["result_dir"])
    config = json.loads((result / "config.json").read_text())
    assert config["plugins"]["orchestrator"]["name"] == "fedbuff-periodic"
    assert config["plugins"]["orchestrator"]["module"] == "fedbuff_periodic" and len(config["plugins"]["orchestrator"]["sha256"]) == 64
    assert config["clock"]["orchestrator"] == "fedbuff-periodic"
    summary = json.loads((result / "summary.json").read_text())
    assert summary["orchestrator"] == "fedbuff-periodic" and summary["rounds"] == 4
    with open(result / "rounds.csv") as rows:
        rows = [(float(r["time"]), float(r["duration"]), int(r["arrived"])) for r in csv.DictReader(rows)][1:]
    # the first upload ends at 3, the K-th (the 4th) would come at 6: at T = 3.5 one update makes
    # version 1, and every later version comes at most T after the one before
    assert rows[0] == (3.5, 3.5, 1) and all(duration <= 3.5 for _, duration, _ in rows)
    monkeypatch.chdir(tmp_path)  # from elsewhere: the same plugin, the same run (its folder reused)
    code, printed, err = cli(capsys, RUN + ["--plugin", str(Path("mine") / PERIODIC.name), "--orchestrator", "fedbuff-periodic",
                                            "--out", str(out)])
    assert code == 0, err
    again = json.loads(printed)["runs"][0]
    assert Path(again["result_dir"]) == result  # the same config: the plugin's digest, wherever it is run from


NOT_READ = [  # a setting the plugin orchestrator does not read, and the line that refuses it
    (["--mixing-alpha", "0.3"], "--mixing-alpha has an effect only with --orchestrator fedasync (this run has --orchestrator fedbuff-periodic)"),
    (["--tiers", "3"], "--tiers has an effect only with --orchestrator fedat (this run has --orchestrator fedbuff-periodic)"),
    (["--mode", "barrier"], "--mode has an effect only with --orchestrator sync (this run has --orchestrator fedbuff-periodic)"),
]


@pytest.mark.parametrize("given,message", NOT_READ)
def test_a_setting_the_plugin_orchestrator_does_not_read_is_refused_before_training(capsys, tmp_path, given, message):
    code, _, err = cli(capsys, RUN + ["--plugin", str(PERIODIC), "--orchestrator", "fedbuff-periodic", "--out", str(tmp_path / "out"),
                                      *given])
    assert code == 2 and err == f"fl-cosim: error: {message}\n" and not (tmp_path / "out").exists()


def test_the_settings_a_plugin_orchestrator_reads_name_it_where_they_are_refused(capsys, tmp_path):
    code, _, err = cli(capsys, ["run", "--plugin", str(PERIODIC), "--algorithm", "fedavg", "--buffer-k", "2", "--out", str(tmp_path)])
    assert code == 2 and err == ("fl-cosim: error: --buffer-k has an effect only with --orchestrator fedbuff or fedbuff-periodic "
                                 "(this run has --orchestrator sync)\n")


LIAR = '''
from dataclasses import replace

from scenarios.definitions.orchestrators import Synchronous


class Liar(Synchronous):
    name = "liar"

    def run(self, job):
        records, trace = super().run(job)
        return BREAK


ORCHESTRATORS = [Liar()]
'''
BROKEN = [  # what the liar hands back, and the line that names it
    ("records", "handed back list"),
    ("[replace(r, end=1.0 if r.server_round == 2 else r.end) for r in records], trace", "record 2: its span"),
    ("[replace(r, uplink_bits=float('nan')) for r in records], trace", "record 0: bits that are not finite numbers >= 0"),
    ("[replace(r, arrived=(0, 99)) for r in records], trace", "record 0: arrived devices (0, 99) not all in 0..3"),
    ("records[:1] + records[2:], trace", "record 2 where record 1 was due"),
    ("[], trace", "not a non-empty list of records"),
    ("[replace(r, energy_j={0: -1.0}) for r in records], trace", "record 0: energies {0: -1.0} not finite joules"),
    ("records, trace + [trace[0]._replace(end=float('inf'))]", "a trace event"),
]


@pytest.mark.parametrize("handed,needle", BROKEN, ids=[needle for _, needle in BROKEN])
def test_what_a_plugin_orchestrator_hands_back_is_checked_as_input(capsys, tmp_path, handed, needle):
    plugin = tmp_path / "liar.py"
    plugin.write_text(LIAR.replace("BREAK", handed))
    code, _, err = cli(capsys, ["run", "--plugin", str(plugin), "--orchestrator", "liar", "--algorithm", "fedavg", "--system", "wired",
                                "--rounds", "2", "--devices", "4", "--backend", "loop", "--quiet", "--no-figure", "--out", str(tmp_path / "out")])
    assert code == 2 and err.count("\n") == 1 and "orchestrator liar (plugin liar) handed back" in err and needle in err, err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


REGISTRATION = [  # a plugin orchestrator refused when it is registered
    ("clashing_orchestrator", "class Mine(FedBuff):\n    pass\n\n\nORCHESTRATORS = [Mine()]\n",
     "orchestrator 'fedbuff' is already registered (by a built-in one)"),
    ("reads_nonsense", "class Mine(FedBuff):\n    name = 'mine'\n    reads = frozenset({'until'})\n\n\nORCHESTRATORS = [Mine()]\n",
     "orchestrator 'mine' reads 'until', which no orchestrator can read"),
    ("orchestrator_class", "class Mine(FedBuff):\n    name = 'mine'\n\n\nORCHESTRATORS = [Mine]\n",
     "not a scenarios.definitions.orchestrators.Orchestrator object"),
    ("orchestrator_class", "class Mine(FedBuff):\n    name = 'Mine!'\n\n\nORCHESTRATORS = [Mine()]\n",
     "orchestrator name 'Mine!' must be lower-case letters"),
]


@pytest.mark.parametrize("module,text,needle", REGISTRATION)
def test_a_plugin_orchestrator_is_checked_as_the_other_kinds_are(capsys, tmp_path, module, text, needle):
    plugin = tmp_path / f"{module}.py"
    plugin.write_text("from scenarios.definitions.orchestrators import FedBuff\n\n\n" + text)
    code, _, err = cli(capsys, ["list", "--plugin", str(plugin)])
    assert code == 2 and err.count("\n") == 1 and needle in err, err


def test_the_registry_lists_every_orchestrator_and_the_runner_looks_them_up_by_name():
    """No orchestrator is chosen by its type or its name outside the registry."""
    from scenarios.definitions.orchestrators import ORCHESTRATORS

    assert list(ORCHESTRATORS) == ["sync", "fedbuff", "fedasync", "fedat"]
    for path in ("scenarios/execution/runner.py", "scenarios/definitions/clock.py", "scenarios/execution/build.py"):
        text = (ROOT / path).read_text()
        assert "isinstance(settings" not in text and '== "fedat"' not in text and "SYNC" not in text and "TIERED" not in text, path
