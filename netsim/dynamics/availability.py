"""Whether each device is available at a time: a two-state on/off Markov process, or a trace.

- ``OnOff``: each device alternates exponential on and off periods of means ``mean_on_s`` and
  ``mean_off_s`` (a continuous-time two-state Markov chain), starting in its stationary
  distribution (on with probability ``on / (on + off)``). The switching times are drawn in
  blocks as far as asked, so ``available(t)`` holds for any ``t`` in any order.
- ``TraceAvailability``: FedScale's client-behaviour trace format (Lai et al., "FedScale:
  Benchmarking model and system performance of federated learning at scale", ICML 2022; its
  ``client_behave_trace``): per device, ``active`` and ``inactive`` times (s) and a
  ``finish_time``; the device is available during ``[active[i], inactive[i]]`` of each period of
  ``finish_time`` (the trace repeats, as FedScale's ``isActive`` reads it). As JSON::

      {"devices": {"0": {"active": [0, 500], "inactive": [300, 800], "finish_time": 1000},
                   "1": {"active": [0], "inactive": [1000], "finish_time": 1000}}}

  keyed by the run's device index; every device of the run must be there.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from contract.files import MAX_JSON_BYTES, ReadError, json_value, read_bytes

BLOCK = 16  # switching times drawn per device at a time


class OnOff:
    """Per device, on/off periods with exponential durations."""

    def __init__(self, rng: np.random.Generator, devices: int, mean_on_s: float, mean_off_s: float):
        self.rng = rng
        self.means = (float(mean_on_s), float(mean_off_s))
        self.starts_on = rng.random(devices) < mean_on_s / (mean_on_s + mean_off_s)
        self.switches = np.empty((devices, 0))

    def _extend(self) -> None:
        """``BLOCK`` more switching times per device: the periods alternate from its first state."""
        count = self.switches.shape[1]
        on_first = self.starts_on[:, None] ^ (count % 2 == 1)
        order = (np.arange(BLOCK) % 2 == 0)[None, :]
        means = np.where(order == on_first, self.means[0], self.means[1])
        periods = self.rng.exponential(1.0, means.shape) * means
        last = self.switches[:, -1:] if count else np.zeros((self.starts_on.size, 1))
        self.switches = np.hstack([self.switches, last + np.cumsum(periods, axis=1)])

    def available(self, t_s: float) -> np.ndarray:
        while not self.switches.size or self.switches[:, -1].min() <= t_s:
            self._extend()
        flips = (self.switches <= t_s).sum(axis=1)
        return self.starts_on ^ (flips % 2 == 1)

    def next_switch_s(self, device: int, t_s: float) -> float:
        """The first time after ``t_s`` at which ``device`` switches (on to off, or off to on)."""
        while not self.switches.size or self.switches[device, -1] <= t_s:
            self._extend()
        row = self.switches[device]
        return float(row[np.searchsorted(row, t_s, side="right")])


class TraceAvailability:
    """Availability from a FedScale-style trace (``load``); ``sha256``: the digest of the bytes it
    was read from (a run's reuse key holds it: an edited trace is another run)."""

    def __init__(self, active: list[np.ndarray], inactive: list[np.ndarray], period_s: np.ndarray, sha256: str | None = None):
        self.active, self.inactive, self.period_s, self.sha256 = active, inactive, period_s, sha256

    @classmethod
    def load(cls, path: str | Path, devices: int) -> "TraceAvailability":
        """The trace of the run's ``devices`` from ``path``, read once and bounded
        (``contract.files``: a regular file of at most ``MAX_JSON_BYTES``, JSON nested at most
        ``MAX_DEPTH`` deep; a FIFO or a device is refused, never waited on); ``ReadError`` (a
        ``UsageError`` and a ``ValueError``, one line) naming what is wrong."""
        try:
            data = read_bytes(path, MAX_JSON_BYTES)
            table = json_value(data, path)
        except ReadError as error:
            raise ReadError(f"availability trace: {error}") from None
        return cls(*_intervals(table, path, devices), sha256=hashlib.sha256(data).hexdigest())

    def available(self, t_s: float) -> np.ndarray:
        phase = np.mod(t_s, self.period_s)
        return np.array([bool(np.any((on <= p) & (p <= off))) for on, off, p in zip(self.active, self.inactive, phase)])

    def next_switch_s(self, device: int, t_s: float) -> float:
        """The first interval boundary (an ``active`` or ``inactive`` time) after ``t_s`` of
        ``device``'s trace, repeated every ``finish_time`` (inf: a trace with no intervals)."""
        period = float(self.period_s[device])
        bounds = np.concatenate([self.active[device], self.inactive[device]])
        if not bounds.size:
            return float("inf")
        base = np.floor(t_s / period) * period
        later = np.concatenate([base + bounds, base + period + bounds])
        return float(later[later > t_s].min())


def _intervals(data, path, devices: int) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    """Per device of the run, its ``active`` and ``inactive`` times and its period (the trace's
    ``finish_time``), checked; ``ReadError`` naming the trace and the device otherwise."""
    table = data.get("devices") if isinstance(data, dict) else None
    if not isinstance(table, dict):
        raise ReadError(f"availability trace {path}: expected an object with a 'devices' table")
    active, inactive, periods = [], [], []
    for device in range(devices):
        entry = table.get(str(device))
        if not isinstance(entry, dict):
            raise ReadError(f"availability trace {path}: no entry for device {device}")
        try:
            on = np.asarray(entry["active"], dtype=float)
            off = np.asarray(entry["inactive"], dtype=float)
            period = float(entry["finish_time"])
        except (KeyError, TypeError, ValueError):
            raise ReadError(f"availability trace {path}: device {device} needs numeric 'active', 'inactive' and 'finish_time'") from None
        times = np.column_stack([on, off]).ravel() if on.shape == off.shape and on.ndim == 1 else None
        if (times is None or not np.all(np.isfinite(times)) or not np.isfinite(period) or (times.size and times[0] < 0)
                or np.any(np.diff(times) < 0) or np.any(off <= on) or (times.size and times[-1] > period) or period <= 0):
            raise ReadError(f"availability trace {path}: device {device}'s intervals must be ordered, "
                            "active < inactive, within 0..finish_time > 0")
        active.append(on)
        inactive.append(off)
        periods.append(period)
    return active, inactive, np.asarray(periods)
