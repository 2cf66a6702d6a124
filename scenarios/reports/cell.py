"""What a cell preset gives for one seed: its layout (the one a run of that seed uses), each
device's large-scale channel, and SNR, rate and outage statistics over fading rounds."""

from __future__ import annotations

import numpy as np

from netsim.radio import pathloss, link_budget
from netsim.radio.multicell import site_outlines
from netsim.radio.physical import channel_seeds
from scenarios.definitions.cells import CELLS, cell_parameters, physical_system
from scenarios.errors import UsageError
from scenarios.definitions.seeds import seed_streams
from scenarios.definitions.settings import MAX_CELL_DRAWS, MAX_DEVICES, MAX_ROUNDS, Setting

MAX_CALIBRATION_DROP = 20_000  # devices x 19 sites x 7 images held in memory at once


def cell_draws(name: str, seed: int, devices: int, overrides: dict | None, rounds: int):
    """(parameters, system, layout, the rounds' channels: ``netsim.radio.physical.RoundChannel``)."""
    Setting(int, low=1, high=MAX_DEVICES).check("--devices", devices)
    Setting(int, low=1, high=MAX_ROUNDS).check("--rounds", rounds)
    if devices * rounds > MAX_CELL_DRAWS:
        raise UsageError(f"--devices x --rounds must be at most {MAX_CELL_DRAWS:,} (channel draws held in memory), got {devices * rounds:,}")
    parameters = cell_parameters(name, overrides)
    system = physical_system(parameters)
    layout_seq, fading_seq, _ = channel_seeds(seed_streams(seed).network)
    try:
        layout = system.cell.place(devices, np.random.default_rng(layout_seq))
    except ValueError as error:
        raise UsageError(str(error)) from None
    network = system.network(layout, np.ones(devices))
    rng = np.random.default_rng(fading_seq)
    channels = [network.draw_round(rng) for _ in range(rounds)]
    return parameters, system, layout, channels


def _network_columns(system, layout, uplink_interference_dbm, d: int) -> dict:
    """In the 19-site network: the device's serving sector, indoor state, height, the sector's
    antenna gain towards it and the interference it sees (dBm) on each link."""
    if layout.downlink_interference_db is None:
        return {}
    return {"sector": int(layout.sector[d]), "indoor": bool(layout.indoor[d]), "height_m": float(layout.height_m[d]),
            "bs_gain_db": float(layout.bs_gain_db[d]),
            "downlink_interference_dbm": float(system.downlink.tx_power_dbm + layout.downlink_interference_db[d]),
            "uplink_interference_dbm": float(uplink_interference_dbm[d])}


def calibration_drop(name: str, seed: int, count: int, overrides: dict | None) -> dict:
    """TR 38.901 Sec. 7.8.1's large-scale calibration on a preset's 19-site layout: ``count``
    devices dropped over the whole layout, each one's coupling loss to its serving sector and
    its geometry (``netsim.radio.multicell.Drop``), with their 5th, 50th and 95th percentiles."""
    from netsim.radio import multicell

    Setting(int, low=1, high=MAX_CALIBRATION_DROP).check("--drop", count)
    parameters = cell_parameters(name, overrides)
    system = physical_system(parameters)
    if not system.cell.interference:
        raise UsageError("--drop draws the 19-site layout: leave interference on")
    layout_seq, _, _ = channel_seeds(seed_streams(seed).network)
    dropped = multicell.drop(system.cell, count, np.random.default_rng(layout_seq))
    coupling, geometry = dropped.coupling_loss_db, dropped.geometry_db
    percentiles = {f"p{q}": {"coupling_loss_db": float(np.percentile(coupling, q)), "geometry_db": float(np.percentile(geometry, q))}
                   for q in (5, 50, 95)}
    return {"preset": name, "seed": seed, "drop": count, "carrier_hz": system.cell.carrier_hz,
            "parameters": {k: (list(v) if isinstance(v, tuple) else v) for k, v in sorted(parameters.items())},
            "percentiles": percentiles, "coupling_loss_db": coupling.tolist(), "geometry_db": geometry.tolist()}


UPLINK_RATES_NR_HARQ = ("nr-harq: each round's expected upload rate at the grant's EESM MCS (the outer loop at its "
                        "start, offset 0), HARQ with chase combining, up to 4 transmissions, on the uplink's share")
DOWNLINK_RATES_NR_HARQ = ("nr-harq: each round's expected stream rate on the whole band, alone (a device's) or to every "
                          "device not in outage (the broadcast), at the multicast EESM MCS, HARQ until all decode, up to 4 "
                          "transmissions, on the downlink's share")


