"""On digits-concept-shift (a label permutation per group) one global model cannot fit the
groups: Oracle, CFL and user-centric FL with k = m must each stay well above FedAvg, FedProx
and SCAFFOLD (the ordering of the journal's Table I, CIFAR-10 concept shift column).

30 rounds: enough for CFL's first splits (measured around round 10-25) and for the
personalized models to pull away; each algorithm runs from the same data and seed, in one
``learning.reuse.kept()`` block as a command's runs are (a local update computed by one run is
looked up by the next that makes the same call: the same numbers bit for bit, tests/test_reuse.py).
"""

import numpy as np
import pytest

from learning import reuse
from netsim import NetworkSystem, RunOptions, run_cosimulation
from scenarios.definitions.registry import get_scenario
from scenarios.execution.build import build_learner, scenario_data
from scenarios.execution.spec import RunSpec, resolve

ROUNDS = 30
SEED = 0
MARGIN = 0.1  # mean accuracy
PERSONALIZED = {"oracle": {}, "cfl": {}, "user-centric": {"streams": None}}
SINGLE_MODEL = {"fedavg": {}, "fedprox": {}, "scaffold": {}}


@pytest.fixture(scope="module")
def final_accuracy():
    scenario = get_scenario("digits-concept-shift")
    data = scenario_data(scenario.name, SEED)
    accuracy = {}
    with reuse.kept():  # as a command's runs: CFL's local updates before it splits are FedAvg's, computed once
        for name, options in {**PERSONALIZED, **SINGLE_MODEL}.items():
            learner = build_learner(resolve(RunSpec(scenario.name, name, seed=SEED, options=options)), data)
            records, _ = run_cosimulation(learner, NetworkSystem(rho=1, t_min=1, inv_mu=0), ROUNDS,
                                          np.random.default_rng(SEED), RunOptions(evaluate_every=ROUNDS))
            accuracy[name] = records[-1].evaluation.mean_accuracy
    return accuracy


@pytest.mark.slow
@pytest.mark.parametrize("personalized", sorted(PERSONALIZED))
def test_personalized_algorithms_beat_every_single_model_algorithm(final_accuracy, personalized):
    for single in SINGLE_MODEL:
        assert final_accuracy[personalized] >= final_accuracy[single] + MARGIN, final_accuracy
