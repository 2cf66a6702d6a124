"""Malformed input and faults across every subcommand: one line on stderr naming the problem,
exit status 2 (141 for a closed stdout), nothing on stdout, no traceback, and nothing written
(not even an empty --out folder). Faults are real where the machine lets a test make them (a
full and a read-only file system mounted for the test, a pipe without a reader), else raised
where files are written."""

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scenarios.cli.main import main

RUN = ["run", "--out", "out"]
COMPARE = ["compare", "--out", "out", "--rounds", "1", "--seeds", "1", "--jobs", "1"]
ROUND_TIME = ["round-time", "--devices", "5", "--streams", "2", "--rho", "1", "--t-min", "1", "--inv-mu", "0"]


def but(argv: list[str], flag: str, value: str) -> list[str]:
    """``argv`` with ``flag``'s value replaced: an option is given once."""
    index = argv.index(flag) + 1
    return argv[:index] + [value] + argv[index + 1:]


CASES = [
    # cell, penalty, reproduce
    (["cell", "nowhere-5g"], "unknown cell preset 'nowhere-5g'"),
    (["cell", "uma-3.5ghz", "--radio", "inner_radius_m=300"], "inner radius 300 m is above the outer radius 250 m"),
    (["cell", "umi-3.5ghz", "--radio", "carrier_hz=-3"], "radio carrier_hz must be a finite number in [500000000, 100000000000], got -3"),
    (["penalty", "nonexistent_folder"], "nonexistent_folder is not a complete result folder: no such folder"),
    (["reproduce", "--scale", "huge"], "unknown scale 'huge'"),
    (["reproduce", "--seeds", "0"], "--seeds must be an integer in 1..10000, got 0"),
    (["reproduce", "--jobs", "0"], "--jobs must be an integer in 1..256"),
    (["cell", "uma-3.5ghz", "--devices", "0"], "--devices must be an integer in 1..100000"),
    (["cell", "uma-3.5ghz", "--radio", "bogus=1"], "unknown radio parameter bogus"),
    (["cell", "uma-3.5ghz", "--radio", "fading_in_time=sometimes"], "radio fading_in_time must be one of block, doppler, got 'sometimes'"),
    (["cell", "uma-3.5ghz", "--radio", "fading_in_time=doppler", "--radio", "fading=none"],
     "fading_in_time=doppler times a fading the cell does not have (fading=none)"),
    # run
    (RUN + ["--scenario", "nope"], "unknown scenario 'nope'"),
    (RUN + ["--uplink-codec", "qsgd:bits=1"], "uplink-codec: codec qsgd parameter bits must be an integer in 2..16, got '1'"),
    (RUN + ["--downlink-codec", "topk:ef=1"], "error feedback (ef=1) applies to the uplink codec"),
    (RUN + ["--algorithm", "scaffold", "--uplink-codec", "sign"], "codecs apply to fedavg, oracle, user-centric"),
    (RUN + ["--scheduler", "lottery"], "scheduler must be one of random, best-channel"),
    (RUN + ["--scheduler", "best-channel"], "scheduler best-channel needs a cell's channel reports"),
    (RUN + ["--scheduler", "deadline-aware", "--system", "umi-3.5ghz"], "scheduler deadline-aware needs --deadline"),
    (RUN + ["--algorithm", "fedsgd"], "unknown algorithm 'fedsgd'"),
    (RUN + ["--algorithm", "fedavg", "fedsgd"], "unknown algorithm 'fedsgd'"),
    (RUN + ["--backend", "processes", "--device", "cuda"], "backend processes trains on the CPU; on cuda use backend batched"),
    (RUN + ["--rounds", "0"], "rounds must be an integer in 1..100000"),
    (RUN + ["--rounds", "1000000000000"], "rounds must be an integer in 1..100000"),
    (RUN + ["--rounds", "2.5"], "invalid int value"),
    (RUN + ["--seed", "-1"], "seed must be an integer in 0.."),
    (RUN + ["--system", "satellite"], "unknown system 'satellite'"),
    (RUN + ["--mode", "warp"], "invalid choice"),
    (RUN + ["--streams", "-3"], "user-centric option streams must be an integer in 1..100000 or 'auto', got -3"),
    (RUN + ["--streams", "many"], "user-centric option streams must be an integer in 1..100000 or 'auto', got 'many'"),
    (RUN + ["--algorithm", "user-centric", "--streams", "21", "--rounds", "1"], "streams must be in 1..20"),
    (RUN + ["--algorithm", "fedavg", "user-centric", "--streams", "99", "--rounds", "1"], "streams must be in 1..20"),
    (RUN + ["--algorithm", "fedavg", "--streams", "3"], "--streams applies to algorithms with streams"),
    (RUN + ["--lambda", "0.1"], "--lambda applies only with --streams auto"),
    (RUN + ["--algorithm", "user-centric", "--streams", "auto", "--lambda", "nan"], "option lam must be a finite number >= 0, got nan"),
    (RUN + ["--algorithm", "user-centric", "--streams", "auto", "--lambda", "-1"], "option lam must be a finite number >= 0"),
    (RUN + ["--algorithm", "user-centric", "--streams", "auto", "--lambda", "0.1", "--option", "lam=0.1"], "give lambda once"),
    (RUN + ["--deadline", "inf"], "deadline must be a finite number in (0, 10000000000], got inf"),
    (RUN + ["--deadline", "0"], "deadline must be a finite number in (0, 10000000000]"),
    (RUN + ["--algorithm", "fedprox", "--option", "mu=nan"], "fedprox option mu must be a finite number >= 0, got nan"),
    (RUN + ["--algorithm", "fedprox", "--option", "mu=inf"], "fedprox option mu must be a finite number >= 0, got inf"),
    (RUN + ["--algorithm", "fedprox", "--option", "mu=-1"], "fedprox option mu must be a finite number >= 0"),
    (RUN + ["--algorithm", "fedavg", "--option", "mu=1"], "no algorithm of this run takes option 'mu'"),
    (RUN + ["--algorithm", "fedprox", "--option", "mu"], "must look like key=value"),
    (RUN + ["--algorithm", "scaffold", "--option", "local_epochs=2.7"], "scaffold option local_epochs must be an integer in 1..10000, got 2.7"),
    (RUN + ["--algorithm", "pfedlia", "--option", "mode=sideways"], "pfedlia option mode must be one of centralized, peer-to-peer"),
    (RUN + ["--algorithm", "fedfomo", "--option", "M=50", "--rounds", "1"], "fedfomo M must be in 1..19"),
    (RUN + ["--algorithm", "oracle", "--scenario", "synthetic-gaussian"], "oracle needs a scenario with true groups"),
    (RUN + ["--eval-every", "0"], "evaluate-every must be an integer in 1..100000"),
    (RUN + ["--participation", "0"], "participation must be a finite number in (0, 1]"),
    (RUN + ["--participation", "1.5"], "participation must be a finite number in (0, 1]"),
    (RUN + ["--rho", "0"], "rho must be a finite number in (0, 100000]"),
    (RUN + ["--t-min", "-1"], "t-min must be a finite number in [0, 1000000000]"),
    (RUN + ["--inv-mu", "nan"], "inv-mu must be a finite number in [0, 1000000000], got nan"),
    (RUN + ["--scenario", "mnist-rotation", "--data-dir", "/nonexistent/data"], "mnist"),
    (RUN + ["--devices", "3"], "cannot split 3 devices into 4 groups"),
    (RUN + ["--devices", "200"], "1797 points cannot give 200 devices 20 each"),
    (RUN + ["--scenario", "synthetic-gaussian", "--algorithm", "fedavg", "--devices", "5"], "has no devices setting"),
    (RUN + ["--alpha", "0"], "alpha must be a finite number > 0"),
    (RUN + ["--alpha", "nan"], "alpha must be a finite number > 0, got nan"),
    # compare
    (but(COMPARE, "--seeds", "0"), "--seeds must be an integer in 1..10000"),
    (COMPARE + ["--target", "1.5"], "--target must be a finite number in (0, 1]"),
    (COMPARE + ["--target", "nan"], "--target must be a finite number in (0, 1], got nan"),
    (but(COMPARE, "--jobs", "0"), "--jobs must be an integer in 1..256"),
    (COMPARE + ["--algorithm", "fedavg", "--option", "lam=1"], "no algorithm of this run takes option 'lam'"),
    (COMPARE + ["--algorithm", "fedavg", "--streams", "2"], "--streams applies to algorithms with streams"),
    (COMPARE + ["--algorithm", "fedavg", "--deadline", "inf"], "deadline must be a finite number in (0, 10000000000]"),
    (COMPARE + ["--algorithm", "fedavg", "oracle", "--scenario", "synthetic-gaussian"], "oracle needs a scenario with true groups"),
    (but(COMPARE, "--rounds", "1000000000000") + ["--algorithm", "fedavg"], "rounds must be an integer in 1..100000"),
    # round-time
    (but(ROUND_TIME, "--rho", "inf") + ["--json"], "--rho must be a finite number in (0, 100000], got inf"),
    (but(ROUND_TIME, "--rho", "nan"), "--rho must be a finite number in (0, 100000], got nan"),
    (but(ROUND_TIME, "--devices", "1000000000"), "--devices must be an integer in 1..1000000"),
    (but(ROUND_TIME, "--devices", "0"), "--devices must be an integer in 1..1000000"),
    (but(ROUND_TIME, "--devices", "1000000") + ["--rounds", "1000"], "--devices x --rounds must be at most 100,000,000"),
    (but(ROUND_TIME, "--streams", "9"), "--streams must be in 1..5"),
    (but(ROUND_TIME, "--t-min", "-1"), "--t-min must be a finite number in [0, 1000000000]"),
    (but(ROUND_TIME, "--inv-mu", "inf"), "--inv-mu must be a finite number in [0, 1000000000], got inf"),
    (ROUND_TIME + ["--rounds", "0"], "rounds must be an integer in 1..100000"),
    (ROUND_TIME + ["--seed", "-1"], "--seed must be an integer in 0.."),
    (["round-time", "--streams", "2"], "the following arguments are required: --devices"),
    # streams
    (["streams", "--lambda", "-1"], "--lambda must be a finite number >= 0"),
    (["streams", "--lambda", "nan"], "--lambda must be a finite number >= 0, got nan"),
    (["streams", "--seed", "-1"], "--seed must be an integer in 0.."),
    (["streams", "--scenario", "nope"], "unknown scenario 'nope'"),
    # plot
    (["plot", "/nonexistent/folder"], "not a complete result folder: no such folder"),
    (["plot", "{complete}", "--out", "figure.jpg"], "--out must end in .png or .pdf"),
    (["plot", "{complete}", "--out", "/dev/null/dir/f.png"], "'/dev/null' is not a folder"),
    (["plot", "{complete}", "--systems", "wired:rho=0", "--out", "f.png"], "system 'wired:rho=0': rho must be a finite number in (0, "),
    (["plot", "{complete}", "--systems", "wired:deadline=2", "--out", "f.png"], "a deadline drops late devices"),
    (["retime", "{complete}", "--systems", "wired:speed=2"], "wired has no parameter 'speed'; known: rho, t_min, inv_mu, mode, deadline"),
    (["retime", "{complete}", "--systems", "umi-3.5ghz:min_bps_per_hz=0.5"], "an outage threshold drops devices"),
    (["retime", "{complete}", "--systems", "wired", "--target", "0"], "--target must be a finite number in (0, 1]"),
    (["plot", "{complete}", "--seed", "-1", "--out", "f.png"], "--seed must be an integer in 0.."),
    (["plot", "{complete}", "--systems", "satellite", "--out", "f.png"], "unknown system 'satellite'"),
    (["plot", "{truncated}", "--out", "f.png"], "rounds.csv does not match its checksum"),
    (["plot", "{complete}", "--x", "speed"], "invalid choice: 'speed'"),
    (["plot", "{complete}", "--width", "a4"], "invalid choice: 'a4'"),
    (["plot", "{complete}", "--x", "energy"], "no run has energy to plot"),
    # export
    (["export", "/nonexistent/folder"], "not a complete result folder: no such folder"),
    (["export", "{truncated}", "--tensorboard", "tb"], "rounds.csv does not match its checksum"),
    (["export", "{complete}", "--tensorboard", ""], "--tensorboard must name a folder"),
    # sweep
    (["sweep", "/nonexistent/sweep.toml"], "does not exist"),
    (["sweep", "{not_toml}"], "not valid TOML"),
    (["sweep", "{unknown_key}"], "unknown key 'sedes'"),
    (["sweep", "{nan_option}"], "fedprox option mu must be a finite number >= 0, got nan"),
    (["sweep", "{huge_rounds}"], "rounds must be an integer in 1..100000"),
    (["sweep", "{no_runs}"], "names no run"),
    (["sweep", "{good}", "--jobs", "0"], "--jobs must be an integer in 1..256"),
    (["sweep", "{good}", "--out", "{a_file}"], "it is a file"),
    # lambda-study
    (["lambda-study", "--seed", "-1"], "seed must be an integer in 0.."),
    (["lambda-study", "--seeds", "0"], "--seeds must be an integer in 1..10000, got 0"),
    (["lambda-study", "--systems", "satellite"], "unknown system 'satellite'"),
    (["lambda-study", "--target", "2"], "--target must be a finite number in (0, 1]"),
    (["lambda-study", "--option", "streams=3"], "lambda-study varies streams itself"),
    (["lambda-study", "--rounds", "0"], "rounds must be an integer in 1..100000"),
    (["lambda-study", "--jobs", "0"], "--jobs must be an integer in 1..256"),
    (["lambda-study", "--k", "0,2"], "--k (this scenario has 20 devices) must be an integer in 1..20, got 0"),
    (["lambda-study", "--k", "two"], "--k must be all or a comma-separated list"),
    (["lambda-study", "--rho", "-1"], "rho must be a finite number in (0, "),
    (["lambda-study", "--systems", "wired:deadline=3"], "a deadline drops late devices"),
    (["lambda-study", "--scenario", "nope"], "unknown scenario 'nope'"),
    # scenario, datasets, top level
    (["scenario", "nope"], "unknown scenario 'nope'"),
    (["scenario", "digits-rotation", "--seed", "-1"], "--seed must be an integer in 0.."),
    (["datasets", "download"], "needs a NAME"),
    (["datasets", "download", "nope"], "nope"),
    (["datasets", "shred"], "invalid choice"),
    (["--threads", "0", "list"], "--threads must be an integer in 1..1024"),
    (["frobnicate"], "invalid choice"),
]

