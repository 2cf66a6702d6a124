"""``fl-cosim sweep``: expansion of the TOML file, one table row per run and seed with plain
numbers, resumption after SIGKILL to byte-identical tables with no orphan process, and the
same table on a local Ray instance."""

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from child_env import checkout_environment
from scenarios.records.result_folder import folder_problem
from scenarios.cli.main import main
from scenarios.errors import UsageError
from scenarios.execution.sweep import expand

ROOT = Path(__file__).resolve().parents[1]
TWELVE_RUNS = """
seeds = 3
[settings]
rounds = 3
[grid]
system = ["wired", "wireless-slow-ul"]
[[algorithm]]
name = "fedavg"
[[algorithm]]
name = "local"
"""


def test_grid_and_list_expand_in_file_order_without_duplicates():
    specs = expand({
        "seeds": [0, 7],
        "settings": {"rounds": 2, "training": {"lr": 0.05}},
        "grid": {"system": ["wired", "wireless-fast-ul"], "training": {"epochs": [1, 2]}},
        "algorithm": [{"name": "fedavg"}, {"name": "user-centric", "options": {"variance_batch_fraction": 0.5},
                                           "grid": {"streams": [2, "auto"]}}],
        "run": [{"algorithm": "fedprox", "options": {"mu": 0.5}, "system": "wired"},
                {"algorithm": "fedavg", "system": "wired", "rounds": 2, "training": {"lr": 0.05, "epochs": 1}}],
    })
    assert len(specs) == 2 * 2 * (1 + 2) * 2 + 2  # the second [[run]] repeats grid runs: kept once
    first = specs[0]
    assert (first.system, first.training, first.algorithm, first.seed, first.rounds) == ("wired", {"lr": 0.05, "epochs": 1}, "fedavg", 0, 2)
    assert [s.seed for s in specs[:2]] == [0, 7]
    assert specs[2].options == {"variance_batch_fraction": 0.5, "streams": 2}
    assert specs[-2].algorithm == "fedprox" and specs[-2].options == {"mu": 0.5}


@pytest.mark.parametrize("config,message", [
    ({}, "names no run"),
    ({"algorithm": [{"name": "fedavg"}], "sedes": 3}, "unknown key 'sedes'"),
    ({"algorithm": [{"name": "fedavg"}], "seeds": 0}, "seeds must be an integer in 1..10000"),
    ({"algorithm": [{"name": "fedavg"}], "seeds": [-1]}, "seeds must be an integer in 0.."),
    ({"algorithm": [{"name": "fedavg"}], "grid": {"rounds": 5}}, "rounds must be a non-empty list"),
    ({"algorithm": [{"name": "fedavg"}], "settings": {"rouns": 5}}, "unknown key 'rouns'"),
    ({"algorithm": [{"options": {}}]}, "needs name"),
    ({"run": [{"system": "wired"}]}, "needs algorithm"),
])
def test_malformed_sweeps_are_refused(config, message):
    with pytest.raises(UsageError, match=message):
        expand(config)


