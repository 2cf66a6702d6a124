"""Registered algorithms, by name. Each is a Learner the netsim clock drives."""

from __future__ import annotations

from learning.algorithms.base import FederatedLearner, LearnerSetup, MixingLearner
from learning.algorithms.fedavg import FedAvg
from learning.algorithms.local import Local
from learning.algorithms.oracle import Oracle
from learning.algorithms.user_centric import UserCentric

ALGORITHMS: dict[str, type[FederatedLearner]] = {
    cls.name: cls
    for cls in (FedAvg, Local, Oracle, UserCentric)
}

__all__ = ["ALGORITHMS", "FederatedLearner", "LearnerSetup", "MixingLearner"]
