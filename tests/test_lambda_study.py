"""``fl-cosim lambda-study``: the staircase k*(lambda) by hand, and on the default scenario its
page and tables, k never growing with lambda, and re-timing on each system giving that
system's own run times."""

import json
from pathlib import Path

import numpy as np
import pytest

from scenarios.result_folder import read_run
from figures.retime import retimed_curve
from scenarios.cli.main import main
from scenarios.execution.lambda_study import Step, staircase
from scenarios.execution.runner import RunSpec, run_experiment
from scenarios.seeds import seed_streams
from scenarios.systems import SYSTEMS, get_system


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
    code = main(["lambda-study", "--rounds", "3", "--out", str(out), "--json", "--quiet", "--jobs", "2"])
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
    assert len(table) == 1 + len(data["staircase"]) * len(SYSTEMS)
    choices = stem.with_name(stem.name + "_choices.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in choices[1:]] == list(SYSTEMS)
    assert "which lambda" in stem.with_suffix(".md").read_text().lower()


def test_k_never_grows_with_lambda(study):
    _, data = study
    steps = data["staircase"]
    ks = [s["k"] for s in steps]
    assert ks == sorted(ks, reverse=True) and len(set(ks)) == len(ks) and ks[-1] == 1
    assert steps[0]["lambda_from"] == 0 and steps[-1]["lambda_to"] is None
    assert all(a["lambda_to"] == b["lambda_from"] for a, b in zip(steps, steps[1:]))
    silhouette = {int(k): v for k, v in data["silhouette"].items()}
    assert ks[0] == max(silhouette, key=lambda k: (silhouette[k], -k))  # lambda = 0: the silhouette maximum


def test_retiming_on_each_system_gives_its_own_run_times(study, tmp_path):
    out, data = study
    for row in data["rows"]:
        if row["system"] != data["trained_on"]:
            continue
        k = row["k"]
        for name in SYSTEMS:
            direct = run_experiment(RunSpec("digits-rotation", "user-centric", system=name, rounds=3, seed=data["seed"],
                                            options={"streams": k}), tmp_path)
            retimed = retimed_curve(out / row["run"], get_system(name), np.random.default_rng(seed_streams(data["seed"])[2]))
            assert retimed.time == read_run(direct["result_dir"]).time
            listed = next(r for r in data["rows"] if r["k"] == k and r["system"] == name)
            assert listed["total_time"] == direct["simulated_time"]
