"""Association to the strongest sector and its handovers (TS 38.331 Sec. 5.5.4.4, event A3:
a neighbour becomes better than the serving cell by an offset), on the coupling gains the
channel in time gives at each instant it is read.

With a margin of 0 dB a device is always served by its strongest sector (RSRP association, as
TR 38.901 Sec. 7.8's calibration places devices); with a margin it stays with its sector until
another is stronger by more than the margin (a hysteresis against ping-pong handovers); with a
time to trigger (TS 38.331 ``timeToTrigger``) the same sector must have met that condition at
every reading for at least that long (read at the instants the channel is read: the condition
held at two readings that far apart, and at every one between them).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Handover(NamedTuple):
    """Device ``device`` moved from sector ``source`` to ``target`` at ``time_s`` (when the
    channel was read: the clock's instants, the rounds' starts)."""

    time_s: float
    device: int
    source: int
    target: int


def strongest(coupling_gain_db: np.ndarray, serving: np.ndarray | None, margin_db: float) -> np.ndarray:
    """Each device's sector (devices x sectors gains): the strongest, unless its ``serving``
    sector (None: none yet) is within ``margin_db`` of it."""
    best = np.argmax(coupling_gain_db, axis=1)
    if serving is None:
        return best
    rows = np.arange(coupling_gain_db.shape[0])
    better = coupling_gain_db[rows, best] > coupling_gain_db[rows, serving] + margin_db
    return np.where(better, best, serving)


class Trigger:
    """The A3 condition's time to trigger: per device the sector that has met it since when."""

    def __init__(self, devices: int, time_to_trigger_s: float):
        self.time_to_trigger_s = float(time_to_trigger_s)
        self.candidate = np.full(devices, -1)
        self.since_s = np.zeros(devices)

    def confirm(self, time_s: float, serving: np.ndarray, wanted: np.ndarray) -> np.ndarray:
        """The sectors after a reading at ``time_s`` at which each device wants ``wanted``
        (``strongest``): a change only once the same sector has been wanted for the time to trigger."""
        moving = wanted != serving
        fresh = moving & (wanted != self.candidate)
        self.candidate = np.where(moving, wanted, -1)
        self.since_s = np.where(fresh, time_s, self.since_s)
        ready = moving & (time_s - self.since_s >= self.time_to_trigger_s)
        return np.where(ready, wanted, serving)


def handovers(time_s: float, previous: np.ndarray, current: np.ndarray) -> list[Handover]:
    """The handovers between two readings of the association."""
    moved = np.flatnonzero(previous != current)
    return [Handover(float(time_s), int(d), int(previous[d]), int(current[d])) for d in moved]
