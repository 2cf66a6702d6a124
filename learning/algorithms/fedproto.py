"""FedProto (Tan et al., AAAI 2022): devices exchange class prototypes, never models.

A device's embedding ``f(x)`` is the input of its model's output layer (the penultimate
representation; for logistic regression the input itself: ``learning.models.output_layer``).
Each round a device trains its own model from where it left it (E epochs of the scenario's
optimizer, through the training engine's prototype hook of ``LocalJob``) on
``CE + lam * mean_batch ||f(x) - C_y||^2``, ``C_y`` the
global prototype of the sample's class (classes without one add nothing; FedProto's code
uses a mean over the embedding entries, which only rescales lam), then computes its local
prototypes: the mean embedding of each of its classes, with the trained model. The server
sets each class's global prototype to the average of the arrived local prototypes weighted
by the devices' class counts; a class nobody reported this round keeps its prototype.

Option ``lam`` (lambda, default 1, FedProto's setting). The personal models (never averaged)
are what is evaluated. Traffic: down, one broadcast of the global prototypes (classes with a
prototype x embedding size x 32 bits; none in round 1); up, per device, one prototype and
its class count per class it holds: ``classes x (embedding + 1) x 32`` bits (the count is
the weight the server needs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from contract import RoundPlan, Stream
from learning.algorithms.base import SCALAR_BITS, FederatedLearner, LearnerSetup
from learning.models import output_layer
from learning.options import Options, option


@dataclass(frozen=True)
class FedProtoOptions(Options):
    lam: float = option(1.0, "weight of the distance to the global class prototypes in the local loss", low=0)


class FedProto(FederatedLearner):
    name = "fedproto"
    Options = FedProtoOptions

    def __init__(self, setup: LearnerSetup):
        if setup.data.task != "classification":
            raise ValueError("fedproto needs a classification task (prototypes are per class)")
        super().__init__(setup)
        classes = self.data.num_classes
        self.embedding_size = output_layer(self.trainer.model).in_features
        self.class_counts = np.stack([np.bincount(d.y_train.numpy(), minlength=classes) for d in self.data.devices])
        self.local_prototypes = torch.zeros(self.num_devices, classes, self.embedding_size)
        self.global_prototypes = torch.zeros(classes, self.embedding_size)
        self.has_global = torch.zeros(classes, dtype=torch.bool)

    def plan_round(self, server_round: int) -> RoundPlan | None:
        if server_round == 0:
            return None
        participants = self.sample_participants()
        prototype_bits = self.embedding_size * SCALAR_BITS
        known = int(self.has_global.sum())
        streams = (Stream(participants, known * prototype_bits),) if known else ()
        held = (self.class_counts > 0).sum(axis=1)
        uplink = {d: float(held[d]) * (prototype_bits + SCALAR_BITS) for d in participants}
        return RoundPlan(streams, uplink, participants)

    def local_update(self, server_round: int, devices: Sequence[int]) -> None:
        hooks = {}
        if self.has_global.any():
            hooks = {"prototypes": self.global_prototypes, "prototype_weights": self.options.lam * self.has_global.to(self.global_prototypes.dtype)}
        trained = self.trainer.train_many([self.job(device, self.theta[device], **hooks) for device in devices])
        for device, vector in zip(devices, trained):
            data = self.data.devices[device]
            self.theta[device] = vector
            self.local_prototypes[device] = self.class_means(self.trainer.embeddings(vector, data.x_train), data.y_train)

    def class_means(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """Mean embedding per class (zero rows for classes the device does not hold)."""
        sums = torch.zeros(self.data.num_classes, embeddings.shape[1]).index_add_(0, labels, embeddings)
        counts = torch.bincount(labels, minlength=self.data.num_classes).clamp(min=1)
        return sums / counts[:, None]

    def aggregate(self, server_round: int, arrived: Sequence[int]) -> None:
        index = sorted(arrived)
        if not index:
            return
        counts = torch.from_numpy(self.class_counts[index]).to(self.global_prototypes.dtype)  # (devices, classes)
        total = counts.sum(dim=0)
        reported = total > 0
        weighted = torch.einsum("dc,dce->ce", counts, self.local_prototypes[index])
        self.global_prototypes[reported] = weighted[reported] / total[reported, None]
        self.has_global |= reported
