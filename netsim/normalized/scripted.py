"""A normalized system whose compute times are a fixed script: event traces written by hand
(the asynchronous orchestrator's tests) and the timelines drawn in docs/network-model.md
(``benchmarks/timelines.py``) run on it, so both show the same trace."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from netsim.normalized.system import NetworkSystem


class Scripted:
    """Compute times handed out in the order they are drawn (dispatch order, device order within
    a stream); drawing past the script's end is an error (StopIteration)."""

    def __init__(self, times):
        self.times = iter(times)

    def sample(self, rng, size: int) -> np.ndarray:
        return np.array([next(self.times) for _ in range(size)], dtype=float)


@dataclass(frozen=True)
class ScriptedSystem(NetworkSystem):
    """A normalized system whose compute times are ``script``'s."""

    script: Scripted | None = None

    @property
    def compute(self):
        return self.script
