"""A cell drawn: devices on the map coloured by their mean downlink SNR, and the per-round SNR
and rate histograms (fading included) with the broadcast rate of the weakest member."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from figures.save import save_figure


def plot_cell(draws: dict, out_file: str | Path, title: str | None = None) -> Path:
    """``draws`` as ``scenarios.reports.cell.describe_cell`` gives them; PNG or PDF, written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    layout = draws["layout"]
    fig, (ax_map, ax_snr, ax_rate) = plt.subplots(1, 3, figsize=(16, 4.8))
    for radius in (draws["inner_radius_m"], draws["outer_radius_m"]):
        ax_map.add_patch(plt.Circle((0, 0), radius, fill=False, linestyle="--", linewidth=0.8, color="grey"))
    points = ax_map.scatter(layout.x_m, layout.y_m, c=draws["mean_downlink_snr_db"], cmap="viridis", s=36,
                            marker="o", edgecolors="k", linewidths=0.4)
    nlos = ~layout.los
    ax_map.scatter(layout.x_m[nlos], layout.y_m[nlos], s=80, facecolors="none", edgecolors="red", linewidths=0.8, label="NLOS")
    ax_map.plot(0, 0, marker="^", color="k", markersize=10, label="base station")
    fig.colorbar(points, ax=ax_map, label="mean downlink SNR (dB)")
    limit = draws["outer_radius_m"] * 1.05
    ax_map.set_xlim(-limit, limit)
    ax_map.set_ylim(-limit, limit)
    ax_map.set_aspect("equal")
    ax_map.set_xlabel("x (m)")
    ax_map.set_ylabel("y (m)")
    ax_map.legend(fontsize=8, loc="upper right")

    bins = np.linspace(min(draws["downlink_snr_db"].min(), draws["uplink_snr_db"].min()),
                       max(draws["downlink_snr_db"].max(), draws["uplink_snr_db"].max()), 60)
    ax_snr.hist(draws["downlink_snr_db"].ravel(), bins=bins, alpha=0.6, density=True, label="downlink")
    ax_snr.hist(draws["uplink_snr_db"].ravel(), bins=bins, alpha=0.6, density=True, label="uplink")
    if draws["outage_snr_db"] is not None:
        ax_snr.axvline(draws["outage_snr_db"], color="red", linestyle="--", linewidth=1, label="outage threshold")
    ax_snr.set_xlabel("SNR per device and round (dB)")
    ax_snr.set_ylabel("density")
    ax_snr.legend(fontsize=8)

    top = max(draws["downlink_bps"].max(), draws["uplink_bps"].max()) / 1e6
    rate_bins = np.linspace(0, top * 1.01 if top > 0 else 1.0, 60)
    ax_rate.hist(draws["downlink_bps"].ravel() / 1e6, bins=rate_bins, alpha=0.6, density=True, label="downlink unicast")
    ax_rate.hist(draws["uplink_bps"].ravel() / 1e6, bins=rate_bins, alpha=0.6, density=True, label="uplink (whole band)")
    if draws["broadcast_bps"].size:
        ax_rate.hist(draws["broadcast_bps"] / 1e6, bins=rate_bins, alpha=0.6, density=True, label="broadcast (weakest member)")
    ax_rate.set_xlabel("rate per round (Mbit/s)")
    ax_rate.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return save_figure(fig, out_file, dpi=120)