def test_sweep_table_has_a_row_per_run_and_seed_with_plain_numbers(capsys, tmp_path):
    pandas = pytest.importorskip("pandas")
    config = tmp_path / "study.toml"
    config.write_text(
        'seeds = 2\n[settings]\nrounds = 1\n[[algorithm]]\nname = "fedavg"\n'
        '[[algorithm]]\nname = "fedprox"\ngrid = { mu = [0.1, 1e9] }\n')
    out = tmp_path / "out"
    assert main(["sweep", str(config), "--out", str(out), "--json", "--jobs", "1"]) == 1  # done, two runs diverged
    data = json.loads(capsys.readouterr().out)
    assert (data["runs"], data["ran"], data["diverged"]) == (6, 6, 2)
    table = pandas.read_csv(data["tables"][0])
    assert len(table) == 6 and list(table["seed"]) == [0, 1] * 3
    assert table["final_mean_accuracy"].dtype.kind == "f" and table["option_mu"].dtype.kind == "f"
    diverged = table[table["status"] == "diverged"]
    assert list(diverged["option_mu"]) == [1e9, 1e9] and diverged["final_mean_accuracy"].isna().all()
    assert (diverged["diverged_round"] == 1).all()
    if data["tables"][1].endswith(".parquet"):
        assert pandas.read_parquet(data["tables"][1]).equals(table)
    # the summary: a row per grid point over its seeds (sample std), the diverged seeds in no mean
    summary = pandas.read_csv(next(t for t in data["tables"] if t.endswith("_summary.csv")))
    assert list(summary["label"]) == ["fedavg", "fedprox", "fedprox"] and list(summary["option_mu"].fillna(0)) == [0, 0.1, 1e9]
    finished = table[table["status"] == "finished"].groupby(table["option_mu"].fillna(0))["final_mean_accuracy"]
    assert list(summary["mean_accuracy"][:2]) == pytest.approx(list(finished.mean()))
    assert list(summary["mean_accuracy_std"][:2]) == pytest.approx(list(finished.std(ddof=1)))
    assert list(summary["diverged"]) == [0, 0, 2] and summary["mean_accuracy"].isna().tolist() == [False, False, True]
    assert (summary["reached"] + summary["censored"])[:2].tolist() == [2, 2]
    page = Path(next(t for t in data["tables"] if t.endswith("_summary.md"))).read_text()
    assert "| option_mu | algorithm |" in page and "sample std over seeds" in page
    assert main(["sweep", str(config), "--out", str(out), "--json"]) == 1
    again = json.loads(capsys.readouterr().out)
    # nothing trained again: the table is rebuilt from the same folders, so byte for byte on any machine
    assert again["ran"] == 0 and Path(again["tables"][0]).read_bytes() == Path(data["tables"][0]).read_bytes()


def sweep_command(config: Path, out: Path, *extra, quiet: bool = True) -> list[str]:
    return [sys.executable, "-m", "scenarios.cli.main", "sweep", str(config), "--out", str(out), "--jobs", "2", *extra] + (
        ["--quiet"] if quiet else [])


def environment() -> dict:
    return checkout_environment()


def processes_naming(text: str) -> list[int]:
    """Live processes whose command line holds ``text`` (a sweep and its forked workers)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(int(entry))
    return found


def wait_gone(text: str, timeout_s: float) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while (left := processes_naming(text)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def tables(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in out.iterdir() if p.suffix in (".csv", ".parquet")}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The twelve-run sweep, uninterrupted (in this process, one run after another: no pool of
    workers to start; the killed sweeps run on two, and a run's numbers do not depend on --jobs,
    test_worker_start.py): its folder, and how long its runs took (to spread the kills over a
    sweep's life)."""
    root = tmp_path_factory.mktemp("sweep")
    config = root / "twelve.toml"
    config.write_text(TWELVE_RUNS)
    start = time.monotonic()
    assert main(["sweep", str(config), "--out", str(root / "reference"), "--quiet", "--jobs", "1"]) == 0
    return config, root / "reference", time.monotonic() - start


