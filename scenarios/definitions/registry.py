"""Registries of named scenarios and algorithms (plugins add to them: ``scenarios.plugins``);
unknown names get a one-line UsageError."""

from __future__ import annotations

from learning.algorithms import ALGORITHMS
from scenarios.errors import UsageError
from scenarios.library import cifar, digits, mnist, pathological, selffl, stackoverflow
from scenarios.definitions import settings
from scenarios.definitions.scenario import Scenario

SCENARIO_MODULES = (digits, mnist, cifar, stackoverflow, pathological, selffl)

SCENARIOS: dict[str, Scenario] = {s.name: s for module in SCENARIO_MODULES for s in module.SCENARIOS}

DEFAULT_SCENARIO = settings.DEFAULT_SCENARIO  # RunSpec's scenario on the command line and in sweep files


def get_scenario(name: str) -> Scenario:
    """The scenario of exactly this name (no case folding, no trimming)."""
    if not isinstance(name, str) or name not in SCENARIOS:
        raise UsageError(f"unknown scenario {name!r}; choose from: {', '.join(SCENARIOS)}")
    return SCENARIOS[name]


def get_algorithm(name: str):
    """The algorithm of exactly this name (``"FedAvg"`` and ``"fedavg "`` are unknown)."""
    if not isinstance(name, str) or name not in ALGORITHMS:
        raise UsageError(f"unknown algorithm {name!r}; choose from: {', '.join(ALGORITHMS)}")
    return ALGORITHMS[name]
