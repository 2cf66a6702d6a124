"""Parallel user-centric FL (journal V-E, eq. 13): the exact counterpart of eq. 8.

The set-up round is user-centric FL's (gradients, eq. 9, k-means). Then each distinct row s
of W is one stream model ``phi_s``; every device trains every stream model from the same
launch point on its own data, and the server sets ``phi_s <- sum_j w_sj phi_{s,j}`` (eq. 13,
weights renormalized over the arrived devices). Device i's model is its stream's.

Per round the ``m_t`` stream models go down as ``m_t`` broadcasts (every device needs all of
them); each device computes ``m_t`` times as long (``compute_scale``) and uploads ``m_t``
models. A stream model is not trained by devices whose weight on it is exactly 0 (their
update would be discarded), which saves compute without changing the result.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from contract import RoundPlan, Stream
from learning.algorithms.base import LearnerSetup
from learning.algorithms.user_centric import UserCentric
from learning.weights import mix


class ParallelUserCentric(UserCentric):
    """Options: user-centric FL's."""

    name = "parallel-user-centric"

    def __init__(self, setup: LearnerSetup):
        super().__init__(setup)
        self.stream_weights = np.ones((1, self.num_devices)) / self.num_devices
        self.stream_of = np.zeros(self.num_devices, dtype=int)
        self.stream_models = self.theta0[None, :].clone()
        self.stream_sums = torch.zeros_like(self.stream_models)

    def plan_round(self, server_round: int) -> RoundPlan | None:
        if server_round == 0:
            return super().plan_round(server_round)
        participants = self.sample_participants()
        count = len(self.stream_models)
        streams = tuple(Stream(participants, self.model_bits) for _ in range(count))
        return RoundPlan(streams, self.model_uplink(participants, count), participants, {d: float(count) for d in participants})

    def local_update(self, server_round: int, devices: Sequence[int]) -> None:
        """Every arrived device trains every stream model; the sums of eq. 13 accumulate here
        (the engine passes the arrived devices), so no (streams x devices) copies are kept."""
        if server_round == 0:
            return super().local_update(server_round, devices)
        is_arrived = np.zeros(self.num_devices, dtype=bool)
        is_arrived[list(devices)] = True
        weights = mix(self.stream_weights, is_arrived)
        self.stream_sums.zero_()
        pairs = [(d, s) for d in devices for s in np.flatnonzero(weights[:, d] > 0)]
        jobs = [self.job(d, self.stream_models[s], f"stream {s}") for d, s in pairs]
        for (device, stream), update in zip(pairs, self.trainer.train_many(jobs)):
            self.stream_sums[stream] += float(weights[stream, device]) * update

    def aggregate(self, server_round: int, arrived: Sequence[int]) -> None:
        if server_round == 0:
            super().aggregate(server_round, arrived)
            self.stream_weights, self.stream_of = np.unique(self.weights, axis=0, return_inverse=True)
            self.stream_of = self.stream_of.reshape(-1)
            self.stream_models = self.theta0.repeat(len(self.stream_weights), 1)
            self.stream_sums = torch.zeros_like(self.stream_models)
            return
        is_arrived = np.zeros(self.num_devices, dtype=bool)
        is_arrived[list(arrived)] = True
        updated = torch.from_numpy(mix(self.stream_weights, is_arrived).any(axis=1))
        self.stream_models[updated] = self.stream_sums[updated]

    def personal_model(self, device: int) -> torch.Tensor:
        return self.stream_models[self.stream_of[device]]
