"""The cell presets' link layer before issue 58's defaults (``scenarios.definitions.cells``): Shannon
with the CQI cap and floor, TDMA grants by the ``headroom`` policy, ``airtime`` energy. A test whose
numbers are hand-computed on that link layer pins it (``--radio`` arguments: ``SHANNON_ARGS``);
on an FDMA or PF uplink, which have no TDMA grants, ``SHANNON_SHARED`` (``ul_allocation`` given
there is refused: it would have no effect)."""

SHANNON_SHARED = {"link_abstraction": "shannon", "ue_energy": "airtime"}
SHANNON = {**SHANNON_SHARED, "ul_allocation": "headroom"}
SHANNON_ARGS = [arg for key, value in SHANNON.items() for arg in ("--radio", f"{key}={value}")]
SHANNON_SHARED_ARGS = [arg for key, value in SHANNON_SHARED.items() for arg in ("--radio", f"{key}={value}")]
