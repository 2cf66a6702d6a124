"""Holding the SimPy clock until an exact time: what every round process ends with."""

from __future__ import annotations

import numpy as np


def hold_until(env, end: float):
    """Advance the clock to exactly ``end``. ``now + (end - now)`` can miss ``end`` by rounding;
    then stop just below it first, from where the difference is exact (Sterbenz)."""
    delay = end - env.now
    if env.now + delay != end:
        while env.now + delay >= end:
            delay = float(np.nextafter(delay, -np.inf))
        yield env.timeout(delay)
        delay = end - env.now
    yield env.timeout(delay)
