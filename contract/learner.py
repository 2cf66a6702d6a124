"""The protocol the clock (``netsim.clock.engine``) drives: what a learner must offer."""

from __future__ import annotations

from typing import Any, Protocol, Sequence

from contract.plan import RoundOutcome, RoundPlan  # noqa: F401 (named in the protocol's annotations)


class Learner(Protocol):
    """What the clock drives. Training and evaluation take zero simulated time.

    Round 0 is the set-up phase: ``plan_round(0)`` returns its plan, or ``None`` when the
    algorithm has none (FedAvg). Rounds count from 1. A learner may also define
    ``round_outcome(server_round, outcome: RoundOutcome)``, called before ``local_update``, to
    learn who received its model and who computed (e.g. a device in outage still needs its model),
    and ``schedule(server_round, devices)``, called before ``plan_round`` when the network's
    scheduler chose the round's participants (``netsim.scheduling``), and ``hold(received,
    missed)``, called after ``local_update`` and before ``aggregate`` with the round's
    ``RoundOutcome.received`` and ``RoundOutcome.missed``: who holds its model now, and to whom
    a model was sent that did not arrive (scored on the model it holds: ``learning.evaluation``).
    A buffered orchestrator reports the same, per dispatch.
    """

    num_devices: int
    model_bits: float

    def plan_round(self, server_round: int) -> RoundPlan | None: ...

    def local_update(self, server_round: int, devices: Sequence[int]) -> None: ...

    def aggregate(self, server_round: int, arrived: Sequence[int]) -> None: ...

    def evaluate(self, server_round: int) -> Any: ...
