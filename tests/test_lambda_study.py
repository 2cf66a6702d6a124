"""``fl-cosim lambda-study``: the staircase k*(lambda) by hand, and on the default scenario over
two seeds, on the normalized systems and a physical cell, its page and tables, k never growing
with lambda, each system's times in its own unit (one table column and one figure axis per
unit), the spread over seeds, and re-timing on each system giving that system's own run times."""

import json
from pathlib import Path

import numpy as np
import pytest

from scenarios.records.reading import read_json
from scenarios.records.result_folder import read_run
from scenarios.reports.retime import retimed_curve
from scenarios.cli.main import main
from scenarios.execution.lambda_study import Step, staircase
from scenarios.execution.runner import RunSpec, run_experiment
from scenarios.definitions.seeds import seed_streams
from scenarios.definitions.systems import SYSTEMS, get_system

CELL = "uma-3.5ghz"  # a physical cell: its times in seconds


def test_a_listed_k_out_of_range_is_refused_before_any_set_up_computes(tmp_path, monkeypatch, capsys):
    """--k 0,2: one line naming the scenario's 20 devices, exit 2, before the silhouette curve's
    set-up (eq. 10's gradients at theta^0, k-means for every k) computes anything."""
    import scenarios.execution.silhouette

    def never(*args, **kwargs):
        raise AssertionError("computed a silhouette curve for a --k that is refused")

    monkeypatch.setattr(scenarios.execution.silhouette, "setup_silhouette", never)
    assert main(["lambda-study", "--k", "0,2", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == ("fl-cosim: error: --k (this scenario has 20 devices) must be an integer in 1..20, "
                                       "got 0\n")
    assert list(tmp_path.iterdir()) == []


def test_staircase_by_hand():
    # lines s_k - lambda k: k = 4 (0.5 - 4 lambda) leads until k = 2 (0.3 - 2 lambda) meets it at
    # 0.1, above k = 3 there (0.05) and k = 1 (-0.1); k = 2 meets k = 1 (-lambda) at 0.3
    silhouette = {1: 0.0, 2: 0.3, 3: 0.35, 4: 0.5, 5: 0.0}
    assert staircase(silhouette) == [Step(4, 0.0, pytest.approx(0.1)), Step(2, pytest.approx(0.1), pytest.approx(0.3)),
                                     Step(1, pytest.approx(0.3), None)]
    assert staircase({1: 0.0, 2: 0.0}) == [Step(1, 0.0, None)]  # ties go to fewer streams


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    out = tmp_path_factory.mktemp("lambda")
    code = main(["lambda-study", "--rounds", "3", "--seeds", "2", "--systems", *SYSTEMS, CELL, "--out", str(out), "--json",
                 "--quiet", "--jobs", "2"])
    assert code == 0
    files = sorted(out.glob("lambda_study_*.json"))
    assert len(files) == 1
    return out, json.loads(files[0].read_text())


def test_study_writes_its_page_and_tables(study):
    out, data = study
    stem = next(out.glob("lambda_study_*.json")).with_suffix("")
    assert stem.with_suffix(".png").read_bytes().startswith(b"\x89PNG")
    table = stem.with_name(stem.name + ".csv").read_text().splitlines()
    assert table[0].startswith("k,lambda_from,lambda_to,system,")
    assert len(table) == 1 + len(data["staircase"]) * (len(SYSTEMS) + 1)
    choices = stem.with_name(stem.name + "_choices.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in choices[1:]] == [*SYSTEMS, CELL]
    assert "which lambda" in stem.with_suffix(".md").read_text().lower()


def test_json_prints_the_choices_beside_the_files(study, capsys):
    """--json printed the choices CSV's path as "choices", over the study's answer (a list per
    system); run again on the same folder (its trainings reused), it prints both."""
    out, data = study
    assert main(["lambda-study", "--rounds", "3", "--seeds", "2", "--systems", *SYSTEMS, CELL, "--out", str(out), "--json",
                 "--quiet", "--jobs", "2"]) == 0
    printed = json.loads(capsys.readouterr()[0])
    assert printed["choices"] == data["choices"] and isinstance(printed["choices"], list)
    assert printed["choices_csv"].endswith("_choices.csv") and printed["json"].endswith(".json")


def test_k_never_grows_with_lambda(study):
    _, data = study
    steps = data["staircase"]
    ks = [s["k"] for s in steps]
    assert ks == sorted(ks, reverse=True) and len(set(ks)) == len(ks) and ks[-1] == 1
    assert steps[0]["lambda_from"] == 0 and steps[-1]["lambda_to"] is None
    assert all(a["lambda_to"] == b["lambda_from"] for a, b in zip(steps, steps[1:]))
    silhouette = {int(k): v for k, v in data["silhouette"].items()}
    assert ks[0] == max(silhouette, key=lambda k: (silhouette[k], -k))  # lambda = 0: the silhouette maximum


def test_each_system_reports_its_times_in_its_own_unit(study):
    out, data = study
    units = {r["system"]: r["time_unit"] for r in data["rows"]}
    assert units == {**{name: "T_dl" for name in SYSTEMS}, CELL: "s"}
    assert all(a["time_unit"] == units[a["system"]] for a in data["choices"] if a["k"] is not None)
    lines = next(out.glob("lambda_study_*.md")).read_text().splitlines()
    header = [c.strip() for c in next(line for line in lines if line.startswith("| system")).strip("|").split("|")]
    normalized, seconds = header.index("time to target / T_dl"), header.index("time to target (s)")
    for line in lines:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] in units and len(cells) == len(header):  # a system's time only in its unit's column
            empty = seconds if units[cells[0]] == "T_dl" else normalized
            assert cells[empty] == "-"


def test_the_figure_has_one_time_axis_per_unit(study, monkeypatch):
    import figures.lambda_study as page

    figures = []
    monkeypatch.setattr(page, "save_figure", lambda fig, out_file: figures.append(fig) or Path(out_file))
    out, data = study
    page.plot_lambda_study(read_json(next(out.glob("lambda_study_*.json"))), out / "unused.png")
    time_axes = [ax for ax in figures[0].get_axes() if ax.get_ylabel().startswith("time to target")]
    units = {r["system"]: r["time_unit"] for r in data["rows"]}
    drawn = [{units[label] for label in ax.get_legend_handles_labels()[1]} for ax in time_axes]
    assert sorted(map(sorted, drawn)) == [["T_dl"], ["s"]]  # never two units on one axis
    assert [ax.get_ylabel() for ax in time_axes] == ["time to target / $T_{dl}$", "time to target (s)"]


def test_spread_over_seeds_with_censored_seeds(study):
    _, data = study
    assert data["seeds"] == [0, 1] and data["spread"] == "sample std over seeds"
    for row in data["rows"]:
        runs = [r for r in data["runs"] if r["k"] == row["k"] and r["system"] == row["system"]]
        assert sorted(r["seed"] for r in runs) == [0, 1]
        counted = [r["total_time"] if r["time_to_target"] is None else r["time_to_target"] for r in runs]
        assert row["reached"] == sum(r["time_to_target"] is not None for r in runs) == 2 - row["censored"]
        assert row["time_to_target"] == pytest.approx(np.mean(counted))  # censored seeds counted, not dropped
        assert row["time_to_target_std"] == pytest.approx(np.std(counted, ddof=1))
        assert (row["time_min"], row["time_max"]) == (min(counted), max(counted))
        bits = [r["total_bits"] if r["bits_to_target"] is None else r["bits_to_target"] for r in runs]
        assert (row["bits_to_target"], row["bits_min"], row["bits_max"]) == (pytest.approx(np.mean(bits)), min(bits), max(bits))
    silhouette = data["silhouette_seeds"]
    for k, mean in data["silhouette"].items():
        assert mean == pytest.approx(np.mean([silhouette[seed][k] for seed in silhouette]))


def test_retiming_on_each_system_gives_its_own_run_times(study, tmp_path):
    out, data = study
    for row in data["runs"]:
        if row["system"] != data["trained_on"] or row["seed"] != 0:
            continue
        k = row["k"]
        for name in SYSTEMS:
            direct = run_experiment(RunSpec("digits-rotation", "user-centric", system=name, rounds=3, seed=0,
                                            options={"streams": k}), tmp_path)
            retimed = retimed_curve(out / row["run"], get_system(name), np.random.default_rng(seed_streams(0)[2]))
            assert retimed.time == read_run(direct["result_dir"]).time
            assert retimed_curve(out / row["run"], get_system(name)).time == retimed.time  # the run's own stream by default
            listed = next(r for r in data["runs"] if r["k"] == k and r["system"] == name and r["seed"] == 0)
            assert listed["total_time"] == direct["simulated_time"]


def test_a_cell_is_trained_on_itself_not_retimed(study):
    """Outages on a cell drop devices, so the learning there is not the normalized run's: each
    k of the cell's rows is its own training on the cell, read as it ran."""
    out, data = study
    for row in data["runs"]:
        config = read_run(out / row["run"]).config
        expected = CELL if row["system"] == CELL else data["trained_on"]
        assert config["system"]["name"] == expected, (row["system"], config["system"]["name"])
        if row["system"] == CELL:
            assert row["total_time"] == read_run(out / row["run"]).time[-1]


def test_listed_k_on_systems_with_parameters_crossed_in(tmp_path, capsys):
    """``--k 1,3`` trains exactly those k, once each; ``--rho`` and ``--mode`` cross their values
    into every system of ``--systems`` (a cell takes the mode alone); each system's times are the
    recorded runs re-timed on it, and a k off the staircase has no lambda."""
    from scenarios.definitions.systems import parse_system

    out = tmp_path / "study"
    assert main(["lambda-study", "--rounds", "2", "--k", "3,1", "--systems", "wired", "--rho", "1", "10", "--mode", "barrier",
                 "pipelined", "--target", "0.3", "--out", str(out), "--json", "--quiet", "--jobs", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    systems = ["wired:rho=1,mode=barrier", "wired:rho=1,mode=pipelined", "wired:rho=10,mode=barrier", "wired:rho=10,mode=pipelined"]
    assert data["systems"] == systems
    assert sorted({r["k"] for r in data["rows"]}) == [1, 3] and len(data["rows"]) == 2 * len(systems)
    assert len({r["run"] for r in data["runs"]}) == 2  # one training per k
    staircase_ks = {s["k"] for s in data["staircase"]}
    for row in data["runs"]:
        retimed = retimed_curve(out / row["run"], parse_system(row["system"]).build())
        assert row["total_time"] == retimed.time[-1]
        step = next(r for r in data["rows"] if r["k"] == row["k"] and r["system"] == row["system"])
        assert (step["lambda_from"] is None) == (row["k"] not in staircase_ks)
    ends = {r["system"]: r["total_time"] for r in data["runs"] if r["k"] == 1}
    assert ends["wired:rho=10,mode=barrier"] > ends["wired:rho=1,mode=barrier"] >= ends["wired:rho=1,mode=pipelined"]
    page = Path(data["markdown"]).read_text()
    assert "## Time to target per k and system" in page and "| k | lambda | wired:rho=1,mode=barrier (T_dl) |" in page


def test_system_texts_cross_the_parameters_into_each_system():
    from argparse import Namespace

    from scenarios.cli.lambda_study import system_texts

    args = Namespace(systems=["wired", "wireless-slow-ul:t_min=2", "uma-3.5ghz"], rho=[1.0, 2.5], t_min=None, inv_mu=None,
                     mode=["barrier"])
    assert system_texts(args) == ["wired:rho=1,mode=barrier", "wired:rho=2.5,mode=barrier",
                                  "wireless-slow-ul:t_min=2,rho=1,mode=barrier", "wireless-slow-ul:t_min=2,rho=2.5,mode=barrier",
                                  "uma-3.5ghz:mode=barrier"]


def test_in_one_process_each_seeds_set_up_is_computed_once(tmp_path, monkeypatch):
    """With --jobs 1 the silhouette curve of a seed and that seed's runs take one set-up
    (``learning.reuse``): the set-up's gradients (every device's, in one call) once per seed,
    not once for the curve and again for the runs."""
    from learning.engine.loop import Backend

    calls = []
    gradients = Backend.gradients

    def counted(self, params, datas, batches):
        calls.append(len(datas))
        return gradients(self, params, datas, batches)

    monkeypatch.setattr(Backend, "gradients", counted)
    assert main(["lambda-study", "--rounds", "2", "--seeds", "2", "--k", "1,2", "--out", str(tmp_path), "--json", "--quiet",
                 "--jobs", "1", "--backend", "loop", "--device", "cpu"]) == 0
    assert len(calls) == 2


def test_no_choice_is_a_reason_never_an_empty_table():
    """``--k 3`` off the staircase {4, 2, 1}: no lambda picks 3, which the study says per system
    (it printed a table of dashes); a system whose staircase k never reached the target says so."""
    from scenarios.cli.lambda_study import choice_text
    from scenarios.cli.common import table
    from scenarios.execution.lambda_study import Step, choices

    steps = [Step(4, 0.0, 0.05), Step(2, 0.05, 0.26), Step(1, 0.26, None)]
    row = {"k": 3, "system": "wired", "reached": 1, "time_unit": "T_dl", "time_to_target": 43.0, "time_to_target_std": None,
           "censored": 0, "bits_to_target": 1e6}
    answer = choices(steps, [row], ["wired"])
    assert answer[0]["k"] is None
    text = choice_text(answer, 1, table)
    assert text == ("no lambda's k reached the target:\nwired: no k trained is on the staircase (trained: 3; the staircase's: "
                    "4, 2, 1): no lambda picks one\n")
    rows = [row, {**row, "k": 2, "system": "wired"}, {**row, "k": 2, "system": "wireless-slow-ul", "reached": 0}]
    text = choice_text(choices(steps, rows, ["wired", "wireless-slow-ul"]), 1, table)
    assert text.splitlines()[2].split()[:3] == ["wired", "[0.05,", "0.26)"] and text.count("\n") == 4
    assert text.splitlines()[-1] == "wireless-slow-ul: no k of the staircase trained (2) reached the target on any seed"
