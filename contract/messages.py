"""The learner and the clock in messages, beyond rounds: the server dispatches a model
(``Dispatch``: to a device, the model's version and its bits) and receives updates (``Update``:
from a device, the version it trained from, its bits and when it arrived), and the protocol of a
learner that a buffered asynchronous orchestrator drives (``BufferedLearner``,
``netsim.clock.buffered``).

An update carries the version it was dispatched at (FedBuff, Nguyen et al., AISTATS 2022,
Algorithm 1: a client's update is weighted by the staleness of the model it started from; as
FLSim's ``AsyncTrainer`` keeps a client's ``model_seqnum`` from ``training_started`` and asks its
aggregator for ``model_staleness`` when it ends), so the server weights it by its staleness: the
number of aggregations between its dispatch and its aggregation. A synchronous round is the special
case where every dispatch of a round has the same version and every update is fresh.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence


@dataclass(frozen=True)
class Dispatch:
    """The server sends ``device`` the model of ``version`` (``bits`` on the downlink)."""

    device: int
    version: int
    bits: float


@dataclass(frozen=True)
class Update:
    """``device``'s update trained from the model of ``base_version``: ``bits`` on the uplink,
    arrived at the server at ``arrival`` (the clock's unit), the ``sequence``-th update of the run
    (0, 1, ...: the server keeps what it holds of an update by it, as FedBuff's buffer holds
    updates, not devices: a device may report twice before a buffer is aggregated)."""

    device: int
    base_version: int
    bits: float
    arrival: float
    sequence: int

    def staleness(self, version: int) -> int:
        """Aggregations since its model was dispatched, aggregated into ``version``'s successor:
        ``version - base_version`` (0: fresh)."""
        return version - self.base_version


class BufferedLearner(Protocol):
    """What a buffered asynchronous orchestrator drives (``netsim.clock.buffered``). Training and
    evaluation take zero simulated time.

    ``dispatch``: the server sends a device the current model (it keeps that version's model
    until every device that holds it has reported). ``local_update``: the device's update from the
    model it was dispatched, computed when the update is on its way (its number of bits is the
    learner's ``model_bits``). ``aggregate``: the server folds a buffer of updates into its model
    of ``version``, which becomes ``version + 1``.
    """

    num_devices: int
    model_bits: float

    def dispatch(self, message: Dispatch) -> None: ...

    def local_update(self, update: Update) -> None: ...

    def aggregate(self, version: int, updates: Sequence[Update]) -> None: ...

    def evaluate(self, version: int) -> Any: ...
