"""How much the network simulation adds to the cost of training (wall-clock; not a test).

Usage: python3 benchmarks/bench_overhead.py [devices] [rounds]
Times a full co-simulation of FedAvg on digits-rotation, then the same recorded plans
through the round engine alone, and the round engine on a large synthetic population
(``benchmarks/network_scale.py`` compares the timeline with the per-device processes).
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch

from netsim import NetworkSystem, simulate_rounds
from scenarios.cli.round_time import MODEL_BITS, round_plan
from scenarios.execution.build import build_learner, scenario_data
from scenarios.execution.spec import RunSpec, resolve
from netsim import run_cosimulation


def main() -> None:
    torch.set_num_threads(1)
    devices = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    data = scenario_data("digits-rotation", 0)
    learner = build_learner(resolve(RunSpec("digits-rotation", "fedavg")), data)
    system = NetworkSystem(rho=4, t_min=1, inv_mu=1)
    start = time.perf_counter()
    records, _ = run_cosimulation(learner, system, rounds, np.random.default_rng(0))
    total_s = time.perf_counter() - start
    start = time.perf_counter()
    simulate_rounds([r.plan for r in records], system, learner.model_bits, np.random.default_rng(0))
    network_s = time.perf_counter() - start
    print(f"co-simulation of {rounds} rounds: {total_s:.2f} s; the network alone: {network_s * 1000:.1f} ms "
          f"({100 * network_s / total_s:.2f}% of the run)")
    start = time.perf_counter()
    simulate_rounds([round_plan(devices, 10)] * 10, system, MODEL_BITS, np.random.default_rng(0))
    print(f"round engine, {devices} devices: {(time.perf_counter() - start) / 10 * 1000:.1f} ms per round")


if __name__ == "__main__":
    main()
