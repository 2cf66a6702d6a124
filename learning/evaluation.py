"""Per-device metrics of one evaluation."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Evaluation:
    """Each device's own model on its own validation split; ``extras`` holds algorithm-level
    numbers (stream count chosen, clustering ARI, estimation error...)."""

    accuracy: np.ndarray
    loss: np.ndarray
    extras: dict = field(default_factory=dict)

    @property
    def mean_accuracy(self) -> float:
        return float(np.mean(self.accuracy))

    @property
    def worst_accuracy(self) -> float:
        return float(np.min(self.accuracy))
