"""Training speed, side by side in one run (wall-clock; not a test).

Usage: FL_COSIM_DATA=../shared/datasets python3 -m benchmarks.training_speed [--rounds R] [--repeats K]
       [--run-repeats K] [--eval-every 1,R] [--parts 123]

On ``mnist-rotation`` (100 devices, about 480 training images each, LeNet-5 28x28, SGD lr 0.01
momentum 0.9, batch 64, E = 1), prints:

1. samples/s of one round of every device's local update: (a) a plain per-device PyTorch loop
   as PFLlib and FL-bench train (one model object and one SGD optimizer per device, batch 64,
   2 torch threads); (b) the project's engine: ``loop`` at 1 and 2 torch threads,
   ``processes`` with one worker per core; (c) ``batched`` on the CPU and on a GPU, where that
   backend and a GPU exist (else a note). Each is timed ``repeats`` times, interleaved, and the
   fastest repeat counts (on a shared machine the fastest is the least disturbed).
2. whole ``fl-cosim run --scenario mnist-rotation --algorithm fedavg --optimizer sgd --rounds R
   --eval-every E`` (subprocesses with the command's defaults: start-up, data loading, result
   files and figure), evaluating every round (the default) and only at the last round, against
   the plain 2-thread loop doing the same training (R rounds of every device and FedAvg's
   average; in this process, no start-up, no evaluation), interleaved; and the co-simulation
   overhead: each run's wall-clock over the time it spent in the learner's calls (training;
   training and evaluation), timed inside that same run.
3. the network engine alone: wall-clock per round at 1,000 and 10,000 devices.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from learning.engine import BACKENDS  # noqa: E402
from learning.engine import workers  # noqa: E402
from scenarios.definitions.registry import get_scenario  # noqa: E402
from scenarios.execution.build import build_learner, scenario_data
from scenarios.execution.spec import RunSpec, resolve  # noqa: E402

SCENARIO = "mnist-rotation"
SGD = {"optimizer": "sgd"}  # the text's SGD (lr 0.01, momentum 0.9, batch 64, E = 1): what the plain loop does


def classic_lenet5(model: nn.Module) -> nn.Module:
    """``model`` (the project's LeNet-5) as PFLlib and FL-bench write it: each convolution
    followed by ReLU then pooling, default (contiguous) memory format; the same parameters."""
    conv1, conv2 = copy.deepcopy(model.features[0]), copy.deepcopy(model.features[3])
    features = nn.Sequential(conv1, nn.ReLU(), nn.MaxPool2d(2), conv2, nn.ReLU(), nn.MaxPool2d(2))
    classic = nn.Sequential(features, copy.deepcopy(model.classifier))
    return classic.to(memory_format=torch.contiguous_format)


class PlainLoop:
    """FedAvg as PFLlib and FL-bench train it: one model and one SGD optimizer (torch's
    defaults) per device, the classic LeNet-5 in PyTorch's default memory format."""

    def __init__(self, learner):
        self.devices = learner.data.devices
        self.global_model = classic_lenet5(learner.trainer.model)
        self.models = [copy.deepcopy(self.global_model) for _ in self.devices]
        self.sizes = torch.tensor([d.num_train for d in self.devices], dtype=torch.float32)
        self.generator = torch.Generator().manual_seed(0)
        self.training = learner.setup.training

    def round(self) -> None:
        cfg = self.training
        state = self.global_model.state_dict()
        for model, data in zip(self.models, self.devices):
            model.load_state_dict(state)
            optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=cfg.momentum)
            for _ in range(cfg.epochs):
                order = torch.randperm(data.num_train, generator=self.generator)
                for begin in range(0, data.num_train, cfg.batch_size):
                    index = order[begin : begin + cfg.batch_size]
                    optimizer.zero_grad()
                    F.cross_entropy(model(data.x_train[index]), data.y_train[index]).backward()
                    optimizer.step()
        weights = self.sizes / self.sizes.sum()
        with torch.no_grad():
            for name, value in self.global_model.state_dict().items():
                value.copy_(sum(w * m.state_dict()[name] for w, m in zip(weights, self.models)))


def engine_learner(data, backend: str, device: str = "cpu"):
    return build_learner(resolve(RunSpec(SCENARIO, "fedavg", training={**SGD, "backend": backend, "device": device})), data)


