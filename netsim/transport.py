"""Long-lived transport on the clock: a link's access scheme as a SimPy resource, living for the
whole run, each transfer an event, and the links that say what each transfer takes.

Access schemes, in the manner of SimPy's ``BaseResource`` subclasses (``_do_put`` grants a
transfer the medium, ``_do_get`` gives it back):

- ``ResourceBlocks``: a receiver's resource blocks, each transfer granted some of them,
  concurrent grants packed in frequency (the uplink of a cell, in its rounds,
  ``netsim.device_round``, and under buffered aggregation, ``netsim.buffered``).
- ``Tdma``: one transfer at a time, first come first served (one block, every grant: the
  uplink of the normalized systems, in rounds and under buffered aggregation; the downlink
  sends its streams one after another the same way).
- ``Unshared``: every transfer has a medium of its own (orthogonal channels: no contention),
  as the closed forms of renewal theory assume.

A transfer asks ``transmit(airtime)``: a process that ends when the transfer has ended (its
grant, its airtime, its release all inside), its value the time the transfer started. The links (``NormalizedLinks``, or a cell's
``netsim.links.PhysicalLinks`` of the current fading draw) say what a transfer takes: a
stream's and an upload's airtime, a device's compute time and the energies.
"""

from __future__ import annotations

from typing import Sequence

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
    (``Tdma``) this is its FIFO, event for event. ``netsim.block_queue`` computes the same times
    without the clock."""

    def __init__(self, env, prbs: int):
        super().__init__(env, capacity=prbs)
        self.free = prbs

    def request(self, prbs: int = 1) -> Grant:
        return Grant(self, prbs)

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
    """One transfer at a time, in the order they asked (FIFO): one resource block, every grant."""

    def __init__(self, env):
        super().__init__(env, 1)

    def transmit(self, airtime: float):
        """The transfer's process: wait for the medium, hold it ``airtime``, give it back; its
        value is the time it started."""
        return self._env.process(_hold(self, airtime))


def _hold(medium: Tdma, airtime: float):
    grant = Grant(medium)
    yield grant
    start = medium._env.now
    yield medium._env.timeout(airtime)
    yield Release(medium, grant)
    return start


def _alone(env, airtime: float):
    start = env.now
    yield env.timeout(airtime)
    return start


class Unshared:
    """Every transfer its own medium: it starts at once and lasts its airtime."""

    def __init__(self, env):
        self._env = env

    def transmit(self, airtime: float):
        return self._env.process(_alone(self._env, airtime))


ACCESS = {"tdma": Tdma, "unshared": Unshared}


class NormalizedLinks:
    """The links of a normalized system (``netsim.system.NetworkSystem``, the journal's V-D):
    ``t_dl`` per model down, ``rho t_dl`` up, every device receives and uploads, no energy."""

    uplink_access = "tdma"

    def __init__(self, system, model_bits: float):
        self.system = system
        self.model_bits = model_bits

    def receives(self, device: int) -> bool:
        return True

    def can_upload(self, device: int, uploading: bool = False) -> bool:
        return True

    def stream_s(self, devices: Sequence[int], bits: float, start_s: float | None = None) -> float:
        return self.system.downlink_time(bits, self.model_bits)

    def uplink_s(self, device: int, bits: float) -> float:
        return self.system.uplink_time(bits, self.model_bits)

    def compute_s(self, device: int, draw: float, scale: float) -> float:
        return float(draw) * scale

    def compute_j(self, device: int, scale: float) -> float:
        return 0.0

    def transmit_j(self, device: int, airtime_s: float) -> float:
        return 0.0

    def receive_j(self, device: int, listening_s: float) -> float:
        return 0.0
