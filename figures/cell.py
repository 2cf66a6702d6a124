"""A cell drawn: every device on the map coloured by its mean downlink SNR (in the 19-site
network with the hexagons of the centre site and its first ring and the centre site's sector
boundaries), and the per-round SNR and rate histograms (fading included) with the broadcast
rate of the weakest member."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from figures.save import save_figure


def draw_sites(ax, outlines: dict) -> None:
    """The site outlines ``scenarios.reports.cell`` hands over (``netsim.radio.multicell.site_outlines``):
    the centre site's hexagon (solid) and its first ring's (dotted), the centre site's sector
    boundaries (dashed), and the neighbour sites."""
    for k, corners in enumerate(outlines["hexagons"]):
        ax.plot(corners[:, 0], corners[:, 1], color="grey", linewidth=1.0 if k == 0 else 0.6, linestyle="-" if k == 0 else ":")
    for (x0, y0), (x1, y1) in outlines["sector_edges"]:
        ax.plot([x0, x1], [y0, y1], color="grey", linewidth=0.8, linestyle="--")
    sites = outlines["neighbour_sites"]
    ax.scatter(sites[:, 0], sites[:, 1], marker="^", color="grey", s=40, label="neighbour sites")


def plot_cell(draws: dict, out_file: str | Path, title: str | None = None) -> Path:
    """``draws`` as ``scenarios.reports.cell.describe_cell`` gives them; PNG or PDF, written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    layout = draws["layout"]
    fig, (ax_map, ax_snr, ax_rate) = plt.subplots(1, 3, figsize=(16, 4.8))
    isd = draws.get("inter_site_distance_m")
    if isd is None:  # the isolated cell: its annulus
        for radius in (draws["inner_radius_m"], draws["outer_radius_m"]):
            ax_map.add_patch(plt.Circle((0, 0), radius, fill=False, linestyle="--", linewidth=0.8, color="grey"))
    else:
        draw_sites(ax_map, draws["site_outlines"])
    points = ax_map.scatter(layout.x_m, layout.y_m, c=draws["mean_downlink_snr_db"], cmap="viridis", s=36,
                            marker="o", edgecolors="k", linewidths=0.4)
    nlos = ~layout.los
    ax_map.scatter(layout.x_m[nlos], layout.y_m[nlos], s=80, facecolors="none", edgecolors="red", linewidths=0.8, label="NLOS")
    ax_map.plot(0, 0, marker="^", color="k", markersize=10, label="base station")
    fig.colorbar(points, ax=ax_map, label="mean downlink SNR (dB)")
    reach = np.abs(np.concatenate([layout.x_m, layout.y_m])).max(initial=0.0)
    limit = 1.05 * max(draws["outer_radius_m"] if isd is None else isd / np.sqrt(3.0), reach)  # every device shows
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
    ax_snr.legend(fontsize=8, loc="upper left")  # a fixed corner: "best" scans every bar of the histograms

    top = max(draws["downlink_bps"].max(), draws["uplink_bps"].max()) / 1e6
    rate_bins = np.linspace(0, top * 1.01 if top > 0 else 1.0, 60)
    ax_rate.hist(draws["downlink_bps"].ravel() / 1e6, bins=rate_bins, alpha=0.6, density=True, label="downlink unicast")
    ax_rate.hist(draws["uplink_bps"].ravel() / 1e6, bins=rate_bins, alpha=0.6, density=True, label="uplink (its grant)")
    if draws["broadcast_bps"].size:
        ax_rate.hist(draws["broadcast_bps"] / 1e6, bins=rate_bins, alpha=0.6, density=True, label="broadcast (weakest member)")
    ax_rate.set_xlabel("rate per round (Mbit/s)")
    ax_rate.legend(fontsize=8, loc="upper right")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return save_figure(fig, out_file, dpi=120)
