"""Per-device metrics of one evaluation, and which model each device is scored on.

The convention (``docs/results-format.md``, "Which model a device is scored on"): after each
evaluated round every device is scored on its own validation split with the model the learner
has for it (``personal_model``: FedAvg's global model, a stream's model in user-centric FL, a
personal model in Ditto), as FedAvg papers score the global model on every device and the
user-centric journal scores each device on its stream's model. That holds for the devices the
round did not choose (partial participation) too: the learner's model for them is the one they
would be sent. A device that was sent a model and did not receive it (absent at the round's
start: unavailable, flat battery, out of coverage; or a downlink outage) is no longer reached:
until it receives one again it is scored on the model it holds (``held``, the default: the last
one it received with what it trained from it, else the initial model) or left out of the
scores (``excluded``: its accuracy and loss are empty, the means and the worst are over the
others). ``Reach`` keeps that state, fed by the orchestrator from ``RoundOutcome.received``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np
import torch

UNREACHED = ("held", "excluded")  # how a device not reached by its model is scored (``Reach``)


@dataclass(frozen=True)
class Evaluation:
    """Each device's own model on its own validation split; ``extras`` holds algorithm-level
    numbers (stream count chosen, clustering ARI, estimation error...). ``excluded``: devices
    left out of the scores (``--unreached excluded``): NaN in ``accuracy`` and ``loss``, and
    not in the means or the worst."""

    accuracy: np.ndarray
    loss: np.ndarray
    extras: dict = field(default_factory=dict)
    excluded: tuple[int, ...] = ()

    @property
    def scored(self) -> np.ndarray:
        """The scored devices' indices, in device order."""
        return np.setdiff1d(np.arange(len(self.accuracy)), np.asarray(self.excluded, dtype=int))

    def _over_scored(self, values: np.ndarray, reduce: Callable) -> float:
        if not self.excluded:
            return float(reduce(values))
        kept = np.asarray(values)[self.scored]
        return float(reduce(kept)) if kept.size else float("nan")

    @property
    def mean_accuracy(self) -> float:
        return self._over_scored(self.accuracy, np.mean)

    @property
    def worst_accuracy(self) -> float:
        return self._over_scored(self.accuracy, np.min)

    @property
    def mean_loss(self) -> float:
        return self._over_scored(self.loss, np.mean)


class Reach:
    """Which devices the learner's models reach, and the model each of the others holds.

    A device is reached until a model sent to it fails to arrive (``missed``), and again from
    the next one it receives (``received``). ``received`` keeps what the device now holds: the
    model it received and what it trained from it in the round, before the server's
    aggregation (which reaches it only with the next model it receives); ``own`` keeps a model a
    device holds without a downlink (its own update, when it is its new model). A device that
    never received one holds the initial model.
    """

    def __init__(self, initial: torch.Tensor, num_devices: int, unreached: str = "held"):
        if unreached not in UNREACHED:
            raise ValueError(f"unreached must be one of {', '.join(UNREACHED)}, got {unreached!r}")
        self.unreached = unreached
        self.initial = initial
        self.reached = np.ones(num_devices, dtype=bool)
        self.held: dict[int, torch.Tensor] = {}  # device -> the model it holds, where not the initial one

    def received(self, devices: Sequence[int], models: Callable[[Sequence[int]], Iterable[torch.Tensor]]) -> None:
        """``devices`` hold their models now: ``models(devices)``, one each, copied."""
        devices = [int(d) for d in devices]
        if devices:
            self.reached[devices] = True
            for device, model in zip(devices, models(devices)):
                self.held[device] = model.detach().clone()

    def own(self, device: int, model: torch.Tensor) -> None:
        """``device`` holds ``model`` without a downlink (its own update, which became its model)."""
        self.held[int(device)] = model.detach().clone()

    def missed(self, devices: Iterable[int]) -> None:
        """A model sent to each of ``devices`` did not reach it."""
        devices = [int(d) for d in devices]
        if devices:
            self.reached[devices] = False

    @property
    def unreached_devices(self) -> list[int]:
        return np.flatnonzero(~self.reached).tolist()

    def holds(self, device: int) -> torch.Tensor:
        """The model ``device`` holds: the last one it received, else the initial model."""
        return self.held.get(device, self.initial)
