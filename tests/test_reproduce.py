"""``fl-cosim reproduce``: the paper's numbers as the journal prints them, the figure helpers on
hand-made curves, bad input, and the report of the smoke scale on the real data sets (its
structure, not its numbers)."""

import csv
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

from figures.bands import seed_band
from scenarios.records.result_folder import RunCurve
from figures.style import ALGORITHM_STYLE, algorithm_style
from scenarios.cli.main import main
from scenarios.reports.journal_numbers import PAPER_ALGORITHMS, TABLE_I, TABLE_II, TABLE_II_PROPOSED, paper_table_ii
from scenarios.execution.reproduce import TABLE_SCENARIOS, TABLE_VARIANTS, TEXT_SCENARIO
from scenarios.execution.scales import SCALES, Scale
from scenarios.execution.spec import RunSpec, run_label

JOURNAL = Path(__file__).resolve().parents[1].parent / "shared" / "papers" / "user-centric-fl-wireless-journal.md"
TABLE_I_LABELS = list(TABLE_I)
TABLE_II_LABELS = ["ditto", "fedavg", "oracle", "cfl", "fedfomo", "pfedme", "user-centric k=m", "user-centric k=4"]


def _plain(text: str) -> str:
    """A table cell without Markdown/HTML/LaTeX decoration, citation marks or spaces."""
    text = re.sub(r"<[^>]+>|\$|\\pm|\[\d+\]", "", text)
    return re.sub(r"\s+", "", text)


def _journal_tables():
    if not JOURNAL.exists():
        pytest.skip(f"the journal's text is not at {JOURNAL}")
    lines = JOURNAL.read_text().splitlines()
    start_i = next(i for i, line in enumerate(lines) if line.startswith("TABLE I:"))
    start_ii = next(i for i, line in enumerate(lines) if line.startswith("TABLE II:"))
    rows_i = [line.split("\t") for line in lines[start_i + 4 : start_i + 13]]
    rows_ii = [line.split("\t") for line in lines[start_ii + 4 : start_ii + 7]]
    return rows_i, rows_ii


def _numbers(cell: str) -> list[float]:
    return [float(x) for x in re.findall(r"\d+\.\d+|\d+", _plain(cell))]


def test_table_i_is_the_journals():
    rows, _ = _journal_tables()
    by_name = {_plain(row[0]): row[1:] for row in rows}
    assert len(by_name) == len(TABLE_I) == 9
    for label, ours in TABLE_I.items():
        cells = by_name[_plain(PAPER_ALGORITHMS[label])]
        for scenario, cell in zip(TABLE_SCENARIOS, cells):
            expected = None if cell.strip() == "-" else tuple(_numbers(cell))
            assert ours[scenario] == expected, (label, scenario)


def test_table_ii_is_the_journals():
    _, rows = _journal_tables()
    columns = ["ditto", "fedavg", "oracle", "cfl", "fedfomo", "pfedme", "proposed"]
    for scenario, row in zip(TABLE_SCENARIOS, rows):
        for column, cell in zip(columns, row[1:]):
            numbers = _numbers(cell)
            assert TABLE_II[scenario][column] == (numbers[0] if numbers else None), (scenario, column)
        k = int(_numbers(row[-1])[1])
        proposed, note = TABLE_II_PROPOSED[scenario]
        assert note == f"k = {k}"
        assert proposed == ("user-centric k=m" if k == 20 else f"user-centric k={k}")
        assert paper_table_ii(scenario, proposed) == TABLE_II[scenario]["proposed"]
    assert paper_table_ii("mnist-rotation", "user-centric k=m") is None


def test_every_label_has_its_own_colour_and_marker():
    pairs = list(ALGORITHM_STYLE.values())
    assert len(set(c for c, _ in pairs)) == len(pairs)
    for label in [run_label(RunSpec("s", a, options=o)) for a, o in TABLE_VARIANTS]:
        assert label in ALGORITHM_STYLE
    assert algorithm_style("fedavg") == {"color": "#000000", "marker": "x", "linestyle": (0, (5, 1))}
    assert algorithm_style("something new") == algorithm_style("something new")


def _curve(seed_rounds, accuracy, time, down, up):
    return RunCurve("fedavg", list(seed_rounds), list(time), list(accuracy), list(accuracy), list(down), list(up), {}, {})


