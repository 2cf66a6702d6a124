"""How the benchmarks quote a figure over seeds: ``mean +- sample std [min-max]``."""

from __future__ import annotations

import numpy as np


def spread(values, digits: int, scale: float = 1.0, unit: str = "") -> str:
    """``mean +- sample std [min-max]`` of ``values`` times ``scale``, over the seeds where it is
    defined (a seed with no value, None or NaN, is counted apart: ``(k of n seeds)``; none: ``none``)."""
    every = scale * np.asarray(values, dtype=float)
    v = every[np.isfinite(every)]
    if v.size == 0:
        return "none"
    std = v.std(ddof=1) if v.size > 1 else 0.0
    note = f" ({v.size} of {every.size} seeds)" if v.size < every.size else ""
    return f"{v.mean():.{digits}f}{unit} +- {std:.{digits}f} [{v.min():.{digits}f}-{v.max():.{digits}f}]{note}"
