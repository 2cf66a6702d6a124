"""Association to the strongest sector and its handovers (TS 38.331 Sec. 5.5.4.4, event A3:
a neighbour becomes better than the serving cell by an offset), on the layer-3 filtered coupling
gains the channel in time gives at each instant it is read.

What a device measures is RSRP (TS 38.215 Sec. 5.1.1: the linear average of the reference
signals' power over the resource elements of the measurement bandwidth, averaged by layer 1 over
its measurement period), so the fast fading is averaged out: here the coupling gain of each
sector (path loss, shadowing, O2I loss, antenna gains; every sector sends its reference signals
at the same power, so RSRP orders the sectors as the coupling gain does), without the fading.
Layer 3 then filters it (``L3Filter``, TS 38.331 Sec. 5.5.3.2), and event A3 compares the
filtered values.

With a margin of 0 dB a device is always served by its strongest sector (RSRP association, as
TR 38.901 Sec. 7.8's calibration places devices); with a margin it stays with its sector until
another is stronger by more than the margin (a hysteresis against ping-pong handovers); with a
time to trigger (TS 38.331 ``timeToTrigger``) the same sector must have met that condition at
every reading for at least that long (read at the association's measurement instants, every
200 ms by default: the condition held at two readings that far apart, and at every one between
them).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Handover(NamedTuple):
    """Device ``device`` moved from sector ``source`` to ``target`` at ``time_s`` (a measurement
    instant of the association: ``netsim.dynamics.motion.ChannelInTime.measure_until``)."""

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


# TS 38.133 Table 9.2.5.2-1 (FR1, intra-frequency without gaps, no DRX): T_SSB_measurement_period_intra =
# max(200 ms, ceil(5 K_p) x SMTC period) x CSSF_intra, 200 ms for an SMTC period up to 40 ms, K_p = CSSF_intra = 1;
# the filterCoefficient k "assumes a sample rate equal to X ms", X that L1 period without DRX (TS 38.331 Sec. 5.5.3.2)
L1_PERIOD_S = 0.2


class L3Filter:
    """TS 38.331 Sec. 5.5.3.2's layer-3 filter of every device's measurement of every sector,
    ``F_n = (1 - a) F_{n-1} + a M_n`` with ``a = 1 / 2^(k/4)`` (``filterCoefficient`` k; ``fc4``,
    its default, ``a = 1/2``; k = 0: no filtering), in dB (the logarithmic domain in which the
    reporting criteria are evaluated), ``F_0 = M_1``. The filter keeps its time characteristics
    at any reading rate (as the clause asks): over a gap ``dt`` the old value keeps the weight
    ``(1 - a)^(dt / X)``, X the layer-1 period ``L1_PERIOD_S`` the coefficient assumes."""

    def __init__(self, k: int, period_s: float = L1_PERIOD_S):
        self.keep_per_period = 1.0 - 2.0 ** (-k / 4.0)
        self.period_s = float(period_s)
        self.value_db: np.ndarray | None = None
        self.time_s: np.ndarray | None = None  # when each value was last measured

    def read(self, time_s: float, measured_db: np.ndarray, sectors: np.ndarray | None = None) -> np.ndarray:
        """The filtered values after measuring ``measured_db`` at ``time_s`` (a gap below 0: the
        old value). ``sectors`` (devices x m): each device measured only these (``measured_db``
        devices x m); its other values are held as they were (the first reading measures all)."""
        if self.value_db is None:
            self.value_db = np.array(measured_db, dtype=float)
            self.time_s = np.full(self.value_db.shape, float(time_s))
            return self.value_db
        at = np.s_[...] if sectors is None else (np.arange(measured_db.shape[0])[:, None], sectors)
        if self.keep_per_period == 0.0:
            self.value_db[at] = measured_db
        else:
            keep = self.keep_per_period ** (np.maximum(time_s - self.time_s[at], 0.0) / self.period_s)
            self.value_db[at] = keep * self.value_db[at] + (1.0 - keep) * measured_db
        self.time_s[at] = time_s
        return self.value_db


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
