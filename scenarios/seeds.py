"""The one split of a run seed (no heavy imports, so light commands share it with the runner)."""

from __future__ import annotations

import numpy as np


def seed_streams(seed: int) -> tuple[np.random.SeedSequence, np.random.SeedSequence, np.random.SeedSequence]:
    """(data partition, learner, network) streams of one run seed (every seed is checked here:
    UsageError naming the range)."""
    from scenarios.settings import RUN_SETTINGS

    RUN_SETTINGS["seed"].check("seed", seed)
    data_seq, learner_seq, network_seq = np.random.SeedSequence(seed).spawn(3)
    return data_seq, learner_seq, network_seq