def engine_round(learner) -> None:
    """One round of every device's local update through ``Trainer.train_many`` (no aggregation)."""
    devices = range(learner.num_devices)
    learner.trainer.train_many([learner.job(d, learner.theta[d]) for d in devices])


def timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def fastest(candidates: dict, repeats: int) -> dict[str, float]:
    """Fastest of ``repeats`` wall-clock times of each candidate (setup, action), interleaved."""
    best = {name: float("inf") for name in candidates}
    for _ in range(repeats):
        for name, (setup, action) in candidates.items():
            setup()
            best[name] = min(best[name], timed(action))
    return best


def threads(count: int, workers_count: int | None = 1):
    def setup():
        torch.set_num_threads(count)
        workers.set_workers(workers_count)
    return setup


def full_run(rounds: int, out: Path, eval_every: int) -> tuple[float, dict]:
    """Wall-clock of a whole ``fl-cosim run`` in a subprocess, and the seconds it spent in the
    learner's calls (``timed_cli``)."""
    timings = out / "timings.json"
    command = [sys.executable, str(Path(__file__).resolve()), "--timed-cli", str(timings), "run", "--scenario", SCENARIO,
               "--algorithm", "fedavg", "--optimizer", "sgd", "--rounds", str(rounds), "--eval-every", str(eval_every),
               "--out", str(out), "--force", "--json"]
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))  # the checkout first, nothing hidden
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": path})
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"fl-cosim run failed: {done.stderr.strip()}")
    return elapsed, json.loads(timings.read_text())


def timed_cli(timings: str, argv: list[str]) -> int:
    """``fl-cosim`` itself, with the learner's calls timed (written as JSON to ``timings``)."""
    from scenarios.cli import main as cli
    from scenarios.execution import build as runner  # prepare() looks build_learner up here

    spent = {"local_update": 0.0, "aggregate": 0.0, "evaluate": 0.0}
    build = runner.build_learner

    def build_timed(*args, **kwargs):
        learner = build(*args, **kwargs)
        for name in spent:
            def wrapper(*call_args, _method=getattr(learner, name), _name=name):
                start = time.perf_counter()
                try:
                    return _method(*call_args)
                finally:
                    spent[_name] += time.perf_counter() - start
            setattr(learner, name, wrapper)
        return learner

    runner.build_learner = build_timed
    code = cli.main(argv)
    Path(timings).write_text(json.dumps(spent, allow_nan=False))
    return code


def network_per_round_s(devices: int, rounds: int = 3) -> float:
    from netsim import NetworkSystem, simulate_rounds
    from scenarios.cli.round_time import MODEL_BITS, round_plan

    plans = [round_plan(devices, 10)] * rounds
    system = NetworkSystem(rho=4, t_min=1, inv_mu=1)
    return timed(lambda: simulate_rounds(plans, system, MODEL_BITS, np.random.default_rng(0))) / rounds


def main() -> None:
    if sys.argv[1:2] == ["--timed-cli"]:
        raise SystemExit(timed_cli(sys.argv[2], sys.argv[3:]))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="rounds of the whole run (default 30)")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved repeats of part 1 (default 3)")
    parser.add_argument("--run-repeats", type=int, default=1, help="interleaved repeats of part 2 (default 1)")
    parser.add_argument("--eval-every", default="1,R", help="the whole runs' --eval-every values, R: --rounds "
                        "(default 1,R: every round, the command's default, and only the last round)")
    parser.add_argument("--parts", default="123", help="which parts to run (default 123)")
    parser.add_argument("--data-dir", default=os.environ.get("FL_COSIM_DATA"))
    args = parser.parse_args()
    if not args.data_dir:
        raise SystemExit("set FL_COSIM_DATA (or --data-dir) to the folder holding MNIST")
    os.environ["FL_COSIM_DATA"] = args.data_dir
    cores = workers.usable_cores()
    print(f"machine: {cores} usable cores, {os.uname().machine}, torch {torch.__version__}; "
          f"load average at start {os.getloadavg()[0]:.2f}")
    data = scenario_data(SCENARIO, 0, args.data_dir)
    samples = sum(d.num_train for d in data.devices)
    default_backend = get_scenario(SCENARIO).training.backend

    if "1" in args.parts:
        round_speeds(data, samples, cores, args.repeats)
    if "2" in args.parts:
        periods = [args.rounds if p.strip() == "R" else int(p) for p in args.eval_every.split(",")]
        whole_run(data, args.rounds, args.run_repeats, default_backend, periods)
    if "3" in args.parts:
        print("\n3. network engine per round (SimPy, pipelined, 10 streams)\n")
        print("| devices | s per round |\n|---|---|")
        for devices in (1_000, 10_000):
            print(f"| {devices:,} | {network_per_round_s(devices):.3f} |")
    print(f"\nload average at end {os.getloadavg()[0]:.2f}")


