"""Duplexing: how downlink and uplink share the spectrum.

- ``fdd``: two carriers, one each way, both on the air all the time (each link has its whole
  bandwidth, all the time).
- ``tdd``: one carrier, shared in time by a slot pattern repeated every few slots (e.g.
  ``DDDSU``: three downlink slots, one special slot, one uplink slot; at 30 kHz subcarrier
  spacing a 2.5 ms period). The special slot splits its 14 OFDM symbols into downlink, guard
  and uplink (e.g. ``10:2:2``). Over a model's transfer (many periods) a direction gets the
  fraction of the carrier's symbols that are its own: its **share** of the carrier's rate.

The pattern is configured by the network (TS 38.331 ``TDD-UL-DL-ConfigCommon``; TS 38.213
clause 11.1); ``DDDSU`` with ``10:2:2`` is a common choice at 3.5 GHz, not a value of the
standards (the presets' convention).
"""

from __future__ import annotations

DUPLEX_MODES = ("tdd", "fdd")
SYMBOLS_PER_SLOT = 14  # normal cyclic prefix, TS 38.211 Table 4.3.2-1


def special_symbols(text: str) -> tuple[int, int, int]:
    """``"D:G:U"`` symbols of the special slot; ValueError unless three integers >= 0 summing to 14."""
    try:
        parts = tuple(int(x) for x in str(text).split(":"))
    except ValueError:
        parts = ()
    if len(parts) != 3 or min(parts) < 0 or sum(parts) != SYMBOLS_PER_SLOT:
        raise ValueError(f"TDD special slot must be downlink:guard:uplink symbols summing to {SYMBOLS_PER_SLOT}, got {text!r}")
    return parts


def tdd_shares(pattern: str, special: str) -> tuple[float, float]:
    """(downlink, uplink) fraction of the carrier's symbols: ``(n_D + s_D / 14) / n`` and
    ``(n_U + s_U / 14) / n`` for a pattern of ``n`` slots with ``n_D`` D, ``n_U`` U and special
    slots of ``s_D`` downlink and ``s_U`` uplink symbols."""
    pattern = str(pattern).upper()
    if not pattern or set(pattern) - set("DSU"):
        raise ValueError(f"TDD pattern must be a string of D, S and U slots, got {pattern!r}")
    s_dl, _, s_ul = special_symbols(special)
    slots = len(pattern)
    dl = (pattern.count("D") + pattern.count("S") * s_dl / SYMBOLS_PER_SLOT) / slots
    ul = (pattern.count("U") + pattern.count("S") * s_ul / SYMBOLS_PER_SLOT) / slots
    if dl == 0 or ul == 0:
        raise ValueError(f"TDD pattern {pattern!r} with special slot {special!r} leaves a direction no symbols")
    return dl, ul