def test_sigkilled_sweep_resumes_to_identical_tables_without_orphans(reference, tmp_path):
    config, reference_out, duration_s = reference
    expected = tables(reference_out)
    assert len(expected) >= 1 and len([p for p in reference_out.iterdir() if p.is_dir()]) == 12
    work = tmp_path / "work"
    moments = random.Random(2024)
    interrupted = 0
    for kill in range(5):
        # kill at a random moment of the run phase (after the checks: the sweep's first progress line)
        sweep = subprocess.Popen(sweep_command(config, work, quiet=False), cwd=ROOT, env=environment(),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        running, said = threading.Event(), []

        def watch(stream=sweep.stderr, running=running, said=said):
            for line in stream:
                said.append(line)
                if line.startswith("[sweep]"):
                    running.set()
            running.set()  # the sweep ended (or closed stderr): nothing more to wait for

        threading.Thread(target=watch, daemon=True).start()
        running.wait(timeout=300)
        assert any(line.startswith("[sweep]") for line in said), f"the sweep never started its runs: {''.join(said)[-2000:]}"
        time.sleep(moments.uniform(0.0, min(1.5, duration_s / 2)))  # a fast machine's runs end sooner: so do the kills
        os.kill(sweep.pid, signal.SIGKILL)
        sweep.wait(timeout=30)
        left = wait_gone(str(work), timeout_s=20)
        for pid in left:  # clean up before failing: these are this test's processes
            os.kill(pid, signal.SIGKILL)
        assert left == [], f"orphans after kill {kill}"
        complete = [p for p in work.iterdir() if p.is_dir() and not p.name.startswith(".") and folder_problem(p) is None]
        interrupted += len(complete) < 12
        copy = tmp_path / f"resumed-{kill}"
        if work.exists():
            shutil.copytree(work, copy)
        # the resume in this process, one run after another: a run's numbers do not depend on
        # --jobs (test_worker_start.py), and five resumes would each start a pool's workers
        assert main(["sweep", str(config), "--out", str(copy), "--quiet", "--jobs", "1"]) == 0
        assert tables(copy) == expected, f"resume after kill {kill}"
        assert sorted(p.name for p in copy.iterdir()) == sorted(p.name for p in reference_out.iterdir())
        shutil.rmtree(copy)
    assert interrupted >= 1  # at least one kill stopped the sweep in the middle of its runs


@pytest.fixture(scope="module")
def ray_cluster():
    """One local Ray instance for this file's Ray tests (each start is seconds, many more under
    load): two CPUs and one (fake) GPU; yields its address, for a sweep to join."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'fl-cosim[ray]')")
    path = checkout_environment()["PYTHONPATH"] + os.pathsep + str(ROOT / "tests")  # the workers import tests/ray_probe.py
    context = ray.init(num_cpus=2, num_gpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False,
                       runtime_env={"env_vars": {"PYTHONPATH": path}})
    try:
        yield context.address_info["gcs_address"]
    finally:
        ray.shutdown()


def test_sweep_on_a_ray_cluster_gives_the_same_table(reference, ray_cluster, tmp_path):
    config, reference_out, _ = reference
    out = tmp_path / "ray"
    subprocess.run(sweep_command(config, out, "--ray", ray_cluster), cwd=ROOT, env=environment(),
                   check=True, timeout=600, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert tables(out) == tables(reference_out)


def test_without_an_address_the_sweep_starts_a_local_instance_of_jobs_cpus(monkeypatch):
    """``--ray`` alone: Ray's own local start (what ``ray.init`` does with it is Ray's), with
    ``--jobs`` CPUs and this checkout on the workers' path; an address joins that cluster."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'fl-cosim[ray]')")
    from scenarios.execution.sweep import start_ray

    calls = []
    monkeypatch.setattr(ray, "init", lambda **kwargs: calls.append(kwargs))
    start_ray(None, 3)
    start_ray("local", 2)
    start_ray("auto", 2)
    assert [{k: v for k, v in c.items() if k in ("num_cpus", "address")} for c in calls] == [{"num_cpus": 3}, {"num_cpus": 2}, {"address": "auto"}]
    assert all(str(ROOT) in c["runtime_env"]["env_vars"]["PYTHONPATH"].split(os.pathsep) for c in calls)


def _planned(device: str):
    from scenarios.execution.runner import RunSpec
    from scenarios.execution.sweep import PlannedRun

    return PlannedRun(RunSpec("digits-rotation", "fedavg"), "name", {"training": {"device": device}})


def test_a_run_on_cuda_asks_ray_for_a_gpu_share():
    from scenarios.execution.sweep import ray_resources

    assert ray_resources(_planned("cpu"), 0.25) == {"num_cpus": 1, "num_gpus": 0}
    assert ray_resources(_planned("cuda"), 0.25) == {"num_cpus": 1, "num_gpus": 0.25}
    assert ray_resources(_planned("cuda:1")) == {"num_cpus": 1, "num_gpus": 1.0}


def test_ray_places_cuda_runs_on_a_declared_gpu(ray_cluster):
    """On a Ray instance that declares one (fake) GPU: a CUDA run's task is given half of it,
    a CPU run's none, and two CUDA tasks at half a GPU each fit at once."""
    import ray
    from ray_probe import assigned_resources

    from scenarios.execution.sweep import ray_resources

    task = ray.remote(max_retries=0)(assigned_resources)
    cuda = [task.options(**ray_resources(_planned("cuda"), 0.5)).remote() for _ in range(2)]
    cpu = task.options(**ray_resources(_planned("cpu"), 0.5)).remote()
    assert ray.get(cuda, timeout=120) == [{"CPU": 1.0, "GPU": 0.5}] * 2
    assert ray.get(cpu, timeout=120) == {"CPU": 1.0}