def test_seed_band_is_mean_min_max_over_the_common_rounds():
    a = _curve([0, 2, 4], [0.1, 0.5, 0.7], [0.0, 10.0, 20.0], [1, 2, 3], [10, 20, 30])
    b = _curve([0, 2, 4, 6], [0.3, 0.3, 0.9, 1.0], [0.0, 14.0, 30.0, 40.0], [1, 2, 3, 4], [10, 20, 30, 40])
    band = seed_band([a, b], "time")
    np.testing.assert_allclose(band.x, [0.0, 12.0, 25.0])
    np.testing.assert_allclose(band.mean, [0.2, 0.4, 0.8])
    np.testing.assert_allclose(band.low, [0.1, 0.3, 0.7])
    np.testing.assert_allclose(band.high, [0.3, 0.5, 0.9])
    np.testing.assert_allclose(seed_band([a, b], "rounds").x, [0, 2, 4])
    np.testing.assert_allclose(seed_band([a, b], "bits").x, [11, 22, 33])
    assert band.seeds == 2


def test_scale_rounds_and_evaluations():
    assert Scale("x", 1, 10, rounds_fraction=0.2).rounds(100) == 20
    assert Scale("x", 1, 10, rounds_fraction=0.2).evaluate_every(20) == 2
    assert Scale("x", 1, None, fixed_rounds=3).rounds(250) == 3
    assert Scale("x", 1, None).evaluate_every(100) == 1
    assert SCALES["paper"].seeds == 5 and SCALES["paper"].rounds(123) == 123 and SCALES["paper"].participation is None


