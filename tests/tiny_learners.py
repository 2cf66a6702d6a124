"""Tiny federated data and learners for the hand-computed algorithm tests.

The ``scalar-mean`` model has one parameter that starts at 0; with squared loss its gradient
on a batch is ``2 (theta - mean(batch))``, and a batch larger than a device's data makes
every local step a full-batch step, so expected numbers follow by hand.
"""

from __future__ import annotations

import numpy as np
import torch

from contract import RoundOutcome, RoundPlan
from learning.algorithms import ALGORITHMS, LearnerSetup
from learning.data import DeviceData, FederatedData
from learning.training import LocalTraining


def scalar_data(train_values, val_values=None, groups=None) -> FederatedData:
    """One device per list of training values; validation values default to the first one."""
    devices = []
    for index, values in enumerate(train_values):
        y = torch.tensor(values, dtype=torch.float32)
        y_val = y[:1] if val_values is None else torch.tensor(val_values[index], dtype=torch.float32)
        devices.append(DeviceData(torch.zeros(len(values), 1), y, torch.zeros(len(y_val), 1), y_val))
    return FederatedData(tuple(devices), num_classes=1, groups=None if groups is None else np.array(groups), task="regression")


def build(name, data, training: dict | None = None, **options):
    """Learner ``name`` on ``data``; local SGD is lr 0.1, no momentum, full batches, E = 1, on the
    CPU (hand-computed numbers; a GPU machine too) unless ``training`` overrides some of these;
    ``options`` are the algorithm's."""
    settings = {"lr": 0.1, "momentum": 0.0, "batch_size": 100, "epochs": 1, "device": "cpu", **(training or {})}
    setup = LearnerSetup(data, "scalar-mean", {}, LocalTraining(**settings), np.random.SeedSequence(0), options=options)
    return ALGORITHMS[name](setup)


def run_round(learner, server_round: int, arrived=None) -> RoundPlan:
    """One round of the protocol without the network: plan, outcome, local updates, aggregation."""
    plan = learner.plan_round(server_round)
    devices = plan.participants if arrived is None else arrived
    tell_outcome(learner, server_round, plan, devices)
    learner.local_update(server_round, devices)
    learner.aggregate(server_round, devices)
    return plan


def tell_outcome(learner, server_round: int, plan: RoundPlan | None, arrived) -> None:
    """What the engine tells a learner with ``round_outcome`` when every participant received
    its model and computed, and ``arrived`` of them arrived (the others dropped by the deadline)."""
    tell = getattr(learner, "round_outcome", None)
    if plan is not None and tell is not None:
        everyone = tuple(plan.participants)
        dropped = {d: "deadline" for d in everyone if d not in arrived}
        tell(server_round, RoundOutcome(everyone, everyone, tuple(arrived), dropped))


def values(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().double().numpy().reshape(-1)
