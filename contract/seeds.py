"""The one split of a run seed: every random stream of a run, by name.

    run seed
    ├── data            the data partition (the scenario's builder)
    ├── learner
    │   ├── init            the model's initialization
    │   ├── devices         one child per device: its mini-batches
    │   ├── server          the server's choices (participants, clusterings)
    │   ├── uplink_codec    (child 1001) the uplink codec's draws
    │   └── downlink_codec  (child 1002) the downlink codec's draws
    └── network         the compute times (its own generator)
        ├── channel     (child 0)
            ├── layout      where the devices are placed
            ├── fading      the rounds' fading
            ├── planning    the base station's own fading samples for airtime estimates
            ├── motion      (child 3) a moving cell's paths, fields, fading and availability
            ├── harq        (child 4) link_abstraction=nr-harq's uplink block errors, one child per (device, upload)
            ├── harq_downlink (child 5) nr-harq's stream block errors, one child per (listener, stream)
            └── interference (child 6) ul_interference=clock's fading of every link to every receiver
        └── idle        (child 1) the buffered orchestrator's random choice of idle devices

Each stream is the child of its parent at a fixed key (``child``): the one ``spawn`` gives as
its key-th, so the numbers are those the runs have always drawn, while no stream depends on
how many others were drawn before it, and asking twice gives the same stream. The channel
child is the network seed's first child, which the compute times never spawn: the compute
draws are the same whether the physical layer is on or off, and a run's layout does not
depend on how many rounds it runs. A codec's streams are apart from the others, so a codec
changes no other random stream.

NumPy's ``SeedSequence``: ``import contract`` does not load this module.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

UPLINK_CODEC, DOWNLINK_CODEC = 1001, 1002  # the learner's children of the codecs' draws


def child(parent: np.random.SeedSequence, key: int) -> np.random.SeedSequence:
    """The child of ``parent`` at ``key`` (``parent.spawn``'s key-th, however many it spawned)."""
    return np.random.SeedSequence(parent.entropy, spawn_key=tuple(parent.spawn_key) + (key,), pool_size=parent.pool_size)


class RunSeeds(NamedTuple):
    """A run seed's independent streams: the data partition, the learner and the network."""

    data: np.random.SeedSequence
    learner: np.random.SeedSequence
    network: np.random.SeedSequence

    @classmethod
    def of(cls, seed: int) -> "RunSeeds":
        root = np.random.SeedSequence(seed)
        return cls(*(child(root, key) for key in range(3)))


class LearnerSeeds(NamedTuple):
    """The learner's streams (from ``RunSeeds.learner``)."""

    init: np.random.SeedSequence
    devices: np.random.SeedSequence
    server: np.random.SeedSequence
    uplink_codec: np.random.SeedSequence
    downlink_codec: np.random.SeedSequence

    @classmethod
    def of(cls, learner: np.random.SeedSequence) -> "LearnerSeeds":
        return cls(*(child(learner, key) for key in (0, 1, 2, UPLINK_CODEC, DOWNLINK_CODEC)))

    def device(self, index: int) -> np.random.SeedSequence:
        """Device ``index``'s stream (its mini-batches)."""
        return child(self.devices, index)


class ChannelSeeds(NamedTuple):
    """A cell's streams (from ``RunSeeds.network``'s channel child)."""

    layout: np.random.SeedSequence
    fading: np.random.SeedSequence
    planning: np.random.SeedSequence

    @classmethod
    def of(cls, network: np.random.SeedSequence) -> "ChannelSeeds":
        channel = child(network, 0)
        return cls(*(child(channel, key) for key in range(3)))


def idle_seed(network: np.random.SeedSequence) -> np.random.SeedSequence:
    """The buffered orchestrator's choice of idle devices (``netsim.clock.buffered``, ``idle_choice``
    random): its own stream, so choosing shifts neither the compute times nor the channel."""
    return child(network, 1)


def motion_seed(network: np.random.SeedSequence) -> np.random.SeedSequence:
    """The channel child's stream of a cell in time (``netsim.dynamics``): apart from the three
    of ``ChannelSeeds``, so a static cell draws what it always drew."""
    return child(child(network, 0), 3)


def harq_seed(network: np.random.SeedSequence) -> np.random.SeedSequence:
    """The channel child's stream of the uplink's HARQ block errors (``link_abstraction`` ``nr-harq``:
    ``netsim.radio.harq_uplink``): apart from the others, so the other streams draw what they always drew.
    A device's k-th upload draws from its own child, ``(device, k)`` (common random numbers)."""
    return child(child(network, 0), 4)


def harq_downlink_seed(network: np.random.SeedSequence) -> np.random.SeedSequence:
    """The channel child's stream of the downlink's HARQ block errors (``link_abstraction`` ``nr-harq``:
    ``netsim.radio.harq_downlink``), apart from the others. A listener's k-th stream draws from its
    own child ``(listener, k)`` (common random numbers)."""
    return child(child(network, 0), 5)


def interference_seed(network: np.random.SeedSequence) -> np.random.SeedSequence:
    """The channel child's stream of ``ul_interference=clock`` (``netsim.radio.physical``: each
    round's fading of every device's link to every receiver): apart from the others, so a run
    under ``full-buffer`` draws what it always drew, and the wanted links' fading is the same
    under both (common random numbers)."""
    return child(child(network, 0), 6)
