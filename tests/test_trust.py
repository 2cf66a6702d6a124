"""Results people can trust: no silent replacement, no reuse of damaged folders, divergence
marked and stopped, JSON without NaN, options reaching the algorithms that take them, worker
processes that die with their parent. Through the command line, as a user would."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from child_env import checkout_environment
from scenarios.cli.main import main

ROOT = Path(__file__).resolve().parents[1]


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, out_dir, *argv):
    code, out, err = cli(capsys, "run", "--out", out_dir, "--json", "--no-figure", *argv)
    assert code == 0, err
    return json.loads(out)["runs"]


def folders(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir() if p.is_dir())


@pytest.mark.parametrize("first,second", [
    (["--rounds", "2"], ["--rounds", "3"]),
    (["--rounds", "2", "--deadline", "200"], ["--rounds", "2", "--deadline", "150"]),
    (["--rounds", "2"], ["--rounds", "2", "--eval-every", "2"]),
    (["--rounds", "2"], ["--rounds", "2", "--participation", "0.5"]),
    (["--rounds", "2"], ["--rounds", "2", "--rho", "2.5"]),
    (["--rounds", "2"], ["--rounds", "2", "--lr", "0.02"]),
    (["--rounds", "2"], ["--rounds", "2", "--devices", "8", "--alpha", "0.5"]),
    (["--rounds", "2", "--algorithm", "fedprox"], ["--rounds", "2", "--algorithm", "fedprox", "--option", "mu=0.2"]),
])
def test_every_setting_gets_its_own_folder(capsys, tmp_path, first, second):
    argv = [] if "--algorithm" in first else ["--algorithm", "fedavg"]  # an option is given once
    a = run_json(capsys, tmp_path, *argv, *first)[0]
    b = run_json(capsys, tmp_path, *argv, *second)[0]
    assert a["result_dir"] != b["result_dir"]
    assert len(folders(tmp_path)) == 2  # the first run is still there, untouched
    again = run_json(capsys, tmp_path, *argv, *first)[0]
    assert again["result_dir"] == a["result_dir"] and again["final_mean_accuracy"] == a["final_mean_accuracy"]


def test_devices_and_alpha_can_be_set_for_a_training_run(capsys, tmp_path):
    run = run_json(capsys, tmp_path, "--algorithm", "fedavg", "--rounds", "1", "--devices", "8", "--alpha", "0.5",
                   "--participation", "0.5", "--t-min", "2", "--inv-mu", "0.5")[0]
    config = json.loads((Path(run["result_dir"]) / "config.json").read_text())
    assert config["num_devices"] == 8 and config["scenario"]["settings"] == {"devices": 8, "alpha": 0.5}
    assert config["participation"] == 0.5 and (config["system"]["t_min"], config["system"]["inv_mu"]) == (2.0, 0.5)
    rounds = (Path(run["result_dir"]) / "rounds.csv").read_text().splitlines()
    assert rounds[-1].split(",")[6] == "4"  # participants: half of the 8 devices


def test_figures_of_other_runs_do_not_replace_each_other(capsys, tmp_path):
    cli(capsys, "run", "--algorithm", "fedavg", "--rounds", "1", "--out", tmp_path)
    cli(capsys, "run", "--algorithm", "local", "--rounds", "1", "--out", tmp_path)
    figures = [p for p in tmp_path.iterdir() if p.suffix == ".png"]
    assert len(figures) == 2
    target = tmp_path / "mine.png"
    target.write_bytes(b"keep me")
    code, out, err = cli(capsys, "plot", *[tmp_path / f for f in folders(tmp_path)], "--out", target)
    assert code == 2 and "exists" in err and target.read_bytes() == b"keep me"
    code, _, _ = cli(capsys, "plot", *[tmp_path / f for f in folders(tmp_path)], "--out", target, "--force")
    assert code == 0 and target.read_bytes().startswith(b"\x89PNG")


def test_truncated_rounds_csv_is_not_reused_and_plot_refuses_it(capsys, tmp_path):
    run = run_json(capsys, tmp_path, "--algorithm", "fedavg", "--rounds", "3")[0]
    rounds_csv = Path(run["result_dir"]) / "rounds.csv"
    whole = rounds_csv.read_text()
    rounds_csv.write_text(whole[: len(whole) * 2 // 3])  # cut in the middle of a row
    code, out, err = cli(capsys, "plot", run["result_dir"], "--out", tmp_path / "f.png")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "rounds.csv" in err and not (tmp_path / "f.png").exists()
    again = run_json(capsys, tmp_path, "--algorithm", "fedavg", "--rounds", "3")[0]
    assert again["result_dir"] == run["result_dir"]
    assert rounds_csv.read_text() == whole  # run again, not reused


def test_truncated_run_does_not_change_the_compare_table(capsys, tmp_path):
    argv = ["compare", "--algorithm", "fedavg", "local", "--seeds", "2", "--rounds", "2", "--out", tmp_path, "--json", "--jobs", "1"]
    code, out, _ = cli(capsys, *argv)
    first = json.loads(out)
    table = Path(first["csv"]).read_text()
    victim = next(p for p in tmp_path.iterdir() if p.is_dir() and "_local_" in p.name)
    trace = victim / "trace.csv"
    trace.write_text("")  # a damaged file of a finished run
    code, out, _ = cli(capsys, *argv)
    assert code == 0 and Path(json.loads(out)["csv"]).read_text() == table
    assert trace.read_text() != ""


def test_divergence_stops_the_run_marks_it_and_exits_nonzero(capsys, tmp_path):
    code, out, err = cli(capsys, "run", "--algorithm", "fedprox", "--option", "mu=1e9", "--rounds", "5",
                         "--out", tmp_path, "--json", "--no-figure")
    assert code == 1 and "diverged at round 1" in err
    run = json.loads(out)["runs"][0]
    assert run["status"] == "diverged" and run["final_mean_accuracy"] is None
    summary = json.loads((Path(run["result_dir"]) / "summary.json").read_text())
    assert summary["diverged"]["round"] == 1 and "NaN" in summary["diverged"]["reason"]
    assert summary["rounds"] == 1  # stopped: no round after the one that diverged
    rows = (Path(run["result_dir"]) / "rounds.csv").read_text().splitlines()
    assert len(rows) == 3 and "nan" not in rows[-1].lower()


def test_divergence_does_not_stop_compare_and_is_in_its_tables(capsys, tmp_path):
    code, out, _ = cli(capsys, "compare", "--algorithm", "fedavg", "fedprox", "--option", "mu=1e9", "--seeds", "2",
                       "--rounds", "2", "--out", tmp_path, "--json", "--jobs", "1")
    assert code == 1  # done, but a run diverged: as run
    data = json.loads(out)
    rows = {r["label"]: r for r in data["rows"]}
    assert rows["fedprox"]["diverged"] == 2 and rows["fedprox"]["mean_accuracy"] == [None, None]
    assert rows["fedavg"]["diverged"] == 0 and rows["fedavg"]["mean_accuracy"][0] > 0
    per_run = Path(data["runs_csv"]).read_text().splitlines()
    assert len(per_run) == 5 and sum(",diverged,1," in line for line in per_run) == 2


def test_compare_csv_holds_plain_numbers(capsys, tmp_path):
    pandas = pytest.importorskip("pandas")
    code, out, _ = cli(capsys, "compare", "--algorithm", "fedavg", "local", "--seeds", "2", "--rounds", "1",
                       "--out", tmp_path, "--json", "--jobs", "1")
    data = json.loads(out)
    table = pandas.read_csv(data["csv"])
    assert table["mean_accuracy"].dtype.kind == "f" and table["reached"].dtype.kind == "i"
    runs = pandas.read_csv(data["runs_csv"])
    assert len(runs) == 4 and sorted(runs["seed"]) == [0, 0, 1, 1]
    assert runs.groupby("algorithm")["final_mean_accuracy"].mean()["fedavg"] == pytest.approx(table["mean_accuracy"][0])


def test_compare_takes_run_settings(capsys, tmp_path):
    code, out, err = cli(capsys, "compare", "--algorithm", "user-centric", "--streams", "auto", "--lambda", "0.05",
                         "--mode", "barrier", "--deadline", "500", "--seeds", "1", "--rounds", "1", "--out", tmp_path,
                         "--json", "--jobs", "1")
    assert code == 0, err
    data = json.loads(out)
    assert [r["label"] for r in data["rows"]] == ["user-centric k=auto mode=barrier deadline=500.0"]  # the label names the timing
    config = json.loads(next(p for p in tmp_path.iterdir() if p.is_dir()).joinpath("config.json").read_text())
    assert config["algorithm_options"]["lam"] == 0.05 and config["system"]["mode"] == "barrier"
    assert config["system"]["deadline"] == 500
    folder = next(p for p in tmp_path.iterdir() if p.is_dir())
    before = (folder / "summary.json").stat().st_ino
    code, _, _ = cli(capsys, "compare", "--algorithm", "user-centric", "--streams", "auto", "--lambda", "0.05",
                     "--mode", "barrier", "--deadline", "500", "--seeds", "1", "--rounds", "1", "--out", tmp_path,
                     "--json", "--jobs", "1", "--force")
    assert code == 0 and (folder / "summary.json").stat().st_ino != before  # run again, not reused


def test_json_never_holds_nan(capsys, tmp_path):
    code, out, _ = cli(capsys, "run", "--scenario", "synthetic-gaussian", "--algorithm", "fedavg", "--rounds", "1",
                       "--out", tmp_path, "--json", "--no-figure")
    assert code == 0 and "NaN" not in out
    run = json.loads(out)["runs"][0]
    assert run["final_mean_accuracy"] is None  # regression: no accuracy, and JSON says so with null
    for name in ("summary.json", "config.json"):
        assert "NaN" not in (Path(run["result_dir"]) / name).read_text()


@pytest.mark.parametrize("algorithm", ["ditto", "pfedme"])
def test_option_lam_reaches_every_algorithm_that_takes_it(capsys, tmp_path, algorithm):
    run = run_json(capsys, tmp_path, "--algorithm", algorithm, "--option", "lam=0.37", "--rounds", "1")[0]
    config = json.loads((Path(run["result_dir"]) / "config.json").read_text())
    assert config["algorithm_options"]["lam"] == 0.37


def test_compare_workers_die_with_their_parent(tmp_path):
    """SIGKILL the parent of a compare with two worker processes: every worker is gone soon after."""
    errors = tmp_path / "stderr"
    with open(errors, "w") as stderr:
        parent = subprocess.Popen(
            [sys.executable, "-m", "scenarios.cli.main", "compare", "--algorithm", "fedavg", "local", "oracle", "--seeds", "3",
             "--rounds", "40", "--jobs", "2", "--quiet", "--out", str(tmp_path / "out")],
            cwd=ROOT, env=checkout_environment(), stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        workers = wait_for_children(parent, 2, timeout_s=120)
        assert len(workers) >= 2, f"compare never started its workers: {errors.read_text()[-2000:]}"
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=30)
    left = wait_gone(workers, timeout_s=20)
    for pid in left:  # clean up before failing: these are this test's processes
        os.kill(pid, signal.SIGKILL)
    assert left == []


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def wait_for_children(parent: subprocess.Popen, count: int, timeout_s: float) -> list[int]:
    """``parent``'s children once it has ``count`` of them; fewer when it ended first (a command
    that failed at start-up) or ``timeout_s`` passed."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and parent.poll() is None:
        found = children(parent.pid)
        if len(found) >= count:
            time.sleep(1.0)  # let them take work
            return children(parent.pid)
        time.sleep(0.2)
    return children(parent.pid)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_gone(pids: list[int], timeout_s: float) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        left = [p for p in pids if alive(p)]
        if not left:
            return []
        time.sleep(0.2)
    return [p for p in pids if alive(p)]


