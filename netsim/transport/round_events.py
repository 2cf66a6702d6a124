"""The SimPy events of one reference round (``netsim.transport.reference``), as an event graph: which
event creates which, so that ``netsim.transport.event_order`` can tell in which order the processes
resume when several things happen at the same time.

Only the events that lead to a trace line, or decide an order, are modelled:

- the round process's start (the root), the downlink process's start (URGENT), the deadline
  timeout (created first);
- stream ``k``'s timeout, created by stream ``k-1``'s; it then triggers, in stream order, the
  arrival of every device whose last stream it is, and then creates the next stream's timeout
  (the downlink process ends after the last: barrier devices all resume on that, in
  participant order, after the round process);
- a device on no stream (pipelined) waits on a zero timeout the round process created;
- each device's compute timeout; with a deadline, the ``compute | deadline`` condition, which
  is triggered by whichever of the two is processed first (at once if the deadline is past);
- the compute end creates the device's ``computed`` event, then its uplink request; barrier:
  the last ``computed`` event triggers the barrier, whose callbacks request in the order the
  devices reached it;
- a grant is created by the request when the uplink is free; otherwise by the release of the
  previous holder, or by the first request made after that holder let go but before its
  release event ran (``Resource`` grants the head of the queue then);
- the grant creates the upload timeout (or, dropped at the head, the release); the upload's end
  creates the release.
"""

from __future__ import annotations

import numpy as np

from netsim.transport.event_order import NORMAL, ROOT_PRIORITY, URGENT, EventGraph, processing_ranks


class _Round:
    """The graph of one round up to the compute ends; ``add_uplink`` adds the uplink."""

    def __init__(self, t0, mode, deadline_at, heard, stream_end, received, compute_end, computed):
        g = self.graph = EventGraph()
        n = received.size
        root = g.add_one(t0, ROOT_PRIORITY, -1, 0)
        downlink_start = g.add_one(t0, URGENT, root, 1)
        deadline = g.add_one(deadline_at, NORMAL, root, 0) if deadline_at is not None else -1
        sizes = heard.stream_sizes
        k = sizes.size
        if k:  # stream k's timeout is created by stream k-1's, after the arrivals it triggers
            parents = np.concatenate(([downlink_start], g.size + np.arange(k - 1)))
            self.streams = g.add(stream_end, NORMAL, parents, np.concatenate(([0], sizes[:-1])))
        else:
            self.streams = np.empty(0, dtype=np.int64)
        if mode == "barrier":  # the downlink process ends after its last stream's arrivals
            downlink_done = g.add_one(stream_end[-1] if k else t0, NORMAL, self.streams[-1] if k else downlink_start,
                                      sizes[-1] if k else 0)
            start = np.full(n, downlink_done, dtype=np.int64)
            base = 4 * (1 + np.arange(n, dtype=np.int64))  # its callbacks: the round process, then each device
        else:
            on_stream = heard.last_stream >= 0
            parent = self.streams[np.maximum(heard.last_stream, 0)] if k else np.zeros(n, dtype=np.int64)
            parent = np.where(on_stream, parent, root)
            seq = np.where(on_stream, heard.position, 2 + 2 * np.arange(n, dtype=np.int64))
            start = g.add(received, NORMAL, parent, seq)
            base = np.zeros(n, dtype=np.int64)
        compute = g.add(compute_end, NORMAL, start, base)
        self._resolvers = []
        if deadline_at is None:
            self.compute_end = compute
            return
        already = deadline_at <= received
        by_compute = ~already & (compute_end < deadline_at)
        by_deadline = ~already & ~by_compute
        parent = np.where(already, start, np.where(by_compute, compute, deadline))
        self.compute_end = condition = g.add(computed, NORMAL, parent, np.where(already, base + 1, 0))
        late, late_start, late_base = condition[by_deadline], start[by_deadline], base[by_deadline]
        registration = np.arange(late.size)

        def resolve_deadline(rank, parent_, seq_):  # the deadline's callbacks, in registration order
            seq_[late[np.lexsort((late_base, rank[late_start]))]] = registration

        self._resolvers.append(resolve_deadline)

    def add_uplink(self, mode, queue, ready, uplink_start, uplink_end, sent):
        g = self.graph
        size = queue.size
        compute_end = self.compute_end
        if size == 0:
            self.grants = self.uploads = np.empty(0, dtype=np.int64)
            return
        if mode == "barrier":
            barrier_t = ready[queue[0]]
            last_computed = g.add_one(barrier_t, NORMAL, -1, 0)
            barrier = g.add_one(barrier_t, NORMAL, last_computed, 0)
            maker = np.full(size, barrier, dtype=np.int64)
            maker_seq = np.zeros(size, dtype=np.int64)
            queued_compute_end = compute_end[queue]

            def resolve_barrier(rank, parent, seq):
                parent[last_computed] = compute_end[np.argmax(rank[compute_end])]
                maker_seq[:] = rank[queued_compute_end]

            self._resolvers.append(resolve_barrier)
        else:
            maker = compute_end[queue]
            maker_seq = np.ones(size, dtype=np.int64)  # after the device's ``computed`` event
        grants = g.add(uplink_start[queue], NORMAL, -1, 0)
        uploads = g.add(uplink_end[queue][sent], NORMAL, grants[sent], 0)
        holder_done = grants.copy()  # the event whose processing lets the uplink go
        holder_done[sent] = uploads
        releases = g.add(uplink_end[queue], NORMAL, holder_done, 0)

        def resolve_grants(rank, parent, seq):
            grant_parent = maker.copy()
            grant_seq = maker_seq.copy()
            if size > 1:
                maker_rank = rank[maker]
                let_go = rank[holder_done[:-1]]
                waiting = maker_rank[1:] < let_go
                after = np.minimum(np.searchsorted(maker_rank, let_go, side="right"), size - 1)
                by_request = waiting & (maker_rank[after] > let_go) & (maker_rank[after] < rank[releases[:-1]])
                by_release = waiting & ~by_request
                grant_parent[1:] = np.where(by_release, releases[:-1], np.where(by_request, maker[after], maker[1:]))
                grant_seq[1:] = np.where(by_release, 0, np.where(by_request, maker_seq[after], maker_seq[1:]))
            parent[grants] = grant_parent
            seq[grants] = grant_seq

        self._resolvers.append(resolve_grants)
        self.grants, self.uploads = grants, uploads

    def ranks(self) -> np.ndarray:
        resolvers = self._resolvers

        def resolve(rank, parent, seq):
            for r in resolvers:
                r(rank, parent, seq)

        return processing_ranks(self.graph, resolve)