@pytest.mark.parametrize("argv, needle", [
    (["--scale", "huge"], "unknown scale 'huge'"),
    (["--seeds", "0"], "--seeds must be an integer in 1..10000"),
    (["--jobs", "0"], "--jobs must be an integer in 1..256"),
    (["--jobs", "999"], "--jobs must be an integer in 1..256"),
])
def test_bad_input_is_one_line_and_writes_nothing(capsys, tmp_path, argv, needle):
    out = tmp_path / "report"
    assert main(["reproduce", *argv, "--out", str(out), "--runs", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0]
    assert list(tmp_path.iterdir()) == []


def _data_dir() -> str:
    data_dir = os.environ.get("FL_COSIM_DATA")
    if not data_dir:
        pytest.skip("reproduce needs MNIST, CIFAR-10 and Stack Overflow: FL_COSIM_DATA is not set")
    from scenarios.datasets import dataset_status
    from scenarios.definitions.registry import get_scenario

    needed = {d for s in (*TABLE_SCENARIOS, TEXT_SCENARIO) for d in get_scenario(s).datasets}
    missing = [f"{row['name']} ({row['detail']})" for row in dataset_status(data_dir, verify=False)
               if row["name"] in needed and not row["found"]]
    if missing:
        pytest.skip(f"reproduce needs {', '.join(missing)}")
    return data_dir


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
def test_smoke_scale_writes_every_table_and_figure(capsys, tmp_path):
    data_dir = _data_dir()
    out, runs = tmp_path / "report", tmp_path / "runs"
    # --jobs 1: the runs one after another in this process (``run_calls``), not in two workers that
    # would each import torch and load MNIST, CIFAR-10 and Stack Overflow again; the results do not
    # depend on --jobs (tests/test_worker_start.py), and the pool is tests/test_sweep.py's
    argv = ["reproduce", "--scale", "smoke", "--out", str(out), "--runs", str(runs), "--data-dir", data_dir, "--jobs", "1", "--json"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["scale"] == "smoke" and data["ran"] == data["runs"] and data["reused"] == 0

    table1 = _rows(out / "table1.csv")
    assert list(table1[0]) == ["scenario", "algorithm", "paper_algorithm", "seeds", "flagged_runs", "rounds", "mean_accuracy_pct",
                               "std_over_seeds_pct", "paper_mean_accuracy_pct", "paper_spread_pct"]
    assert [(r["scenario"], r["algorithm"]) for r in table1] == [(s, l) for l in TABLE_I_LABELS for s in TABLE_SCENARIOS]
    for row in table1:
        paper = TABLE_I[row["algorithm"]][row["scenario"]]
        assert row["paper_mean_accuracy_pct"] == ("" if paper is None else f"{paper[0]:.1f}")
        ran = not (row["algorithm"] == "oracle" and row["scenario"] == "mnist-label-shift")
        assert row["seeds"] == ("1" if ran else "0")
        assert (0 <= float(row["mean_accuracy_pct"]) <= 100) if ran else row["mean_accuracy_pct"] == ""
    table2 = _rows(out / "table2.csv")
    assert [(r["scenario"], r["algorithm"]) for r in table2] == [(s, l) for s in TABLE_SCENARIOS for l in TABLE_II_LABELS]
    assert {r["paper_worst_accuracy_pct"] for r in table2 if r["scenario"] == "cifar10-concept-shift"} >= {"19.6", "48.8", "49.1"}

    report = (out / "report.md").read_text()
    assert {r["flagged_runs"] for r in table1} == {"0"}  # one round: no run is judged
    for needle in ("Scale **smoke**", "MNIST stands in for EMNIST", "## Table I", "## Table II", "## Runs flagged", "79.4 (±4.2)", "/ 76.4 (k = 4)",
                   "Machine:", "Wall time"):
        assert needle in report, needle
    figures = ("fig2_accuracy_vs_rounds", "fig3_stackoverflow", "fig5_silhouette", "fig6_accuracy_vs_time")
    for stem in figures:
        assert f"]({stem}.png)" in report
        assert (out / f"{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (out / f"{stem}.pdf").read_bytes()[:5] == b"%PDF-"
    silhouette = _rows(out / "silhouette.csv")
    assert {r["scenario"] for r in silhouette} == set(TABLE_SCENARIOS)
    listed = _rows(out / "runs.csv")
    assert {r["scenario"] for r in listed} == {*TABLE_SCENARIOS, TEXT_SCENARIO}
    assert all((runs / r["result_folder"] / "summary.json").exists() for r in listed)

    # a second time (quiet: no progress, only the warning that names the run done again) every
    # run is reused but one whose summary.json was edited (run again), and the tables are the same.
    # The edited run is a Table I cell of the cheapest kind (Local: one local update per device, no
    # set-up), run again on its own where the first time it took its updates kept from FedAvg's
    # (learning.reuse); a user-centric one would compute its eq. 10 set-up again (9 CPU s), the
    # kept set-up against the computed one is tests/test_reuse.py's
    before = (out / "table1.csv").read_text()
    local = next(r for r in listed if (r["scenario"], r["label"]) == ("mnist-label-shift", "local"))
    victim = runs / local["result_folder"] / "summary.json"
    victim.write_text(json.dumps({**json.loads(victim.read_text()), "final_mean_accuracy": 0.99}))
    assert main([*argv[:-1], "--quiet"]) == 0
    text, progress = capsys.readouterr()
    assert text.startswith(f"reproduce --scale smoke: 1 runs run, {data['runs'] - 1} reused\n")
    assert progress == (f"fl-cosim: running {victim.parent.name} again: summary.json does not match its checksum in "
                        "checksums.json (truncated or modified)\n")
    assert (out / "table1.csv").read_text() == before


def test_silhouette_is_kept_and_read_back_while_the_config_code_and_data_are_the_same(tmp_path, capsys):
    from scenarios.execution.runner import prepare, resolve
    from scenarios.execution.silhouette import setup_silhouette

    def curve_of(spec):
        return setup_silhouette(prepare(resolve(spec)), cache_dir=tmp_path)

    spec = RunSpec("digits-rotation", "user-centric", seed=1, options={"streams": "auto"})
    curve = curve_of(spec)
    assert main(["streams", "--seed", "1", "--json"]) == 0
    assert {int(k): s for k, s in json.loads(capsys.readouterr().out)["silhouette"].items()} == curve
    path = tmp_path / "silhouette_digits-rotation_s1.json"
    kept = json.loads(path.read_text())
    kept["silhouette"] = {k: 0.5 for k in kept["silhouette"]}
    path.write_text(json.dumps(kept))
    assert set(curve_of(spec).values()) == {0.5}  # read back, not recomputed
    other = RunSpec("digits-rotation", "user-centric", seed=1, options={"streams": "auto"}, training={"batch_size": 32})
    assert set(curve_of(other).values()) != {0.5}  # another config: computed again
    assert json.loads(path.read_text())["config"]["training"]["batch_size"] == 32

    # a curve kept by other code, other dataset files or another fl-cosim version (or by one
    # that recorded no provenance) is computed again, as a run folder would be run again
    for key, value in (("code", "0" * 64), ("data", "0" * 64), ("fl_cosim", "999.0"), ("provenance", None)):
        kept = json.loads(path.read_text())
        provenance = kept["provenance"]
        if key == "provenance":
            del kept["provenance"]
        else:
            kept["provenance"] = {**provenance, key: value}
        kept["silhouette"] = {k: 0.5 for k in kept["silhouette"]}
        path.write_text(json.dumps(kept))
        assert set(curve_of(other).values()) != {0.5}, key
        assert json.loads(path.read_text())["provenance"] == provenance
