"""The one recorder of a run, whatever orchestrator drives it (the synchronous round loop of
``netsim.clock.engine``, buffered aggregation of ``netsim.clock.buffered``, FedAT's tiers of
``netsim.clock.tiered``, a plugin's): it keeps the records (one per round or aggregation, the set-up
round or the initial model's evaluation first), hands each to the run's ``on_round`` as it is
kept, decides which are evaluated (after 0, every ``evaluate_every`` and the last: the
orchestrators only ask), spends the run's budget (``netsim.clock.budget``) and fires ``stop`` when a
bits or energy budget is reached; ``run`` then runs the clock until the orchestrator's end, that
stop or the time budget, whichever comes first.
"""

from __future__ import annotations

from typing import Callable

from netsim.clock.budget import Budget


class Recorder:
    """The records of one run on ``env``, whose last round (aggregation) is ``last``."""

    def __init__(self, env, last: int, evaluate_every: int = 1, on_round: Callable | None = None,
                 budget: Budget | None = None):
        self.env, self.last, self.evaluate_every, self.on_round = env, last, evaluate_every, on_round
        self.budget = budget if budget is not None else Budget({})
        self.records: list = []
        self.stop = env.event()  # a bits or energy budget reached

    @classmethod
    def of(cls, env, last: int, options) -> Recorder:
        """The recorder of a run with ``options`` (``netsim.clock.engine.RunOptions``: its ``on_round``,
        ``evaluate_every`` and ``budget``)."""
        return cls(env, last, options.evaluate_every, options.on_round, options.budget)

    def evaluates(self, server_round: int) -> bool:
        """Whether round (aggregation) ``server_round`` is evaluated: 0, every ``evaluate_every`` and the last."""
        return server_round % self.evaluate_every == 0 or server_round == self.last

    def evaluation(self, learner, server_round: int):
        """``learner``'s evaluation after ``server_round`` where it is evaluated (``evaluates``), else None."""
        return learner.evaluate(server_round) if self.evaluates(server_round) else None

    def keep(self, record) -> None:
        """Keep ``record``, hand it to ``on_round``, spend it on the budget: ``stop`` when one is reached."""
        self.records.append(record)
        if self.on_round is not None:
            self.on_round(record)
        if self.budget.spend(record) and not self.stop.triggered:
            self.stop.succeed()

    @property
    def stopped(self) -> bool:
        """Whether a bits or energy budget has stopped the run."""
        return self.stop.triggered

    def run(self, finished) -> list:
        """Run the clock until ``finished`` (the orchestrator's end), ``stop`` or the time budget; the records."""
        self.env.run(until=self.budget.horizon(self.env, finished, self.stop))
        return self.records
