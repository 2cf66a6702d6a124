"""What a run costs before it trains, before and after, side by side in one run (CPU).

``python3 -m benchmarks.run_cost [--before /work/main] [--repeats 3] [--compare] [--reproduce] [--constants]``

1. Wall-clock seconds of a bare ``python3 -c "import torch"``, of a whole 1-round
   ``digits-rotation`` FedAvg ``run`` (the CLI in a fresh process) and of ``run --help``, with the
   code of ``--before`` (another checkout, run with its folder as the working directory) and with
   this checkout, interleaved, ``--repeats`` times each (the median is quoted, and each as a ratio
   to the torch import measured beside it); this checkout's first run with an empty
   prepared-data cache too.
2. The same run split by phase, in a fresh process per checkout (the functions both share:
   ``resolve``, ``build_data``, ``prepare``, ``run_prepared``): imports, data, the learner and its
   model, the run (worker start, if its backend has workers, the first steps, evaluation,
   the result folder).
3. With ``--compare``: ``compare`` of every algorithm on ``digits-rotation`` (2 seeds, 2 rounds,
   ``--jobs 2``: many small runs, a reduced stand-in for ``reproduce``) with each checkout, its
   wall time, and whether the two tables (every number) are identical; with ``--reproduce``:
   ``reproduce --scale quick`` likewise (``table1.csv`` and ``table2.csv``; tens of minutes on a
   loaded 2-core machine).
4. With ``--constants``: the constants of ``learning.engine.auto`` measured here: a mini-batch
   step's fixed cost (the digits MLP) and multiply-accumulates a second (LeNet-5) at one thread.

Prints Markdown tables and the load average (the machine may be shared: read the ratios).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
RUN = ["run", "--scenario", "digits-rotation", "--algorithm", "fedavg", "--rounds", "1", "--quiet", "--no-figure"]

PHASES = r"""
import json, sys, time
t0 = time.perf_counter()
import scenarios.cli.main  # the CLI and what it imports to start
from scenarios.execution.build import build_data, prepare
from scenarios.execution.runner import run_prepared
from scenarios.execution.spec import RunSpec, resolve
scenarios.cli.main.set_threads(1)  # as the CLI does (--threads 1)
t1 = time.perf_counter()
run = resolve(RunSpec("digits-rotation", "fedavg", rounds=1))
build_data(run)
t2 = time.perf_counter()
prepared = prepare(run)
t3 = time.perf_counter()
run_prepared(prepared, sys.argv[1])
t4 = time.perf_counter()
print(json.dumps({"imports": t1 - t0, "data": t2 - t1, "learner and model": t3 - t2,
                  "run (workers, steps, evaluation, folder)": t4 - t3, "backend": prepared.run.training.backend}))
