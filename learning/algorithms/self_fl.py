"""Self-FL (Chen et al., Self-Aware Personalized FL): Algorithm 1 with the online variances of
appendix E.

Per round t the server samples ``max(1, C M)`` clients (C = the activity rate, the scenario's
participation) and sends them the global model ``theta^{t-1}``, the inter-client uncertainty
``sigma_0^2`` and the total precision ``sum_k (sigma_0^2 + sigma_k^2)^-1`` (two scalars, so a
client can form its leave-one-out sums). Client m, with its personal parameter
``theta_m^{t-1}`` (initially ``theta^0``) and its intra-client uncertainty ``sigma_m^2``:

- starts from eq. 10, ``theta_m^INIT = theta^{t-1} + (sigma_0^2 + sigma_m^2)^-1 / S_-m
  (theta^{t-1} - theta_m^{t-1})``, ``S_-m = sum_{k != m} (sigma_0^2 + sigma_k^2)^-1`` (the
  leave-one-out global estimate of eq. 9);
- trains ``l_m`` mini-batch steps, eq. 8/16:
  ``(1 - eta_m / sigma_m^2)^l_m = S_-m / (sigma_m^-2 + S_-m)``, capped by ``max_local_steps``
  (l_max, 4.2) and at least 1. The paper's local objective is the summed negative
  log-likelihood (eq. 5, Algorithm 2), while the Trainer steps ``lr`` on its mean (the
  Trainer's loss is the per-sample negative log-likelihood): one step is a step of
  ``eta_m = lr / n_m`` on the sum, so eq. 8 is solved with that ``eta_m``.
  When ``eta_m >= sigma_m^2`` a single step already passes the quadratic's optimum: 1 step;
- updates ``sigma_m^2``, by default (``intra_variance=trajectory``) the empirical variance
  (trace: the sum of the entry-wise variances, 3.2) of its personal parameters across the
  rounds it took part in (eq. 13), by the online recursion eq. 19 with its own activation
  counter (Remark E.1), including the new ``theta_m^t``; with ``intra_variance=fisher`` the
  asymptotic variance of the local M-estimator that 3.1 names as the alternative, the trace of
  the inverse (diagonal) Fisher information over ``N_m`` at ``theta_m^t``. It uploads
  ``theta_m^t`` and ``sigma_m^2``.

A client whose ``sigma_m^2`` is not yet estimable (the trajectory needs two personal
parameters, the Fisher information one) starts from the global model and trains ``l_max``
steps: the warm start 3.2 recommends. The server sets ``sigma_0^2`` to the empirical
variance of the uploaded personal parameters (eq. 14), aggregates them with weights
``(sigma_0^2 + sigma_m^2)^-1`` (eq. 11; models of zero total variance share all the weight,
the limit) and smooths with the activity rate (4.1): ``theta^t = (1 - C) theta^{t-1} + C theta~^t``.

The personal parameters ``theta_m^t`` are what is evaluated. Traffic: one broadcast of the
model and two scalars down; the model and one scalar up per client. The compute scale of a
client is ``l_m`` over a regular round's steps (E epochs).

Why the options. On full-batch gradient descent (the G.1 synthetic data) personal parameters
carry no sampling noise, so eq. 13 measures the optimization's path, not ``sigma_m^2``; the
Fisher information gives the sampling variance itself (exact for the Gaussian model). And the
paper's target ``theta_m^(FL)`` (eq. 3, the fixed point of eq. 7-10 and eq. 15/16) postulates
client m's own parameter to be the global one (2.1: "theta_1 = theta_0"), so its prior from
the others has precision ``S_-m``. Under the two-level model that generates the data,
``theta_m ~ N(theta_0, sigma_0^2)`` like every other client's, the posterior mean has prior
precision ``(sigma_0^2 + 1/S_-m)^-1`` instead: ``target=hierarchical`` solves eq. 8 with that
(eq. 10's start is unchanged). With large ``sigma_0^2`` the paper's target pulls towards the
others' mean about M times more than the posterior mean, and in G.1 case 2 it is farther from
the true parameters than local training is (tests/test_algorithm_self_fl.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np
import torch

from contract import RoundPlan, Stream
from learning.algorithms.base import SCALAR_BITS, FederatedLearner, LearnerSetup
from learning.options import Options, option


def online_variance(count: int, mean: torch.Tensor, variance: float, x: torch.Tensor) -> tuple[int, torch.Tensor, float]:
    """Eq. 19: add ``x`` to a running mean and (trace) variance ``1/t sum ||x_i - mean||^2``
    (eq. 18) without storing the past points. Returns (t, mean_t, variance_t)."""
    t = count + 1
    new_mean = mean * ((t - 1) / t) + x / t
    new_variance = (t - 1) / t * variance + (t - 1) / t * float(torch.sum((mean - new_mean) ** 2)) + float(torch.sum((x - new_mean) ** 2)) / t
    return t, new_mean, new_variance


def spread(models: torch.Tensor) -> float:
    """Eq. 14: the empirical (trace) variance of a set of models, ``1/M sum ||theta_m - mean||^2``."""
    return float(torch.sum((models - models.mean(dim=0)) ** 2) / models.shape[0])


def variance_weights(inter: float, intra: np.ndarray) -> np.ndarray:
    """Eq. 11's normalized weights ``(sigma_0^2 + sigma_m^2)^-1``; zero total variances (infinite
    precision) share all the weight equally, infinite ones get none (equal weights if all are)."""
    total = inter + np.asarray(intra, dtype=np.float64)
    if np.any(total <= 0):
        w = (total <= 0).astype(np.float64)
    elif np.all(np.isinf(total)):
        w = np.ones_like(total)
    else:
        w = 1.0 / total
    return w / w.sum()


def asymptotic_variance(fisher_diagonal: torch.Tensor, num_samples: int) -> float:
    """Sec. 3.1's asymptotic (M-estimator) ``sigma_m^2``: the trace of the inverse Fisher
    information over ``N_m``, with the diagonal approximation ``sum_j 1 / (N_m F_jj)``.
    Infinite when the data inform some parameter not at all (an image model's weights on
    always-blank pixels): such a client keeps the warm start and gets no weight in eq. 11."""
    return float(torch.sum(1.0 / (num_samples * fisher_diagonal.double())))


def local_steps(eta: float, intra: float, others_precision: float, max_steps: int) -> int:
    """Eq. 8/16: ``l`` with ``(1 - eta / sigma_m^2)^l = S_-m / (sigma_m^-2 + S_-m)``, rounded,
    in ``1..max_steps`` (needs ``eta, sigma_m^2, S_-m > 0``)."""
    contraction = 1.0 - eta / intra
    if contraction <= 0:
        return 1
    ratio = others_precision / (1.0 / intra + others_precision)
    return int(min(max_steps, max(1, round(math.log(ratio) / math.log(contraction)))))


@dataclass(frozen=True)
class SelfFLOptions(Options):
    max_local_steps: int = option(40, "l_max: the most local steps a device takes in a round (4.2)", low=1)
    intra_variance: Literal["trajectory", "fisher"] = option("trajectory", "estimator of a device's intra-client variance")
    target: Literal["paper", "hierarchical"] = option("paper", "the personalized target: the paper's or the hierarchical model's")


class SelfFL(FederatedLearner):
    name = "self-fl"
    Options = SelfFLOptions
    INTRA_VARIANCES = {"trajectory": 2, "fisher": 1}  # estimator -> personal parameters it needs

    def __init__(self, setup: LearnerSetup):
        super().__init__(setup)
        self.activity_rate = float(setup.participation)
        self.global_model = self.theta0.clone()
        self.counts = np.zeros(self.num_devices, dtype=int)  # personal parameters seen (Remark E.1)
        self.means = torch.zeros_like(self.theta)
        self.intra = np.zeros(self.num_devices)  # sigma_m^2 (eq. 13)
        self.inter = 0.0  # sigma_0^2 (eq. 14)
        self.steps: dict[int, int] = {}

    # --- client side ------------------------------------------------------------------
    def others_precision(self, device: int) -> float:
        """``S_-m = sum_{k != m} (sigma_0^2 + sigma_k^2)^-1`` over the clients the server has heard from."""
        known = self.counts > 0
        known[device] = False
        total = self.inter + self.intra[known]
        return float(np.sum(1.0 / total)) if known.any() and np.all(total > 0) else 0.0

    def client_start(self, device: int) -> tuple[torch.Tensor, int]:
        """(theta_m^INIT, l_m): eq. 10 and eq. 8, or the warm start while sigma_m^2 is unknown."""
        intra, others = self.intra[device], self.others_precision(device)
        estimable = self.counts[device] >= self.INTRA_VARIANCES[self.options.intra_variance] and 0 < intra < math.inf
        if not estimable or others <= 0:
            return self.global_model, self.options.max_local_steps
        pull = 1.0 / ((self.inter + intra) * others)
        start = self.global_model + pull * (self.global_model - self.theta[device])
        eta = self.setup.training.lr / self.data.devices[device].num_train
        prior = others if self.options.target == "paper" else 1.0 / (self.inter + 1.0 / others)
        return start, local_steps(eta, intra, prior, self.options.max_local_steps)

    @classmethod
    def update_work(cls, options, training, standard_steps: int) -> float:
        return options.max_local_steps / standard_steps  # l_max: a round's steps adapt below it (eq. 8)

    def plan_round(self, server_round: int) -> RoundPlan | None:
        if server_round == 0:
            return None
        participants = self.sample_participants()
        steps = {d: self.client_start(d)[1] for d in participants}
        down = Stream(participants, self.model_bits + 2 * SCALAR_BITS)  # theta^{t-1}, sigma_0^2, total precision
        uplink = self.model_uplink(participants, 1.0)
        uplink = {d: bits + SCALAR_BITS for d, bits in uplink.items()}  # + sigma_m^2
        return self.scale_compute(RoundPlan((down,), uplink, participants), lambda d: steps[d] / self.standard_steps(d))

    def round_outcome(self, server_round: int, outcome) -> None:
        """The local steps of every participant of the round (``mean_local_steps``), from the
        state its plan was made in."""
        self.steps = {d: self.client_start(d)[1] for d in outcome.participants}

    def local_update(self, server_round: int, devices: Sequence[int]) -> None:
        starts = {device: self.client_start(device) for device in devices}  # all from the round's start state
        jobs = []
        for device in devices:
            start, steps = starts[device]
            epochs = -(-steps // self.trainer.steps_per_epoch(self.data.devices[device]))
            jobs.append(self.job(device, start, epochs=epochs, max_steps=steps))
        for device, personal in zip(devices, self.trainer.train_many(jobs)):
            data = self.data.devices[device]
            self.theta[device] = personal
            if self.options.intra_variance == "fisher":
                self.counts[device] += 1
                self.intra[device] = asymptotic_variance(self.trainer.fisher_diagonal(personal, data.x_train), data.num_train)
            else:
                self.counts[device], self.means[device], self.intra[device] = online_variance(
                    int(self.counts[device]), self.means[device], float(self.intra[device]), personal)

    # --- server side ------------------------------------------------------------------
    def aggregate(self, server_round: int, arrived: Sequence[int]) -> None:
        if not arrived:
            return
        index = list(arrived)
        models = self.theta[index]
        self.inter = spread(models)
        weights = torch.from_numpy(variance_weights(self.inter, self.intra[index])).to(models.dtype)
        estimate = weights @ models
        self.global_model = torch.lerp(self.global_model, estimate, self.activity_rate)  # 4.1 smoothing

    def evaluation_extras(self) -> dict:
        extras = super().evaluation_extras()
        extras["inter_variance"] = float(self.inter)
        if self.steps:
            extras["mean_local_steps"] = float(np.mean(list(self.steps.values())))
        return extras
