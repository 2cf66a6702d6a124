"""One line of the per-event trace."""

from __future__ import annotations

from typing import NamedTuple

TRACE_FIELDS = ("round", "kind", "entity", "start", "end", "bits")


class TraceEvent(NamedTuple):
    """``kind`` is downlink (entity = stream index), compute, uplink or dropped (entity = device)."""

    round: int
    kind: str
    entity: int
    start: float
    end: float
    bits: float
