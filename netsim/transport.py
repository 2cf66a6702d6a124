"""Long-lived transport on the clock: a link's access scheme as a SimPy resource, living for the
whole run, each transfer an event, and the links that say what each transfer takes.

Access schemes, in the manner of SimPy's ``BaseResource`` subclasses (``_do_put`` grants a
transfer the medium, ``_do_get`` gives it back):

- ``Tdma``: one transfer at a time, first come first served (the shared uplink of the rounds,
  ``netsim.device_round``; the downlink sends its streams one after another the same way).
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
    """A request for the medium; it fires when the transfer may start."""


class Release(Get):
    """A transfer gives the medium back (``Grant`` it held)."""

    def __init__(self, resource, grant: Grant):
        self.grant = grant
        super().__init__(resource)


class Tdma(BaseResource):
    """One transfer at a time, in the order they asked (FIFO)."""

    def __init__(self, env):
        super().__init__(env, capacity=1)
        self.holder: Grant | None = None

    def _do_put(self, event: Grant) -> bool:
        """Grant the head of the queue when the medium is free; False keeps the rest waiting."""
        if self.holder is not None:
            return False
        self.holder = event
        event.succeed()
        return True

    def _do_get(self, event: Release) -> bool:
        if self.holder is event.grant:
            self.holder = None
        event.succeed()
        return True

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

    def stream_s(self, devices: Sequence[int], bits: float) -> float:
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
