"""The server side of buffered asynchronous aggregation (``contract.BufferedLearner``) for
learners with one global model (FedAvg, FedProx): a device's local update from the model
version it was dispatched, and the aggregation of a buffer of updates weighted by staleness.

- FedBuff (Nguyen et al. 2022, Algorithm 1; their staleness weight 1/sqrt(1 + tau)): the server
  keeps a buffer of model differences ``Delta_i = y_i - x_{v_i}`` (``x_{v_i}`` the model device
  ``i`` was dispatched, ``y_i`` its local update) and at the K-th applies
  ``x <- x + eta_g sum_i w_i s(tau_i) Delta_i``, ``w_i = n_i / sum_j n_j`` over the buffer
  (FedAvg's data-size weights, McMahan et al.; equal data gives FedBuff's 1/K), ``eta_g`` the
  server learning rate.
- FedAsync (Xie et al. 2019, Algorithm 1 with their polynomial staleness function): one
  update at a time, ``x <- (1 - a) x + a y_i``, ``a = alpha s(tau_i)``.

``s(tau) = (1 + tau)^-a`` with ``a`` the staleness exponent (0: no weighting; 0.5 FedBuff's),
``tau`` the versions made since the update's model was dispatched (``contract.Update``).
Each dispatched version's model is kept until no dispatch of it is outstanding, so a stale
update is computed from the model it was dispatched with. The buffer holds updates, not devices
(FedBuff's Algorithm 1, FLSim's buffer): each update's ``Delta`` is kept by its sequence number
(``contract.Update``), so a device that reports twice before the K-th arrival is in it twice. The learner's ``theta`` holds the current global
model in every row, so its evaluation is the synchronous one. Codecs are not applied here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from contract import Dispatch, Update

RULES = ("fedbuff", "fedasync")


@dataclass(frozen=True)
class AsyncRule:
    """How a buffer is aggregated: ``rule`` (``fedbuff`` or ``fedasync``), the server learning
    rate ``eta_g`` (FedBuff), the mixing weight ``alpha`` (FedAsync) and the staleness exponent."""

    rule: str = "fedbuff"
    server_lr: float = 1.0
    mixing_alpha: float = 0.6
    staleness_exponent: float = 0.5

    def staleness_weight(self, staleness: int) -> float:
        """``s(tau) = (1 + tau)^-a`` (Xie et al.'s polynomial function; FedBuff's at a = 1/2)."""
        return float((1 + staleness) ** -self.staleness_exponent)


def drives(learner) -> bool:
    """Whether ``learner``'s class itself declares it can be driven asynchronously (one global
    model, a local update from the model received: ``asynchronous = True``); never inherited,
    so a subclass with state of its own (Ditto's personal models) is not driven by mistake."""
    return bool(vars(type(learner)).get("asynchronous", False))


class BufferedServer:
    """A learner with one global model driven by messages (``contract.BufferedLearner``)."""

    def __init__(self, learner, rule: AsyncRule):
        if not drives(learner):
            raise ValueError(f"asynchronous aggregation drives algorithms with one global model (fedavg, fedprox); "
                             f"{learner.name} is not one")
        if getattr(learner, "links", None) is not None:
            raise ValueError("asynchronous aggregation takes no codecs (leave --uplink-codec and --downlink-codec at none)")
        if rule.rule not in RULES:
            raise ValueError(f"unknown rule {rule.rule!r}; choose from {', '.join(RULES)}")
        self.learner, self.rule = learner, rule
        self.num_devices = learner.num_devices
        self.model_bits = learner.model_bits
        self.version = 0
        self.models = {0: learner.theta[0].clone()}  # version -> the global model of that version
        self.held: dict[int, int] = {}  # device -> the version of its outstanding dispatch (until its update arrives)
        self.deltas: dict[int, torch.Tensor] = {}  # update sequence number -> its Delta, until aggregated
        self.bases: dict[int, int] = {}  # update sequence number -> its base version, until aggregated
        self.sizes = torch.as_tensor(learner.train_sizes, dtype=learner.theta.dtype)

    def dispatch(self, message: Dispatch) -> None:
        """A dispatch of the current version; a device's earlier dispatch that never reported
        (its model or its update lost) is replaced by it."""
        if message.version != self.version:
            raise ValueError(f"dispatch of version {message.version}; the server holds version {self.version}")
        self.held[message.device] = message.version
        self._prune()

    def local_update(self, update: Update) -> None:
        """The device's local update from the model it was dispatched (zero simulated time)."""
        if self.held.get(update.device) != update.base_version:
            raise ValueError(f"device {update.device} reports version {update.base_version}, it was dispatched {self.held.get(update.device)}")
        if update.sequence in self.deltas:
            raise ValueError(f"update {update.sequence} reported twice")
        del self.held[update.device]  # its dispatch is answered
        start = self.models[update.base_version]
        trained = self.learner.trainer.train_many([self.learner.local_job(update.device, start)])[0]
        self.deltas[update.sequence] = trained - start
        self.bases[update.sequence] = update.base_version

    def aggregate(self, version: int, updates: Sequence[Update]) -> None:
        """Fold ``updates`` into the model of ``version``; it becomes ``version + 1``."""
        if version != self.version or not updates:
            raise ValueError(f"aggregation of {len(updates)} updates into version {version}; the server holds {self.version}")
        missing = [u.sequence for u in updates if u.sequence not in self.deltas]
        if missing:
            raise ValueError(f"aggregation of updates {missing}, which never arrived (or were aggregated already)")
        new = self.combine(version, updates)
        for update in updates:
            del self.bases[update.sequence]
        self.version = version + 1
        self.models[self.version] = new
        self.learner.theta[:] = new
        self._prune()

    def combine(self, version: int, updates: Sequence[Update]) -> torch.Tensor:
        """The model of ``version + 1``: ``updates`` folded into that of ``version`` by the rule."""
        model = self.models[version]
        rule = self.rule
        if rule.rule == "fedasync":
            new = model
            for update in updates:  # K = 1: one mix each
                a = rule.mixing_alpha * rule.staleness_weight(update.staleness(version))
                new = (1 - a) * new + a * (self.models[update.base_version] + self.deltas.pop(update.sequence))
        else:
            devices = [u.device for u in updates]
            sizes = self.sizes[devices]
            weights = sizes / sizes.sum() * torch.tensor([rule.staleness_weight(u.staleness(version)) for u in updates], dtype=sizes.dtype)
            new = model + rule.server_lr * (weights @ torch.stack([self.deltas.pop(u.sequence) for u in updates]))
        return new

    def _prune(self) -> None:
        """Forget every version but the current one and those of outstanding dispatches and buffered updates."""
        keep = {self.version, *self.held.values(), *self.bases.values()}
        for version in [v for v in self.models if v not in keep]:
            del self.models[version]

    def evaluate(self, version: int):
        return self.learner.evaluate(version)


class TieredServer(BufferedServer):
    """FedAT's server (Chai et al. 2021, "FedAT: a high-performance and communication-efficient
    federated learning system with asynchronous tiers", SC '21, Sec. 4: synchronous intra-tier
    training, asynchronous cross-tier weighted aggregation), driven by ``netsim.clock.tiered``.

    ``tiers``: the devices of each tier, the fastest first. A tier's round is FedAvg over the
    updates of its members that arrived, each trained from the global model the tier was sent:
    ``w_m = sum_i (n_i / sum_j n_j) y_i``. When it ends, the global model becomes FedAT's
    straggler-aware weighted sum of the tiers' latest models,
    ``w = sum_{m=1}^{M} (T_{M+1-m} / T) w_m``, ``T_m`` the rounds tier ``m`` has completed and
    ``T = sum_m T_m``: a fast tier (many rounds) weighs what a slow one has done, so the slow
    tiers' data is not drowned out. Every tier's model starts as the initial global model.
    With one tier this is synchronous FedAvg."""

    def __init__(self, learner, tiers):
        super().__init__(learner, AsyncRule())
        self.tiers = tuple(tuple(int(d) for d in tier) for tier in tiers)
        self.tier_of = {d: m for m, tier in enumerate(self.tiers) for d in tier}
        if sorted(self.tier_of) != list(range(self.num_devices)) or sum(map(len, self.tiers)) != self.num_devices:
            raise ValueError(f"tiers must hold each of the {self.num_devices} devices once, got {self.tiers}")
        self.tier_models = [self.models[0].clone() for _ in self.tiers]
        self.tier_rounds = [0] * len(self.tiers)

    def combine(self, version: int, updates: Sequence[Update]) -> torch.Tensor:
        tiers = {self.tier_of[u.device] for u in updates}
        if len(tiers) != 1:
            raise ValueError(f"a tier's round aggregates its own members' updates; these come from tiers {sorted(tiers)}")
        (tier,) = tiers
        sizes = self.sizes[[u.device for u in updates]]
        trained = torch.stack([self.models[u.base_version] + self.deltas.pop(u.sequence) for u in updates])
        self.tier_models[tier] = (sizes / sizes.sum()) @ trained
        self.tier_rounds[tier] += 1
        total, count = sum(self.tier_rounds), len(self.tiers)
        return sum((self.tier_rounds[count - 1 - m] / total) * self.tier_models[m] for m in range(count))
