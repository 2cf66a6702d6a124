"""Files a folder or a user hands in, read as a hostile file would be written, and the settings
and faults of issues 30 and 36: every one ends in one line naming the problem (exit status 2),
a run again where the folder is ours to redo, or the work kept. Each cause of the issues is a
named case here (or in tests/test_reuse_key.py and tests/test_plugins.py)."""

import dataclasses
import gzip
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from child_env import checkout_environment
from scenarios.cli.main import main
from tests.shannon_link import SHANNON

ROOT = Path(__file__).resolve().parents[1]
RUN = ["run", "--out", "out", "--rounds", "1", "--no-figure"]
CELL_RUN = RUN + ["--system", "umi-3.5ghz", "--algorithm", "fedavg"]


def reseal(folder: Path) -> None:
    """Recompute the folder's sealed index, as a forger would."""
    from scenarios.records.result_folder import INDEX_FILE, SEALED_FILES, file_sha256, seal

    files = {name: file_sha256(folder / name) for name in SEALED_FILES}
    (folder / INDEX_FILE).write_text(json.dumps({"files": files, "seal": seal(files)}))


def edit(folder: Path, name: str, change) -> None:
    path = folder / name
    path.write_bytes(change(path.read_bytes()))
    reseal(folder)


def replace_cell(text: bytes, column: str, value: str) -> bytes:
    """rounds.csv with the last row's ``column`` set to ``value``."""
    lines = text.decode().splitlines()
    index = lines[0].split(",").index(column)
    cells = lines[-1].split(",")
    cells[index] = value
    return "\n".join(lines[:-1] + [",".join(cells)]).encode() + b"\n"


def config_with(**changes):
    def change(text: bytes) -> bytes:
        config = json.loads(text)
        for key, value in changes.items():
            if "." in key:
                outer, inner = key.split(".")
                config[outer][inner] = value
            else:
                config[key] = value
        return json.dumps(config).encode()
    return change


FOLDERS = {  # name -> how a copy of a complete folder is damaged (then, where it says so, resealed)
    "deep_index": lambda f: (f / "checksums.json").write_text("[" * 100_000 + "]" * 100_000),
    "nested_index": lambda f: (f / "checksums.json").write_text("[" * 100 + "]" * 100),
    "huge_number_summary": lambda f: edit(f, "summary.json", lambda t: t.replace(b'"status"', b'"x": 1e999, "status"')),
    "infinity_summary": lambda f: edit(f, "summary.json", lambda t: t.replace(b'"status"', b'"x": -Infinity, "status"')),
    "nan_time": lambda f: edit(f, "rounds.csv", lambda t: replace_cell(t, "time", "nan")),
    "inf_accuracy": lambda f: edit(f, "rounds.csv", lambda t: replace_cell(t, "mean_accuracy", "inf")),
    "huge_bits": lambda f: edit(f, "rounds.csv", lambda t: replace_cell(t, "uplink_bits", "1e999")),
    "word_round": lambda f: edit(f, "rounds.csv", lambda t: replace_cell(t, "round", "last")),
    "no_columns": lambda f: edit(f, "rounds.csv", lambda t: b"a,b\n1,2\n"),
    "binary_rounds": lambda f: edit(f, "rounds.csv", lambda t: b"\xff\xfe\x00garbage\n"),
    "zero_link": lambda f: ((f / "rounds.csv").unlink(), (f / "rounds.csv").symlink_to("/dev/zero")),
    "fifo": lambda f: ((f / "rounds.csv").unlink(), os.mkfifo(f / "rounds.csv")),
    "escaping_link": lambda f: (shutil.copy(f / "summary.json", f.parent / "outside.json"), (f / "summary.json").unlink(),
                                (f / "summary.json").symlink_to(f.parent / "outside.json")),
    "index_folder": lambda f: ((f / "checksums.json").unlink(), (f / "checksums.json").mkdir()),
    "garbage_plans": lambda f: edit(f, "plans.jsonl", lambda t: b"garbage\n"),
    "plans_not_plans": lambda f: edit(f, "plans.jsonl", lambda t: b'{"round": 0, "plan": 5}\n'),
    "plans_skip_a_round": lambda f: edit(f, "plans.jsonl", lambda t: t.split(b"\n", 1)[1]),
    "plans_stranger": lambda f: edit(f, "plans.jsonl", lambda t: t.replace(b'"participants": [0,', b'"participants": [20,', 1)),
    "plans_one_round_short": lambda f: edit(f, "plans.jsonl", lambda t: t[:t.rstrip(b"\n").rindex(b"\n") + 1]),
    "plans_negative_bits": lambda f: edit(f, "plans.jsonl", lambda t: t.replace(b'"bits": ', b'"bits": -', 1)),
    "copy": lambda f: None,  # a copy of the complete folder: the same run, not another seed
    "config_list": lambda f: edit(f, "config.json", lambda t: b"[]"),
    "zero_time_unit": lambda f: edit(f, "config.json", config_with(**{"system.t_dl": 0.0})),
    "no_system": lambda f: edit(f, "config.json", config_with(system=None)),
    "non_utf8_summary": lambda f: edit(f, "summary.json", lambda t: t.replace(b'"status"', b'"\xff": 1, "status"')),
}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """A complete folder (digits-rotation, FedAvg, 2 rounds) and its damaged copies, by name."""
    from scenarios.execution.runner import RunSpec, run_experiment

    root = tmp_path_factory.mktemp("hostile")
    complete = Path(run_experiment(RunSpec("digits-rotation", "fedavg", rounds=2, training={"backend": "loop"}), root)["result_dir"])
    paths = {"complete": str(complete)}
    for name, damage in FOLDERS.items():
        (root / name).mkdir()
        folder = root / name / complete.name
        shutil.copytree(complete, folder)
        damage(folder)
        paths[name] = str(folder)
    paths.update(sweep_files(root))
    paths.update(data_folders(root))
    paths.update(trace_files(root))
    paths.update(timed_runs(root))
    (root / "a_file").write_text("not a folder\n")
    paths["a_file"] = str(root / "a_file")
    return paths


def timed_runs(root: Path) -> dict[str, str]:
    """Runs whose learning followed their timing (issue 57): FedBuff (2 rounds, wired) and a cell
    with batteries (1 round)."""
    from scenarios.execution.runner import RunSpec, run_experiment

    loop = {"backend": "loop"}
    return {
        "fedbuff": run_experiment(RunSpec("digits-rotation", "fedavg", system="wired", rounds=2, orchestrator="fedbuff",
                                          training=loop), root / "timed")["result_dir"],
        "battery": run_experiment(RunSpec("digits-rotation", "fedavg", system="umi-3.5ghz", rounds=1,
                                          radio={"battery_j": 100.0, **SHANNON}, training=loop),  # no device in outage
                                 root / "timed")["result_dir"],
    }


