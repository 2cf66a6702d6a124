"""The scales ``reproduce`` runs the journal's experiment set at (``scenarios/execution/reproduce.py``):
how many rounds, seeds and evaluations. Declared without torch: ``reproduce --help`` lists them."""

from __future__ import annotations

from dataclasses import dataclass

from scenarios.errors import UsageError


@dataclass(frozen=True)
class Scale:
    """How much of the experiment set to run: ``rounds_fraction`` of each scenario's rounds (or
    ``fixed_rounds``), ``seeds`` seeds, about ``evaluations`` evaluations per run, and (for the
    quick scales only) the ``participation`` fraction of devices that train in a round (the
    set-up round and every evaluation still take all devices)."""

    name: str
    seeds: int
    evaluations: int | None  # None: every round
    rounds_fraction: float = 1.0
    fixed_rounds: int | None = None
    participation: float | None = None  # None: the scenario's (all devices in the journal's)
    description: str = ""

    def rounds(self, scenario_rounds: int) -> int:
        if self.fixed_rounds is not None:
            return self.fixed_rounds
        return max(1, round(self.rounds_fraction * scenario_rounds))

    def evaluate_every(self, rounds: int) -> int:
        return 1 if self.evaluations is None else max(1, rounds // self.evaluations)


SCALES = {
    "smoke": Scale("smoke", seeds=1, evaluations=None, fixed_rounds=1, participation=0.1,
                   description="1 round in which a tenth of the devices train, 1 seed: the tests' scale, numbers meaningless"),
    "quick": Scale("quick", seeds=1, evaluations=None, fixed_rounds=2, participation=0.25,
                   description="2 rounds in which a quarter of the devices train, 1 seed, evaluation every round: "
                   "the whole pipeline in minutes, numbers meaningless"),
    "medium": Scale("medium", seeds=2, evaluations=10, rounds_fraction=0.1,
                    description="a tenth of each scenario's rounds, 2 seeds, 10 evaluations per run"),
    "paper": Scale("paper", seeds=5, evaluations=None,
                   description="each scenario's full rounds, 5 seeds (Table II: 'averaged over 5 experiments'), "
                   "evaluation every round"),
}


def get_scale(name: str) -> Scale:
    if name not in SCALES:
        raise UsageError(f"unknown scale {name!r}; choose from: {', '.join(SCALES)}")
    return SCALES[name]
