"""Small-scale block fading: the power gain ``|h|^2`` of a link in one round, per subband.

- ``ricean``: a LOS link is Ricean with its device's K-factor (TR 38.901 Table 7.5-6, drawn once
  per layout by ``netsim.radio.cell``), an NLOS link Rayleigh (K = 0);
- ``rayleigh``: every link Rayleigh, LOS included (the flat model of the wireless-FL literature);
- ``none``: ``|h|^2 = 1``.

``h = sqrt(K / (K + 1)) + sqrt(1 / (K + 1)) w`` with ``w ~ CN(0, 1)``, so ``E|h|^2 = 1`` for
every K (the large-scale gain carries the mean). The LOS phase does not change ``|h|``.
"""

from __future__ import annotations

import numpy as np

FADING_MODELS = ("ricean", "rayleigh", "none")


def power_gains(rng: np.random.Generator, fading: str, k_factor: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``|h|^2`` of ``shape``, whose last two axes are (devices, subbands); ``k_factor`` (linear,
    one per device) is used by ``ricean``.

    Two standard normals per gain (real and imaginary part of ``w``) are drawn for ``ricean``
    and ``rayleigh`` alike, so the two models see the same random numbers.
    """
    if fading == "none":
        return np.ones(shape)
    if fading not in FADING_MODELS:
        raise ValueError(f"unknown fading model {fading!r}; choose from {', '.join(FADING_MODELS)}")
    w = rng.standard_normal((2,) + tuple(shape))
    k = np.zeros(shape[-2]) if fading == "rayleigh" else np.asarray(k_factor, dtype=float)
    k = k[:, None]  # one K per device, the same in every subband
    los = np.sqrt(k / (k + 1.0))
    scatter = np.sqrt(0.5 / (k + 1.0))
    return (los + scatter * w[0]) ** 2 + (scatter * w[1]) ** 2