# Values a model cannot compute with (each network setting bounded by what the clock holds,
# every count bounded), outputs that name nothing or cannot exist, damaged inputs: all refused
# before anything trains or is written.
BOUNDS = [
    (RUN + ["--rho", "1e307"], "rho must be a finite number in (0, 100000], got 1e+307"),
    (RUN + ["--t-min", "1e308", "--rounds", "2"], "t-min must be a finite number in [0, 1000000000], got 1e+308"),
    (RUN + ["--inv-mu", "1e10"], "inv-mu must be a finite number in [0, 1000000000], got 10000000000.0"),
    (RUN + ["--deadline", "1e300"], "deadline must be a finite number in (0, 10000000000], got 1e+300"),
    (RUN + ["--epochs", "1000000"], "training epochs must be an integer in 1..10000, got 1000000"),
    (RUN + ["--batch-size", "100000"], "training batch_size must be an integer in 1..10000, got 100000"),
    (RUN + ["--lr", "inf"], "training lr must be a finite number > 0, got inf"),
    (RUN + ["--momentum", "1"], "training momentum must be a finite number in [0, 1), got 1.0"),
    (RUN + ["--device", "tpu"], "training device must be auto, cpu, cuda or cuda:N, got 'tpu'"),
    (RUN + ["--algorithm", "pfedme", "--option", "K=100000000"], "pfedme option K must be an integer in 1..10000, got 100000000"),
    (RUN + ["--algorithm", "scaffold", "--option", "local_epochs=1000000"], "scaffold option local_epochs must be an integer in 1..10000"),
    (RUN + ["--algorithm", "ditto", "--option", "personal_epochs=99999"], "ditto option personal_epochs must be an integer in 1..10000"),
    (RUN + ["--algorithm", "fedfomo", "--option", "rate_limit=0"], "fedfomo option rate_limit must be an integer in 1..10000, got 0"),
    (RUN + ["--algorithm", "user-centric", "--streams", "1000000"], "user-centric option streams must be an integer in 1..100000 or 'auto'"),
    (RUN + ["--devices", "1000000"], "devices must be an integer in 1..100000, got 1000000"),
    (RUN + ["--participation", "nan"], "participation must be a finite number in (0, 1], got nan"),
    (RUN + ["--eval-every", "1000000"], "evaluate-every must be an integer in 1..100000, got 1000000"),
    (RUN + ["--rounds", "-5"], "rounds must be an integer in 1..100000, got -5"),
    (RUN + ["--alpha", "inf"], "alpha must be a finite number > 0, got inf"),
    (RUN + ["--seed", "99999999999999999999"], "seed must be an integer in 0..9223372036854775807"),
    (RUN + ["--system", "uma-3.5ghz", "--radio", "kappa=1e300"], "radio kappa must be a finite number in [0, 1e-20], got 1e+300"),
    (RUN + ["--unreached", "excluded"], "--unreached excluded: on wireless-slow-ul every model reaches its device"),
    (RUN + ["--system", "uma-3.5ghz", "--radio", "battery_j=2", "--orchestrator", "fedbuff", "--unreached", "excluded"],
     "--orchestrator fedbuff reports no missed models"),
    (RUN + ["--unreached", "sometimes"], "--unreached"),
    (RUN + ["--system", "umi-3.5ghz", "--radio", "link_abstraction=nr-harq", "--radio", "uplink_access=fdma", "--radio",
             "subcarrier_spacing_hz=240000"], "link_abstraction=nr-harq needs a subcarrier spacing of 15, 30, 60 or 120 kHz"),
    (RUN + ["--system", "umi-3.5ghz", "--radio", "link_abstraction=nr-harq", "--radio", "uplink_access=tdma", "--radio",
             "ul_interference=clock", "--radio", "uplink_queues=sector"],
     "radio ul_interference has an effect only with uplink_access fdma or pf"),
    (RUN + ["--system", "uma-3.5ghz", "--radio", "bs_power_w=inf"], "radio bs_power_w must be a finite number in [1e-09, 10000], got inf"),
    (but(COMPARE, "--seeds", "100000"), "--seeds must be an integer in 1..10000, got 100000"),
    (COMPARE + ["--algorithm", "fedavg", "--rho", "1e307"], "rho must be a finite number in (0, 100000], got 1e+307"),
    (COMPARE + ["--algorithm", "fedavg", "--budget", "energy_j=1"],  # refused before training (issue 57)
     "--budget energy_j needs runs that record energy (a cell); wireless-slow-ul does not"),
    (but(ROUND_TIME, "--rho", "1e307"), "--rho must be a finite number in (0, 100000], got 1e+307"),
    (but(ROUND_TIME, "--t-min", "1e308"), "--t-min must be a finite number in [0, 1000000000], got 1e+308"),
    (but(ROUND_TIME, "--inv-mu", "1e300"), "--inv-mu must be a finite number in [0, 1000000000], got 1e+300"),
    (ROUND_TIME + ["--rounds", "1000000"], "--rounds must be an integer in 1..100000, got 1000000"),
    (but(ROUND_TIME, "--streams", "0"), "--streams must be in 1..5 (the devices), got 0"),
    (["sweep", "{huge_grid}"], "huge_grid.toml: 10,000,000 runs; at most 100,000 in one sweep"),
    (["sweep", "{huge_rho}"], "rho must be a finite number in (0, 100000], got 1e+307"),
    (["sweep", "{huge_seeds}"], "seeds must be an integer in 1..10000, got 100000"),
    (["sweep", "{huge_epochs}"], "training epochs must be an integer in 1..10000, got 1000000"),
    (["cell", "uma-3.5ghz", "--devices", "1000000"], "--devices must be an integer in 1..100000, got 1000000"),
    (["cell", "uma-3.5ghz", "--rounds", "1000000"], "--rounds must be an integer in 1..100000, got 1000000"),
    (["cell", "uma-3.5ghz", "--devices", "100000", "--rounds", "1000"], "--devices x --rounds must be at most 10,000,000"),
    (["cell", "uma-3.5ghz", "--radio", "cpu_hz=nan"], "radio cpu_hz must be a finite number in [1000, 1000000000000], got nan"),
    (["cell", "uma-3.5ghz", "--radio", "downlink_bandwidth_hz=1e12"], "radio downlink_bandwidth_hz must be a finite number in [1000, 10000000000]"),
    (["cell", "uma-3.5ghz", "--out", "{existing_png}"], "exists; give another --out or --force to replace it"),
    (["cell", "uma-3.5ghz", "--seed", "-1"], "seed must be an integer in 0..9223372036854775807, got -1"),
    (["cell", "uma-3.5ghz", "--seed", "99999999999999999999999"], "seed must be an integer in 0..9223372036854775807"),
    (["reproduce", "--seeds", "100000"], "--seeds must be an integer in 1..10000, got 100000"),
    (["--workers", "0", "list"], "--workers must be an integer in 1..1024, got 0"),
]
OUTPUTS = [
    (but(RUN, "--out", ""), "--out must name a folder or file, got ''"),
    (but(RUN, "--out", " "), "--out must name a folder or file, got ' '"),
    (but(COMPARE, "--out", "") + ["--algorithm", "fedavg"], "--out must name a folder or file, got ''"),
    (["sweep", "{good}", "--out", ""], "--out must name a folder or file, got ''"),
    (["plot", "{complete}", "--out", ""], "--out must name a folder or file, got ''"),
    (["cell", "uma-3.5ghz", "--out", ""], "--out must name a folder or file, got ''"),
    (["reproduce", "--out", ""], "--out must name a folder or file, got ''"),
    (["reproduce", "--runs", ""], "--runs must name a folder or file, got ''"),
    (["lambda-study", "--out", ""], "--out must name a folder or file, got ''"),
    (but(RUN, "--out", "{long_name}") + ["--algorithm", "fedavg"], "File name too long"),
    (but(RUN, "--out", "{long_name}/sub") + ["--algorithm", "fedavg"], "File name too long"),
    (but(COMPARE, "--out", "{long_name}") + ["--algorithm", "fedavg"], "File name too long"),
    (["sweep", "{good}", "--out", "{long_name}"], "File name too long"),
    (but(RUN, "--out", "{long_path}") + ["--algorithm", "fedavg"], "leaves no room for result folders"),
    (["plot", "{complete}", "--out", "{long_name}.png"], "File name too long"),
]
DAMAGED = [
    (RUN + ["--scenario", "mnist-rotation", "--data-dir", "{bad_labels}"], "train-labels-idx1-ubyte.gz: label 10 outside the 10 classes 0..9 of mnist"),
    (["scenario", "mnist-rotation", "--data-dir", "{bad_labels}"], "label 10 outside the 10 classes"),
    (["plot", "{edited_summary}", "--out", "f.png"], "summary.json does not match its checksum in checksums.json"),
    (["plot", "{nan_summary}", "--out", "f.png"], "its summary.json is unreadable (it holds NaN)"),
    (["plot", "{unsealed}", "--out", "f.png"], "it has no checksums.json"),
    (["plot", "{bad_seal}", "--out", "f.png"], "its checksums.json is damaged (its seal does not match its list)"),
    (["penalty", "{edited_summary}"], "summary.json does not match its checksum"),
    (["plot", "{complete}", "{edited_summary}", "--out", "f.png", "--systems", "wired"], "summary.json does not match its checksum"),
]
CASES = CASES + BOUNDS + OUTPUTS + DAMAGED


