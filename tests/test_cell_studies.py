"""benchmarks.cell_studies: its options checked before anything is drawn or trained, and its
tables over seeds as mean +- sample std [min-max], by hand on two seeds (no training here)."""

import pytest

from benchmarks import cell_studies


@pytest.mark.parametrize("argv, problem", [
    (["--seeds", "-1"], "--seeds must be an integer in 0.."),
    (["--seeds", "0", "0"], "--seeds names 0 twice"),
    (["--rounds", "0"], "--rounds must be an integer in 1.."),
    (["--jobs", "0"], "--jobs must be an integer in 1..256"),
    (["--cells-only", "--rounds", "30"], "--rounds has no effect with --cells-only"),
    (["--cells-only", "--out", "elsewhere"], "--out has no effect with --cells-only"),
    (["--seeds", "0", "--seeds", "1"], "--seeds is given twice"),
])
def test_bad_input_is_one_line_and_exit_2(argv, problem, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        cell_studies.main(argv)
    out, err = capsys.readouterr()
    assert stop.value.code == 2 and out == ""
    assert err.count("\n") == 1 and problem in err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_penalty_table_over_two_seeds(monkeypatch):
    """Seed 0's run takes 220 s and 137 J, seed 1's 230 s and 146 J: 225.0 +- 7.1 s (the sample
    std of two values is their difference over sqrt 2) and 141.5 +- 6.4 J."""
    figures = {"a": dict(label="fedavg", models_per_round=1.0, downlink_ms=35.2, normalized_ms=7.78, penalty=4.53,
                         broadcast_over_t_dl=4.22, mean_accuracy=0.703, worst_accuracy=0.524, time_s=220.0, energy_j=137.0,
                         never_arrived=0),
               "b": dict(label="fedavg", models_per_round=1.0, downlink_ms=37.2, normalized_ms=7.78, penalty=4.79,
                         broadcast_over_t_dl=4.22, mean_accuracy=0.745, worst_accuracy=0.524, time_s=230.0, energy_j=146.0,
                         never_arrived=1)}
    monkeypatch.setattr(cell_studies, "penalty_figures", figures.__getitem__)
    table = cell_studies.penalty_spread([[{"result_dir": "a"}], [{"result_dir": "b"}]], [("uma-3.5ghz", {})])
    header, rule, row = table.splitlines()
    assert header.split(" | ")[-3:] == ["time (s)", "energy (J)", "never arrived |"]
    assert row == ("| uma-3.5ghz | fedavg | 1.00 +- 0.00 [1.00-1.00] | 36.20 +- 1.41 [35.20-37.20] | 7.78 +- 0.00 [7.78-7.78] | "
                   "4.66 +- 0.18 [4.53-4.79] | 4.22 +- 0.00 [4.22-4.22] | 0.724 +- 0.030 [0.703-0.745] | "
                   "0.524 +- 0.000 [0.524-0.524] | 225.0 +- 7.1 [220.0-230.0] | 141.5 +- 6.4 [137.0-146.0] | "
                   "0.5 +- 0.7 [0.0-1.0] |")


def test_lambda_table_over_two_seeds(monkeypatch):
    """k* is each seed's pick; a target one seed never reaches is quoted over the seed that did."""
    def row(streams, final, target, to_target_s, bits, time_s, energy_j):
        return dict(lam=0.0, streams=streams, final=final, target=target, time_to_target_s=to_target_s,
                    bits_to_target=bits, time_s=time_s, energy_j=energy_j)

    per_seed = {"s0": {"uma-3.5ghz": [row(4, 0.774, 0.6967, 144.77, 72.8e6, 227.26, 140.0)] * 3},
                "s1": {"uma-3.5ghz": [row(2, 0.700, 0.6930, None, None, 233.26, 150.0)] * 3}}
    monkeypatch.setattr(cell_studies, "lambda_figures", lambda summaries, cells: per_seed[summaries[0]["result_dir"]])
    table = cell_studies.lambda_spread([[{"result_dir": "s0"}], [{"result_dir": "s1"}]], [("uma-3.5ghz", {})])
    lines = table.splitlines()
    assert len(lines) == 2 + len(cell_studies.LAMBDAS)
    assert lines[2] == ("| uma-3.5ghz | 0 | 4 2 | 0.737 +- 0.052 [0.700-0.774] | 0.695 +- 0.003 [0.693-0.697] | "
                        "144.8 +- 0.0 [144.8-144.8] (1 of 2 seeds) | 72.8 +- 0.0 [72.8-72.8] (1 of 2 seeds) | "
                        "230.3 +- 4.2 [227.3-233.3] | 145.0 +- 7.1 [140.0-150.0] |")


def test_an_infinite_t_dl_leaves_the_penalty_undefined(tmp_path):
    """On umi-3.5ghz seed 3 one device is in downlink outage on every one of the base station's
    fading samples: ``T_dl``, the mean unicast airtime, is infinite, and the penalty and the
    broadcast over ``T_dl`` are undefined ("-", NaN: left out of the spread), not 0."""
    import math

    from scenarios.execution.runner import RunSpec, run_experiment

    summary = run_experiment(RunSpec("digits-rotation", "fedavg", "umi-3.5ghz", rounds=1, seed=3), tmp_path)
    figures = cell_studies.penalty_figures(summary["result_dir"])
    assert all(math.isnan(figures[k]) for k in ("normalized_ms", "penalty", "broadcast_over_t_dl"))
    assert figures["downlink_ms"] > 0 and figures["never_arrived"] == 1
    row = cell_studies.penalty_table([summary], [("umi-3.5ghz", {})]).splitlines()[2]
    assert row.split(" | ")[4:7] == ["-", "-", "-"]
    # that device never gets the model: one device-round lost to downlink outage
    time = cell_studies.time_figures(summary["result_dir"])
    assert time["downlink_outage_drops"] == 1 and time["uplink_outage_drops"] == 0
    assert 0 < time["slowest_upload_s"] <= time["time_s"] == summary["simulated_time"]
    assert time["energy_j"] == summary["energy_j"] and 0 < time["idle_pct"] < 100