def test_gpu_share_needs_ray_and_a_fraction(tmp_path, capsys):
    config = tmp_path / "s.toml"
    config.write_text(TWELVE_RUNS)
    assert main(["sweep", str(config), "--out", str(tmp_path / "out"), "--gpu-share", "0.5"]) == 2
    assert "--gpu-share needs --ray" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_tied_keys_go_together_and_the_command_lines_words_are_taken():
    specs = expand({
        "settings": {"rounds": 1, "system": "umi-3.5ghz", "deadline": "none"},
        "grid": {"radio": {"downlink_bandwidth_hz": [10e6, 20e6], "uplink_bandwidth_hz": [10e6, 20e6]},
                 "tie": [["radio.downlink_bandwidth_hz", "radio.uplink_bandwidth_hz"]], "mode": ["barrier", "pipelined"]},
        "algorithm": [{"name": "user-centric", "grid": {"streams": ["m", 2]}}],
    })
    assert [(s.radio["downlink_bandwidth_hz"], s.radio["uplink_bandwidth_hz"], s.mode, s.options["streams"]) for s in specs] == [
        (bw, bw, mode, k) for bw in (10e6, 20e6) for mode in ("barrier", "pipelined") for k in ("m", 2)]  # tied, not crossed


@pytest.mark.parametrize("grid,message", [
    ({"rounds": [1, 2], "devices": [4], "tie": [["rounds", "devices"]]}, r"tied keys need lists of one length, got rounds \(2\), devices \(1\)"),
    ({"rounds": [1], "tie": [["rounds", "seeds"]]}, "tie names 'seeds', which is not a key of the grid"),
    ({"rounds": [1], "devices": [4], "tie": ["rounds"]}, "tie must be a list of lists of two or more grid keys"),
    ({"rounds": [1], "devices": [4], "alpha": [1.0], "tie": [["rounds", "devices"], ["devices", "alpha"]]}, "'devices' is in two tie lists"),
])
def test_malformed_ties_are_refused(grid, message):
    with pytest.raises(UsageError, match=message):
        expand({"grid": grid, "algorithm": [{"name": "fedavg"}]})


def test_a_refused_run_names_its_grid_point():
    from scenarios.execution.sweep import expand_points, plan

    config = {"settings": {"rounds": 1, "system": "umi-3.5ghz"},
              "grid": {"radio": {"downlink_bandwidth_hz": [20e6], "uplink_bandwidth_hz": [20e6, 10e6]}},
              "algorithm": [{"name": "fedavg"}]}
    specs, points = zip(*expand_points(config, "tdd.toml"))
    with pytest.raises(UsageError) as refused:
        plan(specs, os.environ.get("FL_COSIM_DATA"), points=points)
    assert str(refused.value).startswith("tdd.toml: [grid] radio.downlink_bandwidth_hz=20000000.0, "
                                         "radio.uplink_bandwidth_hz=10000000.0; [[algorithm]] #1; seed 0: ")
    assert "TDD shares one carrier" in str(refused.value)


def test_summary_columns_that_never_vary_are_left_out_whatever_they_hold():
    from scenarios.execution.sweep import constant_columns

    header = ["scenario", "label", "mean_accuracy", "uplink_outage_drops", "energy_uplink_j", "option_mu", "option_lam"]  # any column
    rows = [["digits", "fedprox", 0.5, 0, 1.0, 0.1, ""], ["digits", "fedprox", 0.6, 0, 2.0, 1.0, ""], ["digits", "fedavg", 0.4, 0, 3.0, "", ""]]
    assert constant_columns(header, rows) == ([1, 2, 4, 5], {"scenario": "digits", "uplink_outage_drops": "0", "option_lam": "-"})
    assert constant_columns(header, rows[:1]) == (list(range(7)), {})  # one row: nothing to compare, all kept
    # an option that one algorithm has, at one value: the same wherever it is set
    assert constant_columns(["label", "option_mu"], [["fedprox", 0.5], ["fedavg", ""]]) == ([0], {"option_mu": "0.5"})


@pytest.mark.parametrize("value,expected", [
    (0.8, (0.8, 0.9)), ("0.8", (0.8, 0.9)), ("0.95*best", (None, 0.95)), (" 0.5 * best", (None, 0.5)),
])
def test_a_target_is_a_number_or_a_fraction_of_each_groups_best(value, expected):
    from scenarios.execution.sweep import parse_target

    found = parse_target(value, "target")
    assert (found.target, found.fraction) == expected


