"""FedProto (Tan et al., AAAI 2022): devices exchange class prototypes, never models.

A device's embedding ``f(x)`` is the input of its model's last ``nn.Linear`` layer (the
penultimate representation; for logistic regression the input itself), read by a forward
pre-hook on that layer. Each round a device trains its own model from where it left it
(E epochs of the scenario's SGD) on ``CE + lam * mean_batch ||f(x) - C_y||^2``, ``C_y`` the
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

from typing import Sequence

import numpy as np
import torch
from torch import nn

from learning.algorithms.base import SCALAR_BITS, FederatedLearner, LearnerSetup
from learning.params import set_flat
from learning.training import Trainer
from netsim.plan import RoundPlan, Stream


def last_linear(model: nn.Module) -> nn.Linear:
    """The model's output layer: its last registered ``nn.Linear``."""
    layers = [m for m in model.modules() if isinstance(m, nn.Linear)]
    if not layers:
        raise ValueError("fedproto needs a model whose output layer is nn.Linear")
    return layers[-1]


class PrototypeTrainer(Trainer):
    """A Trainer whose training loss adds FedProto's prototype term while ``targets`` is set.

    Evaluation and gradients (``reduction="sum"``) stay plain cross-entropy.
    """

    def __init__(self, model: nn.Module, config, lam: float):
        super().__init__(model, config, "classification")
        self.lam = lam
        self.layer = last_linear(model)
        self.embedding: torch.Tensor | None = None
        self.layer.register_forward_pre_hook(self._keep_embedding)
        self.targets: torch.Tensor | None = None  # (classes, embedding) global prototypes
        self.has_target: torch.Tensor | None = None  # (classes,) bool

    def _keep_embedding(self, module, inputs) -> None:
        self.embedding = inputs[0]

    def loss(self, outputs: torch.Tensor, y: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
        base = super().loss(outputs, y, reduction)
        if self.targets is None or reduction != "mean":
            return base
        known = self.has_target[y]
        gap = (self.embedding[known] - self.targets[y[known]]).pow(2).sum()
        return base + self.lam * gap / y.shape[0]

    @torch.no_grad()
    def embed(self, params: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        set_flat(self.model, params)
        pieces = []
        for begin in range(0, x.shape[0], self.eval_batch):
            self.model(x[begin : begin + self.eval_batch])
            pieces.append(self.embedding.reshape(self.embedding.shape[0], -1))
        return torch.cat(pieces)


class FedProto(FederatedLearner):
    name = "fedproto"
    defaults = {"lam": 1.0}

    def __init__(self, setup: LearnerSetup):
        if setup.data.task != "classification":
            raise ValueError("fedproto needs a classification task (prototypes are per class)")
        super().__init__(setup)
        self.lam = float(self.options["lam"])
        if self.lam < 0:
            raise ValueError(f"fedproto needs lam >= 0, got {self.lam}")
        self.trainer = PrototypeTrainer(self.trainer.model, setup.training, self.lam)
        classes = self.data.num_classes
        self.embedding_size = self.trainer.layer.in_features
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
        if self.has_global.any():
            self.trainer.targets, self.trainer.has_target = self.global_prototypes, self.has_global
        try:
            for device in devices:
                data = self.data.devices[device]
                self.theta[device] = self.trainer.train_job(self.job(device, self.theta[device]))  # its own loss: the loop
                self.local_prototypes[device] = self.class_means(self.trainer.embed(self.theta[device], data.x_train), data.y_train)
        finally:
            self.trainer.targets = self.trainer.has_target = None

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
