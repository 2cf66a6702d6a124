"""Long-lived transport on the clock: a link's access scheme as a SimPy resource, living for the
whole run, each transfer an event, and the links that say what each transfer takes.

Access schemes, in the manner of SimPy's ``BaseResource`` subclasses (``_do_put`` grants a
transfer the medium, ``_do_get`` gives it back):

- ``ResourceBlocks``: a receiver's resource blocks, each transfer granted some of them,
  concurrent grants packed in frequency (the uplink of a cell, in its rounds,
  ``netsim.transport.lifecycle``, and under buffered aggregation, ``netsim.clock.buffered``).
- ``Tdma``: one transfer at a time, first come first served (one block, every grant: the
  uplink of the normalized systems, in rounds and under buffered aggregation; the downlink
  sends its streams one after another the same way).
- ``Unshared``: every transfer has a medium of its own (orthogonal channels: no contention),
  as the closed forms of renewal theory assume.

A transfer asks ``transmit(airtime)``: a process that ends when the transfer has ended (its
grant, its airtime, its release all inside), its value the time the transfer started; or
``carry(prbs, timing)`` (``yield from``), its airtime asked of ``timing()`` when its grant starts
(on ``Tdma`` and ``Unshared`` a process of its own, on ``ResourceBlocks`` held by the asking
process); a device's upload (``netsim.transport.lifecycle.upload``) asks ``request(prbs)`` and holds the
grant while it sends, so a device that switches off or runs flat is cut there. What a transfer or a step takes is asked of the links, the one declared protocol
``Links``: ``NormalizedLinks`` answers it for a normalized system, a cell's
``netsim.radio.physical_links.PhysicalLinks`` for one fading draw (stream and upload airtimes, who receives and
can upload, each upload's receiver and grant, compute time, the energies, the media).
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, Sequence

from simpy.events import Event
from simpy.resources.base import BaseResource, Get, Put


class Grant(Put):
    """A request for ``prbs`` of the medium's resource blocks; it fires when the transfer may
    start. As a context manager (``with medium.request(prbs) as grant``) it gives them back on exit."""

    def __init__(self, resource: "ResourceBlocks", prbs: int = 1):
        if not 1 <= prbs <= resource.capacity:
            raise ValueError(f"a grant of {prbs} resource blocks on a medium of {resource.capacity}")
        self.prbs = prbs
        super().__init__(resource)

    def __exit__(self, exc_type, exc_value, traceback):
        super().__exit__(exc_type, exc_value, traceback)
        if exc_type is not GeneratorExit:
            Release(self.resource, self)


class Release(Get):
    """A transfer gives the medium back (``Grant`` it held)."""

    def __init__(self, resource, grant: Grant):
        self.grant = grant
        super().__init__(resource)


class ResourceBlocks(BaseResource):
    """A receiver's resource blocks shared in frequency (TS 38.214 6.1.2.2: each grant a set of
    blocks, the grants held at once never more blocks than the band's): concurrent grants whose
    blocks fit together transmit together; a grant of every block holds the medium alone.

    Order: requests wait in the order they asked (FIFO). Whenever blocks are given back, or a
    request arrives, the waiting requests are granted in that order, each one whose blocks fit in
    the free ones (first fit: a narrow request passes a wider one that does not fit yet; a grant
    of the whole band waits until nobody holds any). Blocks come free when a release is made
    and are handed on when it is processed, as SimPy's own ``Resource`` does: with one block
    (``Tdma``) this is its FIFO, event for event. ``netsim.transport.block_queue`` computes the same times
    without the clock."""

    def __init__(self, env, prbs: int):
        super().__init__(env, capacity=prbs)
        self.free = prbs

    def request(self, prbs: int = 1) -> Grant:
        return Grant(self, prbs)

    def carry(self, prbs: int, timing):
        """A transfer held by the asking process (``yield from``): wait for ``prbs`` blocks, hold
        them for the airtime ``timing()`` gives at the grant's start, give them back as the
        process goes on (a cell's receiver: what the sender does next comes before the next
        grant at that instant); its value the time it started."""
        env = self._env
        with self.request(prbs) as grant:
            yield grant
            start = env.now
            yield env.timeout(timing())
        return start

    def _do_put(self, event: Grant) -> bool:
        """Grant ``event`` when its blocks fit; while blocks are left free, the requests behind
        it are tried too (True)."""
        if event.prbs <= self.free:
            self.free -= event.prbs
            event.succeed()
        return self.free > 0

    def _do_get(self, event: Release) -> bool:
        if event.grant.triggered:  # a request given up before its grant held nothing
            self.free += event.grant.prbs
        event.succeed()
        return True


class Tdma(ResourceBlocks):
    """One transfer at a time, in the order they asked (FIFO): one resource block, every grant.
    As an orchestrator's access scheme (``ACCESS``) each transfer is a process of its own."""

    def __init__(self, env):
        super().__init__(env, 1)

    def transmit(self, airtime: float):
        """The transfer's process: wait for the medium, hold it ``airtime``, give it back; its
        value is the time it started."""
        return self._env.process(_hold(self, lambda: airtime))

    def carry(self, prbs: int, timing):
        """A transfer as a process of its own (``transmit``, its airtime ``timing()`` at the
        grant's start), waited for by the asking process (``yield from``); its start."""
        return (yield self._env.process(_hold(self, timing)))