@pytest.mark.parametrize("summary,message", [
    ({"target": "best"}, "target must be a mean accuracy in"),
    ({"target": "1.5*best"}, r"fraction of the best must be a finite number in \(0, 1\]"),
    ({"target": 0}, r"target must be a finite number in \(0, 1\]"),
    ({"group": "devices"}, "group must be a list of settings columns"),
    ({"targett": 0.5}, "unknown key 'targett'"),
    ({"budget": "seconds=5"}, r"sweep \[summary\] budget must be AXIS=B1,B2,... with AXIS one of time"),
    ({"budget": 5}, r"sweep \[summary\] budget must be AXIS=B1,B2"),
])
def test_malformed_summaries_are_refused(summary, message):
    with pytest.raises(UsageError, match=message):
        expand({"summary": summary, "algorithm": [{"name": "fedavg"}]})


TDD_SWEEP = """
seeds = 2
[settings]
scenario = "digits-rotation"
system = "umi-3.5ghz"
rounds = 1
devices = 8
[grid]
radio = { downlink_bandwidth_hz = [10e6, 20e6], uplink_bandwidth_hz = [10e6, 20e6] }
tie = [["radio.downlink_bandwidth_hz", "radio.uplink_bandwidth_hz"]]
[summary]
target = "0.9*best"
group = ["algorithm"]
[[algorithm]]
name = "user-centric"
options = { streams = "m" }
[[algorithm]]
name = "fedavg"
"""