def describe_cell(name: str, seed: int = 0, devices: int = 20, overrides: dict | None = None, rounds: int = 1000) -> dict:
    parameters, system, layout, channels = cell_draws(name, seed, devices, overrides, rounds)
    mean_dl, mean_ul = system.mean_snr_db(layout)
    stack = lambda name: np.array([getattr(c, name) for c in channels])  # noqa: E731
    dl, ul = stack("downlink_snr_db"), stack("uplink_snr_db")  # effective SNRs
    harq = system.link_abstraction == "nr-harq"  # the uplink's rates those of the link layer the uploads go through
    harq_down = harq and channels[0].harq_downlink  # and the streams', on a static cell
    dl_rate, ul_rate = stack("harq_downlink_bps" if harq_down else "downlink_bps"), stack("harq_uplink_bps" if harq else "uplink_bps")
    dl_out, ul_out = stack("downlink_outage"), stack("uplink_outage")
    if harq_down:  # a broadcast per round through the link layer to every device not in outage
        broadcast = np.array([c.harq_broadcast_bps for c in channels])
        broadcast = np.where(broadcast > 0, broadcast, np.inf)
    else:  # a broadcast per round runs at its weakest listener not in outage
        broadcast = np.where(dl_out, np.inf, dl_rate).min(axis=1)
    sent = np.isfinite(broadcast)
    # unicast airtime of one bit per device (s/bit) over the rounds it is not in outage
    unicast_s_per_bit = np.where(dl_out, np.nan, 1.0 / np.where(dl_rate > 0, dl_rate, np.nan))
    mean_unicast_s = float(np.nanmean(unicast_s_per_bit)) if np.isfinite(unicast_s_per_bit).any() else None
    mean_broadcast_s = float(np.mean(1.0 / broadcast[sent])) if sent.any() else None
    cell = system.cell
    ue_power_dbm, uplink_interference_dbm = system.uplink_power_dbm(layout), system.uplink_interference_dbm(layout)
    table = [
        {
            "device": d,
            "x_m": float(layout.x_m[d]), "y_m": float(layout.y_m[d]), "distance_m": float(layout.distance_m[d]),
            "los": bool(layout.los[d]), "k_factor_db": float(10 * np.log10(layout.k_factor[d])) if layout.k_factor[d] > 0 else None,
            "path_loss_db": float(layout.path_loss_db[d]),
            "shadowing_db": float(layout.shadowing_db[d]),
            "ue_power_dbm": float(ue_power_dbm[d]),
            **_network_columns(system, layout, uplink_interference_dbm, d),
            "downlink_snr_db": float(mean_dl[d]), "uplink_snr_db": float(mean_ul[d]),
            "downlink_outage": float(dl_out[:, d].mean()), "uplink_outage": float(ul_out[:, d].mean()),
            "downlink_mbps": float(np.mean(np.where(dl_out[:, d], 0.0, dl_rate[:, d])) / 1e6),
            "uplink_mbps": float(np.mean(np.where(ul_out[:, d], 0.0, ul_rate[:, d])) / 1e6),
        }
        for d in range(devices)
    ]
    return {
        "preset": name,
        "description": CELLS[name].description,
        "seed": seed,
        "devices": devices,
        "rounds": rounds,
        "parameters": {k: (list(v) if isinstance(v, tuple) else v) for k, v in sorted(parameters.items())},
        "derived": {
            "bs_power_dbm": system.downlink.tx_power_dbm,
            "ue_power_dbm": system.uplink.tx_power_dbm,  # P_CMAX: each device's own power is in device_table
            "downlink_noise_dbm": float(link_budget.noise_power_dbm(system.downlink.bandwidth_hz, system.downlink.noise_figure_db)),
            "uplink_noise_dbm": float(link_budget.noise_power_dbm(system.uplink.bandwidth_hz, system.uplink.noise_figure_db)),
            "breakpoint_distance_m": pathloss.breakpoint_distance_m(cell.bs_height_m, cell.ut_height_m, cell.carrier_hz),
            "downlink_share": system.shares[0],
            "uplink_share": system.shares[1],
            "outage_snr_db": system.outage_snr_db,
        },
        **({"uplink_rates": UPLINK_RATES_NR_HARQ} if harq else {}),
        **({"downlink_rates": DOWNLINK_RATES_NR_HARQ} if harq_down else {}),
        "device_table": table,
        "summary": {
            "los_fraction": float(layout.los.mean()),
            "downlink_outage_probability": float(dl_out.mean()),
            "uplink_outage_probability": float(ul_out.mean()),
            "mean_unicast_downlink_s_per_mbit": None if mean_unicast_s is None else mean_unicast_s * 1e6,
            "mean_broadcast_downlink_s_per_mbit": None if mean_broadcast_s is None else mean_broadcast_s * 1e6,
            # the weakest-member penalty of one broadcast against one unicast to a typical device
            "broadcast_over_unicast_airtime": (None if mean_unicast_s is None or mean_broadcast_s is None
                                               else mean_broadcast_s / mean_unicast_s),
            "rounds_without_broadcast": int((~sent).sum()),
        },
        "_draws": {"downlink_snr_db": dl, "uplink_snr_db": ul, "downlink_bps": dl_rate, "uplink_bps": ul_rate,
                   "broadcast_bps": broadcast[sent], "mean_downlink_snr_db": mean_dl,
                   "outage_snr_db": system.outage_snr_db, "layout": layout, "outer_radius_m": cell.outer_radius_m,
                   "inner_radius_m": cell.inner_radius_m,
                   "inter_site_distance_m": cell.inter_site_distance_m if cell.interference else None,
                   "site_outlines": site_outlines(cell.inter_site_distance_m) if cell.interference else None},
    }