SWEEPS = {
    "deep_sweep": "a = " + "[" * 5000 + "]" * 5000 + "\n",
    "nested_sweep": "a = " + "[" * 100 + "]" * 100 + "\n",
    "list_scenario": '[settings]\nscenario = ["a"]\n[[algorithm]]\nname = "fedavg"\n',
    "number_system": '[settings]\nsystem = 5\n[[algorithm]]\nname = "fedavg"\n',
    "number_algorithm": '[[algorithm]]\nname = 5\n',
    "cased_algorithm": '[[algorithm]]\nname = "FedAvg"\n',
    "spaced_algorithm": '[[algorithm]]\nname = "fedavg "\n',
    "table_seeds": "seeds = { a = 1 }\n[[algorithm]]\nname = \"fedavg\"\n",
    "repeated_codec": '[settings]\nuplink_codec = "qsgd:bits=4,bits=8"\n[[algorithm]]\nname = "fedavg"\n',
    "settings_and_grid": '[settings]\nrho = 2\n[grid]\nrho = [1, 3]\n[[algorithm]]\nname = "fedavg"\n',
    "table_in_settings_and_grid": '[settings]\ntraining = { lr = 0.1 }\n[grid]\ntraining = { lr = [0.1, 0.2] }\n'
                                  '[[algorithm]]\nname = "fedavg"\n',
}


def sweep_files(root: Path) -> dict[str, str]:
    paths = {}
    for name, text in SWEEPS.items():
        (root / f"{name}.toml").write_text(text)
        paths[name] = str(root / f"{name}.toml")
    (root / "latin1.toml").write_bytes(b'# caf\xe9\n[[algorithm]]\nname = "fedavg"\n')
    paths["latin1_sweep"] = str(root / "latin1.toml")
    os.mkfifo(root / "fifo.toml")
    paths["fifo_sweep"] = str(root / "fifo.toml")
    (root / "folder.toml").mkdir()
    paths["folder_sweep"] = str(root / "folder.toml")
    return paths