class Own(Event):
    """An ``Unshared`` medium's grant: the transfer's own medium, at once; nothing to give back."""

    def __init__(self, env):
        super().__init__(env)
        self.succeed()

    def __enter__(self) -> "Own":
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        return None


def _hold(medium: Tdma, timing):
    grant = Grant(medium)
    yield grant
    start = medium._env.now
    yield medium._env.timeout(timing())
    yield Release(medium, grant)
    return start


def _alone(env, timing):
    start = env.now
    yield env.timeout(timing())
    return start


class Unshared:
    """Every transfer its own medium: it starts at once and lasts its airtime."""

    def __init__(self, env):
        self._env = env

    def request(self, prbs: int = 1) -> "Own":
        """A grant that fires at once (``ResourceBlocks.request``'s use: ``with medium.request(prbs) as grant``)."""
        return Own(self._env)

    def transmit(self, airtime: float):
        return self._env.process(_alone(self._env, lambda: airtime))

    def carry(self, prbs: int, timing):
        """``Tdma.carry``'s way: the transfer a process of its own, from now."""
        return (yield self._env.process(_alone(self._env, timing)))


ACCESS = {"tdma": Tdma, "unshared": Unshared}


class Transfer(NamedTuple):
    """An upload as the links serve it from its start (``Links.upload``): its airtime (s; to its
    cut if ``lost``), whether the device lost its link in it (a moving cell's transfer in
    segments, ``netsim.radio.physical_links``: below the outage floor or out of coverage), the bits through."""

    airtime_s: float
    lost: bool
    bits: float