def compute_end_ranks(t0, mode, deadline_at, heard, stream_end, received, compute_end, computed) -> np.ndarray:
    """Per participant, a number that orders the moments the devices finished computing the
    way the reference processes do.

    Without a deadline the order has a closed form: by compute end; at equal ends, first the
    devices that computed for a positive time (their timeouts were created earlier), then by
    the order they started: barrier, all at the downlink's end in participant order; pipelined
    with every stream taking time, by start time, then stream, then place in the stream
    (a device on no stream starts first, in participant order).
    """
    n = received.size
    instant = compute_end == received
    if deadline_at is None and mode == "barrier":
        return _positions(np.lexsort((np.arange(n), instant, compute_end)))
    if deadline_at is None and np.all(np.diff(np.concatenate(([t0], stream_end))) > 0):
        on_stream = heard.last_stream >= 0
        place = np.where(on_stream, heard.position, np.arange(n))
        return _positions(np.lexsort((place, heard.last_stream, received, instant, compute_end)))
    rnd = _Round(t0, mode, deadline_at, heard, stream_end, received, compute_end, computed)
    return rnd.ranks()[rnd.compute_end]


def _positions(order: np.ndarray) -> np.ndarray:
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size)
    return rank


def trace_order(tl) -> np.ndarray:
    """Permutation of the events as ``Timeline.trace`` lists them (downlink, compute, dropped
    while computing, dropped at the uplink, uplink) into the reference's order."""
    cut = np.flatnonzero(tl.cut)
    late = tl.queue[~tl.sent]
    up = tl.queue[tl.sent]
    node_time = np.concatenate((tl.stream_end, tl.computed, tl.uplink_start[late], tl.uplink_end[up]))
    front = tl.stream_end.size + tl.computed.size
    # a device dropped while computing logs "compute", then "dropped", from the same event
    node_of_event = np.concatenate((np.arange(front), tl.stream_end.size + cut, np.arange(front, node_time.size)))
    second = np.concatenate((np.zeros(front, dtype=np.int64), np.ones(cut.size, dtype=np.int64),
                             np.zeros(node_time.size - front, dtype=np.int64)))
    if np.unique(node_time).size == node_time.size:  # no two at the same time: time order
        return np.lexsort((second, node_time[node_of_event]))
    rnd = _Round(tl.start, tl.mode, tl.deadline_at, tl.listening, tl.stream_end, tl.received, tl.compute_end, tl.computed)
    rnd.add_uplink(tl.mode, tl.queue, tl.ready, tl.uplink_start, tl.uplink_end, tl.sent)
    rank = rnd.ranks()
    node_rank = np.concatenate((rank[rnd.streams], rank[rnd.compute_end], rank[rnd.grants[~tl.sent]], rank[rnd.uploads]))
    return np.lexsort((second, node_rank[node_of_event]))