# --- a sealed folder: summary.json is covered by checksums.json, every reader checks it -----
SMALL = ["--algorithm", "fedavg", "--rounds", "2", "--backend", "loop"]


@pytest.fixture(scope="module")
def sealed(tmp_path_factory):
    """A complete folder of ``SMALL`` and its true final accuracy."""
    from scenarios.execution.runner import RunSpec, run_experiment

    root = tmp_path_factory.mktemp("sealed")
    summary = run_experiment(RunSpec("digits-rotation", "fedavg", rounds=2, training={"backend": "loop"}), root)
    return Path(summary["result_dir"]), summary["final_mean_accuracy"]


def edited_copy(sealed, into: Path, text_edit=None, reseal: bool = False) -> Path:
    """A copy of the sealed folder under ``into`` whose summary.json says 0.99 (or ``text_edit``
    of its text); ``reseal``: its index recomputed, as a forger would."""
    import shutil

    from scenarios.records.result_folder import INDEX_FILE, SEALED_FILES, index_text

    folder = into / sealed[0].name
    shutil.copytree(sealed[0], folder)
    path = folder / "summary.json"
    text = path.read_text()
    edited = text_edit(text) if text_edit else text.replace(repr(sealed[1]), "0.99")
    assert edited != text
    path.write_text(edited)
    if reseal:
        (folder / INDEX_FILE).write_text(index_text({n: (folder / n).read_text() for n in SEALED_FILES}))
    return folder


