"""benchmarks.cell_figures_seeds: its options checked before anything trains, the runs it takes
from the sweep files, and its table over seeds, by hand (no training here)."""

import pytest

from benchmarks import cell_figures_seeds


@pytest.mark.parametrize("argv, problem", [
    (["--seeds", "-1"], "--seeds must be an integer in 0.."),
    (["--seeds", "0", "0"], "--seeds names 0 twice"),
    (["--studies", "codecs", "codecs"], "--studies names codecs twice"),
    (["--jobs", "0"], "--jobs must be an integer in 1..256"),
    (["--seeds", "0", "--seeds", "1"], "--seeds is given twice"),
])
def test_bad_input_is_one_line_and_exit_2(argv, problem, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        cell_figures_seeds.main(argv)
    out, err = capsys.readouterr()
    assert stop.value.code == 2 and out == "" and len(err.strip().splitlines()) == 1 and problem in err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_the_studies_take_the_runs_the_pages_quote(monkeypatch):
    """The codecs study: the UMi runs of docs/tradeoffs/codecs.toml that the page's text quotes
    (FedAvg uncompressed and with QSGD; user-centric with each codec), once per seed; the
    scheduling study: every run of docs/tradeoffs/scheduling.toml."""
    import pathlib

    monkeypatch.chdir(pathlib.Path(__file__).parent.parent)
    codecs = cell_figures_seeds.sweep_specs("codecs", [0, 3])
    assert len(codecs) == 12 and {s.system for s in codecs} == {"umi-3.5ghz"} and sorted({s.seed for s in codecs}) == [0, 3]
    assert sorted({(s.algorithm, s.uplink_codec.split(":")[0]) for s in codecs}) == [
        ("fedavg", "none"), ("fedavg", "qsgd"), ("user-centric", "none"), ("user-centric", "qsgd"),
        ("user-centric", "sign"), ("user-centric", "topk")]
    scheduling = cell_figures_seeds.sweep_specs("scheduling", [1])
    assert len(scheduling) == 6 and {s.seed for s in scheduling} == {1}


def test_spread_table_by_hand():
    rows = [("a", {"time (s)": 1.0, "time to 0.75 (s)": float("nan")}), ("a", {"time (s)": 3.0, "time to 0.75 (s)": 2.0})]
    lines = cell_figures_seeds.spread_table(rows, 2).splitlines()
    # mean 2, sample std sqrt(2) = 1.41; the time to 0.75 defined on one seed of two
    assert lines[2] == "| a | 2.00 +- 1.41 [1.00-3.00] | 2.00 +- 0.00 [2.00-2.00] (1 of 2 seeds) |"


def test_queues_figures_by_hand(monkeypatch):
    """Two rounds of two devices: each upload's wait is its first block's start less its compute's
    end (device 1's upload in two segments, a stall between them), a round's last upload is the
    one that ends last, its sending from its first block to its last."""
    import scenarios.records.result_folder as folder

    trace = [("1", "compute", "0", 0.0, 1.0), ("1", "uplink", "0", 1.5, 2.0),
             ("1", "compute", "1", 0.0, 1.0), ("1", "uplink", "1", 1.0, 2.0), ("1", "uplink", "1", 2.5, 3.0),
             ("2", "compute", "0", 3.0, 3.5), ("2", "uplink", "0", 4.5, 6.0),
             ("2", "compute", "1", 3.0, 4.0), ("2", "uplink", "1", 4.0, 5.0)]
    tables = {"trace.csv": [dict(zip(("round", "kind", "entity", "start", "end"), map(str, row))) for row in trace],
              "rounds.csv": [{"round": "0", "duration": "0"}, {"round": "1", "duration": "3"}, {"round": "2", "duration": "3"}]}
    monkeypatch.setattr(folder, "read_summary", lambda f: {"label": "fedavg", "energy_j": 1.0, "dropped": {"uplink-outage": 1}})
    monkeypatch.setattr(folder, "read_table", lambda f, name: tables[name])
    label, figures = cell_figures_seeds.queues_figures("unused")
    # waits 0.5, 0, 1.0, 0; round 1's last upload is device 1's (ends at 3.0): wait 0, sent 1.0 -> 3.0;
    # round 2's is device 0's (ends at 6.0): wait 1.0, sent 4.5 -> 6.0
    assert label == "fedavg" and figures == {"grant wait (s)": 0.375, "round (s)": 3.0, "last upload's wait (s)": 0.5,
                                             "last upload's sending (s)": 1.75, "energy (J)": 1.0, "uploads lost": 1}