"""


def wall_s(command: list[str], cwd: Path, env: dict) -> float:
    began = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - began


def environment(cache: Path) -> dict:
    return {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONDONTWRITEBYTECODE": "1"}


def one_round_runs(before: Path, repeats: int, scratch: Path, env: dict) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"torch": [], "before": [], "after": [], "before --help": [], "after --help": []}
    shutil.rmtree(Path(env["XDG_CACHE_HOME"]) / "fl-cosim" / "prepared", ignore_errors=True)
    times["after, first (empty prepared-data cache)"] = [wall_s([sys.executable, "-m", "scenarios.cli.main", *RUN, "--out",
                                                                str(scratch / "cold")], HERE, env)]
    for repeat in range(repeats):
        times["torch"].append(wall_s([sys.executable, "-c", "import torch"], HERE, env))
        for name, cwd in (("before", before), ("after", HERE)):
            out = scratch / f"{name}-{repeat}"
            times[name].append(wall_s([sys.executable, "-m", "scenarios.cli.main", *RUN, "--out", str(out)], cwd, env))
            times[f"{name} --help"].append(wall_s([sys.executable, "-m", "scenarios.cli.main", "run", "--help"], cwd, env))
    return times


def phases(cwd: Path, out: Path, env: dict) -> dict:
    done = subprocess.run([sys.executable, "-c", PHASES, str(out)], cwd=cwd, env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def reproduce(cwd: Path, out: Path, env: dict, data: str) -> tuple[float, dict[str, str]]:
    command = [sys.executable, "-m", "scenarios.cli.main", "reproduce", "--scale", "quick", "--runs", str(out / "runs"),
               "--out", str(out / "report"), "--data-dir", data]
    seconds = wall_s(command, cwd, env)
    return seconds, {name: (out / "report" / name).read_text() for name in ("table1.csv", "table2.csv")}


def compare(cwd: Path, out: Path, env: dict) -> tuple[float, list]:
    command = [sys.executable, "-m", "scenarios.cli.main", "compare", "--scenario", "digits-rotation", "--seeds", "2",
               "--rounds", "2", "--jobs", "2", "--json", "--out", str(out)]
    began = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, check=True, capture_output=True, text=True)
    return time.perf_counter() - began, json.loads(done.stdout)["rows"]


def constants() -> dict[str, float]:
    """STEP_S and MACS_PER_S of ``learning.engine.auto`` measured at one torch thread."""
    import torch

    from learning.data import DeviceData
    from learning.engine.auto import TRAINING_PASSES, forward_macs
    from learning.jobs import LocalJob
    from learning.models import MODELS
    from learning.training import LocalTraining, Trainer

    torch.set_num_threads(1)

    def samples_per_s(model, x, y, batch: int) -> tuple[float, int]:
        trainer = Trainer(model, LocalTraining(backend="loop", device="cpu", batch_size=batch))
        start = torch.cat([p.detach().reshape(-1) for p in trainer.model.parameters()])
        job = LocalJob(start, DeviceData(x, y, x[:0], y[:0]), torch.Generator().manual_seed(0), None, epochs=1)
        trainer.train(job)  # warm
        began = time.process_time()
        for _ in range(3):
            trainer.train(job)
        return 3 * len(y) / (time.process_time() - began), forward_macs(trainer.model, x[:1])

    generator = torch.Generator().manual_seed(0)
    mlp_rate, _ = samples_per_s(MODELS["mlp"](in_features=64, num_classes=10, hidden=64),
                                torch.rand(4096, 1, 8, 8, generator=generator), torch.randint(0, 10, (4096,), generator=generator), 64)
    lenet_rate, lenet_macs = samples_per_s(MODELS["lenet5"](in_channels=1, image_size=28, num_classes=10),
                                           torch.rand(2048, 1, 28, 28, generator=generator),
                                           torch.randint(0, 10, (2048,), generator=generator), 64)
    return {"step_s (digits MLP, batch 64)": 64 / mlp_rate,
            "macs_per_s (LeNet-5)": TRAINING_PASSES * lenet_macs * lenet_rate}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, default=Path("/work/main"), help="the checkout to compare with")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--compare", action="store_true", help="also compare every algorithm on digits with each")
    parser.add_argument("--reproduce", action="store_true", help="also reproduce --scale quick with each (tens of minutes)")
    parser.add_argument("--data-dir", default=os.environ.get("FL_COSIM_DATA", "/work/shared/datasets"))
    parser.add_argument("--constants", action="store_true", help="also measure learning.engine.auto's constants")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="fl-cosim-run-cost-"))
    env = environment(scratch / "cache")
    try:
        print(f"load average before: {os.getloadavg()[0]:.2f}; cores: {os.cpu_count()}; before = {args.before}")
        times = one_round_runs(args.before, args.repeats, scratch, env)
        torch_s = statistics.median(times["torch"])
        print("\n| 1-round digits-rotation FedAvg, whole CLI run | median wall s | vs `import torch` |")
        print("|---|---|---|")
        for name, label in (("torch", 'bare `python3 -c "import torch"`'), ("before", "before (main)"),
                            ("after, first (empty prepared-data cache)", "after, first run (empty prepared-data cache)"),
                            ("after", "after")):
            median = statistics.median(times[name])
            print(f"| {label} | {median:.2f} | {median / torch_s:.2f}x |")
        print("\n| `run --help` (the parser: no training) | median wall s | vs `import torch` |")
        print("|---|---|---|")
        for name in ("before --help", "after --help"):
            median = statistics.median(times[name])
            print(f"| {name.split()[0]} | {median:.2f} | {median / torch_s:.2f}x |")
        print(f"\nall times: {json.dumps({k: [round(t, 2) for t in v] for k, v in times.items()})}")
        split = {name: phases(cwd, scratch / f"phases-{name}", env) for name, cwd in (("before", args.before), ("after", HERE))}
        print("\n| phase (fresh process) | before s | after s |")
        print("|---|---|---|")
        for phase in split["before"]:
            if phase != "backend":
                print(f"| {phase} | {split['before'][phase]:.2f} | {split['after'][phase]:.2f} |")
        total = {k: sum(v for p, v in s.items() if p != "backend") for k, s in split.items()}
        print(f"| total | {total['before']:.2f} | {total['after']:.2f} |")
        print(f"| backend | {split['before']['backend']} | {split['after']['backend']} |")
        if args.compare:
            before_s, before_rows = compare(args.before, scratch / "compare-before", env)
            after_s, after_rows = compare(HERE, scratch / "compare-after", env)
            print("\n| `compare --scenario digits-rotation --seeds 2 --rounds 2 --jobs 2` (every algorithm) | wall s |")
            print("|---|---|")
            print(f"| before | {before_s:.1f} |\n| after | {after_s:.1f} ({after_s / before_s:.2f}x) |")
            print(f"\n{len(after_rows)} rows; tables identical: {before_rows == after_rows}")
        if args.reproduce:
            before_s, before_tables = reproduce(args.before, scratch / "reproduce-before", env, args.data_dir)
            after_s, after_tables = reproduce(HERE, scratch / "reproduce-after", env, args.data_dir)
            same = before_tables == after_tables
            print("\n| `reproduce --scale quick` (42 runs, --jobs 2) | wall s |")
            print("|---|---|")
            print(f"| before | {before_s:.1f} |\n| after | {after_s:.1f} ({after_s / before_s:.2f}x) |")
            print(f"\ntable1.csv and table2.csv identical: {same}")
        if args.constants:
            print(f"\nlearning.engine.auto constants measured here: {json.dumps(constants())}")
        print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