SWEEP_FILES = {
    "not_toml": "seeds = [0, 1\n",
    "unknown_key": 'sedes = 3\n[[algorithm]]\nname = "fedavg"\n',
    "nan_option": '[[algorithm]]\nname = "fedprox"\noptions = { mu = nan }\n',
    "huge_rounds": '[settings]\nrounds = 1000000000000\n[[algorithm]]\nname = "fedavg"\n',
    "no_runs": "seeds = 2\n",
    "good": '[settings]\nrounds = 1\n[[algorithm]]\nname = "fedavg"\n',
    "huge_grid": "[grid]\nrho = [%s]\nt_min = [%s]\n[[algorithm]]\nname = \"fedavg\"\n" % (
        ", ".join(str(i + 1) for i in range(1000)), ", ".join(str(i) for i in range(10_000))),
    "huge_rho": '[settings]\nrho = 1e307\n[[algorithm]]\nname = "fedavg"\n',
    "huge_seeds": 'seeds = 100000\n[[algorithm]]\nname = "fedavg"\n',
    "huge_epochs": '[settings]\ntraining = { epochs = 1000000 }\n[[algorithm]]\nname = "fedavg"\n',
}


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    """A complete result folder, a copy with a truncated rounds.csv, sweep files, a plain file."""
    from scenarios.execution.runner import RunSpec, run_experiment

    root = tmp_path_factory.mktemp("results")
    complete = Path(run_experiment(RunSpec("digits-rotation", "fedavg", rounds=2), root)["result_dir"])
    truncated = root / "truncated"
    shutil.copytree(complete, truncated)
    text = (truncated / "rounds.csv").read_text()
    (truncated / "rounds.csv").write_text(text[: len(text) // 2])
    paths = {"complete": str(complete), "truncated": str(truncated), "a_file": str(root / "a_file")}
    (root / "a_file").write_text("not a folder")
    paths.update(damaged_folders(complete, root))
    (root / "existing.png").write_bytes(b"someone's figure")
    paths["existing_png"] = str(root / "existing.png")
    paths["long_name"] = str(root / ("x" * 300))
    paths["long_path"] = str(root.joinpath(*["y" * 200] * 20))
    paths["bad_labels"] = str(bad_label_data(root / "bad_labels"))
    for name, text in SWEEP_FILES.items():
        (root / f"{name}.toml").write_text(text)
        paths[name] = str(root / f"{name}.toml")
    return paths


def damaged_folders(complete: Path, root: Path) -> dict[str, str]:
    """Copies of a complete folder: its summary edited (0.99), NaN written and the index forged
    to match, its sealed index removed, its index's list edited without its seal."""
    from scenarios.records.result_folder import INDEX_FILE, SEALED_FILES, file_sha256, index_text

    paths = {}
    for name in ("edited_summary", "nan_summary", "unsealed", "bad_seal"):
        folder = root / name
        shutil.copytree(complete, folder)
        summary = json.loads((folder / "summary.json").read_text())
        if name in ("edited_summary", "bad_seal"):
            (folder / "summary.json").write_text(json.dumps({**summary, "final_mean_accuracy": 0.99}))
        if name == "nan_summary":
            (folder / "summary.json").write_text(json.dumps({**summary, "final_mean_accuracy": float("nan")}))
            (folder / INDEX_FILE).write_text(index_text({n: (folder / n).read_text() for n in SEALED_FILES}))
        if name == "unsealed":
            (folder / INDEX_FILE).unlink()
        if name == "bad_seal":
            index = json.loads((folder / INDEX_FILE).read_text())
            index["files"]["summary.json"] = file_sha256(folder / "summary.json")
            (folder / INDEX_FILE).write_text(json.dumps(index))
        paths[name] = str(folder)
    return paths


def bad_label_data(folder: Path) -> Path:
    """A data folder whose MNIST training labels hold a 10 (MNIST has the classes 0..9)."""
    from scenarios.datasets.fakes import write_fake_idx_dataset
    from scenarios.datasets.idx import read_idx, write_idx

    write_fake_idx_dataset(folder / "MNIST", "mnist")
    path = folder / "MNIST" / "train-labels-idx1-ubyte.gz"
    labels = read_idx(path).copy()
    labels[3] = 10
    write_idx(path, labels)
    return folder


def test_at_least_150_malformed_inputs_and_faults_over_every_subcommand():
    from scenarios.cli.main import COMMANDS

    assert len(CASES) + len(FAULTS) >= 150
    named = {argv[0] if not argv[0].startswith("--") else argv[2] for argv, _ in CASES}
    assert set(COMMANDS) - {"list"} <= named


@pytest.mark.parametrize("argv,needle", CASES, ids=[" ".join(a[:1] + a[-3:]) for a, _ in CASES])
def test_bad_input(capsys, tmp_path, monkeypatch, fixtures, argv, needle):
    monkeypatch.chdir(tmp_path)
    argv = [a.format(**fixtures) for a in argv]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert needle in lines[0], lines[0]
    assert os.listdir(tmp_path) == []  # nothing written: no --out folder, no figure, no table


# --- faults: a full disk, a read-only or forbidden folder mid-run, a closed stdout ----------
TRAIN = ["--algorithm", "fedavg", "--rounds", "1", "--backend", "loop", "--quiet", "--no-figure"]
FULL_DISK = [
    ["run", *TRAIN, "--out", "{disk}/results"],
    ["compare", *TRAIN[:-1], "--seeds", "1", "--jobs", "1", "--out", "{disk}/cmp"],
    ["sweep", "{loop}", "--jobs", "1", "--quiet", "--out", "{disk}/sweep"],
    ["plot", "{complete}", "--out", "{disk}/f.png"],
    ["plot", "{complete}", "--out", "{disk}/full/f.pdf"],  # PDF, plot's default, into a folder it creates (issue 57)
    ["cell", "umi-3.5ghz", "--rounds", "10", "--out", "{disk}/cell.png"],
]
FAULTS = FULL_DISK + ["read-only mid-run", "permission denied mid-run", "figure on a full disk", "list | head", "round-time | head"]


@pytest.fixture
def tmpfs(tmp_path):
    """A real 1 MiB file system (tmpfs) mounted for the test; skipped where it cannot be (no root)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.decode().strip() or 'mount failed'}): faults are raised below instead")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def one_line_error(capsys, argv, needle: str) -> None:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and "Traceback" not in err, err
    assert needle in lines[0], lines[0]


@pytest.mark.parametrize("argv", FULL_DISK, ids=[a[0] for a in FULL_DISK])
def test_a_full_disk_is_one_line_and_leaves_nothing(capsys, tmp_path, monkeypatch, fixtures, tmpfs, argv):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loop.toml").write_text('[settings]\nrounds = 1\ntraining = { backend = "loop" }\n[[algorithm]]\nname = "fedavg"\n')
    with open(tmpfs / "filler", "wb") as filler:  # every block of the file system taken
        with pytest.raises(OSError, match="No space left"):
            while True:
                filler.write(b"\0" * 65536)
                filler.flush()
    one_line_error(capsys, [a.format(disk=tmpfs, loop=tmp_path / "loop.toml", **fixtures) for a in argv], "No space left on device")
    assert sorted(os.listdir(tmpfs)) == ["filler"]  # no partial file, staging folder or empty --out


def test_a_folder_turned_read_only_mid_run_is_one_line(capsys, tmpfs, monkeypatch):
    """The file system is remounted read-only after training, before the results are written."""
    import scenarios.execution.runner

    summarize = scenarios.execution.runner.summarize

    def remount_then_summarize(*args, **kwargs):
        subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
        return summarize(*args, **kwargs)

    monkeypatch.setattr(scenarios.execution.runner, "summarize", remount_then_summarize)
    one_line_error(capsys, ["run", *TRAIN, "--out", tmpfs / "results"], "Read-only file system")
    assert os.listdir(tmpfs) == []


def test_permission_denied_mid_run_is_one_line_and_leaves_nothing(capsys, tmp_path, monkeypatch):
    """Raised where the result files are written (this works as root and on any file system)."""
    def refuse(self, data):
        raise PermissionError(errno.EACCES, "Permission denied", str(self))

    monkeypatch.setattr(Path, "write_bytes", refuse)
    one_line_error(capsys, ["run", *TRAIN, "--out", tmp_path / "out" / "results"], "Permission denied")
    assert os.listdir(tmp_path) == []  # the staging folder and both folders run created: gone


def test_a_figure_on_a_full_disk_still_shows_the_written_runs(capsys, tmp_path, monkeypatch):
    """ENOSPC raised where the figure is written: the runs are written and their table shown."""
    import matplotlib.figure

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", full)
    code = main(["run", *TRAIN[:-1], "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 2 and "fedavg" in out and len(err.strip().splitlines()) == 1
    assert "No space left on device (the runs are written)" in err and "Traceback" not in err
    assert [p.suffix for p in tmp_path.iterdir()] == [""]  # the run folder; no figure, no temporary file


@pytest.mark.parametrize("argv", [["list", "--json"], [*ROUND_TIME, "--rounds", "3", "--json"]], ids=["list", "round-time"])
def test_a_closed_stdout_exits_141_without_a_traceback(argv):
    """``fl-cosim list --json | head``: the reader is gone before anything is written."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "scenarios.cli.main", *argv], stdout=write, stderr=subprocess.PIPE,
                              cwd=Path(__file__).resolve().parents[1], timeout=120)
    finally:
        os.close(write)
    assert done.returncode == 141 and done.stderr == b""
