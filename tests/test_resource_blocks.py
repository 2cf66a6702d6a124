"""A receiver's resource blocks shared by concurrent grants (TS 38.214 6.1.2.2): the SimPy
resource (``netsim.transport.media.ResourceBlocks``) on a hand-computed event trace, and its fast path
(``netsim.transport.block_queue.block_fifo``) against it on random queues, with and without a deadline."""

import numpy as np
import pytest
import simpy

from netsim.transport.block_queue import block_fifo
from netsim.transport.fifo import fifo_with_deadline
from netsim.transport.media import ResourceBlocks

# name, asks at (s), resource blocks, airtime (s); one 51-block sector (20 MHz at 30 kHz)
REQUESTS = (("a", 0.0, 20, 4.0), ("b", 1.0, 20, 2.0), ("c", 1.5, 40, 1.0), ("d", 2.0, 10, 3.0),
            ("e", 2.5, 51, 0.5), ("f", 4.5, 5, 1.0))
# a and b fit together (40 of 51): both at once. c (40) finds 11 free: it waits. d (10) fits in
# those 11: it passes c (first fit) at 2 s. b's end at 3 s leaves 31 free: c still waits; a's at
# 4 s leaves 41 (d holds 10): c at 4 s. e asks for the whole band: it waits until nobody holds
# any, when c and d end at 5 s. f (5) asked at 4.5 s with 1 block free: it waits, and at 5 s e is
# ahead of it in the queue and takes the whole band: f at 5.5 s.
EXPECTED = {"a": (0.0, 4.0), "b": (1.0, 3.0), "c": (4.0, 5.0), "d": (2.0, 5.0), "e": (5.0, 5.5), "f": (5.5, 6.5)}


def simpy_queue(ready, airtime, prbs, capacity, deadline_at=None):
    """One process per request, as ``netsim.transport.lifecycle`` sends an upload: ask for the blocks,
    and once granted either send, or (it would end after the deadline) give them back at once."""
    env = simpy.Environment()
    medium = ResourceBlocks(env, capacity)
    out = {}

    def request(k):
        yield env.timeout(ready[k])
        with medium.request(int(prbs[k])) as grant:
            yield grant
            if deadline_at is not None and env.now + airtime[k] > deadline_at:
                out[k] = (env.now, env.now, False)
                return
            start = env.now
            yield env.timeout(airtime[k])
            out[k] = (start, env.now, True)

    for k in range(len(ready)):
        env.process(request(k))
    env.run()
    return [out[k] for k in range(len(ready))]


def test_concurrent_grants_share_the_sector_s_51_blocks_hand_computed():
    names = [r[0] for r in REQUESTS]
    ready, prbs, airtime = (np.array([r[i] for r in REQUESTS]) for i in (1, 2, 3))
    got = simpy_queue(ready.tolist(), airtime.tolist(), prbs.tolist(), 51)
    assert {name: (start, end) for name, (start, end, _) in zip(names, got)} == EXPECTED
    start, end, sent = block_fifo(ready, airtime, prbs, 51, None)
    assert dict(zip(names, zip(start.tolist(), end.tolist()))) == EXPECTED and sent.all()


def test_three_devices_of_20_20_and_40_blocks():
    """All three ask at 0 s: 20 + 20 send at once (0-2 s and 0-3 s), the 40 waits for 40 free
    blocks: after the first 20 end, 31 are free, after both 51: it sends 3-4 s."""
    got = simpy_queue([0.0, 0.0, 0.0], [2.0, 3.0, 1.0], [20, 20, 40], 51)
    assert got == [(0.0, 2.0, True), (0.0, 3.0, True), (3.0, 4.0, True)]
    start, end, _ = block_fifo(np.zeros(3), np.array([2.0, 3.0, 1.0]), np.array([20, 20, 40]), 51, None)
    assert start.tolist() == [0.0, 0.0, 3.0] and end.tolist() == [2.0, 3.0, 4.0]


def test_a_grant_that_would_end_after_the_deadline_gives_its_blocks_back_at_once():
    """Deadline 3 s. a (30 blocks) 0-2 s; b (30) waits for a, granted at 2 s, would end at 4.5 s:
    dropped at 2 s, its blocks back at once; c (30, asked at 1 s behind b) is granted then: 2-3 s."""
    got = simpy_queue([0.0, 0.5, 1.0], [2.0, 2.5, 1.0], [30, 30, 30], 51, deadline_at=3.0)
    assert got == [(0.0, 2.0, True), (2.0, 2.0, False), (2.0, 3.0, True)]
    start, end, sent = block_fifo(np.array([0.0, 0.5, 1.0]), np.array([2.0, 2.5, 1.0]), np.array([30, 30, 30]), 51, 3.0)
    assert start.tolist() == [0.0, 2.0, 2.0] and end.tolist() == [2.0, 2.0, 3.0] and sent.tolist() == [True, False, True]


def test_every_grant_of_the_whole_band_is_the_fifo():
    rng = np.random.default_rng(3)
    ready = np.sort(rng.uniform(0.0, 5.0, 40))
    airtime = rng.uniform(0.01, 0.5, 40)
    for deadline_at in (None, 6.0):
        got = block_fifo(ready, airtime, np.full(40, 51), 51, deadline_at)
        for a, b in zip(got, fifo_with_deadline(ready, airtime, deadline_at)):
            assert np.array_equal(a, b)
        assert [tuple(r) for r in zip(*(x.tolist() for x in got))] == simpy_queue(ready.tolist(), airtime.tolist(),
                                                                                 [51] * 40, 51, deadline_at)


@pytest.mark.parametrize("deadline", [False, True])
def test_fast_path_equals_the_simpy_resource_on_random_queues(deadline):
    rng = np.random.default_rng(11 + deadline)
    concurrent = 0
    for _ in range(150):
        n = int(rng.integers(1, 30))
        capacity = int(rng.choice([1, 5, 51, 106]))
        ready = np.sort(rng.uniform(0.0, 3.0, n)) * (rng.random() < 0.8)  # 1 in 5: every request at 0 s (barrier)
        airtime = rng.exponential(0.5, n) + 1e-3
        prbs = np.where(rng.random(n) < 0.5, capacity, rng.integers(1, capacity + 1, n))
        deadline_at = float(rng.uniform(0.5, 4.0)) if deadline else None
        start, end, sent = block_fifo(ready, airtime, prbs, capacity, deadline_at)
        assert list(zip(start.tolist(), end.tolist(), sent.tolist())) == simpy_queue(ready.tolist(), airtime.tolist(),
                                                                                   prbs.tolist(), capacity, deadline_at)
        held = [(s, e) for s, e, ok in zip(start, end, sent) if ok]
        concurrent += sum(1 for s, e in held for s2, _ in held if s < s2 < e)
        for t in start[sent]:  # never more blocks held than the band has
            assert prbs[sent & (start <= t) & (end > t)].sum() <= capacity
    assert concurrent > 50  # the random queues do pack grants side by side