class Links(Protocol):
    """What a transfer or a step on the clock asks of the channel, whatever the system: the one
    declared links protocol (``NormalizedLinks``: a normalized system; ``netsim.radio.physical_links.PhysicalLinks``:
    a cell's links of one fading draw, or of one instant on a moving cell). Orchestrators and the
    device lifecycle (``netsim.transport.lifecycle``, ``netsim.clock.buffered``) ask these questions and never what
    kind of system they run on.

    ``downlink_access``, ``uplink_access``: the media's access schemes (``ACCESS``, or ``"fdma"``:
    the band shared equally, ``netsim.transport.shared_uplink``); ``uplink_queue[device]``: the device's uplink
    receiver (each receiver has its own medium, ``uplink_medium``); ``band_prbs``: each
    receiver's resource blocks; ``records_energy``: whether each reception is on the trace with
    its energy (a cell's; a normalized system has no energy and its rounds no receptions)."""

    records_energy: bool
    downlink_access: str
    uplink_access: str
    uplink_queue: Sequence[int]
    band_prbs: int

    def downlink_medium(self, env):
        """The downlink's medium for a run (one stream at a time: ``Tdma``, or ``ResourceBlocks`` of one block)."""

    def uplink_medium(self, env):
        """One uplink receiver's medium for a run (``ResourceBlocks`` of ``band_prbs``, ``Tdma``, ``Unshared``)."""

    def stream_s(self, devices: Sequence[int], bits: float, start_s: float | None = None) -> float:
        """From ``start_s`` (None: the links' instant; a moving cell serves it in segments), a stream's airtime for its listeners ``devices`` (0: nobody can receive)."""

    def receives(self, device: int) -> bool:
        """Whether ``device`` can receive a stream (not in downlink outage)."""

    def compute_s(self, device: int, draw: float, scale: float) -> float:
        """A local update's compute time from its ``draw``, ``scale`` times the work."""

    def compute_j(self, device: int, scale: float) -> float:
        """A local update's compute energy (J)."""

    def can_upload(self, device: int, uploading: bool = False) -> bool:
        """Whether ``device`` can upload (not in uplink outage)."""

    def grant_prbs(self, device: int) -> int:
        """The resource blocks ``device``'s upload holds of its receiver's ``band_prbs``."""

    def uplink_s(self, device: int, bits: float) -> float:
        """An upload's airtime on its grant, at the links' instant (0: nothing to send)."""

    def upload(self, device: int, bits: float, start_s: float | None = None) -> Transfer:
        """An upload as it is served from ``start_s`` (None: the links' instant): its airtime, to
        its cut if the link is lost in it (a moving cell serves it in segments, ``netsim.radio.physical_links``),
        whether it was lost, the bits through."""

    def transmit_j(self, device: int, airtime_s: float, start_s: float | None = None) -> float:
        """The energy of an upload of ``airtime_s`` from ``start_s`` (J)."""

    def receive_j(self, device: int, listening_s: float) -> float:
        """The energy of listening to a stream for ``listening_s`` (J)."""


class OneReceiver:
    """Every device's uplink receiver is receiver 0."""

    def __getitem__(self, device: int) -> int:
        return 0


class NormalizedLinks:
    """The ``Links`` of a normalized system (``netsim.normalized.system.NetworkSystem``, the journal's V-D):
    ``t_dl`` per model down, ``rho t_dl`` up, every device receives and uploads, one uplink
    receiver whose whole band (one block) is every upload's grant, no energy. Its media's access
    schemes are the orchestrator's choice (``ACCESS``; TDMA by default)."""

    band_prbs = 1
    uplink_queue = OneReceiver()
    records_energy = False

    def __init__(self, system, model_bits: float, downlink_access: str = "tdma", uplink_access: str = "tdma"):
        self.system = system
        self.model_bits = model_bits
        self.downlink_access, self.uplink_access = downlink_access, uplink_access

    def receives(self, device: int) -> bool:
        return True

    def can_upload(self, device: int, uploading: bool = False) -> bool:
        return True

    def grant_prbs(self, device: int) -> int:
        return self.band_prbs

    def downlink_medium(self, env):
        return ACCESS[self.downlink_access](env)

    def uplink_medium(self, env):
        return ACCESS[self.uplink_access](env)

    def stream_s(self, devices: Sequence[int], bits: float, start_s: float | None = None) -> float:
        return self.system.downlink_time(bits, self.model_bits)

    def uplink_s(self, device: int, bits: float) -> float:
        return self.system.uplink_time(bits, self.model_bits)

    def compute_s(self, device: int, draw: float, scale: float) -> float:
        return float(draw) * scale

    def compute_j(self, device: int, scale: float) -> float:
        return 0.0

    def upload(self, device: int, bits: float, start_s: float | None = None) -> Transfer:
        """Its airtime whenever it starts (a normalized system has no channel in time)."""
        return Transfer(self.uplink_s(device, bits), False, bits)

    def transmit_j(self, device: int, airtime_s: float, start_s: float | None = None) -> float:
        return 0.0

    def receive_j(self, device: int, listening_s: float) -> float:
        return 0.0
