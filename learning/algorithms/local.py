"""Local training: ``W = I`` and no communication at all."""

from learning.algorithms.base import MixingLearner
from learning.weights import local_weights


class Local(MixingLearner):
    name = "local"
    communicates = False

    def mixing_matrix(self):
        return local_weights(self.num_devices)
