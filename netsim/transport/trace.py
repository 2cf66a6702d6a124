"""One line of the per-event trace."""

from __future__ import annotations

from typing import NamedTuple



class TraceEvent(NamedTuple):
    """``kind``: downlink (entity = stream index); compute, uplink, dropped, and on a physical
    network receive (one per device and stream it got), with entity = device.

    ``energy_j`` is the device's energy for the event (compute, uplink transmit, receive; an
    FDMA upload cut by the deadline is a dropped event spanning its airtime). ``reason`` says
    why a device was dropped: deadline, downlink-outage (it missed its model: no compute, no
    upload) or uplink-outage (it computed but could not upload).
    """

    round: int
    kind: str
    entity: int
    start: float
    end: float
    bits: float
    energy_j: float = 0.0
    reason: str = ""
