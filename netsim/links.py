"""One round's durations, reception and energies, from the system: the one place the engine
asks how long a stream, a computation or an upload takes, who can receive and upload, and what
it costs in joules.

``round_links(system, model_bits, channel_rng)`` gives ``NormalizedLinks`` for the journal's
normalized system (time in ``T_dl``, every device receives, no energy) and ``PhysicalLinks``
for a ``PhysicalNetwork`` (one block-fading draw per round; time in seconds, energy in joules).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from netsim import energy
from netsim.physical import PhysicalNetwork, RoundChannel
from netsim.system import NetworkSystem

DOWNLINK_OUTAGE = "downlink-outage"
UPLINK_OUTAGE = "uplink-outage"
DEADLINE = "deadline"


class NormalizedLinks:
    """Journal V-D: ``T_dl b / model_bits`` down, ``rho`` times that up (TDMA), compute draw x scale."""

    uplink_access = "tdma"
    physical = False

    def __init__(self, system: NetworkSystem, model_bits: float):
        self.system = system
        self.model_bits = model_bits

    def receives(self, device: int) -> bool:
        return True

    def can_upload(self, device: int) -> bool:
        return True

    def stream_s(self, devices: Sequence[int], bits: float) -> float:
        return self.system.downlink_time(bits, self.model_bits)

    def compute_s(self, device: int, draw: float, scale: float) -> float:
        return float(draw) * scale

    def uplink_s(self, device: int, bits: float) -> float:
        return self.system.uplink_time(bits, self.model_bits)

    def compute_j(self, device: int, scale: float) -> float:
        return 0.0

    def transmit_j(self, device: int, airtime_s: float) -> float:
        return 0.0

    def receive_j(self, device: int, listening_s: float) -> float:
        return 0.0


class PhysicalLinks:
    """A physical network's round: rates and outages of this round's fading draw."""

    physical = True

    def __init__(self, network: PhysicalNetwork, channel: RoundChannel):
        self.network = network
        self.channel = channel
        self.uplink_access = network.system.uplink_access
        self._dl_out = channel.downlink_outage
        self._ul_out = channel.uplink_outage
        self._ul_bps = channel.uplink_bps

    def receives(self, device: int) -> bool:
        return not self._dl_out[device]

    def can_upload(self, device: int) -> bool:
        return not self._ul_out[device]

    def stream_s(self, devices: Sequence[int], bits: float) -> float:
        """Payload over the rate of the weakest listener not in outage."""
        return self.channel.stream_airtime_s(devices, bits)

    def compute_s(self, device: int, draw: float, scale: float) -> float:
        return self.network.compute_s(device, float(draw), scale)

    def uplink_s(self, device: int, bits: float) -> float:
        """TDMA: alone on the whole band at the device's own rate."""
        return bits / float(self._ul_bps[device]) if bits > 0 else 0.0

    def uplink_share_bps(self, devices: np.ndarray, sharing: int) -> np.ndarray:
        """FDMA: the devices' rates on ``1/sharing`` of the band each."""
        return self.channel.uplink_share_bps(devices, sharing)

    def compute_j(self, device: int, scale: float) -> float:
        return self.network.compute_j(device, scale)

    def transmit_j(self, device: int, airtime_s: float) -> float:
        return energy.transmit_energy_j(self.network.system.uplink.tx_power_w, airtime_s)

    def receive_j(self, device: int, listening_s: float) -> float:
        return energy.receive_energy_j(self.network.system.receive_power_w, listening_s)


def round_links(system, model_bits: float, channel_rng: np.random.Generator | None):
    """This round's links on ``system``; a physical network draws its fading from ``channel_rng``."""
    if isinstance(system, PhysicalNetwork):
        if channel_rng is None:
            raise ValueError("a physical network needs a channel generator (its own child of the network seed)")
        return PhysicalLinks(system, system.draw_round(channel_rng))
    return NormalizedLinks(system, model_bits)
