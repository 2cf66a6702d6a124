"""The time-correlated fading of ``netsim.dynamics.doppler`` against Clarke's ``J0(2 pi f_D tau)``
at 3 and 120 km/h (3.5 GHz), up to twice the first zero: the figure of docs/physical-layer.md
and, on stdout, the largest gap up to the first zero at each speed.

Usage: python3 -m benchmarks.doppler_autocorrelation [--links 2000] [--seed 7] [--out docs/img/doppler_autocorrelation.png]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.special import j0

from netsim.dynamics.doppler import KMH, SumOfSinusoids, autocorrelation, doppler_hz, first_zero_s

SPEEDS_KMH = (3.0, 120.0)
CARRIER_HZ = 3.5e9
STARTS_S = (0.0, 3.1, 17.3)


def measure(links: int, seed: int) -> dict:
    """Per speed: (lags, measured, J0) from 0 to twice the first zero, and the largest gap up to it."""
    rng = np.random.default_rng(seed)
    found = {}
    for speed in SPEEDS_KMH:
        doppler = float(doppler_hz(speed * KMH, CARRIER_HZ))
        process = SumOfSinusoids.draw(rng, np.full(links, doppler))
        lags = np.linspace(0.0, 2.0 * first_zero_s(doppler), 49)
        measured = autocorrelation(process, lags, STARTS_S)
        clarke = j0(2.0 * np.pi * doppler * lags)
        upto = lags <= first_zero_s(doppler) + 1e-15
        found[speed] = (lags, measured, clarke, float(np.max(np.abs(measured - clarke)[upto])))
    return found


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--links", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default="docs/img/doppler_autocorrelation.png")
    args = parser.parse_args(argv)
    found = measure(args.links, args.seed)
    print(f"`python3 -m benchmarks.doppler_autocorrelation --links {args.links} --seed {args.seed}`\n")
    print("| speed | f_D (Hz) | first zero of J0 (ms) | largest gap to J0 up to it |\n|---|---|---|---|")
    for speed, (lags, _, _, gap) in found.items():
        doppler = float(doppler_hz(speed * KMH, CARRIER_HZ))
        print(f"| {speed:g} km/h | {doppler:.1f} | {1e3 * first_zero_s(doppler):.2f} | {gap:.3f} |")
    figure(found, args.out)


def figure(found: dict, out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from figures.save import save_figure

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, (speed, (lags, measured, clarke, gap)) in zip(axes, found.items()):
        ax.plot(1e3 * lags, clarke, color="black", label=r"$J_0(2\pi f_D \tau)$")
        ax.plot(1e3 * lags, measured, "o", markersize=3, color="#d62728", label=f"simulated (max gap to 1st zero {gap:.3f})")
        ax.axvline(1e3 * lags[len(lags) // 2], color="grey", linestyle=":", linewidth=1)
        ax.set_title(f"{speed:g} km/h at 3.5 GHz")
        ax.set_xlabel("lag (ms)")
        ax.set_ylabel("autocorrelation")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Sum-of-sinusoids fading (Zheng-Xiao, 8 sinusoids per link) against Clarke's model")
    fig.tight_layout()
    save_figure(fig, out)


if __name__ == "__main__":
    main()
