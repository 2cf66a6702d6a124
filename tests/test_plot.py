"""``fl-cosim plot`` for papers: seeds of one configuration as one mean line with a min-max band,
IEEE column width, vector PDF with TrueType fonts, the command line in the file's metadata."""

import re

import numpy as np
import pytest

from figures.accuracy_time import seed_groups
from figures.bands import seed_band
from scenarios.result_folder import read_run
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
    assert len(labels) == 3 and "fedavg" in labels and any(re.fullmatch(r"fedavg \[[0-9a-f]{6}\]", l) for l in labels)


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
    assert main(["plot", *runs, "--x", "energy", "--out", str(tmp_path / "e.pdf")]) == 2
    err = capsys.readouterr().err
    assert "no run has energy to plot" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "e.pdf").exists()
