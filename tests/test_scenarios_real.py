"""Every registered scenario whose datasets are in $FL_COSIM_DATA: it builds with the device
and group counts of its paper, the same seed gives the same partition and another seed a
different one, and FedAvg trains and evaluates it for two rounds through the netsim loop.

To keep this file to seconds per scenario, the FedAvg check keeps one mini-batch of training
and of validation data per device, so each round is one local step per epoch; whole rounds
are timed by benchmarks, not here. Scenarios whose data is absent are skipped, saying which
file is missing; building them raises the readers' DatasetError (checked without any data).
"""

import os
from dataclasses import replace

import numpy as np
import pytest
import torch

from learning.algorithms import ALGORITHMS, LearnerSetup
from learning.data import DeviceData
from netsim import NetworkSystem, run_cosimulation
from scenarios.datasets import dataset_status
from scenarios.errors import DatasetError
from scenarios.definitions.registry import SCENARIOS

# name -> (devices, true groups or None), from the papers' set-ups
EXPECTED = {
    "mnist-label-shift": (20, None),
    "emnist-label-shift": (20, None),
    "mnist-rotation": (100, 4),
    "emnist-rotation": (100, 4),
    "cifar10-concept-shift": (20, 4),
    "cifar100-concept-shift": (20, 4),
    "stackoverflow-tags": (35, None),
    "fmnist-pathological": (100, 5),
    "fmnist-noisy": (100, 5),
    "cifar10-pathological": (100, 5),
    "cifar10-noisy": (100, 5),
    "mnist-fedprox": (1000, None),
    "synthetic-gaussian": (20, None),
    "synthetic-gaussian-heterogeneous": (20, None),
    "digits-rotation": (20, 4),
    "digits-concept-shift": (20, 4),
}
NEEDS_DATA = [name for name, s in SCENARIOS.items() if s.datasets]


@pytest.fixture(scope="module")
def found():
    """dataset name -> (found, detail) in $FL_COSIM_DATA (None when the variable is unset)."""
    data_dir = os.environ.get("FL_COSIM_DATA")
    if not data_dir:
        return None
    return {row["name"]: (row["found"], row["detail"]) for row in dataset_status(data_dir, verify=False)}


def data_dir_for(scenario, found):
    """The data dir for the scenario, or a skip naming what is missing."""
    if not scenario.datasets:
        return None
    if found is None:
        pytest.skip(f"{scenario.name} needs {', '.join(scenario.datasets)}: FL_COSIM_DATA is not set")
    for dataset in scenario.datasets:
        present, detail = found[dataset]
        if not present:
            pytest.skip(f"{scenario.name}: {detail}")
    return os.environ["FL_COSIM_DATA"]


def build(scenario, data_dir, seed):
    return scenario.build(np.random.default_rng(seed), data_dir)


def same_data(a, b):
    return len(a.devices) == len(b.devices) and all(
        torch.equal(getattr(x, f), getattr(y, f)) for x, y in zip(a.devices, b.devices) for f in ("x_train", "y_train", "x_val", "y_val")
    )


def test_expected_scenarios_are_registered():
    assert set(EXPECTED) <= set(SCENARIOS)


@pytest.fixture(scope="module", params=list(SCENARIOS))
def built(request, found):
    """(scenario, its data directory, its data of seed 0), built once for the tests of this
    module that take it: pytest runs them scenario by scenario, so one scenario's data is held
    at a time."""
    scenario = SCENARIOS[request.param]
    data_dir = data_dir_for(scenario, found)
    return scenario, data_dir, build(scenario, data_dir, 0)


def test_builds_as_specified_and_is_seeded(built):
    scenario, data_dir, data = built
    name = scenario.name
    devices, groups = EXPECTED.get(name, (data.num_devices, None if data.groups is None else len(set(data.groups.tolist()))))
    assert data.num_devices == devices
    if groups is None:
        assert data.groups is None
    else:
        assert len(data.groups) == devices and len(set(data.groups.tolist())) == groups
    for device in data.devices:
        assert device.num_train > 0 and device.y_val.shape[0] > 0
        assert device.x_train.shape[1:] == device.x_val.shape[1:]
        if data.task == "classification":
            assert 0 <= int(device.y_train.min()) and int(device.y_train.max()) < data.num_classes
        if device.x_train.is_floating_point() and data.task == "classification":
            assert 0.0 <= float(device.x_train.min()) and float(device.x_train.max()) <= 1.0
    assert same_data(data, build(scenario, data_dir, 0))
    assert not same_data(data, build(scenario, data_dir, 1))


def one_batch(data, size):
    """Each device keeps ``size`` training and validation points (one mini-batch)."""
    cut = [DeviceData(d.x_train[:size], d.y_train[:size], d.x_val[:size], d.y_val[:size]) for d in data.devices]
    return replace(data, devices=tuple(cut))


def test_fedavg_trains_and_evaluates(built):
    scenario, _, data = built
    data = one_batch(data, scenario.training.batch_size)
    setup = LearnerSetup(data, scenario.model_name, scenario.model_kwargs, scenario.training, np.random.SeedSequence(0), scenario.participation)
    learner = ALGORITHMS["fedavg"](setup)
    records, _ = run_cosimulation(learner, NetworkSystem(rho=2, t_min=1, inv_mu=0), 2, np.random.default_rng(0))
    assert [r.server_round for r in records] == [0, 1, 2]
    for record in records[1:]:
        assert record.arrived == record.plan.participants
        assert len(record.arrived) == max(1, round(scenario.participation * data.num_devices))
    final = records[-1].evaluation
    assert final.loss.shape == (data.num_devices,) and np.all(np.isfinite(final.loss))
    if data.task == "classification":
        assert np.all((0 <= final.accuracy) & (final.accuracy <= 1))
    assert not torch.equal(learner.theta[0], learner.theta0)  # FedAvg moved the global model


@pytest.mark.parametrize("name", NEEDS_DATA)
def test_missing_data_raises_dataset_error(name, tmp_path):
    with pytest.raises(DatasetError, match=str(tmp_path)):
        SCENARIOS[name].build(np.random.default_rng(0), tmp_path)
