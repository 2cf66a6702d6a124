"""The order in which SimPy processes events that fall at the same time, computed for a whole
set of events at once.

SimPy pops events by ``(time, priority, id)``, and ids count up in creation order. An event is
created while another one is processed (its parent), so among events due at the same time:
those created earlier in time come first, then those created at that very time, in layers
(created by the first layer, then by the second...); within a layer, in their parents'
processing order, then in the order the parent created them. Each event is therefore sorted by

    (time, priority, depth, rank of its parent, sequence number within its parent)

where ``depth`` is 0 for an event created before its time and one more than its parent's
otherwise. The ranks are the fixed point of that sort; it is unique (each comparison reduces to
one between strictly earlier events) and found in a few passes. Some parents depend on the
order itself (which of two events came first decides who created a third): ``resolve`` is
called with the current ranks before every pass to set them.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

URGENT, NORMAL = 0, 1  # simpy.events.URGENT and NORMAL; a process starts with an URGENT event
ROOT_PRIORITY = -1  # the event whose processing creates everything else: always first


class EventGraph:
    """Events (time, priority, parent, sequence), added in blocks; ids are indices."""

    def __init__(self) -> None:
        self._blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self.size = 0

    def add(self, time, priority, parent, seq) -> np.ndarray:
        """Add ``len(time)`` events (scalars broadcast); returns their ids."""
        time = np.atleast_1d(np.asarray(time, dtype=float))
        count = time.size
        block = (time, _column(priority, count), _column(parent, count), _column(seq, count))
        self._blocks.append(block)
        ids = np.arange(self.size, self.size + count)
        self.size += count
        return ids

    def add_one(self, time, priority, parent, seq) -> int:
        return int(self.add([time], priority, parent, seq)[0])

    def arrays(self):
        if not self._blocks:
            return tuple(np.empty(0, dtype=t) for t in (float, np.int64, np.int64, np.int64))
        return tuple(np.concatenate(column) for column in zip(*self._blocks))


def _column(values, count: int) -> np.ndarray:
    if np.ndim(values) == 0:
        return np.full(count, values, dtype=np.int64)
    return np.asarray(values, dtype=np.int64)


Resolver = Callable[[np.ndarray, np.ndarray, np.ndarray], None]


def processing_ranks(graph: EventGraph, resolve: Resolver | None = None) -> np.ndarray:
    """Position of every event in SimPy's processing order (0 first).

    ``resolve(rank, parent, seq)`` may rewrite ``parent`` and ``seq`` in place from the current
    ranks. The graph's root has parent -1. Sequence numbers must be >= 0 and distinct among the
    children of one parent.
    """
    time, priority, parent, seq = (a.copy() for a in graph.arrays())
    size = time.size
    time_rank = np.unique(time, return_inverse=True)[1].reshape(-1).astype(np.int64)
    time_priority = time_rank * 3 + (priority - ROOT_PRIORITY)
    rank = np.zeros(size, dtype=np.int64)
    positions = np.arange(size, dtype=np.int64)
    depth_of: tuple[np.ndarray, np.ndarray, int] | None = None
    for _ in range(size + 2):
        if resolve is not None:
            resolve(rank, parent, seq)
        if depth_of is None or not np.array_equal(depth_of[0], parent):
            depth = _depth(time, parent)
            slot = time_priority * (int(depth.max()) + 1) + depth
            if (int(slot.max()) + 1) * (size + 1) * (size + 1) >= 2**62:  # dense, to keep the key packed
                slot = np.unique(slot, return_inverse=True)[1].reshape(-1).astype(np.int64)
            depth_of = (parent.copy(), slot, int(slot.max()) + 1)
        _, slot, slots = depth_of
        parent_rank = np.where(parent >= 0, rank[np.maximum(parent, 0)] + 1, 0)
        seq_span = int(seq.max()) + 1
        if slots * (size + 1) * seq_span < 2**62:  # one packed key: (slot, parent rank, seq)
            order = np.argsort((slot * (size + 1) + parent_rank) * seq_span + seq)
        else:
            order = np.lexsort((seq, parent_rank, slot))
        new = np.empty(size, dtype=np.int64)
        new[order] = positions
        if np.array_equal(new, rank):
            return rank
        rank = new
    raise RuntimeError("event order did not converge")  # cannot happen for a graph of parents


def _depth(time: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Number of consecutive ancestors due at the same time (pointer jumping over the events
    that have one)."""
    size = time.size
    has_parent = parent >= 0
    same = np.zeros(size, dtype=bool)
    same[has_parent] = time[parent[has_parent]] == time[has_parent]
    jump = np.where(same, parent, np.arange(size))
    length = same.astype(np.int64)
    active = np.flatnonzero(same)
    while active.size:
        target = jump[active]
        onward = jump[target]
        moving = onward != target  # the target is not the first of its chain yet
        active, target, onward = active[moving], target[moving], onward[moving]
        length[active] += length[target]
        jump[active] = onward
    return length
