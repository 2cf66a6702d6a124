"""A run seed, checked, and its streams (the split itself: ``contract.seeds``; no heavy
imports, so light commands share it with the runner)."""

from __future__ import annotations

from contract.seeds import RunSeeds

__all__ = ["RunSeeds", "seed_streams"]


def seed_streams(seed: int) -> RunSeeds:
    """The streams of one run seed (every seed is checked here: UsageError naming the range)."""
    from scenarios.definitions.settings import RUN_SETTINGS

    RUN_SETTINGS["seed"].check("seed", seed)
    return RunSeeds.of(seed)
