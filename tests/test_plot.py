"""``fl-cosim plot`` for papers: seeds of one configuration as one mean line with a min-max band,
IEEE column width, vector PDF with TrueType fonts, the command line in the file's metadata."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from figures.accuracy_time import seed_groups
from figures.bands import seed_band
from scenarios.records.result_folder import read_run
from scenarios.cli.main import main


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """FedAvg and Local, seeds 0 and 1, 3 rounds on the wired system."""
    out = tmp_path_factory.mktemp("runs")
    for seed in ("0", "1"):
        assert main(["run", "--algorithm", "fedavg", "local", "--system", "wired", "--rounds", "3", "--seed", seed,
                     "--out", str(out), "--no-figure", "--quiet"]) == 0
    return sorted(str(path) for path in out.iterdir() if path.is_dir())


def test_seeds_of_one_configuration_are_one_line_with_their_mean(runs):
    groups = seed_groups([read_run(folder) for folder in runs], with_system=False)
    assert sorted(groups) == ["fedavg", "local"] and all(len(seeds) == 2 for seeds in groups.values())
    fedavg = groups["fedavg"]
    band = seed_band(fedavg, "bits")
    accuracies = np.array([curve.mean_accuracy for curve in fedavg])
    np.testing.assert_allclose(band.mean, accuracies.mean(axis=0))
    np.testing.assert_allclose(band.low, accuracies.min(axis=0))
    np.testing.assert_allclose(band.x, np.array(fedavg[0].downlink_bits) + fedavg[0].uplink_bits)  # same bits each seed


def test_same_label_other_configuration_is_another_line(runs, tmp_path):
    other = tmp_path / "other"
    assert main(["run", "--algorithm", "fedavg", "--system", "wired", "--rounds", "2", "--out", str(other),
                 "--no-figure", "--quiet"]) == 0
    curves = [read_run(folder) for folder in runs] + [read_run(next(other.iterdir()))]
    labels = sorted(seed_groups(curves, with_system=False))
    assert sorted(labels) == ["fedavg (rounds=2)", "fedavg (rounds=3)", "local"]  # each says what differs


def test_pdf_at_column_width_with_truetype_fonts_and_the_command_line(runs, tmp_path, capsys):
    figure = tmp_path / "fig.pdf"
    assert main(["plot", *runs, "--x", "time", "bits", "--worst", "--out", str(figure)]) == 0
    pdf = figure.read_bytes()
    width_pt = float(re.search(rb"/MediaBox \[\s*0 0 ([0-9.]+) ", pdf).group(1))
    assert width_pt == pytest.approx(3.5 * 72)
    assert b"/FontFile2" in pdf and b"/Type3" not in pdf  # embedded TrueType, no Type 3 fonts
    assert b"/Subject (fl-cosim plot " in pdf and b"--worst" in pdf
    assert main(["plot", *runs, "--width", "double", "--out", str(tmp_path / "wide.pdf")]) == 0
    assert float(re.search(rb"/MediaBox \[\s*0 0 ([0-9.]+) ", (tmp_path / "wide.pdf").read_bytes()).group(1)) == pytest.approx(7.16 * 72)


def test_energy_axis_without_a_cell_is_one_line(runs, tmp_path, capsys):
    assert main(["plot", *runs, "--x", "energy", "--out", str(tmp_path / "new" / "e.pdf")]) == 2
    err = capsys.readouterr().err
    assert "no run has energy to plot" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "new").exists()  # refused: no folder left behind
    assert main(["plot", *runs, "--out", str(tmp_path / "new" / "t.pdf")]) == 0  # its folder created
    assert (tmp_path / "new" / "t.pdf").read_bytes().startswith(b"%PDF")


def test_retime_onto_named_systems_with_overrides(runs, capsys):
    """``retime``: on the run's own system its own times; on a preset with overrides the run's
    plans re-timed on that system (the one ``parse_system`` builds), barrier never faster."""
    from scenarios.definitions.systems import parse_system
    from scenarios.reports.retime import retimed_curve

    systems = ["wired", "wired:rho=10", "wired:rho=10,mode=barrier", "wireless-slow-ul:inv_mu=0,t_min=2"]
    assert main(["retime", *runs, "--systems", *systems, "--target", "0.2", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [(r["run"], r["system"]) for r in rows] == [(Path(f).name, s) for f in runs for s in systems]
    for row in rows:
        folder = next(f for f in runs if Path(f).name == row["run"])
        timed = retimed_curve(folder, parse_system(row["system"]).build())
        assert row["end_time"] == timed.time[-1] and row["time_unit"] == "T_dl" and row["energy_j"] is None
        reached = [t for t, a in zip(timed.time, timed.mean_accuracy) if a >= 0.2]
        assert row["time_to_target"] == (reached[0] if reached else None)
        if row["system"] == "wired":  # its own system: its own times
            assert row["end_time"] == read_run(folder).summary["simulated_time"]
    ends = {(r["run"], r["system"]): r["end_time"] for r in rows}
    for folder in runs:  # a slower uplink costs FedAvg time; Local uploads nothing
        name = Path(folder).name
        assert ends[name, "wired:rho=10,mode=barrier"] >= ends[name, "wired:rho=10"] >= ends[name, "wired"]
        assert (ends[name, "wired:rho=10"] > ends[name, "wired"]) == ("fedavg" in name)


def drawn_figure(monkeypatch, runs, *argv):
    """The figure ``plot`` draws (captured before it is saved) and its exit status."""
    import figures.accuracy_time as page

    figures = []
    monkeypatch.setattr(page, "save_figure", lambda fig, out_file, metadata=None: figures.append(fig) or out_file)
    code = main(["plot", *runs, *argv])
    return code, figures[0]


@pytest.mark.parametrize("width,per_row", [("column", 2), ("double", 3)])
def test_panels_wrap_into_rows_without_overlap_and_the_legend_names_the_band(runs, monkeypatch, tmp_path, width, per_row):
    code, fig = drawn_figure(monkeypatch, runs, "--systems", "wireless-slow-ul", "wired", "uma-3.5ghz", "--width", width,
                             "--out", str(tmp_path / "f.png"))
    assert code == 0
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    panels = [ax for ax in fig.get_axes() if ax.get_visible()]
    assert len(panels) == 3 and len({round(ax.get_position().y0, 3) for ax in panels}) == -(-3 // per_row)
    boxes = [ax.get_tightbbox(renderer) for ax in panels]  # titles, tick and axis labels included
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    figure_box = fig.bbox
    assert all(figure_box.x0 <= b.x0 and b.x1 <= figure_box.x1 + 0.5 and figure_box.y0 <= b.y0 and b.y1 <= figure_box.y1 + 0.5
               for b in boxes)  # nothing clipped at the edges
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "shaded: min-max over 2 seeds" in legend and {"fedavg", "local"} <= set(legend)
    styles = {line.get_label(): (line.get_marker(), line.get_color()) for line in panels[0].get_lines()}
    assert styles["fedavg"][0] != styles["local"][0] and styles["fedavg"][1] != styles["local"][1]


def test_lines_that_coincide_stay_distinguishable():
    from figures.bands import Band, draw_band, legend_below
    from figures.style import algorithm_style, ieee_style

    fedavg, cfl = algorithm_style("fedavg"), algorithm_style("cfl")  # they coincide in the journal's Fig. 6
    assert all(fedavg[key] != cfl[key] for key in ("color", "marker", "linestyle"))
    with ieee_style() as plt:
        fig, ax = plt.subplots()
        band = Band(np.arange(10.0), np.ones(10), np.ones(10), np.ones(10), 1)
        draw_band(ax, "fedavg", band)
        draw_band(ax, "cfl", band)
        draw_band(ax, "local", Band(np.arange(10.0), np.zeros(10), np.zeros(10), np.zeros(10), 1))
        marked = [set(np.arange(10)[line.get_markevery()[0]::line.get_markevery()[1]]) for line in ax.get_lines()]
        legend_below(fig, [ax], {1})
        legend = [text.get_text() for text in fig.legends[0].get_texts()]
        plt.close(fig)
    assert marked[0] and marked[1] and not marked[0] & marked[1]  # markers on alternate points
    assert legend == ["fedavg", "cfl (= fedavg)", "local"]  # a line hidden under another is named


def test_each_run_is_retimed_with_its_own_network_stream(runs, monkeypatch, tmp_path):
    from scenarios.reports.retime import retimed_curve
    from scenarios.definitions.seeds import seed_streams
    from scenarios.definitions.systems import get_system

    fedavg = [folder for folder in runs if "_fedavg_" in folder]
    slow = get_system("wireless-slow-ul")  # random compute times (1/mu > 0): the stream matters

    def mean_time(seed_of) -> np.ndarray:
        return np.mean([retimed_curve(f, slow, np.random.default_rng(seed_streams(seed_of(f)).network)).time for f in fedavg], axis=0)

    def drawn(*extra) -> np.ndarray:
        _, fig = drawn_figure(monkeypatch, runs, "--systems", "wireless-slow-ul", *extra, "--out", str(tmp_path / "f.png"))
        return next(line for line in fig.get_axes()[0].get_lines() if line.get_label() == "fedavg").get_xdata()

    own = mean_time(lambda f: read_run(f).config["seed"])
    np.testing.assert_allclose(drawn(), own)
    np.testing.assert_allclose(drawn("--seed", "0"), mean_time(lambda f: 0))
    assert not np.allclose(own, mean_time(lambda f: 0))


def test_the_worst_device_panels_start_their_own_rows(runs, monkeypatch, tmp_path):
    code, fig = drawn_figure(monkeypatch, runs, "--systems", "wireless-slow-ul", "wired", "uma-3.5ghz", "--worst",
                             "--out", str(tmp_path / "f.png"))
    fig.canvas.draw()
    panels = [ax for ax in fig.get_axes() if ax.get_visible()]
    mean = [ax.get_position().y0 for ax in panels if ax.get_ylabel() == "avg. validation acc."]
    worst = [ax.get_position().y1 for ax in panels if ax.get_ylabel() == "worst-device acc."]
    assert code == 0 and len(mean) == len(worst) == 3 and max(worst) < min(mean)  # every worst panel below every mean one
    boxes = [ax.get_tightbbox(fig.canvas.get_renderer()) for ax in panels]
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


# --- issue 57: runs pooled as seeds only where they differ in the seed alone; one time unit a panel ---
def hand_curve(seed: int, system: dict, clock: dict | None = None, label: str = "fedavg", unit: str = "T_dl",
               top: float = 0.3) -> "RunCurve":
    """A run's curve made by hand: evaluations at 0, 1 and 2 (accuracy up to ``top``) with the
    config the labels read."""
    from scenarios.records.result_folder import RunCurve

    config = {"seed": seed, "system": system, "rounds": 2, **({"clock": clock} if clock else {})}
    return RunCurve(label, [0, 1, 2], [0.0, 1.0, 2.0], [0.1, 0.2, top], [0.1, 0.2, top], [0.0, 1.0, 2.0], [0.0, 1.0, 2.0],
                    {"simulated_time": 2.0, "system": system["name"], "status": "finished", "downlink_bits": 2.0,
                     "uplink_bits": 2.0}, config, folder=f"run{seed}{id(config)}", time_unit=unit,
                    energy_j=[0.0, 1.0, 2.0] if unit == "s" else None)


WIRED = {"name": "wired", "rho": 1.0}
STATIC = {"name": "umi-3.5ghz", "kind": "physical", "cell": {}}
MOVING = {"name": "umi-3.5ghz", "kind": "physical", "cell": {"speed_kmh": 3.0}}


def test_runs_that_differ_in_more_than_the_seed_are_lines_that_say_how():
    """A normalized and a cell run, a static and a moving cell, a full and a budget-stopped run:
    never one line (``plot --budget time=5`` averaged 5 T_dl with 5 s as "2 seeds")."""
    runs = [hand_curve(0, WIRED), hand_curve(1, WIRED), hand_curve(0, WIRED, {"until": {"uplink_bits": 1e7}}),
            hand_curve(0, STATIC, unit="s"), hand_curve(1, STATIC, unit="s"), hand_curve(0, MOVING, unit="s")]
    groups = seed_groups(runs)
    assert {label: len(group) for label, group in groups.items()} == {
        "fedavg (wired, no budget)": 2, "fedavg (wired, until uplink_bits=1e+07)": 1,
        "fedavg (umi-3.5ghz, 0 km/h, no budget)": 2, "fedavg (umi-3.5ghz, 3 km/h, no budget)": 1}
    assert list(seed_groups([hand_curve(0, WIRED), hand_curve(1, WIRED)])) == ["fedavg"]  # seeds alone: one plain line
    orchestrated = seed_groups([hand_curve(0, WIRED), hand_curve(0, WIRED, {"orchestrator": "fedbuff"})])
    assert list(orchestrated) == ["fedavg (sync)", "fedavg (fedbuff)"]


def test_runs_in_two_time_units_are_two_panels_and_a_long_legend_fits_the_column(monkeypatch, tmp_path):
    """T_dl and seconds never share an axis (it was labelled "simulated time / T_dl / simulated
    time (s)"); legend labels as long as a configuration's differences stay inside the figure."""
    import figures.accuracy_time as page

    drawn = []
    monkeypatch.setattr(page, "save_figure", lambda fig, out_file, metadata=None: drawn.append(fig) or out_file)
    runs = [hand_curve(0, WIRED), hand_curve(0, WIRED, {"until": {"uplink_bits": 1e7}}, top=0.4),
            hand_curve(0, STATIC, unit="s", top=0.5), hand_curve(0, MOVING, unit="s", label="user-centric k=auto ul=qsgd:bits=4", top=0.6)]
    page.plot_accuracy_vs_time({None: runs}, tmp_path / "f.png", page.PlotOptions(x_axes=("time", "rounds")))
    fig = drawn[0]
    fig.canvas.draw()
    panels = [ax for ax in fig.get_axes() if ax.get_visible()]
    assert [(ax.get_title(), ax.get_xlabel()) for ax in panels] == [
        ("normalized systems", "simulated time / $T_{dl}$"), ("cells", "simulated time (s)"), ("", "communication round")]
    assert [len(ax.get_lines()) for ax in panels] == [2, 2, 4]
    legend = fig.legends[0]
    box = legend.get_window_extent(fig.canvas.get_renderer())
    assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1  # nothing clipped at the column's edges
    texts = [t.get_text().replace("\n", " ") for t in legend.get_texts()]
    assert texts == ["fedavg (wired, no budget)", "fedavg (wired, until uplink_bits=1e+07)", "fedavg (umi-3.5ghz, no budget)",
                     "user-centric k=auto ul=qsgd:bits=4 (umi-3.5ghz)"]  # the systems differ: each label names its own


@pytest.fixture(scope="module")
def cell_run(tmp_path_factory):
    """FedAvg, 1 round on umi-3.5ghz."""
    out = tmp_path_factory.mktemp("cell")
    assert main(["run", "--algorithm", "fedavg", "--system", "umi-3.5ghz", "--rounds", "1", "--out", str(out),
                 "--no-figure", "--quiet"]) == 0
    return str(next(out.iterdir()))


def test_a_time_budget_over_two_time_units_is_refused_before_the_figure(runs, cell_run, tmp_path, capsys):
    figure = tmp_path / "f.pdf"
    assert main(["plot", runs[0], cell_run, "--budget", "time=5", "--out", str(figure)]) == 2
    err = capsys.readouterr().err
    assert "--budget time= reads every run's time in its own unit; these runs count it in T_dl and s" in err
    assert len(err.strip().splitlines()) == 1 and not figure.exists()


def test_budgets_on_several_axes_in_one_command(runs, cell_run, tmp_path, capsys):
    """``--budget`` repeats, one axis each; rows are the figure's lines (seeds pooled only where
    they differ in the seed alone)."""
    assert main(["plot", *runs, "--budget", "time=20,100", "--budget", "uplink_bits=1e7", "--out", str(tmp_path / "f.pdf"),
                 "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["within_budget"]
    assert [(r["algorithm"], r["axis"], r["budget"], r["seeds"]) for r in rows] == [
        (label, axis, budget, 2) for label in ("fedavg", "local") for axis, budget in (("time", 20.0), ("time", 100.0))
    ] + [(label, "uplink_bits", 1e7, 2) for label in ("fedavg", "local")]
    mixed = main(["plot", runs[0], cell_run, "--budget", "uplink_bits=1e7", "--out", str(tmp_path / "g.pdf"), "--json"])
    rows = json.loads(capsys.readouterr().out)["within_budget"]
    assert mixed == 0 and [r["algorithm"] for r in rows] == ["fedavg (wired)", "fedavg (umi-3.5ghz)"]


def test_a_figure_is_saved_into_a_folder_that_does_not_exist_yet(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from figures.save import save_figure

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    out = save_figure(fig, tmp_path / "new" / "deeper" / "f.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and [p.name for p in out.parent.iterdir()] == ["f.png"]
