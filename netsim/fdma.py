"""An FDMA uplink in SimPy: the band split equally among the devices transmitting at each
moment, each at its own rate on its share (``rates_bps(devices, sharing)``, vectorized over
the devices).

Whenever a device starts or finishes, the shares change and every remaining transmission
continues at its new rate (a processor-sharing queue with per-device rates).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import simpy

RELATIVE_TOLERANCE = 1e-9  # bits left below this fraction of the payload count as sent (rounding)


class FdmaUplink:
    """``transmit(device, bits)`` gives an event that fires when the last bit is through."""

    def __init__(self, env: simpy.Environment, rates_bps: Callable[[np.ndarray, int], np.ndarray]):
        self.env = env
        self.rates_bps = rates_bps
        self.remaining: dict[int, float] = {}
        self.payload: dict[int, float] = {}
        self.done: dict[int, simpy.Event] = {}
        self.updated_at = env.now
        self.changed = env.event()
        self._cached: dict[int, float] | None = None  # rates of the current set of transmitters
        env.process(self._serve_process())

    def transmit(self, device: int, bits: float) -> simpy.Event:
        self._advance()
        self.remaining[device] = float(bits)
        self.payload[device] = float(bits)
        self._cached = None
        self.done[device] = event = self.env.event()
        self._wake()
        return event

    def abort(self, device: int) -> float:
        """Stop a transmission (a deadline); returns the bits it got through."""
        self._advance()
        sent = self.payload.pop(device) - self.remaining.pop(device)
        self.done.pop(device)
        self._cached = None
        self._wake()
        return sent

    def _rates(self) -> dict[int, float]:
        """Every transmitter's rate; computed once per set of transmitters (they depend on it alone)."""
        if self._cached is None:
            devices = list(self.remaining)
            rates = self.rates_bps(np.array(devices), len(devices))
            self._cached = dict(zip(devices, rates.tolist()))
        return self._cached

    def _advance(self) -> None:
        elapsed = self.env.now - self.updated_at
        if elapsed > 0 and self.remaining:
            for device, rate in self._rates().items():
                self.remaining[device] -= rate * elapsed
        self.updated_at = self.env.now

    def _wake(self) -> None:
        if not self.changed.triggered:
            self.changed.succeed()

    def _finish(self, device: int) -> None:
        del self.remaining[device], self.payload[device]
        self._cached = None
        self.done.pop(device).succeed(self.env.now)

    def _serve_process(self):
        while True:
            if not self.remaining:
                yield self.changed
                self.changed = self.env.event()
                continue
            rates = self._rates()
            first = min(self.remaining, key=lambda d: self.remaining[d] / rates[d])
            timer = self.env.timeout(max(self.remaining[first] / rates[first], 0.0))
            yield timer | self.changed
            self._advance()
            if self.changed.triggered:
                self.changed = self.env.event()
            if timer.processed and first in self.remaining:
                self._finish(first)
            for device in [d for d in self.remaining if self.remaining[d] <= RELATIVE_TOLERANCE * self.payload[d]]:
                self._finish(device)
