"""A run's system given as a preset with overrides (``--system wired:rho=10``), the text plot
--systems, retime and lambda-study take: read once (``parse_system``) into the settings of the
same words, so it is the run the flags name (one config, one folder)."""

import dataclasses
import json
from pathlib import Path

import pytest

from netsim.normalized.system import NetworkSystem
from scenarios.cli.main import main
from scenarios.definitions.cells import PARAMETERS
from scenarios.definitions.settings import RunSpec
from scenarios.definitions.systems import parse_system
from scenarios.errors import UsageError
from scenarios.execution.spec import SYSTEM_FIELDS, resolve, run_label, system_settings

RUN = ["run", "--algorithm", "fedavg", "--rounds", "1", "--devices", "4", "--no-figure", "--json", "--quiet"]


def test_a_system_text_is_the_run_its_flags_name(capsys, tmp_path):
    folders = []
    for system in (["--system", "wired:rho=10,mode=barrier"], ["--system", "wired", "--rho", "10", "--mode", "barrier"]):
        assert main([*RUN, *system, "--out", str(tmp_path)]) == 0
        folders.append(json.loads(capsys.readouterr().out)["runs"][0]["result_dir"])
    assert folders[0] == folders[1] and len(list(tmp_path.iterdir())) == 1  # the second found the first's folder
    config = json.loads((Path(folders[0]) / "config.json").read_text())
    assert config["system"] == {"name": "wired", "rho": 10.0, "t_min": 1.0, "inv_mu": 0.0, "t_dl": 1.0, "mode": "barrier",
                                "deadline": None}
    assert config["label"] == "fedavg mode=barrier"


def test_a_cells_parameters_go_where_radio_puts_them():
    text = system_settings(RunSpec("digits-rotation", "fedavg", system="umi-3.5ghz:uplink_access=fdma,link_abstraction=nr,deadline=2"))
    flags = RunSpec("digits-rotation", "fedavg", system="umi-3.5ghz", radio={"uplink_access": "fdma", "link_abstraction": "nr"},
                    deadline=2.0)
    assert text == flags
    assert resolve(text).system == resolve(flags).system
    assert run_label(RunSpec("digits-rotation", "fedavg", system="wired:deadline=3")) == "fedavg deadline=3.0"


def test_the_overrides_are_the_words_of_the_flags():
    """One namespace: a normalized preset's override keys are RunSpec's settings (--rho, --t-min,
    --inv-mu, --mode, --deadline), NetworkSystem's fields of the same names; a cell's, its radio
    parameters (--radio's keys) besides mode and deadline."""
    fields = {f.name: f for f in dataclasses.fields(RunSpec)}
    with pytest.raises(UsageError, match="known: (.*)") as refused:
        parse_system("wired:speed=1")
    keys = refused.value.args[0].split("known: ")[1].split(", ")
    assert set(keys) == set(SYSTEM_FIELDS)
    for key in keys:
        assert fields[key].metadata["flag"] == f"--{key.replace('_', '-')}"
        assert key in {f.name for f in dataclasses.fields(NetworkSystem)}
    with pytest.raises(UsageError, match="known: (.*)") as refused:
        parse_system("umi-3.5ghz:speed=1")
    assert set(refused.value.args[0].split("known: ")[1].split(", ")) == {"mode", "deadline", *PARAMETERS}


@pytest.mark.parametrize("argv,needle", [
    (["--system", "wired:rhoo=10"], "system 'wired:rhoo=10': wired has no parameter 'rhoo'; known: rho, t_min, inv_mu, mode, deadline"),
    (["--system", "wired:rho=10", "--rho", "10"], "system 'wired:rho=10': rho is given twice (also --rho); give it once"),
    (["--system", "wired:rho=0"], "system 'wired:rho=0': rho must be a finite number in (0, "),
    (["--system", "umi-3.5ghz:uplink_access=pf", "--radio", "uplink_access=tdma"], "uplink_access is given twice (also --radio"),
    (["--system", "umi-3.5ghz:bs_power_w=inf"], "bs_power_w must be a finite number"),
])
def test_a_bad_system_text_is_one_line(capsys, tmp_path, argv, needle):
    for command in (RUN, ["compare", "--algorithm", "fedavg", "--rounds", "1", "--seeds", "1", "--quiet"]):
        assert main([*command, *argv, "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_sweep_files_system_takes_the_text_and_names_the_point_it_refuses(capsys, tmp_path):
    from scenarios.execution.sweep import expand, plan, setting_values

    config = {"settings": {"rounds": 1, "devices": 4}, "grid": {"system": ["wired:rho=1", "wired:rho=10"]},
              "algorithm": [{"name": "fedavg"}]}
    runs = plan(expand(config), None)
    assert [(run.spec.system, setting_values(run.config)["rho"]) for run in runs] == [("wired", 1.0), ("wired", 10.0)]
    file = tmp_path / "twice.toml"
    file.write_text('[settings]\nrho = 2.0\n[grid]\nsystem = ["wired:rho=1"]\n[[algorithm]]\nname = "fedavg"\n')
    assert main(["sweep", str(file), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert ("twice.toml: [grid] system=wired:rho=1; [[algorithm]] #1; seed 0: rho is set twice, in system 'wired:rho=1' and as rho = 2.0"
            in capsys.readouterr().err)
    assert not (tmp_path / "out").exists()
