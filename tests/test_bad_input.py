"""Malformed input across every subcommand: one line on stderr naming the problem, exit status
2, nothing on stdout, no traceback, and nothing written (not even an empty --out folder)."""

import os
import shutil
from pathlib import Path

import pytest

from scenarios.cli import main

RUN = ["run", "--out", "out"]
COMPARE = ["compare", "--out", "out", "--rounds", "1", "--seeds", "1", "--jobs", "1"]
ROUND_TIME = ["round-time", "--devices", "5", "--streams", "2", "--rho", "1", "--t-min", "1", "--inv-mu", "0"]

CASES = [
    # cell, penalty, reproduce
    (["cell", "nowhere-5g"], "unknown cell preset 'nowhere-5g'"),
    (["cell", "uma-3.5ghz", "--radio", "inner_radius_m=300"], "inner radius 300 m is above the outer radius 250 m"),
    (["cell", "umi-3.5ghz", "--radio", "carrier_hz=-3"], "carrier frequency must be > 0 Hz, got -3"),
    (["penalty", "nonexistent_folder"], "nonexistent_folder is not a result folder"),
    (["reproduce", "--scale", "huge"], "unknown scale 'huge'"),
    (["reproduce", "--seeds", "0"], "--seeds must be >= 1, got 0"),
    (["reproduce", "--jobs", "0"], "--jobs must be >= 1"),
    (["cell", "uma-3.5ghz", "--devices", "0"], "--devices must be >= 1"),
    (["cell", "uma-3.5ghz", "--radio", "bogus=1"], "unknown radio parameter bogus"),
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
    (RUN + ["--streams", "-3"], "--streams must be >= 1"),
    (RUN + ["--streams", "many"], "--streams must be a positive integer, 'auto' or 'm'"),
    (RUN + ["--algorithm", "user-centric", "--streams", "21", "--rounds", "1"], "streams must be in 1..20"),
    (RUN + ["--algorithm", "fedavg", "user-centric", "--streams", "99", "--rounds", "1"], "streams must be in 1..20"),
    (RUN + ["--algorithm", "fedavg", "--streams", "3"], "--streams applies to algorithms with streams"),
    (RUN + ["--lambda", "0.1"], "--lambda applies only with --streams auto"),
    (RUN + ["--algorithm", "user-centric", "--streams", "auto", "--lambda", "nan"], "option lam must be a finite number >= 0, got nan"),
    (RUN + ["--algorithm", "user-centric", "--streams", "auto", "--lambda", "-1"], "option lam must be a finite number >= 0"),
    (RUN + ["--algorithm", "user-centric", "--streams", "auto", "--lambda", "0.1", "--option", "lam=0.1"], "give lambda once"),
    (RUN + ["--deadline", "inf"], "deadline must be a finite number > 0, got inf"),
    (RUN + ["--deadline", "0"], "deadline must be a finite number > 0"),
    (RUN + ["--algorithm", "fedprox", "--option", "mu=nan"], "fedprox option mu must be a finite number >= 0, got nan"),
    (RUN + ["--algorithm", "fedprox", "--option", "mu=inf"], "fedprox option mu must be a finite number >= 0, got inf"),
    (RUN + ["--algorithm", "fedprox", "--option", "mu=-1"], "fedprox option mu must be a finite number >= 0"),
    (RUN + ["--algorithm", "fedavg", "--option", "mu=1"], "no algorithm of this run takes option 'mu'"),
    (RUN + ["--algorithm", "fedprox", "--option", "mu"], "must look like key=value"),
    (RUN + ["--algorithm", "scaffold", "--option", "local_epochs=2.7"], "scaffold option local_epochs must be an integer >= 1, got 2.7"),
    (RUN + ["--algorithm", "pfedlia", "--option", "mode=sideways"], "pfedlia option mode must be one of centralized, peer-to-peer"),
    (RUN + ["--algorithm", "fedfomo", "--option", "M=50", "--rounds", "1"], "fedfomo M must be in 1..19"),
    (RUN + ["--algorithm", "oracle", "--scenario", "synthetic-gaussian"], "oracle needs a scenario with true groups"),
    (RUN + ["--eval-every", "0"], "evaluate-every must be an integer in 1..100000"),
    (RUN + ["--participation", "0"], "participation must be a finite number in (0, 1]"),
    (RUN + ["--participation", "1.5"], "participation must be a finite number in (0, 1]"),
    (RUN + ["--rho", "0"], "rho must be a finite number > 0"),
    (RUN + ["--t-min", "-1"], "t-min must be a finite number >= 0"),
    (RUN + ["--inv-mu", "nan"], "inv-mu must be a finite number >= 0, got nan"),
    (RUN + ["--scenario", "mnist-rotation", "--data-dir", "/nonexistent/data"], "mnist"),
    (RUN + ["--devices", "3"], "cannot split 3 devices into 4 groups"),
    (RUN + ["--devices", "200"], "1797 points cannot give 200 devices 20 each"),
    (RUN + ["--scenario", "synthetic-gaussian", "--algorithm", "fedavg", "--devices", "5"], "has no devices setting"),
    (RUN + ["--alpha", "0"], "alpha must be a finite number > 0"),
    (RUN + ["--alpha", "nan"], "alpha must be a finite number > 0, got nan"),
    # compare
    (COMPARE + ["--seeds", "0"], "--seeds must be an integer in 1..10000"),
    (COMPARE + ["--target", "1.5"], "--target must be a finite number in (0, 1]"),
    (COMPARE + ["--target", "nan"], "--target must be a finite number in (0, 1], got nan"),
    (COMPARE + ["--jobs", "0"], "--jobs must be an integer in 1..256"),
    (COMPARE + ["--algorithm", "fedavg", "--option", "lam=1"], "no algorithm of this run takes option 'lam'"),
    (COMPARE + ["--algorithm", "fedavg", "--streams", "2"], "--streams applies to algorithms with streams"),
    (COMPARE + ["--algorithm", "fedavg", "--deadline", "inf"], "deadline must be a finite number > 0"),
    (COMPARE + ["--algorithm", "fedavg", "oracle", "--scenario", "synthetic-gaussian"], "oracle needs a scenario with true groups"),
    (COMPARE + ["--algorithm", "fedavg", "--rounds", "1000000000000"], "rounds must be an integer in 1..100000"),
    # round-time
    (ROUND_TIME + ["--rho", "inf", "--json"], "--rho must be a finite number > 0, got inf"),
    (ROUND_TIME + ["--rho", "nan"], "--rho must be a finite number > 0, got nan"),
    (ROUND_TIME + ["--devices", "1000000000"], "--devices must be an integer in 1..1000000"),
    (ROUND_TIME + ["--devices", "0"], "--devices must be an integer in 1..1000000"),
    (ROUND_TIME + ["--devices", "1000000", "--rounds", "1000"], "--devices x --rounds must be at most 100,000,000"),
    (ROUND_TIME + ["--streams", "9"], "--streams must be in 1..5"),
    (ROUND_TIME + ["--t-min", "-1"], "--t-min must be a finite number >= 0"),
    (ROUND_TIME + ["--inv-mu", "inf"], "--inv-mu must be a finite number >= 0, got inf"),
    (ROUND_TIME + ["--rounds", "0"], "rounds must be an integer in 1..100000"),
    (ROUND_TIME + ["--seed", "-1"], "--seed must be an integer in 0.."),
    (["round-time", "--devices", "5"], "required"),
    # streams
    (["streams", "--lambda", "-1"], "--lambda must be a finite number >= 0"),
    (["streams", "--lambda", "nan"], "--lambda must be a finite number >= 0, got nan"),
    (["streams", "--seed", "-1"], "--seed must be an integer in 0.."),
    (["streams", "--scenario", "nope"], "unknown scenario 'nope'"),
    # plot
    (["plot", "/nonexistent/folder"], "not a complete result folder: no such folder"),
    (["plot", "{complete}", "--out", "figure.jpg"], "--out must end in .png or .pdf"),
    (["plot", "{complete}", "--out", "/nonexistent/dir/f.png"], "does not exist"),
    (["plot", "{complete}", "--seed", "-1", "--out", "f.png"], "--seed must be an integer in 0.."),
    (["plot", "{complete}", "--systems", "satellite", "--out", "f.png"], "unknown system 'satellite'"),
    (["plot", "{truncated}", "--out", "f.png"], "rounds.csv does not match its checksum"),
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
    (["lambda-study", "--systems", "satellite"], "unknown system 'satellite'"),
    (["lambda-study", "--target", "2"], "--target must be a finite number in (0, 1]"),
    (["lambda-study", "--option", "streams=3"], "lambda-study varies streams itself"),
    (["lambda-study", "--rounds", "0"], "rounds must be an integer in 1..100000"),
    (["lambda-study", "--jobs", "0"], "--jobs must be an integer in 1..256"),
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


SWEEP_FILES = {
    "not_toml": "seeds = [0, 1\n",
    "unknown_key": 'sedes = 3\n[[algorithm]]\nname = "fedavg"\n',
    "nan_option": '[[algorithm]]\nname = "fedprox"\noptions = { mu = nan }\n',
    "huge_rounds": '[settings]\nrounds = 1000000000000\n[[algorithm]]\nname = "fedavg"\n',
    "no_runs": "seeds = 2\n",
    "good": '[settings]\nrounds = 1\n[[algorithm]]\nname = "fedavg"\n',
}


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    """A complete result folder, a copy with a truncated rounds.csv, sweep files, a plain file."""
    from scenarios.runner import RunSpec, run_experiment

    root = tmp_path_factory.mktemp("results")
    complete = Path(run_experiment(RunSpec("digits-rotation", "fedavg", rounds=2), root)["result_dir"])
    truncated = root / "truncated"
    shutil.copytree(complete, truncated)
    text = (truncated / "rounds.csv").read_text()
    (truncated / "rounds.csv").write_text(text[: len(text) // 2])
    paths = {"complete": str(complete), "truncated": str(truncated), "a_file": str(root / "a_file")}
    (root / "a_file").write_text("not a folder")
    for name, text in SWEEP_FILES.items():
        (root / f"{name}.toml").write_text(text)
        paths[name] = str(root / f"{name}.toml")
    return paths


def test_at_least_forty_cases_over_every_subcommand():
    from scenarios.cli import COMMANDS

    assert len(CASES) >= 40
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