def nan_accuracy(text: str) -> str:
    summary = json.loads(text)
    return text.replace(json.dumps(summary["final_mean_accuracy"]), "NaN")


def test_edited_summary_is_run_again_by_run(capsys, tmp_path, sealed):
    folder = edited_copy(sealed, tmp_path)
    code, out, err = cli(capsys, "run", *SMALL, "--out", tmp_path, "--json", "--no-figure")
    assert code == 0 and "summary.json does not match its checksum" in err
    assert json.loads(out)["runs"][0]["final_mean_accuracy"] == sealed[1]
    assert json.loads((folder / "summary.json").read_text())["final_mean_accuracy"] == sealed[1]


def test_edited_summary_is_run_again_by_sweep(capsys, tmp_path, sealed):
    edited_copy(sealed, tmp_path)
    sweep = tmp_path / "s.toml"
    sweep.write_text('[settings]\nrounds = 2\ntraining = { backend = "loop" }\n[[algorithm]]\nname = "fedavg"\n')
    code, out, err = cli(capsys, "sweep", sweep, "--out", tmp_path, "--json", "--jobs", "1")
    assert code == 0, err
    data = json.loads(out)
    assert (data["ran"], data["reused"]) == (1, 0)
    table = next(t for t in data["tables"] if t.endswith(".csv"))
    assert f",{sealed[1]!r}," in Path(table).read_text() and ",0.99," not in Path(table).read_text()


