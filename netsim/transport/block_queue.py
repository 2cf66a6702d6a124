"""A receiver's resource blocks shared by concurrent grants, without the clock: the fast path of
``netsim.transport.media.ResourceBlocks`` (the SimPy reference; TS 38.214 6.1.2.2, the grants held at
once never more blocks than the band's).

Requests arrive at ``ready`` (nondecreasing, in queue order), each for ``prbs`` of the
``capacity`` blocks during ``airtime`` (> 0). They wait in queue order; whenever blocks come
free or a request arrives, the waiting ones are granted in that order, each whose blocks fit in
the free ones (first fit). Every request for the whole band is granted alone: the FIFO of
``netsim.transport.fifo`` (Lindley, vectorized), which this reduces to. Otherwise the grants are found
event by event, at each instant in the order the reference processes them:

1. the uploads that end then give their blocks back, and the requests that arrive then join
   the queue (in queue order);
2. the waiting requests are granted first fit; each granted one starts then, ending at
   ``now + airtime`` (the clock's own addition), unless it would end after the deadline: then
   it is dropped there, sends nothing, and gives its blocks back at once, after the others
   granted with it took theirs, and the queue is granted again.

Same times, bit for bit, as the processes; where an upload ends at the very instant another
device asks (equal floating-point times, which random compute times never give), the reference
may take the request first.
"""

from __future__ import annotations

import bisect
import heapq
from collections import deque
from dataclasses import dataclass

import numpy as np

from netsim.transport.fifo import fifo_with_deadline


@dataclass(frozen=True, eq=False)
class Receivers:
    """A cell's uplink receivers as a round's participants use them: each one's receiver
    (``queue``, ``PhysicalNetwork.uplink_queue``) and the blocks its upload holds (``prbs``) of
    the ``capacity`` every receiver has."""

    queue: np.ndarray
    prbs: np.ndarray
    capacity: int


def block_fifo(ready: np.ndarray, airtime: np.ndarray, prbs: np.ndarray, capacity: int, deadline_at: float | None):
    """Start, end and sent flag of every request, in queue order (a dropped one: start = end,
    the instant it was granted)."""
    if np.all(prbs == capacity):
        return fifo_with_deadline(ready, airtime, deadline_at)
    n = ready.size
    ready_, airtime_, prbs_ = ready.tolist(), airtime.tolist(), prbs.tolist()
    start, end, sent = [0.0] * n, [0.0] * n, [False] * n
    free = capacity
    waiting = _Waiting(capacity)
    ending: list[tuple[float, int, int]] = []  # (end, grant order, request): ties end in grant order
    granted = 0
    arrived = 0
    while arrived < n or ending:
        now = min(ready_[arrived] if arrived < n else np.inf, ending[0][0] if ending else np.inf)
        while ending and ending[0][0] == now:
            free += prbs_[heapq.heappop(ending)[2]]
        while arrived < n and ready_[arrived] == now:
            waiting.join(arrived, prbs_[arrived])
            arrived += 1
        steps: deque[int | None] = deque([None])  # None: grant the queue; k: request k resumes on its grant
        while steps:
            k = steps.popleft()
            if k is None:
                while (w := waiting.first_fitting(free)) is not None:
                    free -= prbs_[w]
                    steps.append(w)
            elif deadline_at is not None and now + airtime_[k] > deadline_at:
                start[k] = end[k] = now
                free += prbs_[k]
                steps.append(None)
            else:
                start[k], end[k], sent[k] = now, now + airtime_[k], True
                heapq.heappush(ending, (end[k], granted, k))
                granted += 1
    return np.array(start), np.array(end), np.array(sent, dtype=bool)


class _Waiting:
    """The waiting requests, one FIFO per grant size: the first (in queue order) whose blocks fit
    in ``free`` is the earliest head among the sizes up to ``free``; taking it, then the next,
    while they fit, is the first-fit walk of the queue, in time linear in the sizes waiting."""

    def __init__(self, capacity: int):
        self.by_size: list[deque[int]] = [deque() for _ in range(capacity + 1)]
        self.sizes: list[int] = []  # the sizes with someone waiting, ascending

    def join(self, request: int, prbs: int) -> None:
        if not self.by_size[prbs]:
            bisect.insort(self.sizes, prbs)
        self.by_size[prbs].append(request)

    def first_fitting(self, free: int) -> int | None:
        """Take and return the first waiting request of at most ``free`` blocks (None: none)."""
        best = None
        for size in self.sizes[:bisect.bisect_right(self.sizes, free)]:
            if best is None or self.by_size[size][0] < self.by_size[best][0]:
                best = size
        if best is None:
            return None
        request = self.by_size[best].popleft()
        if not self.by_size[best]:
            self.sizes.remove(best)
        return request
