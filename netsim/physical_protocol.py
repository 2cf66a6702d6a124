"""What a physical round reads of its network and of the round's channel draw, declared below
the cell so that the round's code (``netsim.radio.physical_links``, ``netsim.transport.physical_round``,
``netsim.transport.physical_timeline``) annotates against it without importing ``netsim.radio.physical``.

``netsim.radio.physical.PhysicalNetwork`` and ``netsim.radio.physical.RoundChannel`` satisfy these
(structural typing, PEP 544): the cell imports its rounds, the rounds never import the cell,
so netsim's import graph has no cycle (``tests/test_layers.py``). Time in seconds, energy in
joules, rates in bit/s.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence

import numpy as np


class RoundChannelProtocol(Protocol):
    """One round's block-fading draw (``PhysicalNetwork.draw_round``): per-device rates,
    outages, grants and transmit energy."""

    network: PhysicalNetworkProtocol
    downlink_bps: np.ndarray
    uplink_bps: np.ndarray
    downlink_outage: np.ndarray
    uplink_outage: np.ndarray
    allocated_prbs: np.ndarray
    harq_downlink: bool  # the streams go through the link layer (nr-harq): stream_airtime_s draws them

    def stream_airtime_s(self, devices: Sequence[int], bits: float) -> float: ...

    def uplink_share_bps(self, devices, sharing: int): ...

    def uplink_share_outage(self, device: int, sharing: int) -> bool: ...

    def transmit_j(self, airtime_s, devices): ...


class PhysicalNetworkProtocol(Protocol):
    """A physical system bound to a run's layout: its configuration (``system``, a
    ``netsim.radio.physical.PhysicalSystem``), the round's timing, compute and energy."""

    system: Any
    samples_per_update: np.ndarray
    dynamics: Any
    mode: str
    deadline: float | None
    compute: Any  # a netsim.normalized.distributions.ShiftedExponential
    uplink_queue: np.ndarray
    idle_power_w: float
    off_slot_w: tuple[float, float]  # (reception, upload) power in a transfer's off-direction slots (ue_energy slots)
    grant_wait_w: float  # power while waiting for a grant with data pending (ue_energy slots; 0: waiting)

    def draw_round(self, rng: np.random.Generator, now_s: float = 0.0) -> RoundChannelProtocol: ...

    def compute_s(self, device: int, extra_s: float, scale: float = 1.0) -> float: ...

    def compute_j(self, device: int, scale: float = 1.0) -> float: ...

    def receive_j(self, listening_s): ...

    def share_power_w(self, devices, sharing: int) -> np.ndarray: ...

    def upload_j(self, power_seconds): ...

    def upload_off_j(self, airtime_s): ...