def round_speeds(data, samples: int, cores: int, repeats: int) -> None:
    """Part 1: one round of every device's local update, each path timed side by side."""
    plain = PlainLoop(engine_learner(data, "loop"))
    loop, processes = engine_learner(data, "loop"), engine_learner(data, "processes")
    candidates = {
        "plain PyTorch loop, 2 threads (PFLlib/FL-bench)": (threads(2), plain.round),
        "engine loop, 1 thread": (threads(1), lambda: engine_round(loop)),
        "engine loop, 2 threads": (threads(2), lambda: engine_round(loop)),
        f"engine processes, {cores} workers x 1 thread": (threads(1, cores), lambda: engine_round(processes)),
    }
    notes = []
    if "batched" in BACKENDS:
        batched_cpu = engine_learner(data, "batched")
        candidates["engine batched, cpu, 2 threads"] = (threads(2), lambda: engine_round(batched_cpu))
        if torch.cuda.is_available():
            gpu = engine_learner(data, "batched", "cuda")
            candidates["engine batched, gpu"] = (threads(2), lambda: (engine_round(gpu), torch.cuda.synchronize()))
            compiled = engine_learner(data, "compiled", "cuda")
            engine_round(compiled)  # compile before timing
            candidates["engine compiled, gpu"] = (threads(2), lambda: (engine_round(compiled), torch.cuda.synchronize()))
        else:
            notes.append("engine batched, gpu: skipped (no CUDA device on this machine)")
    else:
        notes.append("engine batched: skipped (no 'batched' backend in this checkout)")
    engine_round(processes)  # fork the workers before timing
    best = fastest(candidates, repeats)
    workers.close_pools()
    reference = best["plain PyTorch loop, 2 threads (PFLlib/FL-bench)"]
    print(f"\n1. one round of local updates: {len(data.devices)} devices, {samples} samples "
          f"(fastest of {repeats} interleaved repeats)\n")
    print("| path | samples/s | vs plain loop |\n|---|---|---|")
    for name, seconds in best.items():
        print(f"| {name} | {samples / seconds:,.0f} | {reference / seconds:.2f}x |")
    for note in notes:
        print(f"| {note} | - | - |")


def whole_run(data, rounds: int, repeats: int, default_backend: str, eval_periods: list[int]) -> None:
    """Part 2: whole ``fl-cosim run``s (one per evaluation period) against the plain loop doing
    the same training, interleaved, and each run's own time split into learning and the rest."""
    plain = PlainLoop(engine_learner(data, "loop"))
    runs: dict[int, list] = {period: [] for period in eval_periods}
    plains = []
    with tempfile.TemporaryDirectory() as out:
        for _ in range(repeats):
            for period in eval_periods:
                threads(1, None)()
                runs[period].append(full_run(rounds, Path(out), period))
            threads(2)()
            plains.append(timed(lambda: [plain.round() for _ in range(rounds)]))
    plain_s = min(plains)
    print(f"\n2. whole runs: fl-cosim run --scenario {SCENARIO} --algorithm fedavg --optimizer sgd --rounds {rounds} "
          f"--eval-every E (backend {default_backend}, {workers.usable_cores()} workers, figure; fastest of {repeats}, "
          f"interleaved with the plain loop)\n")
    print("| what | wall-clock s | vs plain loop | run / training | run / (training + evaluation) |\n|---|---|---|---|---|")
    print(f"| plain PyTorch loop, 2 threads, the same training (in-process, no start-up, no evaluation) | {plain_s:.1f} | 1.00x | - | - |")
    for period in eval_periods:
        run_s, spent = min(runs[period], key=lambda r: r[0])
        training_s = spent["local_update"] + spent["aggregate"]
        learning_s = training_s + spent["evaluate"]
        print(f"| whole fl-cosim run, --eval-every {period} (start-up, data, network, evaluation, files, figure) | "
              f"{run_s:.1f} | {plain_s / run_s:.2f}x | {run_s / training_s:.3f} | {run_s / learning_s:.3f} |")


if __name__ == "__main__":
    main()
