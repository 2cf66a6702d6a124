"""Oracle: FedAvg within the scenario's true groups (journal V-B), one multicast stream per group."""

from learning.algorithms.base import LearnerSetup, MixingLearner
from learning.weights import oracle_weights


class Oracle(MixingLearner):
    name = "oracle"
    accepts_codecs = True

    def __init__(self, setup: LearnerSetup):
        if setup.data.groups is None:
            raise ValueError("oracle needs a scenario with true groups")
        super().__init__(setup)
        self.weights = oracle_weights(self.train_sizes, setup.data.groups)

    def mixing_matrix(self):
        return self.weights
