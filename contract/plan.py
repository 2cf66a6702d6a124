"""What a learner asks of the network in one round (``RoundPlan``, its ``Stream`` s) and what
the network tells it back (``RoundOutcome``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class Stream:
    """One downlink transmission: who listens and how many bits.

    Broadcast (every device), multicast (a group) and unicast (one device) are all streams.
    """

    devices: tuple[int, ...]
    bits: float


@dataclass(frozen=True)
class RoundPlan:
    """A round's traffic: downlink streams (sent one after another), then per-device compute
    and uplink payloads.

    ``compute_scale`` multiplies a device's drawn compute time (parallel user-centric FL trains
    ``m_t`` models per device, so its compute is ``m_t`` times longer); absent means 1.
    """

    streams: tuple[Stream, ...]
    uplink_bits: Mapping[int, float]
    participants: tuple[int, ...]
    compute_scale: Mapping[int, float] = field(default_factory=dict)

    @property
    def downlink_bits(self) -> float:
        return float(sum(stream.bits for stream in self.streams))

    @property
    def total_uplink_bits(self) -> float:
        return float(sum(self.uplink_bits.get(device, 0.0) for device in self.participants))

    def to_dict(self) -> dict:
        """JSON form, kept in result folders so a run can be re-timed on another network."""
        return {
            "streams": [{"devices": list(s.devices), "bits": s.bits} for s in self.streams],
            "uplink_bits": {str(d): b for d, b in self.uplink_bits.items()},
            "participants": list(self.participants),
            "compute_scale": {str(d): c for d, c in self.compute_scale.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RoundPlan":
        return cls(
            streams=tuple(Stream(tuple(s["devices"]), float(s["bits"])) for s in data["streams"]),
            uplink_bits={int(d): float(b) for d, b in data["uplink_bits"].items()},
            participants=tuple(data["participants"]),
            compute_scale={int(d): float(c) for d, c in data.get("compute_scale", {}).items()},
        )


# why a participant's update did not arrive (``RoundOutcome.dropped``): the network's
# (``netsim.transport.physical_round``, ``netsim.transport.timeline``), a cell in time's (``netsim.dynamics.rounds``:
# absent at the round's start, or a battery that ran out in it) and an orchestrator's (``stale``:
# an update older than it takes); the result tables count each (``dropped_<reason>``)
DROP_REASONS = ("downlink-outage", "uplink-outage", "deadline", "unavailable", "battery", "out-of-coverage", "stale")


@dataclass(frozen=True)
class RoundOutcome:
    """What happened to each participant in one round.

    ``received``: participants that hold their model for the round (their streams reached
    them, or they needed none); ``computed``: those that finished their local update;
    ``arrived``: those whose upload arrived; ``dropped``: device -> why it did not arrive
    (one of ``DROP_REASONS``).
    """

    received: tuple[int, ...]
    computed: tuple[int, ...]
    arrived: tuple[int, ...]
    dropped: Mapping[int, str] = field(default_factory=dict)

    @property
    def participants(self) -> tuple[int, ...]:
        """Every participant of the round, in device order: it arrived, or it was dropped."""
        return tuple(sorted({*self.arrived, *self.dropped}))

    @property
    def missed(self) -> tuple[int, ...]:
        """The participants that did not receive their model (absent at the round's start, or a
        downlink outage), in device order: the learner scores them on what they hold."""
        received = set(self.received)
        return tuple(d for d in self.participants if d not in received)
