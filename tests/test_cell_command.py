"""``fl-cosim cell``: a preset described for a seed (the layout a run uses), drawn, and its bad
input refused with one line and exit status 2, nothing written."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from scenarios.cli.main import main
from tests.shannon_link import SHANNON_ARGS


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cell_json_describes_the_layout_and_draws_it(capsys, tmp_path):
    figure = tmp_path / "new" / "cell.png"  # its folder created, as every --out's
    code, out, _ = run_cli(capsys, "cell", "uma-3.5ghz", "--devices", "12", "--seed", "3", "--rounds", "200",
                           "--out", str(figure), "--json")
    data = json.loads(out)
    assert code == 0 and figure.read_bytes().startswith(b"\x89PNG") and data["figure"] == str(figure)
    rows = data["device_table"]
    # the centre site's devices of the 19-site layout: at least 35 m from it, within its first ring
    assert len(rows) == 12 and all(35.0 <= r["distance_m"] <= 2 * 500.0 and r["sector"] in (0, 1, 2) for r in rows)
    assert data["derived"]["bs_power_dbm"] == pytest.approx(49.0)  # TR 38.901 Table 7.8-1, UMa at <= 6 GHz
    assert data["derived"]["breakpoint_distance_m"] == pytest.approx(560.0)
    # the weakest member of a broadcast is slower than a typical unicast
    assert data["summary"]["broadcast_over_unicast_airtime"] > 1.0
    # the mean SINR is the link budget: S = P_tx + G_sector + G_UE (0 dBi) - PL (O2I in it) - SF, over noise + interference
    for r in rows:
        noise = data["derived"]["downlink_noise_dbm"]
        signal = 49.0 + r["bs_gain_db"] - r["path_loss_db"] - r["shadowing_db"]
        interference = r["downlink_interference_dbm"]
        assert r["downlink_snr_db"] == pytest.approx(signal - 10 * math.log10(10 ** (noise / 10) + 10 ** (interference / 10)))
    code, again, _ = run_cli(capsys, "cell", "uma-3.5ghz", "--devices", "12", "--seed", "3", "--rounds", "200",
                             "--out", str(figure), "--json", "--force")
    assert json.loads(again)["device_table"] == rows  # same seed, same layout
    code, other, _ = run_cli(capsys, "cell", "uma-3.5ghz", "--devices", "12", "--seed", "4", "--rounds", "200",
                             "--out", str(figure), "--json", "--force")
    assert json.loads(other)["device_table"] != rows


def test_cell_layout_is_the_runs_layout():
    """The command and the runner derive the layout from the same child of the network seed."""
    from netsim.radio.physical import channel_seeds
    from scenarios.reports.cell import cell_draws
    from scenarios.definitions.cells import get_cell_system
    from scenarios.definitions.seeds import seed_streams

    _, _, layout, _ = cell_draws("umi-3.5ghz", 7, 5, None, 1)
    expected = get_cell_system("umi-3.5ghz").cell.place(5, np.random.default_rng(channel_seeds(seed_streams(7)[2])[0]))
    np.testing.assert_array_equal(layout.x_m, expected.x_m)


def test_radio_overrides_apply(capsys, tmp_path):
    code, out, _ = run_cli(capsys, "cell", "umi-3.5ghz", "--devices", "3", "--rounds", "10", "--radio", "distances_m=20,60,90", "--radio", "interference=off",
                           "--radio", "los=los", "--radio", "shadowing=false", "--radio", "fading=none",
                           "--radio", "min_bps_per_hz=none", *SHANNON_ARGS, "--out", str(tmp_path / "c.png"), "--json")
    data = json.loads(out)
    assert code == 0
    assert [round(r["distance_m"], 6) for r in data["device_table"]] == [20.0, 60.0, 90.0]
    assert all(r["los"] and r["shadowing_db"] == 0.0 for r in data["device_table"])
    assert data["parameters"]["fading"] == "none" and data["summary"]["downlink_outage_probability"] == 0.0
    # no fading: every round's broadcast runs at the farthest device's rate; here even the farthest
    # (LOS at 90 m: PL 84.36 dB, SNR 44 + 8 - 84.36 + 91.99 = 59.6 dB) is at the CQI-15 cap, so a
    # broadcast costs what a unicast does; the TDD downlink share (3 + 10/14) / 5, the 51 resource blocks
    # (0.918 of 20 MHz) and the downlink overhead 0.14 (TS 38.306) apply to both
    assert data["summary"]["broadcast_over_unicast_airtime"] == pytest.approx(1.0)
    assert data["summary"]["mean_unicast_downlink_s_per_mbit"] == pytest.approx(1 / (20 * 5.5547 * (3 + 10 / 14) / 5 * 0.918 * 0.86))


@pytest.mark.parametrize("argv,needle", [
    (["cell", "rural-macro"], "unknown cell preset 'rural-macro'"),
    (["cell", "umi-3.5ghz", "--radio", "downlink_bandwidth_hz=-20e6"], "radio downlink_bandwidth_hz must be a finite number in [1000, 10000000000], got -20000000.0"),
    (["cell", "umi-3.5ghz", "--radio", "uplink_bandwidth_hz=-1"], "radio uplink_bandwidth_hz must be a finite number in [1000, 10000000000], got -1"),
    (["cell", "umi-3.5ghz", "--radio", "ue_power_w=-0.2"], "radio ue_power_w must be a finite number in [1e-09, 10000], got -0.2"),
    (["cell", "umi-3.5ghz", "--radio", "bs_power_w=-1"], "radio bs_power_w must be a finite number in [1e-09, 10000], got -1"),
    (["cell", "umi-3.5ghz", "--radio", "outer_radius_m=-100"], "radio outer_radius_m must be a finite number in [1, 5000], got -100"),
    (["cell", "umi-3.5ghz", "--radio", "inner_radius_m=-10"], "radio inner_radius_m must be a finite number in [1, 5000], got -10"),
    (["cell", "umi-3.5ghz", "--radio", "carrier_hz=-3.5e9"], "radio carrier_hz must be a finite number in [500000000, 100000000000], got -3500000000.0"),
    (["cell", "umi-3.5ghz", "--radio", "cpu_hz=-1e9"], "radio cpu_hz must be a finite number in [1000, 1000000000000], got -1000000000.0"),
    (["cell", "umi-3.5ghz", "--radio", "inner_radius_m=150"], "inner radius 150 m is above the outer radius 100 m"),
    (["cell", "umi-3.5ghz", "--radio", "antenna_gain_db=3"], "unknown radio parameter antenna_gain_db"),
    (["cell", "umi-3.5ghz", "--radio", "bs_power_w=loud"], "radio bs_power_w must be a finite number in"),
    (["cell", "umi-3.5ghz", "--radio", "interference=off", "--radio", "distances_m=20,60"], "2 distances given for 20 devices"),
    (["cell", "umi-3.5ghz", "--radio", "distances_m=20,60"], "give interference=off with it"),
    (["cell", "umi-3.5ghz", "--radio", "interference=maybe"], "interference must be on or off"),
    (["cell", "umi-3.5ghz", "--drop", "0"], "--drop must be an integer in 1..20000"),
    (["cell", "umi-3.5ghz", "--drop", "10", "--radio", "interference=off"], "--drop draws the 19-site layout: leave interference on"),
    (["cell", "uma-3.5ghz", "--radio", "inter_site_distance_m=60"], "inter_site_distance_m must exceed twice the minimum distance"),
    (["cell", "umi-3.5ghz", "--devices", "0"], "--devices must be an integer in 1..100000"),
    (["cell", "umi-3.5ghz", "--out", "x.svg"], "--out must end in .png or .pdf"),
    (["run", "--system", "uma-3.5ghz", "--radio", "uplink_bandwidth_hz=-5"], "radio uplink_bandwidth_hz must be a finite number in [1000, 10000000000], got -5"),
    (["run", "--system", "nowhere-5g"], "unknown system 'nowhere-5g'"),
    (["run", "--system", "wired", "--radio", "bs_power_w=1"], "--radio applies to the physical cell presets"),
])
def test_bad_cell_input_is_one_line_exit_2_nothing_written(capsys, tmp_path, monkeypatch, argv, needle):
    monkeypatch.chdir(tmp_path)  # undone after the case: later imports find the project where it is
    extra = ["--out", str(tmp_path / "r")] if argv[0] == "run" else []
    code, out, err = run_cli(capsys, *argv, *extra)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_default_figure_goes_under_results_and_is_named_by_its_configuration(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["cell", "uma-3.5ghz", "--devices", "3", "--rounds", "5", "--json"]) == 0
    figure = Path(json.loads(capsys.readouterr().out)["figure"])
    assert figure.parent == Path("results") and figure.name.startswith("cell_uma-3.5ghz_s0_") and figure.exists()
    assert main(["cell", "uma-3.5ghz", "--devices", "4", "--rounds", "5", "--json"]) == 0
    other = Path(json.loads(capsys.readouterr().out)["figure"])
    assert other != figure and sorted(p.name for p in (tmp_path / "results").iterdir()) == sorted([figure.name, other.name])
    assert main(["cell", "uma-3.5ghz", "--devices", "0"]) == 2  # refused: nothing made
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == sorted([figure.name, other.name])


def test_drop_prints_the_calibration_quantities(capsys):
    code, out, _ = run_cli(capsys, "cell", "umi-3.5ghz", "--drop", "300", "--radio", "carrier_hz=6e9", "--json")
    data = json.loads(out)
    assert code == 0 and data["drop"] == 300 and data["carrier_hz"] == 6e9
    assert len(data["coupling_loss_db"]) == len(data["geometry_db"]) == 300
    assert data["percentiles"]["p50"]["geometry_db"] == pytest.approx(float(np.percentile(data["geometry_db"], 50)))
    assert min(data["coupling_loss_db"]) > 40.0  # a loss, in positive dB


def test_the_map_hexagon_faces_the_neighbour_sites():
    """netsim.radio.multicell.hexagon: a site's hexagon has its sides half an ISD away, towards each first-ring site."""
    import numpy as np

    from netsim.radio.multicell import hexagon
    from netsim.radio.multicell import hex_sites

    corners = hexagon((0.0, 0.0), 200.0)
    midpoints = (corners[:-1] + corners[1:]) / 2
    assert np.allclose(np.hypot(*midpoints.T), 100.0)
    for site in hex_sites(200.0)[1:7]:
        assert np.isclose(midpoints, site / 2).all(axis=1).any()
