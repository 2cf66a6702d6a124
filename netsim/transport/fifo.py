"""The shared uplink as a FIFO queue with one server, vectorized (numpy).

Requests arrive at ``ready`` (nondecreasing, in queue order) and need ``airtime`` (> 0). The
end times follow the Lindley recursion ``end_k = max(ready_k, end_{k-1}) + airtime_k``. Every
time is computed with the same floating-point additions, in the same order, as a process
that waits for the channel and then for its airtime (``env.now + delay``): within one busy
period the ends are a sequential cumulative sum from the period's start, so the results are
bit for bit those of the SimPy reference, not just close.
"""

from __future__ import annotations

import numpy as np

_FIRST_WINDOW = 256


def lindley(ready: np.ndarray, airtime: np.ndarray, free_at: float = -np.inf) -> np.ndarray:
    """End of every service of a FIFO queue whose server is free from ``free_at`` on."""
    n = ready.size
    if n == 0:
        return np.empty(0)
    ready = ready.copy()
    ready[0] = max(ready[0], free_at)
    # busy periods from the closed form end_k = S_k + max_{j<=k} (ready_j - S_{j-1}) ...
    served = np.cumsum(airtime)
    approx = served + np.maximum.accumulate(ready - (served - airtime))
    opens = np.empty(n, dtype=bool)
    opens[0] = True
    opens[1:] = ready[1:] >= approx[:-1]
    while True:  # ... then the exact sums; re-open where rounding put a boundary on the wrong side
        end = _period_sums(ready, airtime, opens)
        should = opens.copy()
        should[1:] = np.where(ready[1:] > end[:-1], True, np.where(ready[1:] < end[:-1], False, opens[1:]))
        if np.array_equal(should, opens):
            return end
        opens = should


def _period_sums(ready: np.ndarray, airtime: np.ndarray, opens: np.ndarray) -> np.ndarray:
    """``ready[start] + airtime[start] + ... + airtime[k]`` added left to right within each busy
    period; periods of equal length are summed together, one row each."""
    n = ready.size
    starts = np.flatnonzero(opens)
    lengths = np.diff(np.append(starts, n))
    end = np.empty(n)
    for length in np.unique(lengths):
        rows = starts[lengths == length]
        cols = rows[:, None] + np.arange(length)
        block = np.empty((rows.size, length + 1))
        block[:, 0] = ready[rows]
        block[:, 1:] = airtime[cols]
        end[cols] = np.cumsum(block, axis=1)[:, 1:]
    return end


def fifo_with_deadline(ready: np.ndarray, airtime: np.ndarray, deadline_at: float | None):
    """Start, end and sent flag of every request of the queue.

    With a deadline, a request at the head of the queue whose service would end after it is
    dropped there: it sends nothing and frees the server at once (its end equals its start).
    """
    n = ready.size
    if deadline_at is None:
        end = lindley(ready, airtime)
        return _starts(ready, end, -np.inf), end, np.ones(n, dtype=bool)
    start = np.empty(n)
    end = np.empty(n)
    sent = np.zeros(n, dtype=bool)
    # a request that cannot make it even alone is dropped whatever the queue: zero service
    hopeless = ready + airtime > deadline_at
    service = np.where(hopeless, 0.0, airtime)
    position, free_at, window = 0, -np.inf, _FIRST_WINDOW
    while position < n:
        stop = min(n, position + window)
        e = lindley(ready[position:stop], service[position:stop], free_at)
        s = _starts(ready[position:stop], e, free_at)
        late = (e > deadline_at) & ~hopeless[position:stop]
        if not late.any():
            start[position:stop], end[position:stop] = s, e
            sent[position:stop] = ~hopeless[position:stop]
            position, free_at, window = stop, e[-1], 2 * window
            continue
        first = int(np.argmax(late))
        start[position:position + first], end[position:position + first] = s[:first], e[:first]
        sent[position:position + first] = ~hopeless[position:position + first]
        late_at = position + first
        start[late_at] = end[late_at] = free_at = s[first]
        position = late_at + 1
        # until a request fits again, every one is dropped at max(its arrival, the free time)
        window = _FIRST_WINDOW
        while position < n:
            stop = min(n, position + window)
            head = np.maximum(ready[position:stop], free_at)
            fits = (head + airtime[position:stop] <= deadline_at) & ~hopeless[position:stop]
            count = int(np.argmax(fits)) if fits.any() else stop - position
            start[position:position + count] = end[position:position + count] = head[:count]
            if count:
                free_at = head[count - 1]
            position += count
            if fits.any():
                break
            window *= 2
        window = _FIRST_WINDOW
    return start, end, sent


def _starts(ready: np.ndarray, end: np.ndarray, free_at: float) -> np.ndarray:
    previous = np.empty_like(end)
    if end.size:
        previous[0] = free_at
        previous[1:] = end[:-1]
    return np.maximum(ready, previous)