def test_a_tied_tdd_bandwidth_sweep_with_streams_m_summarizes_what_varies(tmp_path, capsys):
    pandas = pytest.importorskip("pandas")
    config = tmp_path / "tdd.toml"
    config.write_text(TDD_SWEEP)
    assert main(["sweep", str(config), "--out", str(tmp_path / "out"), "--json", "--jobs", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["runs"] == 2 * 2 * 2
    runs = pandas.read_csv(data["tables"][0])
    assert (runs["radio_downlink_bandwidth_hz"] == runs["radio_uplink_bandwidth_hz"]).all()
    assert set(runs["label"]) == {"user-centric k=m", "fedavg"}
    summary = pandas.read_csv(next(t for t in data["tables"] if t.endswith("_summary.csv")))
    assert len(summary) == 4
    for column in summary.columns:  # only what varies: no scenario, system, rounds, option or never-set column
        assert summary[column].nunique() > 1, column
    assert "radio_downlink_bandwidth_hz" in summary and "scenario" not in summary
    assert {"round_duration_mean", "round_duration_median"} <= set(summary.columns)  # the bandwidth sets the rounds' length
    assert {"round_duration_mean", "round_duration_median", "dropped_battery", "dropped_unavailable", "dropped_stale"} <= set(runs.columns)
    for _, group in summary.groupby("label"):  # each algorithm's target: 90% of its own best grid point
        assert group["target"].nunique() == 1
        assert group["target"].iloc[0] == pytest.approx(round(0.9 * group["mean_accuracy"].max(), 4))
    page = Path(next(t for t in data["tables"] if t.endswith("_summary.md"))).read_text()
    assert "Same in every row where set (left out of the table): scenario = digits-rotation; system = umi-3.5ghz" in page
    assert not any(column.startswith("option_") for column in summary)  # user-centric's, one value each


BUDGET_SWEEP = """
[settings]
system = "wired"
devices = 4
[grid]
rounds = [1, 2]
[summary]
budget = "time=100"
[[algorithm]]
name = "fedavg"
"""


def test_the_summary_reports_the_accuracy_within_a_budget_censored_where_a_run_ended_first(tmp_path, capsys):
    pandas = pytest.importorskip("pandas")
    from scenarios.records.result_folder import read_run
    from scenarios.reports.budgets import within

    config = tmp_path / "budget.toml"
    config.write_text(BUDGET_SWEEP)
    # --budget replaces the file's: at 7 T_dl the 1-round run (a round of wired: 6 T_dl) has ended, the 2-round one has not
    assert main(["sweep", str(config), "--out", str(tmp_path / "out"), "--json", "--budget", "time=7,100",
                 "--budget", "uplink_bits=1e6"]) == 0  # several axes, one --budget each
    data = json.loads(capsys.readouterr().out)
    runs = pandas.read_csv(data["tables"][0])
    summary = pandas.read_csv(next(t for t in data["tables"] if t.endswith("_summary.csv")))
    curves = [read_run(tmp_path / "out" / folder) for folder in runs["run"]]
    assert [c.end_time for c in curves] == [6.0, 12.0]
    assert list(summary["censored_within_time_7"]) == [1, 0]  # the 1-round run ended before spending 7
    # within 100 both ended first (censored, a column of 1s left out as constant): each run's final accuracy
    assert "censored_within_time_100" not in summary
    assert list(summary["accuracy_within_time_100"]) == pytest.approx(list(runs["final_mean_accuracy"]))
    assert [within(c, "time", 7).accuracy for c in curves] == pytest.approx([curves[0].mean_accuracy[-1]] * 2)
    page = Path(next(t for t in data["tables"] if t.endswith("_summary.md"))).read_text()
    assert "acc % within time 7 |" in page and f"| >= {100 * curves[0].mean_accuracy[-1]:.1f} |" in page
    # 4 devices upload 615,680 bits a round: within 1e6 bits the 1-round run has ended, the 2-round one has not
    assert list(summary["censored_within_uplink_bits_1e+06"]) == [1, 0] and "acc % within uplink_bits 1e+06 |" in page


def test_a_budget_is_checked_before_anything_runs(tmp_path, capsys):
    from scenarios.execution.sweep import summary_settings

    assert summary_settings({"summary": {"budget": "time=5"}}, budget="uplink_bits=2e6,1e6").budget == {"uplink_bits": (1e6, 2e6)}
    assert summary_settings({"summary": {"budget": ["time=5", "energy_j=1"]}}).budget == {"time": (5.0,), "energy_j": (1.0,)}
    config = tmp_path / "budget.toml"
    config.write_text(BUDGET_SWEEP)
    assert main(["sweep", str(config), "--out", str(tmp_path / "out"), "--budget", "energy_j=1"]) == 2
    assert "an energy_j budget needs runs that record energy (a cell)" in capsys.readouterr().err
    assert main(["sweep", str(config), "--out", str(tmp_path / "out"), "--budget", "time=-1"]) == 2
    assert "--budget time= takes finite numbers > 0" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_none_in_a_radio_grid_is_the_command_line_s_none():
    """``radio = { battery_j = [1.0, "none"] }`` (docs/sweep-files.md: "none" for a setting that
    may be none; TOML has no null): two runs, the second without a battery, as ``--radio
    battery_j=none`` gives (it was refused: battery_j must be a finite number, got 'none')."""
    import tomllib

    from scenarios.execution.sweep import plan

    config = tomllib.loads('[settings]\nrounds = 1\nsystem = "umi-3.5ghz"\n[grid]\nradio = { battery_j = [1.0, "none"] }\n'
                          '[[algorithm]]\nname = "fedavg"\n')
    batteries = [run.config["system"].get("battery_j") for run in plan(expand(config), None)]
    assert batteries == [1.0, None]


def test_rows_that_differ_by_a_value_beside_an_empty_cell_keep_that_column():
    """A grid of battery_j = [1.0, "none"]: the summary's rows differ in that column alone, a value
    beside an empty cell, which ``constant_columns`` leaves out (as an option only one algorithm
    has): the rows were two alike. Kept, and out of the "same in every row" note."""
    from scenarios.execution.sweep import constant_columns, told_apart

    header, rows = ["label", "radio_battery_j", "option_mu"], [["fedavg", "1.0", ""], ["fedavg", "", ""]]
    keep, same = constant_columns(header, rows)
    assert keep == [] and same == {"label": "fedavg", "radio_battery_j": "1.0", "option_mu": "-"}
    assert told_apart(header, rows, keep, same) == ([1], {"label": "fedavg", "option_mu": "-"})
    apart = [["fedavg", "", ""], ["fedprox", "", "0.1"]]  # told apart already: the option column stays out
    assert told_apart(header, apart, *constant_columns(header, apart)) == ([0], {"radio_battery_j": "-", "option_mu": "0.1"})
