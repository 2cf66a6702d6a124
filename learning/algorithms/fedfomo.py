"""FedFomo (Zhang et al. 2021, Alg. 1): each device mixes in the models of the peers that
lower its own validation loss, with first-order weights.

Per round the server sends device i the latest uploaded models of ``M`` other devices, chosen
epsilon-greedily from its affinity row (with probability ``epsilon`` M at random, else the M
of highest affinity, ties broken at random). The device weighs each on its validation split,
``w_n = max(0, (L_i(theta_i) - L_i(theta_n)) / ||theta_n - theta_i||)``, normalizes them and
sets ``theta_i <- theta_i + sum_n w_n (theta_n - theta_i)`` (no change when all are 0), then
trains locally and uploads. The server adds the reported weights, before clipping, to the
affinity row ``P[i, n]`` (as their code reports them), so a harmful model loses affinity.

The validation split FedFomo weighs on is the device's own validation split, the same split
every algorithm here is evaluated on (FedFomo, as in its paper, uses it for its weights).

Options: ``M`` (models downloaded per device per round, default 5), ``epsilon`` (0.3,
constant) and ``rate_limit`` (R, default 1): models are exchanged only every R rounds; a
device uploads in rounds ``r = 0 (mod R)`` and downloads in the round after (``r = 1 (mod
R)``, from round 2), so downloads are one round old as with R = 1, and trains locally with
no traffic in between: R times less traffic. Round 1 broadcasts the initial model (no device
has uploaded yet), as do later rounds for devices taking part for the first time.

Traffic: downlink M unicast models per device (M streams of ``model_bits`` each, M*N in
all); uplink one model per device plus the M weights it reports (32-bit scalars).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from contract import RoundPlan, Stream
from learning.algorithms.base import SCALAR_BITS, FederatedLearner, LearnerSetup
from learning.options import Options, option


def fomo_weights(raw: np.ndarray) -> np.ndarray:
    """Zhang et al.'s weights ``max(0, raw) / sum max(0, raw)`` (all zeros when none is positive)."""
    positive = np.clip(np.asarray(raw, dtype=np.float64), 0.0, None)
    total = positive.sum()
    return positive / total if total > 0 else positive


@dataclass(frozen=True)
class FedFomoOptions(Options):
    M: int = option(5, "peer models each device downloads per round (fewer than the devices)", low=1)
    epsilon: float = option(0.3, "probability of picking a random peer instead of the highest-affinity one", low=0, high=1)
    rate_limit: int = option(1, "R: models are exchanged only every R rounds (R times less traffic)", low=1)


class FedFomo(FederatedLearner):
    name = "fedfomo"
    Options = FedFomoOptions

    def __init__(self, setup: LearnerSetup):
        super().__init__(setup)
        if self.options.M > self.num_devices - 1:
            raise ValueError(f"fedfomo M must be in 1..{self.num_devices - 1}, got {self.options.M}")
        self.uploaded = self.theta.clone()  # the server's copy of each device's last upload
        self.affinity = np.zeros((self.num_devices, self.num_devices))
        self.has_initial: set[int] = set()
        self.offered: dict[int, np.ndarray] = {}
        self.reported: dict[int, np.ndarray] = {}

    def downloads(self, server_round: int) -> bool:
        return server_round > 1 and (server_round - 1) % self.options.rate_limit == 0

    def uploads(self, server_round: int) -> bool:
        return server_round % self.options.rate_limit == 0

    def plan_round(self, server_round: int) -> RoundPlan | None:
        if server_round == 0:
            return None
        participants = self.sample_participants()
        newcomers = tuple(d for d in participants if d not in self.has_initial)
        streams = [Stream(newcomers, self.model_bits)] if newcomers else []
        downloads = self.downloads(server_round)
        if downloads:  # the models offered are chosen once the round is under way (round_outcome)
            streams += [Stream((d,), self.model_bits) for d in participants for _ in range(self.options.M)]
        bits = (self.model_bits if self.uploads(server_round) else 0.0) + (self.options.M * SCALAR_BITS if downloads else 0.0)
        uplink = {d: bits for d in participants} if bits else {}
        return RoundPlan(tuple(streams), uplink, participants)

    def round_outcome(self, server_round: int, outcome) -> None:
        """The round's participants hold the initial model now; in a download round each is
        offered its M models, drawn in device order from the server's generator."""
        self.has_initial.update(outcome.participants)
        if self.downloads(server_round):
            self.offered = {d: self.choose_models(d) for d in outcome.participants}

    def choose_models(self, device: int) -> np.ndarray:
        """Epsilon-greedy over the affinity row: M random peers, or the M of highest affinity."""
        others = np.delete(np.arange(self.num_devices), device)
        if self.rng.random() < self.options.epsilon:
            return np.sort(self.rng.choice(others, size=self.options.M, replace=False))
        shuffled = self.rng.permutation(others)
        return shuffled[np.argsort(-self.affinity[device, shuffled], kind="stable")[: self.options.M]]

    def local_update(self, server_round: int, devices: Sequence[int]) -> None:
        if self.downloads(server_round) and devices:
            self.theta[list(devices)] = self.first_order_updates(devices)
        if devices:
            self.theta[list(devices)] = self.trainer.train_many([self.job(d, self.theta[d]) for d in devices])

    def first_order_updates(self, devices: Sequence[int]) -> torch.Tensor:
        """Each device weighs its offered models on its validation split and mixes them in
        (all the evaluations of all devices in one call)."""
        models, datas = [], []
        for device in devices:
            models += [self.theta[device]] + [self.uploaded[peer] for peer in self.offered[device]]
            datas += [self.data.devices[device]] * (1 + len(self.offered[device]))
        _, losses = self.trainer.evaluate_many(torch.stack(models), datas)
        updated, first = [], 0
        for device in devices:
            own, offered = self.theta[device], self.offered[device]
            own_loss, peer_losses = losses[first], losses[first + 1 : first + 1 + len(offered)]
            first += 1 + len(offered)
            raw = np.zeros(len(offered))
            for k, peer in enumerate(offered):
                distance = float(torch.linalg.vector_norm(self.uploaded[peer] - own))
                if distance > 0:
                    raw[k] = (own_loss - peer_losses[k]) / distance
            self.reported[device] = raw
            weights = torch.from_numpy(fomo_weights(raw)).to(own.dtype)
            updated.append(own + weights @ (self.uploaded[torch.from_numpy(offered)] - own))
        return torch.stack(updated)

    def aggregate(self, server_round: int, arrived: Sequence[int]) -> None:
        for device in arrived:
            if device in self.reported:
                self.affinity[device, self.offered[device]] += self.reported[device]
        self.reported.clear()
        if self.uploads(server_round) and arrived:
            index = list(arrived)
            self.uploaded[index] = self.theta[index]
