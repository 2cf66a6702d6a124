"""Registered algorithms, by name. Each is a Learner the netsim clock drives."""

from __future__ import annotations

from learning.algorithms.base import FederatedLearner, LearnerSetup, MixingLearner, codec_algorithms
from learning.algorithms.fedavg import FedAvg
from learning.algorithms.local import Local
from learning.algorithms.oracle import Oracle
from learning.algorithms.user_centric import UserCentric
from learning.algorithms.fedprox import FedProx
from learning.algorithms.scaffold import Scaffold
from learning.algorithms.ditto import Ditto
from learning.algorithms.pfedme import PFedMe
from learning.algorithms.cfl import CFL
from learning.algorithms.fedfomo import FedFomo
from learning.algorithms.parallel_user_centric import ParallelUserCentric
from learning.algorithms.pfedlia import PFedLIA
from learning.algorithms.self_fl import SelfFL
from learning.algorithms.per_fedavg import PerFedAvg
from learning.algorithms.fesem import FeSEM
from learning.algorithms.fedproto import FedProto

ALGORITHMS: dict[str, type[FederatedLearner]] = {
    cls.name: cls
    for cls in (FedAvg, Local, Oracle, UserCentric,
                FedProx, Scaffold, Ditto, PFedMe, CFL, FedFomo, ParallelUserCentric,
                PFedLIA, SelfFL, PerFedAvg, FeSEM, FedProto)
}

__all__ = ["ALGORITHMS", "FederatedLearner", "LearnerSetup", "MixingLearner", "codec_algorithms"]