def trace_files(root: Path) -> dict[str, str]:
    """Availability traces (``--radio availability_trace=``): nested 100,000 deep (once a
    RecursionError), a link to /dev/null, a FIFO (once waited on for ever), a folder."""
    folder = root / "traces"
    folder.mkdir()
    (folder / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (folder / "null.json").symlink_to("/dev/null")
    os.mkfifo(folder / "fifo.json")
    (folder / "folder.json").mkdir()
    return {f"{path.stem}_trace": str(path) for path in folder.iterdir()}


def idx_header(dims: tuple[int, ...]) -> bytes:
    return bytes([0, 0, 0x08, len(dims)]) + struct.pack(f">{len(dims)}I", *dims)


def data_folders(root: Path) -> dict[str, str]:
    """MNIST folders whose training images are: a gzip bomb (a header promising 4 GB x 784), a
    valid header then 64 MB of zeros past the payload, a FIFO, a link to /dev/zero; a truncated
    Stack Overflow tarball and a truncated CIFAR-10 one."""
    from scenarios.datasets.fakes import write_fake_cifar, write_fake_idx_dataset, write_fake_stackoverflow

    paths = {}
    images = "train-images-idx3-ubyte.gz"
    for name in ("bomb", "trailing", "fifo_images", "zero_images"):
        folder = root / name / "MNIST"
        write_fake_idx_dataset(folder, "mnist", n_train=12)
        target = folder / images
        target.unlink()
        if name == "bomb":
            target.write_bytes(gzip.compress(idx_header((0xFFFFFFFF, 28, 28)) + bytes(1 << 20), compresslevel=1))
        elif name == "trailing":
            target.write_bytes(gzip.compress(idx_header((12, 28, 28)) + bytes(12 * 784 + (64 << 20)), compresslevel=1))
        elif name == "fifo_images":
            os.mkfifo(target)
        else:
            target.symlink_to("/dev/zero")
        paths[name] = str(root / name)
    tarball = write_fake_stackoverflow(root / "so" / "stack_overflow")
    tarball.write_bytes(tarball.read_bytes()[: tarball.stat().st_size // 2])
    paths["truncated_so"] = str(root / "so")
    write_fake_cifar(root / "cifar" / "CIFAR10", "cifar10")
    (cifar,) = (root / "cifar" / "CIFAR10").glob("*.tar.gz")
    cifar.write_bytes(cifar.read_bytes()[: cifar.stat().st_size // 3])
    paths["truncated_cifar"] = str(root / "cifar")
    return paths


PLOT = ["plot", "--out", "f.png"]
FOLDER_CASES = [
    (PLOT + ["{deep_index}"], "its checksums.json is unreadable (it is nested deeper than 64 levels)"),
    (PLOT + ["{nested_index}"], "its checksums.json is unreadable (it is nested deeper than 64 levels)"),
    (PLOT + ["{huge_number_summary}"], "its summary.json is unreadable (it holds 1e999)"),
    (["penalty", "{huge_number_summary}"], "its summary.json is unreadable (it holds 1e999)"),
    (PLOT + ["{infinity_summary}"], "its summary.json is unreadable (it holds -Infinity)"),
    (PLOT + ["{nan_time}"], "is not a result folder (ValueError: it holds nan)"),
    (["export", "{nan_time}", "--tensorboard", "tb"], "is not a result folder (ValueError: it holds nan)"),
    (PLOT + ["{inf_accuracy}"], "is not a result folder (ValueError: it holds inf)"),
    (["export", "{inf_accuracy}", "--tensorboard", "tb"], "is not a result folder (ValueError: it holds inf)"),
    (PLOT + ["{huge_bits}"], "is not a result folder (ValueError: it holds 1e999)"),
    (PLOT + ["{word_round}"], "is not a result folder (ValueError: invalid literal for int()"),
    (PLOT + ["{no_columns}"], "is not a result folder (KeyError"),
    (PLOT + ["{binary_rounds}"], "rounds.csv: "),
    (PLOT + ["{zero_link}"], "rounds.csv is missing or unreadable (is a symbolic link, not a file of the folder)"),
    (["export", "{zero_link}", "--tensorboard", "tb"], "rounds.csv is missing or unreadable (is a symbolic link"),
    (PLOT + ["{fifo}"], "rounds.csv is missing or unreadable (is a pipe, not a regular file)"),
    (["penalty", "{fifo}"], "rounds.csv is missing or unreadable (is a pipe, not a regular file)"),
    (PLOT + ["{escaping_link}"], "summary.json is missing or unreadable (is a symbolic link, not a file of the folder)"),
    (PLOT + ["{index_folder}"], "its checksums.json is unreadable (is a folder, not a regular file)"),
    (PLOT + ["{complete}", "{garbage_plans}", "--systems", "wired"], "has no readable plans.jsonl (Expecting value"),
    (PLOT + ["{plans_not_plans}", "--systems", "wired"], "has no readable plans.jsonl (line {'round': 0, 'plan': 5}"),
    (PLOT + ["{plans_skip_a_round}", "--systems", "wired"], "has no readable plans.jsonl (line 1 is round 1, not 0)"),
    (PLOT + ["{plans_stranger}", "--systems", "wired"], "has no readable plans.jsonl (round 1 planned participants with device 20, not one of the run's 20 devices (0..19))"),
    (PLOT + ["{plans_negative_bits}", "--systems", "wired"], "has no readable plans.jsonl (round 1 planned a stream of bits -153920.0, not a finite number >= 0)"),
    (PLOT + ["{plans_one_round_short}", "--systems", "wired"], "has no readable plans.jsonl (it holds 2 rounds, the run 2 after round 0)"),
    (PLOT + ["{config_list}"], "its config.json is not a JSON object"),
    (PLOT + ["{zero_time_unit}"], "its system's t_dl is 0.0, not a positive time"),
    (["export", "{zero_time_unit}", "--tensorboard", "tb"], "its system's t_dl is 0.0, not a positive time"),
    (PLOT + ["{no_system}"], "is not a result folder (AttributeError"),
    (PLOT + ["{non_utf8_summary}"], "its summary.json is unreadable (is not UTF-8 text (byte "),
    (PLOT + ["{a_file}"], "is not a complete result folder: no such folder"),
    (PLOT + ["{complete}", "{complete}"], "is given twice; a mean over seeds takes each run once"),
    (PLOT + ["{complete}", "{copy}"], "fedavg: 2 runs of seed 0 (copies of one run); a mean over seeds takes one run per seed"),
    (PLOT + ["{complete}", "--title", "$\\frac{{$"], "--title '$\\\\frac{$' is not text matplotlib can draw (ParseSyntaxException"),
    (PLOT + ["{complete}", "--title", "$x^$"], "--title '$x^$' is not text matplotlib can draw"),
    (PLOT + ["{complete}", "--title", "a $b_{{$ c"], "--title 'a $b_{$ c' is not text matplotlib can draw"),
    (PLOT + ["{complete}", "--title", "$\\nocommand$"], "(ParseFatalException: Unknown symbol: \\nocommand"),
    (PLOT + ["{complete}", "--budget", "energy_j=1"], "--budget energy_j needs runs that record energy (a cell)"),  # no figure
    (PLOT + ["{complete}", "--budget", "time=5", "--budget", "time=10"], "--budget time= is given twice; give each axis once"),
]
SWEEP_CASES = [
    (["sweep", "/dev/zero"], "sweep file /dev/zero is a device or socket, not a regular file"),
    (["sweep", "{fifo_sweep}"], "fifo.toml is a pipe, not a regular file"),
    (["sweep", "{folder_sweep}"], "folder.toml is a folder, not a regular file"),
    (["sweep", "{latin1_sweep}"], "latin1.toml is not UTF-8 text (byte 5)"),
    (["sweep", "{deep_sweep}"], "deep_sweep.toml: not valid TOML (it is nested deeper than 64 levels)"),
    (["sweep", "{nested_sweep}"], "nested_sweep.toml: not valid TOML (it is nested deeper than 64 levels)"),
    (["sweep", "{list_scenario}"], "unknown scenario ['a']"),
    (["sweep", "{number_system}"], "system must be text, got 5"),
    (["sweep", "{number_algorithm}"], "algorithm must be a name, got 5"),
    (["sweep", "{cased_algorithm}"], "unknown algorithm 'FedAvg'; choose from: fedavg,"),
    (["sweep", "{spaced_algorithm}"], "unknown algorithm 'fedavg '; choose from: fedavg,"),
    (["sweep", "{table_seeds}"], "seeds"),
    (["sweep", "{repeated_codec}"], "codec qsgd parameter bits is given twice ('qsgd:bits=4,bits=8'); give it once"),
    (["sweep", "{settings_and_grid}"], "rho is set both in [settings] and in [grid]; set it in one of them"),
    (["sweep", "{table_in_settings_and_grid}"], "training.lr is set both in [settings] and in [grid]"),
]
DATA_CASES = [
    (RUN + ["--scenario", "mnist-rotation", "--data-dir", "{bomb}"], "its idx header promises 3,367,254,359,296 bytes, above the 4,294,967,296 read"),
    (RUN + ["--scenario", "mnist-rotation", "--data-dir", "{trailing}"], "1 unexpected bytes after the idx payload"),
    (RUN + ["--scenario", "mnist-rotation", "--data-dir", "{fifo_images}"], "train-images-idx3-ubyte.gz is a pipe, not a regular file"),
    (RUN + ["--scenario", "mnist-rotation", "--data-dir", "{zero_images}"], "train-images-idx3-ubyte.gz is a device or socket"),
    (["scenario", "mnist-rotation", "--data-dir", "{bomb}"], "its idx header promises"),
    (["scenario", "stackoverflow-tags", "--data-dir", "{truncated_so}"], "cannot read the tarball"),
    (["scenario", "cifar10-concept-shift", "--data-dir", "{truncated_cifar}"], "cifar-10-python.tar.gz"),
]
SETTING_CASES = [
    (CELL_RUN + ["--radio", "cpu_hz=1e-300"], "radio cpu_hz must be a finite number in [1000, 1000000000000], got 1e-300"),
    (CELL_RUN + ["--radio", "cpu_hz=1000", "--radio", "cycles_per_sample=1e12"],
     "radio cpu_hz=1000 with cycles_per_sample=1e+12 makes a local update of"),
    (CELL_RUN + ["--radio", "downlink_bandwidth_hz=1e-300"], "radio downlink_bandwidth_hz must be a finite number in [1000, "),
    (CELL_RUN + ["--radio", "uplink_bandwidth_hz=1"], "radio uplink_bandwidth_hz must be a finite number in [1000, "),
    (CELL_RUN + ["--radio", "bs_power_w=1e-300"], "radio bs_power_w must be a finite number in [1e-09, 10000], got 1e-300"),
    (CELL_RUN + ["--radio", "ue_power_w=0"], "radio ue_power_w must be a finite number in [1e-09, 10000], got 0"),
    (CELL_RUN + ["--radio", "carrier_hz=1"], "radio carrier_hz must be a finite number in [500000000, 100000000000], got 1"),
    (CELL_RUN + ["--radio", "min_bps_per_hz=1e-300"], "radio min_bps_per_hz must be a finite number in [0.001, 100], got 1e-300"),
    (CELL_RUN + ["--radio", "max_bps_per_hz=0"], "radio max_bps_per_hz must be a finite number in [0.001, 100], got 0"),
    (CELL_RUN + ["--radio", "inner_radius_m=1e-300"], "radio inner_radius_m must be a finite number in [1, 5000], got 1e-300"),
    (CELL_RUN + ["--radio", "kappa=-1"], "radio kappa must be a finite number in [0, 1e-20], got -1"),
    (CELL_RUN + ["--radio", "compute_extra_s=-1"], "radio compute_extra_s must be a finite number in [0, 1000000], got -1"),
    (CELL_RUN + ["--radio", "receive_power_w=-1"], "radio receive_power_w must be a finite number in [0, 10000], got -1"),
    (CELL_RUN + ["--radio", "bs_height_m=1"], "radio bs_height_m must be a finite number in (1, 1000], got 1"),
    (["cell", "umi-3.5ghz", "--radio", "cpu_hz=1e-300"], "radio cpu_hz must be a finite number in [1000, 1000000000000]"),
    (["cell", "umi-3.5ghz", "--radio", "cpu_hz=1e9", "--radio", "cpu_hz=2e9"], "--radio cpu_hz is given twice (1000000000.0 and"),
    (CELL_RUN + ["--radio", "cpu_hz=1e9", "--radio", "cpu_hz=2e9"], "--radio cpu_hz is given twice"),
    (RUN + ["--algorithm", "fedprox", "--option", "mu=1", "--option", "mu=2"], "--option mu is given twice (1 and 2); give it once"),
    (RUN + ["--uplink-codec", "qsgd:bits=4,bits=8"], "codec qsgd parameter bits is given twice ('qsgd:bits=4,bits=8')"),
    (RUN + ["--downlink-codec", "topk:fraction=0.1,fraction=0.2"], "codec topk parameter fraction is given twice"),
    (RUN + ["--algorithm", "fedavg", "--scheduler", "age-based", "--participation", "1"],
     "scheduler age-based chooses which devices take part, but with participation 1 all 20 do: it would change nothing"),
    (CELL_RUN + ["--scheduler", "best-channel", "--participation", "1"], "scheduler best-channel chooses which devices take part"),
    (CELL_RUN + ["--radio", "speed_kmh=38.901", "--radio", "interference=off"],  # the number is the word, as the API's
     "speed_kmh=38.901 sets speeds by the devices' indoor states, which the 19-site layout draws; give interference=on"),
    (RUN + ["--algorithm", ""], "unknown algorithm ''; choose from: fedavg,"),
    (RUN + ["--algorithm", "FedAvg"], "unknown algorithm 'FedAvg'; choose from: fedavg,"),
    (RUN + ["--algorithm", "fedavg "], "unknown algorithm 'fedavg '; choose from: fedavg,"),
    (RUN + ["--scenario", "Digits-Rotation"], "unknown scenario 'Digits-Rotation'"),
    (RUN + ["--system", "Wired"], "unknown system 'Wired'"),
    (["export", "{complete}", "--tensorboard", "{a_file}"], "cannot write to output folder"),
    (["list", "--plugin", "this"], "plugin this declares nothing"),  # the Zen it prints stays off stdout
]
OUTPUT_CASES = [  # an output that would be empty, overflowing or ignored is refused before it is written
    (["cell", "umi-3.5ghz", "--drop", "5", "--out", "x.png"],
     "--drop prints the calibration table and draws no figure; leave out --out and --force"),
    (["export", "{complete}", "--tensorboard", "tb", "--step", "energy"],
     "has no energy series (it did not run on a physical cell); leave out --step energy"),
    (["round-time", "--devices", "3", "--system", "umi-3.5ghz", "--model-bits", "1e200"],
     "--model-bits must be a finite number in (0, 1000000000000000], got 1e+200"),
    (["round-time", "--devices", "3", "--model-bits", "1e6"],
     "--model-bits applies to the physical cell presets; wireless-slow-ul counts time in T_dl per model"),
]
TWICE_CASES = [  # argparse keeps the last of an option given twice: every command refuses it
    (RUN + ["--rounds", "2"], "--rounds is given twice (1 and 2); give it once (see fl-cosim run --help)"),
    (RUN + ["--seed", "1", "--seed", "2"], "--seed is given twice (1 and 2)"),
    (RUN + ["--system", "wired", "--system", "wireless-slow-ul"], "--system is given twice (wired and wireless-slow-ul)"),
    (RUN + ["--lr", "0.1", "--lr", "0.2"], "--lr is given twice (0.1 and 0.2)"),
    (RUN + ["--out", "other"], "--out is given twice (out and other)"),
    (RUN + ["--scenario", "digits-rotation", "--scenario", "digits-rotation"], "--scenario is given twice"),
    (RUN + ["--algorithm", "fedavg", "--algorithm", "nope"], "--algorithm is given twice (fedavg and nope)"),
    (RUN + ["--algorithm", "fedavg", "local", "--algorithm", "oracle"], "--algorithm is given twice (fedavg local and oracle)"),
    (RUN + ["--quiet", "--quiet"], "--quiet is given twice; give it once"),
    (["compare", "--seeds", "2", "--seeds", "3"], "--seeds is given twice (2 and 3)"),
    (["cell", "umi-3.5ghz", "--seed", "1", "--seed", "2"], "--seed is given twice (1 and 2); give it once (see fl-cosim cell --help)"),
    (["round-time", "--devices", "3", "--devices", "4"], "--devices is given twice (3 and 4)"),
    (["sweep", "{settings_and_grid}", "--jobs", "1", "--jobs", "2"], "--jobs is given twice (1 and 2)"),
    (["--threads", "1", "--threads", "2", "list"], "--threads is given twice (1 and 2); give it once (see fl-cosim --help)"),
]
TRACE = CELL_RUN + ["--radio"]
TRACE_CASES = [  # read bounded (contract.files), before anything trains
    (TRACE + ["availability_trace={deep_trace}"], "traces/deep.json is not valid JSON (it is nested deeper than 64 levels)"),
    (TRACE + ["availability_trace={null_trace}"], "traces/null.json is a device or socket, not a regular file"),
    (TRACE + ["availability_trace={fifo_trace}"], "traces/fifo.json is a pipe, not a regular file"),
    (TRACE + ["availability_trace={folder_trace}"], "traces/folder.json is a folder, not a regular file"),
]
NOT_RETIMED = [  # issue 57: FedBuff's plans.jsonl holds {"plan": null} (re-timed, every system reported 0.0); batteries,
    # availability and motion change who takes part
    (["retime", "{fedbuff}", "--systems", "wired"], "ran with --orchestrator fedbuff, whose dispatches follow the arrivals"),
    (PLOT + ["{complete}", "{fedbuff}", "--systems", "wired"], "ran with --orchestrator fedbuff"),
    (["retime", "{battery}", "--systems", "umi-3.5ghz"], "ran on a cell in time (battery_j=100.0), which changes who takes part"),
    (["retime", "{complete}", "--systems", "umi-3.5ghz:battery_j=0.001"],
     "system 'umi-3.5ghz:battery_j=0.001': battery_j=0.001 changes who takes part as the clock runs"),
    (["retime", "{complete}", "--systems", "umi-3.5ghz:mean_off_s=5,mean_on_s=0.01"], "mean_off_s=5.0 changes who takes part"),
    (PLOT + ["{complete}", "--systems", "umi-3.5ghz:speed_kmh=3"], "speed_kmh=3.0 changes who takes part"),
]
CASES = FOLDER_CASES + SWEEP_CASES + DATA_CASES + SETTING_CASES + OUTPUT_CASES + TWICE_CASES + TRACE_CASES + NOT_RETIMED


@pytest.mark.parametrize("argv,needle", CASES, ids=[" ".join(a[:1] + a[-2:]) for a, _ in CASES])
def test_hostile_input_is_one_line(capsys, tmp_path, monkeypatch, hostile, argv, needle):
    monkeypatch.chdir(tmp_path)
    argv = [a.format(**hostile) for a in argv]
    code = main(argv)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and "Traceback" not in err, err
    assert needle in lines[0], lines[0]
    assert os.listdir(tmp_path) == []


def test_an_availability_trace_s_faults_are_one_line_wherever_it_is_read(tmp_path):
    """The trace's reader raises the user's-error type itself: wherever a cell binds its devices
    (``run`` and the others check first; ``retime`` and ``plot --systems`` bind a target of their
    own) a trace missing, or missing a device, is one line and exit status 2, never a traceback."""
    from contract.setting import UsageError
    from netsim.dynamics.availability import TraceAvailability

    short = tmp_path / "short.json"
    short.write_text(json.dumps({"devices": {"0": {"active": [0], "inactive": [5], "finish_time": 10}}}))
    with pytest.raises(UsageError, match=f"^availability trace: cannot read {tmp_path}/missing.json: No such file or directory$"):
        TraceAvailability.load(tmp_path / "missing.json", 1)
    with pytest.raises(UsageError, match=f"^availability trace {short}: no entry for device 1$"):
        TraceAvailability.load(short, 2)
    assert TraceAvailability.load(short, 1).sha256 == hashlib.sha256(short.read_bytes()).hexdigest()


def test_speed_kmh_38_901_is_the_table_s_speeds_on_the_command_line_as_in_the_api():
    """``--radio speed_kmh=38.901`` (read as a number) and the API's ``"38.901"`` are one cell:
    TR 38.901 Table 7.8-1's 3 km/h indoors and 30 km/h outdoors (docs/channel-in-time.md);
    a speed beside it is a speed."""
    from scenarios.cli.common import parse_options
    from scenarios.definitions.systems import get_system

    def speed(radio: dict):
        return get_system("umi-3.5ghz", radio=radio).cell.speed_kmh

    assert speed(parse_options(["speed_kmh=38.901"], "--radio")) == speed({"speed_kmh": "38.901"}) == "38.901"
    assert speed({"speed_kmh": 38.901}) == "38.901"
    assert speed(parse_options(["speed_kmh=38.9"], "--radio")) == 38.9


def test_the_api_refuses_a_non_finite_summary(hostile):
    from scenarios.api import UsageError, load

    with pytest.raises(UsageError, match=r"its summary.json is unreadable \(it holds 1e999\)"):
        load(hostile["huge_number_summary"])


def test_a_summary_past_the_size_limit_is_refused(tmp_path, hostile, monkeypatch):
    import scenarios.records.result_folder as result_folder

    monkeypatch.setattr(result_folder, "MAX_JSON_BYTES", 100)
    assert "its checksums.json is unreadable (is larger than 100 bytes)" in result_folder.folder_problem(hostile["complete"])


def forged_copy(hostile, tmp_path: Path, name: str) -> Path:
    folder = tmp_path / Path(hostile["complete"]).name
    shutil.copytree(hostile["complete"], folder)
    FOLDERS[name](folder)
    return folder


@pytest.mark.parametrize("name,why", [
    ("huge_number_summary", "its summary.json is unreadable (it holds 1e999)"),
    ("zero_link", "rounds.csv is missing or unreadable (is a symbolic link, not a file of the folder)"),
    ("fifo", "rounds.csv is missing or unreadable (is a pipe, not a regular file)"),
    ("deep_index", "its checksums.json is unreadable (it is nested deeper than 64 levels)"),
    ("garbage_plans", "its plans.jsonl is unreadable (Expecting value: line 1 column 1 (char 0))"),
    ("plans_one_round_short", "its plans.jsonl is unreadable (it holds 2 rounds, the run 2 after round 0)"),
])
def test_run_redoes_a_hostile_folder_of_its_own(capsys, tmp_path, hostile, name, why):
    folder = forged_copy(hostile, tmp_path, name)
    code = main(["run", "--algorithm", "fedavg", "--rounds", "2", "--backend", "loop", "--out", str(tmp_path), "--no-figure",
                 "--json"])
    captured = capsys.readouterr()
    assert code == 0 and captured.err.splitlines() == [f"fl-cosim: running {folder.name} again: {why}"]
    assert (folder / "rounds.csv").is_file() and not (folder / "rounds.csv").is_symlink()
    summary = json.loads(captured.out)["runs"][0]
    assert summary["final_mean_accuracy"] == json.loads((Path(hostile["complete"]) / "summary.json").read_text())["final_mean_accuracy"]


def test_a_config_whose_provenance_is_not_a_table_is_run_again(capsys, tmp_path, hostile):
    folder = tmp_path / Path(hostile["complete"]).name
    shutil.copytree(hostile["complete"], folder)
    edit(folder, "config.json", config_with(provenance=5))
    assert main(["run", "--algorithm", "fedavg", "--rounds", "2", "--backend", "loop", "--out", str(tmp_path), "--no-figure",
                 "--quiet"]) == 0
    assert capsys.readouterr().err == f"fl-cosim: running {folder.name} again: its config.json records no provenance\n"


# --- faults that keep work ------------------------------------------------------------------
def ordinary_environment() -> dict:
    """This one, with stdout and stderr buffered as Python has them by default (whatever
    PYTHONUNBUFFERED says here): what a buffer still holds at exit is where a broken stream
    shows."""
    return checkout_environment(drop=("PYTHONUNBUFFERED",))


def cli_process(argv, **kwargs):
    return subprocess.run([sys.executable, "-m", "scenarios.cli.main", *argv], cwd=ROOT, capture_output=True,
                          env=ordinary_environment(), timeout=300, **kwargs)


def close_fd(fd: int):
    return lambda: os.close(fd)


def test_a_reader_that_goes_away_never_aborts_a_run(tmp_path):
    """``run ... 2>&1 | head -2``: the progress breaks the pipe; the runs are still written, and
    the exit status is the closed stdout's (141), never the diverged one (1)."""
    process = subprocess.Popen([sys.executable, "-m", "scenarios.cli.main", "run", "--algorithm", "fedavg", "local",
                                "--rounds", "2", "--backend", "loop", "--no-figure", "--out", str(tmp_path)],
                               cwd=ROOT, env=ordinary_environment(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    first = [process.stdout.readline(), process.stdout.readline()]
    process.stdout.close()
    assert process.wait(timeout=300) == 141 and all(first)
    from scenarios.records.result_folder import folder_problem

    folders = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert len(folders) == 2 and all(folder_problem(p) is None for p in folders)


def test_a_broken_stderr_alone_leaves_the_status_and_the_output_whole(tmp_path):
    """``run ... 2> >(exit)``: the progress's reader is gone from the start, stdout is fine. The
    table is printed whole, the run is written, and the status is 0 (never Python's 120 for a
    stream it could not flush at exit)."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "scenarios.cli.main", "run", "--algorithm", "fedavg", "--rounds", "2",
                               "--backend", "loop", "--no-figure", "--out", str(tmp_path)], cwd=ROOT, env=ordinary_environment(),
                              stdout=subprocess.PIPE, stderr=write, timeout=300)
    finally:
        os.close(write)
    assert done.returncode == 0 and b"fedavg" in done.stdout
    assert len([p for p in tmp_path.iterdir() if p.is_dir()]) == 1


def test_a_closed_stderr_never_aborts_a_run(tmp_path):
    """``run ... 2>&-``: progress and messages go nowhere; the run is written and the status is 0."""
    done = cli_process(["run", "--algorithm", "fedavg", "--rounds", "1", "--backend", "loop", "--no-figure", "--out",
                        str(tmp_path)], preexec_fn=close_fd(2))
    assert done.returncode == 0 and b"fedavg" in done.stdout
    assert len([p for p in tmp_path.iterdir() if p.is_dir()]) == 1


def test_list_with_a_closed_stdout_is_141_not_0():
    done = cli_process(["list", "--json"], preexec_fn=close_fd(1))
    assert done.returncode == 141 and done.stderr == b"fl-cosim: error: stdout is closed; the output is lost\n"


def test_list_on_a_full_device_is_one_line():
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "scenarios.cli.main", "list"], cwd=ROOT, stdout=full,
                              stderr=subprocess.PIPE, env=checkout_environment(), timeout=300)
    assert done.returncode == 2
    assert done.stderr == b"fl-cosim: error: cannot write the output: No space left on device\n"


def test_a_non_utf8_out_under_the_c_locale_is_written(tmp_path):
    out = os.fsencode(str(tmp_path)) + b"/r\xff"
    done = subprocess.run([sys.executable, "-m", "scenarios.cli.main", "run", "--algorithm", "fedavg", "--rounds", "1",
                           "--backend", "loop", "--quiet", "--out", out], cwd=ROOT, capture_output=True, timeout=300,
                          env=checkout_environment(LC_ALL="C"))
    assert done.returncode == 0, done.stderr
    written = os.listdir(out)
    assert any(name.endswith(b".png") if isinstance(name, bytes) else name.endswith(".png") for name in written)


def test_a_symlinked_old_folder_is_refused_before_training(capsys, tmp_path, monkeypatch):
    from scenarios.definitions import orchestrators
    from scenarios.execution.runner import RunSpec, prepare, resolve

    name = prepare(resolve(RunSpec("digits-rotation", "fedavg", rounds=1, training={"backend": "loop"}))).name
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / name).symlink_to(tmp_path / "elsewhere")

    def never(*args, **kwargs):
        raise AssertionError("trained although its folder cannot be written")

    monkeypatch.setattr(orchestrators, "run_cosimulation", never)  # the synchronous orchestrator's loop
    code = main(["run", "--algorithm", "fedavg", "--rounds", "1", "--backend", "loop", "--out", str(tmp_path), "--no-figure"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("fl-cosim: error: ") and "is a symbolic link, not a run folder" in err
    assert os.listdir(tmp_path / "elsewhere") == []


def test_concurrent_writers_of_one_folder_always_leave_one_whole_folder(tmp_path):
    """Eight writers, each renaming in a whole folder of its own twenty times over: at every end,
    the folder is whole (every file by one writer) and no temporary is left."""
    from scenarios.records.atomic import staged_folder

    final = tmp_path / "run"
    failures: list[BaseException] = []

    def writer(index: int) -> None:
        try:
            for _ in range(20):
                with staged_folder(final) as folder:
                    for name in ("a", "b", "c", "d"):
                        (folder / name).write_text(str(index))
        except BaseException as error:  # noqa: BLE001 (reported below)
            failures.append(error)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    assert len({p.read_text() for p in final.iterdir()}) == 1 and sorted(p.name for p in final.iterdir()) == list("abcd")


def test_a_killed_figure_writer_leaves_nothing_for_the_next(capsys, tmp_path, hostile):
    stale = tmp_path / f".f.png.{2**22 + 7}.abcd.tmp"  # a pid no process has
    stale.write_bytes(b"half a figure")
    assert main(["plot", hostile["complete"], "--out", str(tmp_path / "f.png")]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.png"]


def test_export_on_a_full_disk_is_one_line_and_leaves_nothing(capsys, hostile, tmp_path):
    pytest.importorskip("tensorboard")
    mount = tmp_path / "disk"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        with open(mount / "filler", "wb", buffering=0) as filler, pytest.raises(OSError):
            while True:
                filler.write(b"\0" * 4096)
                filler.flush()
        code = main(["export", hostile["complete"], "--tensorboard", str(mount / "tb")])
        err = capsys.readouterr().err
        assert code == 2 and err == f"fl-cosim: error: cannot write {str(mount / 'tb')!r}: No space left on device\n"
        assert os.listdir(mount) == ["filler"]
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def test_at_least_250_malformed_inputs_and_faults_in_the_suite():
    """The count the issue asks for: the malformed inputs and faults of tests/test_bad_input.py,
    this file's cases and named faults, the settings without effect of tests/test_settings.py and the
    plugin orchestrators refused in tests/test_orchestrators.py."""
    import test_bad_input
    import test_orchestrators
    import test_settings

    named = [name for name in globals() if name.startswith("test_") and name != "test_hostile_input_is_one_line"
             and "at_least" not in name]
    total = len(test_bad_input.CASES) + len(test_bad_input.FAULTS) + len(CASES) + len(named) + len(test_settings.WITHOUT_EFFECT)
    plugin_orchestrators = len(test_orchestrators.NOT_READ) + len(test_orchestrators.BROKEN) + len(test_orchestrators.REGISTRATION)
    total += plugin_orchestrators
    assert total >= 250, total
    trust = (ROOT / "docs" / "trust.md").read_text()  # the numbers the page quotes are these
    assert f"**{len(test_bad_input.CASES)} malformed inputs**" in trust and f"**{len(test_bad_input.FAULTS)} faults**" in trust
    assert f"**{len(CASES)} hostile inputs**" in trust and f"**{len(named)} named faults**" in trust
    assert f"**{len(test_settings.WITHOUT_EFFECT)} settings without effect**" in trust
    assert f"**{plugin_orchestrators} plugin orchestrators refused**" in trust
    assert f"the total, **{total}**" in trust and f"hold {total} malformed inputs" in (ROOT / "docs" / "cli.md").read_text()


# --- issue 36: never silently wrong -----------------------------------------------------------
SCALED = """
from learning.algorithms.fedavg import FedAvg


class ScaledFedAvg(FedAvg):
    name = "scaled-fedavg"

    def aggregate(self, server_round, arrived):
        import scale_helper  # imported by a method, long after the plugin loaded

        super().aggregate(server_round, arrived)
        self.theta *= scale_helper.SCALE


ALGORITHMS = [ScaledFedAvg]
"""


def test_a_helper_a_plugin_method_imports_is_in_the_reuse_key(capsys, tmp_path, plugin_registries, monkeypatch):
    """Editing a helper that only a method imports (SCALE 1.0 -> 0.0) trains again: its
    accuracy is the zeroed model's, not the stale folder's. The edit keeps the file's size and
    modification time, with bytecode caching on (Python's default): Python would run the
    bytecode it cached of the old text, and the run must run the new one
    (scenarios/plugin_source.py)."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # whatever PYTHONDONTWRITEBYTECODE says here
    plugin, helper = tmp_path / "scaled_plugin.py", tmp_path / "scale_helper.py"
    plugin.write_text(SCALED)
    helper.write_text("SCALE = 1.0\n")
    stamp = helper.stat().st_mtime_ns
    sys.path.insert(0, str(tmp_path))
    argv = ["run", "--plugin", str(plugin), "--algorithm", "scaled-fedavg", "--rounds", "2", "--backend", "loop",
            "--no-figure", "--json", "--out", str(tmp_path / "out")]
    try:
        assert main(argv) == 0
        first = json.loads(capsys.readouterr().out)["runs"][0]
        recorded = json.loads((Path(first["result_dir"]) / "config.json").read_text())["provenance"]["code_files"]
        assert str(helper) in recorded
        helper.write_text("SCALE = 0.0\n")
        os.utime(helper, ns=(stamp, stamp))  # rewritten within the same second, as a script would
        sys.modules.pop("scale_helper")  # a new process would import it afresh
        assert main(argv) == 0
        captured = capsys.readouterr()
        second = json.loads(captured.out)["runs"][0]
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("scale_helper", None)
    assert captured.err.startswith(f"fl-cosim: running {Path(first['result_dir']).name} again: its code differ")
    assert second["result_dir"] == first["result_dir"]
    # the zeroed model answers one class everywhere: 0.095 (the stale folder said 0.156)
    assert second["final_mean_accuracy"] == pytest.approx(0.0950, abs=5e-4) != first["final_mean_accuracy"]


PLANNER = """
import dataclasses

from contract import Stream
from learning.algorithms.fedavg import FedAvg


class BadPlan(FedAvg):
    name = "bad-plan"

    def plan_round(self, server_round):
        plan = super().plan_round(server_round)
        if server_round == 0:
            return plan
        return dataclasses.replace(plan, {change})


ALGORITHMS = [BadPlan]
"""
SCHEDULER = """
from netsim.scheduling import Policy


class BadPolicy(Policy):
    name = "bad-policy"

    def choose(self, server_round, report):
        return {chosen}


SCHEDULERS = [BadPolicy]
"""
BOUNDARY = [  # what a plugin hands the engine -> the one line that refuses it
    ("algorithm", "participants=plan.participants + (999,)",
     "algorithm bad-plan planned participants with device 999, not one of the run's 20 devices (0..19)"),
    ("algorithm", "participants=plan.participants + (-1,)", "planned participants with device -1, not one of the run's 20"),
    ("algorithm", "participants=plan.participants + plan.participants[:1]", "planned participants with device 0 twice"),
    ("algorithm", "participants=plan.participants + (2.0,)", "planned participants with device 2.0, not an integer"),
    ("algorithm", "streams=(Stream(plan.streams[0].devices, float('nan')),)", "planned a stream of bits nan, not a finite number >= 0"),
    ("algorithm", "uplink_bits={**plan.uplink_bits, 0: -1.0}", "planned uplink bits -1.0, not a finite number >= 0"),
    ("algorithm", "compute_scale={0: 0.0}", "planned a compute scale 0.0, not a finite number > 0"),
    ("scheduler", "(0, -1)", "scheduler bad-policy scheduled device -1, not one of the run's 20 devices (0..19)"),
    ("scheduler", "(-3,)", "scheduler bad-policy scheduled device -3, not one of the run's 20"),
    ("scheduler", "(999,)", "scheduler bad-policy scheduled device 999, not one of the run's 20"),
    ("scheduler", "(1, 1)", "scheduler bad-policy scheduled device 1 twice"),
]


@pytest.mark.parametrize("kind,change,needle", BOUNDARY, ids=[f"{k} {c}" for k, c, _ in BOUNDARY])
def test_what_a_plugin_hands_the_engine_is_checked_at_the_boundary(capsys, tmp_path, plugin_registries, kind, change, needle):
    """Once a sealed 'finished' folder (device -1 trained device 19), or IndexError (exit 3) and
    an empty results/: now one line naming the plugin, exit 2, nothing left."""
    plugin = tmp_path / "boundary_plugin.py"
    if kind == "algorithm":
        plugin.write_text(PLANNER.replace("{change}", change))
        argv = ["--algorithm", "bad-plan"]
    else:
        plugin.write_text(SCHEDULER.replace("{chosen}", change))
        argv = ["--algorithm", "fedavg", "--scheduler", "bad-policy", "--participation", "0.5"]
    try:
        code = main(["run", "--plugin", str(plugin), *argv, "--rounds", "1", "--backend", "loop", "--no-figure", "--quiet",
                     "--out", str(tmp_path / "results")])
    finally:
        sys.modules.pop("boundary_plugin", None)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and needle in err, err
    assert not (tmp_path / "results").exists()


def test_a_plugin_method_missing_a_module_is_the_plugin_s_fault(capsys, tmp_path, plugin_registries):
    plugin = tmp_path / "needy_plugin.py"
    plugin.write_text(SCALED.replace("scale_helper", "no_such_module_of_anyone").replace("scaled-fedavg", "needy"))
    try:
        code = main(["run", "--plugin", str(plugin), "--algorithm", "needy", "--rounds", "1", "--backend", "loop",
                     "--no-figure", "--quiet", "--out", str(tmp_path / "results")])
    finally:
        sys.modules.pop("needy_plugin", None)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "plugin needy_plugin.py (line 9) raised ModuleNotFoundError: No module named 'no_such_module_of_anyone'" in err
    assert not (tmp_path / "results").exists()


def test_the_api_averages_seeds_only(tmp_path):
    """api.compare once reported two copies of one run as 2 seeds (std 0.0), and FedAvg seed 0
    beside Local seed 1 as one label: refused in one line before anything runs."""
    from scenarios.api import RunSpec, UsageError, compare

    same = RunSpec("digits-rotation", "fedavg", rounds=1, training={"backend": "loop"})
    with pytest.raises(UsageError, match=r"^a: its runs must differ in the seed alone, each seed once \(seeds \[0, 0\]\)$"):
        compare({"a": [same, same]}, out=tmp_path / "out")
    mixed = [same, RunSpec("digits-rotation", "local", rounds=1, seed=1, training={"backend": "loop"})]
    with pytest.raises(UsageError, match=r"^a: its runs must differ in the seed alone, each seed once \(seeds \[0, 1\]\)$"):
        compare({"a": mixed}, out=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_mean_over_seeds_refuses_runs_of_two_configurations(hostile):
    """What the specs' check cannot see (folders of two configurations under one label) the
    resolved configs' check refuses."""
    from scenarios.records.result_folder import read_run
    from scenarios.records.result_folder import check_seeds
    from scenarios.errors import UsageError

    run = read_run(hostile["complete"])
    other = dataclasses.replace(run, folder="elsewhere", config={**run.config, "seed": 1, "rounds": 7})
    with pytest.raises(UsageError, match=r"^fedavg: its runs differ in more than the seed \(rounds\); a mean over seeds"):
        check_seeds("fedavg", [run, other])
    check_seeds("fedavg", [run, dataclasses.replace(other, config={**run.config, "seed": 1})])  # seeds of one config


def test_the_api_keeps_the_command_line_s_promises(tmp_path, hostile):
    """No file replaced without force=True; UsageError, never AttributeError or TypeError, for
    wrong types; NumPy integers are integers; one folder is one folder, not its letters."""
    import numpy as np

    from scenarios.api import RunSpec, UsageError, load, plot, run

    figure = tmp_path / "f.png"
    figure.write_bytes(b"the user's own figure")
    with pytest.raises(UsageError, match=r"f.png' exists; give another out_file or force=True to replace it$"):
        plot([hostile["complete"]], figure)
    assert figure.read_bytes() == b"the user's own figure"
    assert plot(hostile["complete"], figure, force=True) == figure and figure.read_bytes() != b"the user's own figure"
    for call, message in [(lambda: run("digits-rotation"), "a run is a RunSpec, got 'digits-rotation'"),
                          (lambda: run(RunSpec("digits-rotation", "fedavg"), out=5), "out must be a path, got 5"),
                          (lambda: load(None), "folder must be a path, got None"),
                          (lambda: plot(5, tmp_path / "g.png"), "result_dirs must be a list of folders, got 5"),
                          (lambda: plot([hostile["complete"]], 5), "out_file must be a path, got 5"),
                          (lambda: plot([hostile["complete"]], tmp_path / "g.png", x=[1]), "x must be a list of axis names"),
                          (lambda: plot([hostile["complete"]], tmp_path / "g.png", title=5), "title must be text, got 5")]:
        with pytest.raises(UsageError, match="^" + re.escape(message)):
            call()
    assert not (tmp_path / "g.png").exists()
    spec = RunSpec("digits-rotation", "fedavg", rounds=np.int64(2), seed=np.int32(0), training={"backend": "loop"})
    result = run(spec, out=Path(hostile["complete"]).parent)
    assert str(result.folder) == hostile["complete"]  # the same run as rounds=2, seed=0: reused


@pytest.mark.parametrize("command,taken", [("compare", "file"), ("compare", "link"), ("sweep", "file"), ("sweep", "link")])
def test_a_seed_s_folder_name_taken_is_found_before_any_run_trains(capsys, tmp_path, monkeypatch, command, taken):
    """compare and sweep once trained and wrote the other seeds, then refused the taken name."""
    from scenarios.definitions import orchestrators
    from scenarios.execution.runner import RunSpec, prepare, resolve

    out = tmp_path / "out"
    out.mkdir()
    name = prepare(resolve(RunSpec("digits-rotation", "fedavg", rounds=1, seed=1, training={"backend": "loop"}))).name
    if taken == "file":
        (out / name).write_text("a file of the user's\n")
    else:
        (out / name).symlink_to(tmp_path)

    def never(*args, **kwargs):
        raise AssertionError("trained before a refusal")

    monkeypatch.setattr(orchestrators, "run_cosimulation", never)  # the synchronous orchestrator's loop
    if command == "compare":
        argv = ["compare", "--algorithm", "fedavg", "--seeds", "2", "--rounds", "1", "--backend", "loop", "--jobs", "1"]
    else:
        sweep = tmp_path / "two_seeds.toml"
        sweep.write_text('seeds = [0, 1]\n[settings]\nrounds = 1\ntraining = { backend = "loop" }\n'
                         '[[algorithm]]\nname = "fedavg"\n')
        argv = ["sweep", str(sweep), "--jobs", "1"]
    code = main([*argv, "--quiet", "--out", str(out)])
    err = capsys.readouterr().err
    why = "is a symbolic link, not a run folder" if taken == "link" else "exists and is not a folder"
    assert code == 2 and err.count("\n") == 1 and why in err, err
    assert os.listdir(out) == [name]


def test_lambda_study_on_a_full_disk_leaves_nothing_half_written(capsys, tmp_path, monkeypatch):
    """The figure, written last, fails: the JSON, CSV and Markdown written before it are taken back.
    (A flat silhouette curve: one step, k = 1, so one run trains.)"""
    import errno

    import figures.lambda_study
    import scenarios.execution.silhouette

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(scenarios.execution.silhouette, "setup_silhouette", lambda prepared: {1: 0.0, 2: 0.0})
    monkeypatch.setattr(figures.lambda_study, "plot_lambda_study", full)
    code = main(["lambda-study", "--rounds", "1", "--systems", "wired", "--backend", "loop", "--quiet", "--out", str(tmp_path)])
    assert code == 2 and capsys.readouterr().err == "fl-cosim: error: No space left on device\n"
    assert not list(tmp_path.glob("lambda_study_*")) and any(p.is_dir() for p in tmp_path.iterdir())


def test_two_classes_of_one_plugin_with_one_new_name_clash_with_each_other(capsys, tmp_path, plugin_registries):
    plugin = tmp_path / "twins_plugin.py"
    plugin.write_text(SCALED.replace("ALGORITHMS = [ScaledFedAvg]", "class Twin(ScaledFedAvg):\n    pass\n\n\n"
                                     "ALGORITHMS = [ScaledFedAvg, Twin]").replace("    pass", '    name = "scaled-fedavg"'))
    try:
        code = main(["list", "--plugin", str(plugin)])
    finally:
        sys.modules.pop("twins_plugin", None)
    assert code == 2 and capsys.readouterr().err == ("fl-cosim: error: plugin twins_plugin: two of its algorithms are named "
                                                     "'scaled-fedavg'; give each its own name\n")


def test_a_plugin_writing_to_file_descriptor_1_leaves_run_json_clean(capfd, tmp_path, plugin_registries):
    plugin = tmp_path / "fd_writer.py"
    plugin.write_text("import os\n\nfrom learning.algorithms.fedavg import FedAvg\n\nos.write(1, b'written to fd 1 at load\\n')\n\n\n"
                      "class Loud(FedAvg):\n    name = 'loud'\n\n\nALGORITHMS = [Loud]\n")
    try:
        code = main(["run", "--plugin", str(plugin), "--algorithm", "loud", "--system", "wired", "--rounds", "1",
                     "--backend", "loop", "--no-figure", "--quiet", "--json", "--out", str(tmp_path / "out")])
    finally:
        sys.modules.pop("fd_writer", None)
    out, err = capfd.readouterr()
    assert code == 0 and json.loads(out)["runs"][0]["algorithm"] == "loud", err
    assert err == "written to fd 1 at load\n"
