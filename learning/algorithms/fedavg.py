"""FedAvg (McMahan et al.; journal eq. 1): one global model, one broadcast."""

from learning.algorithms.base import MixingLearner
from learning.weights import fedavg_weights


class FedAvg(MixingLearner):
    name = "fedavg"
    accepts_codecs = True
    asynchronous = True  # one global model, a local update from the model received: learning.asynchronous drives it

    def mixing_matrix(self):
        return fedavg_weights(self.train_sizes)