def test_nan_summary_with_a_forged_index_is_run_again_by_compare(capsys, tmp_path, sealed):
    edited_copy(sealed, tmp_path, nan_accuracy, reseal=True)
    code, out, err = cli(capsys, "compare", *SMALL, "--seeds", "1", "--out", tmp_path, "--json", "--jobs", "1")
    assert code == 0 and "holds NaN" in err
    assert json.loads(out)["rows"][0]["mean_accuracy"][0] == pytest.approx(sealed[1])


@pytest.mark.parametrize("edit,reseal,needle", [
    (None, False, "summary.json does not match its checksum in checksums.json"),
    (nan_accuracy, True, "its summary.json is unreadable (it holds NaN)"),
    (lambda text: text.replace('"status": "finished"', '"status": "finished", "files": {}'), False, "summary.json does not match"),
])
def test_edited_summary_is_refused_by_every_reader(capsys, tmp_path, sealed, edit, reseal, needle):
    from scenarios.api import UsageError, load

    folder = edited_copy(sealed, tmp_path, edit, reseal)
    for argv in (["plot", folder, "--out", tmp_path / "f.png"], ["penalty", folder],
                 ["plot", folder, "--systems", "wired", "--out", tmp_path / "g.png"]):  # never the working folder
        code, out, err = cli(capsys, *argv)
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and needle in err, err
    assert not (tmp_path / "f.png").exists() and not (tmp_path / "g.png").exists()
    with pytest.raises(UsageError, match="not a complete result folder") as error:
        load(folder)
    assert needle in str(error.value) and "\n" not in str(error.value)


def test_an_index_edited_without_its_seal_is_refused(capsys, tmp_path, sealed):
    folder = edited_copy(sealed, tmp_path)
    index = json.loads((folder / "checksums.json").read_text())
    from scenarios.records.result_folder import file_sha256

    index["files"]["summary.json"] = file_sha256(folder / "summary.json")  # the list updated, the seal not
    (folder / "checksums.json").write_text(json.dumps(index))
    code, _, err = cli(capsys, "plot", folder, "--out", tmp_path / "f.png")
    assert code == 2 and "its checksums.json is damaged (its seal does not match its list)" in err


