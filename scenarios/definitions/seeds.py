"""The one split of a run seed (no heavy imports, so light commands share it with the runner)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class RunSeeds(NamedTuple):
    """A run seed's independent streams: the data partition, the learner (model init, each
    device's batches, server choices) and the network (compute times; a cell's channel child)."""

    data: np.random.SeedSequence
    learner: np.random.SeedSequence
    network: np.random.SeedSequence


def seed_streams(seed: int) -> RunSeeds:
    """The streams of one run seed (every seed is checked here: UsageError naming the range)."""
    from scenarios.definitions.settings import RUN_SETTINGS

    RUN_SETTINGS["seed"].check("seed", seed)
    return RunSeeds(*np.random.SeedSequence(seed).spawn(3))
