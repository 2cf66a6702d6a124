"""One round of a physical network: every duration, reception and energy the physical round
asks about, from this round's block-fading draw (time in seconds, energy in joules).

The normalized systems answer the same questions with ``round_durations``
(``netsim.durations``); a physical round also has outages, an FDMA option and energy.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from netsim import energy
from netsim.lifecycle import DEADLINE, DOWNLINK_OUTAGE, UPLINK_OUTAGE  # noqa: F401 (the drop reasons, named in one place)
from netsim.physical_protocol import PhysicalNetworkProtocol, RoundChannelProtocol
from netsim.transport import ResourceBlocks


class PhysicalLinks:
    """A physical network's round: rates and outages of this round's fading draw (the
    ``netsim.transport.Links`` of a cell). Its downlink sends one stream at a time (TDMA); its
    uplink is the system's (``tdma``: each receiver's resource blocks; ``fdma``)."""

    downlink_access = "tdma"
    records_energy = True

    def __init__(self, network: PhysicalNetworkProtocol, channel: RoundChannelProtocol):
        self.network = network
        self.channel = channel
        self.uplink_access = network.system.uplink_access
        self._dl_out = channel.downlink_outage
        self._ul_out = channel.uplink_outage
        self._ul_bps = channel.uplink_bps
        self.uplink_queue = channel.network.uplink_queue  # each device's uplink queue (its sector's receiver, or the site's)
        self.fdma_sharing: dict[int, int] = {}  # FDMA: per queue, how many share its band at most this round (set by the round)

    @classmethod
    def draw(cls, network: PhysicalNetworkProtocol, channel_rng: np.random.Generator | None, now_s: float = 0.0) -> "PhysicalLinks":
        """The round starting at ``now_s`` (a moving cell's channel is that instant's)."""
        if channel_rng is None:
            raise ValueError("a physical network needs a channel generator (its own child of the network seed)")
        channel = network.draw_round(channel_rng, now_s)
        return cls(channel.network, channel)

    def receives(self, device: int) -> bool:
        return not self._dl_out[device]

    def can_upload(self, device: int, uploading: bool = False) -> bool:
        """TDMA, or nothing to send: not in outage alone on the band (its grant); FDMA with
        something to send: not in outage on the narrowest share its queue can give it this round
        (its band split among the ``fdma_sharing`` of its queue, at most one block each)."""
        sharing = self.fdma_sharing.get(int(self.uplink_queue[device]), 0) if uploading and self.uplink_access == "fdma" else 0
        if sharing:
            return not self.channel.uplink_share_outage(device, min(sharing, self.band_prbs))
        return not self._ul_out[device]

    def stream_s(self, devices: Sequence[int], bits: float) -> float:
        """Payload over the rate of the weakest listener not in outage (0: nobody can receive)."""
        return self.channel.stream_airtime_s(devices, bits)

    def compute_s(self, device: int, draw: float, scale: float) -> float:
        return self.network.compute_s(device, float(draw), scale)

    def uplink_s(self, device: int, bits: float) -> float:
        """TDMA: on its grant (``grant_prbs``) at the device's own rate."""
        return bits / float(self._ul_bps[device]) if bits > 0 else 0.0

    def grant_prbs(self, device: int) -> int:
        """TDMA: the resource blocks its upload holds (``RoundChannel.allocated_prbs``)."""
        return int(self.channel.allocated_prbs[device])

    def uplink_share_bps(self, devices: np.ndarray, sharing: int) -> np.ndarray:
        """FDMA: the devices' rates on ``1/sharing`` of the band each."""
        return self.channel.uplink_share_bps(devices, sharing)

    def uplink_share_w(self, devices: np.ndarray, sharing: int) -> np.ndarray:
        """FDMA: the devices' transmit powers on ``1/sharing`` of the band each (W)."""
        return self.network.share_power_w(devices, sharing)

    def downlink_medium(self, env) -> ResourceBlocks:
        """The cell's downlink: one stream at a time (one block, every stream's)."""
        return ResourceBlocks(env, 1)

    def uplink_medium(self, env) -> ResourceBlocks:
        """An uplink receiver's resource blocks (TDMA: each upload holds its grant's, ``grant_prbs``)."""
        return ResourceBlocks(env, self.band_prbs)

    @property
    def band_prbs(self) -> int:
        """Each receiver's resource blocks: TDMA, the most the grants held at once sum to; FDMA,
        the most devices that share the band at once (one block each at least)."""
        return self.network.system.uplink_prbs

    def upload_j(self, power_seconds: float) -> float:
        """An FDMA upload that drew ``power_seconds`` (W s): charged for its uplink symbols only."""
        return float(self.network.upload_j(power_seconds))

    def compute_j(self, device: int, scale: float) -> float:
        return self.network.compute_j(device, scale)

    def transmit_j(self, device: int, airtime_s: float) -> float:
        """An upload of ``airtime_s`` wall-clock seconds: charged for its uplink symbols only."""
        return float(self.channel.transmit_j(airtime_s, device))

    def receive_j(self, device: int, listening_s: float) -> float:
        return self.network.receive_j(listening_s)
