"""Every registered algorithm on every small scenario: a couple of rounds, finite metrics,
traffic equal to what the plans state, and the same numbers for the same seed."""

import math

import numpy as np
import pytest
import torch

from learning.algorithms import ALGORITHMS
from netsim import NetworkSystem, run_cosimulation
from scenarios.definitions.registry import SCENARIOS
from scenarios.execution.build import build_learner, scenario_data
from scenarios.execution.spec import RunSpec, resolve

SMALL = [name for name, s in SCENARIOS.items() if s.small]
ROUNDS = 2
# On a CUDA machine every algorithm conforms on the GPU (the batched engine): said, since
# ``--device auto`` gives runs this small the CPU (learning/engine/auto.py).
DEVICE = {"device": "cuda"} if torch.cuda.is_available() else {}


# Loop counts that only repeat the code a round runs: what is checked here (finite metrics,
# traffic equal to the plans, the same numbers for the same seed) does not depend on how many
# times it repeats. Self-FL takes ``max_local_steps`` local steps in every round of a run this
# short (a client's variance is estimable from its third round on, so eq. 8 never runs here);
# pFedMe's ``R`` local steps of ``K`` inner steps each are one loop run R times. The defaults (40;
# R = 20) cost 35 and 20 CPU seconds here; what they compute is the algorithms' own tests' part.
# Parallel user-centric FL trains every stream model on every device: at full personalization
# (20 streams on the digits scenarios) 400 local updates a round, 24 CPU seconds over its three
# cases; 4 streams (eq. 11's k-means, as its own tests run it) repeat the same per-stream loop 80 times.
OPTIONS = {"self-fl": {"max_local_steps": 4}, "pfedme": {"R": 2}, "parallel-user-centric": {"streams": 4}}


def simulate(scenario_name, algorithm, seed=0, training=None):
    data = scenario_data(scenario_name, seed)
    spec = RunSpec(scenario_name, algorithm, rounds=ROUNDS, seed=seed, training=training or {},
                   options=OPTIONS.get(algorithm, {}))
    learner = build_learner(resolve(spec), data)
    system = NetworkSystem(rho=2, t_min=1, inv_mu=1)
    return learner, run_cosimulation(learner, system, ROUNDS, np.random.default_rng(seed))


def _training(name: str) -> dict:
    """The scalar Gaussian scenarios take thousands of full-batch steps of one parameter per
    round (Self-FL up to 2,000 per device): they run on the batched engine, on the CPU (the loop
    and the processes backend conform on the image scenarios; the engines' equivalence is
    tests/test_engine_equivalence.py's), 5 epochs a round rather than the scenarios' 50 (each a
    full-batch step: the same step repeated, as ``OPTIONS``'s loop counts)."""
    return {"backend": "batched", "device": "cpu", "epochs": 5} if SCENARIOS[name].model_name == "scalar-mean" else dict(DEVICE)


CASES = [(name, _training(name)) for name in SMALL] + [("digits-rotation", {"optimizer": "adam", **DEVICE})]
OWN_LOOPS = {"pfedme", "per-fedavg"}  # their own gradient steps, no local optimizer: Adam's case is SGD's, number for number


@pytest.mark.parametrize("scenario_name, training, algorithm",
                         [(name, training, algorithm) for algorithm in sorted(ALGORITHMS) for name, training in CASES
                          if not (algorithm in OWN_LOOPS and training.get("optimizer") == "adam")])
def test_algorithm_conforms(scenario_name, training, algorithm):
    if algorithm == "oracle" and scenario_data(scenario_name, 0).groups is None:
        pytest.skip("oracle needs true groups; this scenario has none")
    if algorithm == "fedproto" and scenario_data(scenario_name, 0).task != "classification":
        pytest.skip("fedproto needs classes (prototypes per class); this scenario is a regression")
    learner, (records, trace) = simulate(scenario_name, algorithm, training=training)
    assert [r.server_round for r in records] == list(range(ROUNDS + 1))
    for record in records:
        evaluation = record.evaluation
        assert evaluation.accuracy.shape == (learner.num_devices,)
        assert np.all(np.isfinite(evaluation.loss))
        finite_extras = [v for v in evaluation.extras.values() if isinstance(v, float)]
        assert all(math.isfinite(v) for v in finite_extras)
        if record.plan is None:
            assert record.downlink_bits == record.uplink_bits == 0
            continue
        plan = record.plan
        assert set(plan.participants) <= set(range(learner.num_devices))
        for stream in plan.streams:
            assert stream.bits > 0 and stream.devices and set(stream.devices) <= set(plan.participants)
        assert record.downlink_bits == pytest.approx(sum(s.bits for s in plan.streams))
        assert record.uplink_bits == pytest.approx(sum(plan.uplink_bits.get(d, 0.0) for d in record.arrived))
        sent = [e for e in trace if e.round == record.server_round and e.kind == "uplink"]
        assert sum(e.bits for e in sent) == pytest.approx(record.uplink_bits)
    _, (again, _) = simulate(scenario_name, algorithm, training=training)
    assert [r.end for r in again] == [r.end for r in records]
    for a, b in zip(again, records):
        assert np.array_equal(a.evaluation.accuracy, b.evaluation.accuracy, equal_nan=True)
        assert np.array_equal(a.evaluation.loss, b.evaluation.loss)