def test_a_run_whose_clock_overflows_is_diverged_not_finished(tmp_path):
    """A network beyond the settings' bounds (built here past the checks): the uplink airtime of
    round 1 is infinite, so the run stops there, diverged, with finite files."""
    import dataclasses

    from netsim import NetworkSystem
    from scenarios.execution.runner import RunSpec, prepare, resolve, run_prepared

    @dataclasses.dataclass(frozen=True)
    class Unchecked(NetworkSystem):
        def __post_init__(self):  # past the declared bounds, on purpose
            pass

    prepared = prepare(resolve(RunSpec("digits-rotation", "fedavg", rounds=2, training={"backend": "loop"})))
    network = Unchecked(rho=1e307, t_min=0.0, inv_mu=0.0)
    run = dataclasses.replace(prepared.run, system=network)
    summary = run_prepared(dataclasses.replace(prepared, network=network, run=run), tmp_path)
    assert summary["status"] == "diverged" and summary["diverged"]["round"] == 1
    assert "simulated time is no longer a finite number" in summary["diverged"]["reason"]
    assert summary["rounds"] == 0 and summary["simulated_time"] == 0.0
    for name in ("rounds.csv", "trace.csv", "summary.json"):
        text = (Path(summary["result_dir"]) / name).read_text().lower()
        assert "inf" not in text and "nan" not in text


def test_network_bounds_keep_the_largest_run_exact_to_one_t_dl():
    """The bounds' derivation (netsim/transport/durations.py): what each setting adds to the end of the
    largest run stays below 2**53 T_dl, where an added T_dl is still counted."""
    from scenarios.definitions import settings as s

    assert 2 * s.MAX_RHO * s.MAX_DEVICES * s.MAX_ROUNDS < s.EXACT_TIME
    assert s.MAX_ROUNDS * 46 * s.MAX_COMPUTE_TIME < s.EXACT_TIME
    assert s.MAX_ROUNDS * s.MAX_DEADLINE < s.EXACT_TIME
    assert s.EXACT_TIME + 1.0 == s.EXACT_TIME  # past it, one T_dl is lost: the reason for the bound
    assert s.NETWORK_SETTINGS["rho"].top == s.MAX_RHO and s.NETWORK_SETTINGS["deadline"].top == s.MAX_DEADLINE


def test_run_folders_are_readable_as_the_umask_says(sealed):
    from scenarios.records.atomic import current_umask

    mask = current_umask()
    assert sealed[0].stat().st_mode & 0o777 == 0o777 & ~mask
    assert {p.stat().st_mode & 0o777 for p in sealed[0].iterdir()} == {0o666 & ~mask}


@pytest.mark.parametrize("mask,folder_mode,file_mode", [(0o022, 0o755, 0o644), (0o077, 0o700, 0o600), (0o002, 0o775, 0o664)])
def test_every_writer_follows_the_umask(tmp_path, mask, folder_mode, file_mode):
    """The staged result folder and the atomic files (tables, reports) alike."""
    from scenarios.records.atomic import atomic_write_text, current_umask, staged_folder

    old = os.umask(mask)
    try:
        assert current_umask() == mask
        with staged_folder(tmp_path / "run") as staging:
            (staging / "rounds.csv").write_text("round\n")
        atomic_write_text(tmp_path / "table.csv", "a,b\n")
    finally:
        os.umask(old)
    assert (tmp_path / "run").stat().st_mode & 0o777 == folder_mode
    assert (tmp_path / "run" / "rounds.csv").stat().st_mode & 0o777 == file_mode
    assert (tmp_path / "table.csv").stat().st_mode & 0o777 == file_mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "table.csv"]  # atomic: nothing else left


def test_the_api_refuses_an_empty_out_like_the_command_line(tmp_path, monkeypatch):
    from scenarios.api import RunSpec, UsageError, run

    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="out must name a folder or file, got ''"):
        run(RunSpec("digits-rotation", "fedavg", rounds=1), out="")
    assert os.listdir(tmp_path) == []
