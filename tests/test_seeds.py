"""The one split of a run seed (``contract.seeds``): each named stream is the child NumPy's
``spawn`` gave the runs before the split moved there (so every run keeps its numbers), and
asking for a stream twice, or after spawning, gives the same one."""

import numpy as np

from contract.seeds import ChannelSeeds, LearnerSeeds, RunSeeds
from scenarios.definitions.seeds import seed_streams


def same(a: np.random.SeedSequence, b: np.random.SeedSequence) -> bool:
    return (a.entropy, tuple(a.spawn_key)) == (b.entropy, tuple(b.spawn_key)) and \
        np.array_equal(a.generate_state(4), b.generate_state(4))


def test_named_streams_are_the_children_spawn_gave():
    data, learner, network = np.random.SeedSequence(7).spawn(3)
    seeds = seed_streams(7)
    assert all(same(a, b) for a, b in zip(seeds, (data, learner, network)))
    init, devices, server = learner.spawn(3)
    named = LearnerSeeds.of(seeds.learner)
    assert same(named.init, init) and same(named.devices, devices) and same(named.server, server)
    assert all(same(named.device(d), child) for d, child in enumerate(devices.spawn(5)))
    assert same(named.uplink_codec, np.random.SeedSequence(7, spawn_key=(1, 1001)))
    assert same(named.downlink_codec, np.random.SeedSequence(7, spawn_key=(1, 1002)))
    (channel,) = network.spawn(1)
    assert all(same(a, b) for a, b in zip(ChannelSeeds.of(seeds.network), channel.spawn(3)))


def test_a_stream_does_not_depend_on_what_was_drawn_before():
    learner = RunSeeds.of(3).learner
    first = LearnerSeeds.of(learner)
    learner.spawn(10)  # another user of the sequence spawns children
    again = LearnerSeeds.of(learner)
    assert all(same(a, b) for a, b in zip(first, again)) and same(first.device(2), again.device(2))
    assert not same(first.device(1), first.device(2)) and not same(RunSeeds.of(3).data, RunSeeds.of(4).data)
