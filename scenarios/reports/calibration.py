"""TR 38.901 Sec. 7.8.1's large-scale calibration: the 3GPP reference curves and this layout's
percentiles beside them.

Reference: the median of the companies' calibration results summarised in 3GPP R1-165974
(August 2016; TR 38.900 V14.0.0 parameters), at 6 GHz, at the percentiles 5, 10, ..., 95, as
transcribed in QuaDRiGa's ``tutorials/calib_3GPP_ref_data.m`` (``cl38900a``, ``gf38900a``,
frequency 1, scenarios UMi and UMa). 3GPP plots the coupling loss as a negative gain; the
values here are losses (positive dB), so the reference's 5th percentile of the gain is the
95th of the loss.
"""

from __future__ import annotations

import numpy as np

REFERENCE_PERCENTILES = tuple(range(5, 100, 5))
_GAIN_DB = {  # R1-165974, 6 GHz: coupling gain (dB) at the 5th, 10th, ..., 95th percentile
    "umi": (-142.3, -136.4, -132.4, -128.9, -125.8, -122.9, -120.3, -117.6, -115.0, -112.2, -109.5, -106.4, -103.2,
            -99.9, -96.2, -92.2, -87.6, -82.0, -74.8),
    "uma": (-150.4, -144.7, -140.6, -137.0, -133.9, -131.1, -128.4, -125.8, -123.1, -120.3, -117.5, -114.7, -111.8,
            -109.1, -106.1, -102.8, -98.8, -93.7, -86.0),
}
_GEOMETRY_DB = {  # R1-165974, 6 GHz: geometry (dB) at the 5th, 10th, ..., 95th percentile
    "umi": (-1.7, -0.5, 0.4, 1.2, 2.1, 3.0, 4.0, 5.0, 6.1, 7.3, 8.6, 9.9, 11.4, 13.0, 14.9, 17.0, 19.4, 22.1, 24.9),
    "uma": (-1.0, 0.1, 1.1, 2.0, 2.9, 3.9, 5.0, 6.0, 7.2, 8.6, 9.9, 11.3, 12.9, 14.7, 16.5, 18.6, 20.9, 23.4, 25.6),
}
CALIBRATION_CARRIER_HZ = 6e9
PRESETS = {"umi": "umi-3.5ghz", "uma": "uma-3.5ghz"}  # the presets whose layout is calibrated (at 6 GHz)
TOLERANCE_DB = {"coupling_loss_db": 3.0, "geometry_db": 1.5}
# the mean gap over the 19 percentiles, on the documented pool (CALIBRATION_DROP devices x
# CALIBRATION_SEEDS seeds): geometry within 0.25 dB (issue 37); the coupling loss runs about 1 dB
# low in both scenarios (docs/physical-layer.md)
MEAN_GAP_TOLERANCE_DB = {"coupling_loss_db": 1.25, "geometry_db": 0.25}
CALIBRATION_DROP, CALIBRATION_SEEDS = 20000, 8  # one drop's mean geometry gap moves by about 0.1 dB with the seed


def reference(scenario: str) -> dict[str, np.ndarray]:
    """The reference curves as (percentile -> value) arrays: coupling loss (positive dB), geometry."""
    loss = -np.array(_GAIN_DB[scenario])[::-1]  # the loss's q-th percentile is minus the gain's (100 - q)-th
    return {"coupling_loss_db": loss, "geometry_db": np.array(_GEOMETRY_DB[scenario])}


def compare(scenario: str, coupling_loss_db, geometry_db, percentiles=(5, 50, 95)) -> list[dict]:
    """One row per quantity and percentile: this layout's value, the reference's and the gap."""
    ref = reference(scenario)
    rows = []
    for name, values in (("coupling_loss_db", coupling_loss_db), ("geometry_db", geometry_db)):
        for q in percentiles:
            ours = float(np.percentile(values, q))
            theirs = float(ref[name][REFERENCE_PERCENTILES.index(q)])
            rows.append({"scenario": scenario, "quantity": name, "percentile": q, "value_db": ours,
                         "reference_db": theirs, "gap_db": ours - theirs})
    return rows


def mean_gaps(scenario: str, coupling_loss_db, geometry_db) -> dict[str, float]:
    """Per quantity, the mean over the 19 reference percentiles (5, 10, ..., 95) of this
    layout's value less the reference's."""
    rows = compare(scenario, coupling_loss_db, geometry_db, REFERENCE_PERCENTILES)
    return {name: float(np.mean([r["gap_db"] for r in rows if r["quantity"] == name])) for name in ("coupling_loss_db", "geometry_db")}


def drops(count: int, seeds: int) -> dict[str, dict]:
    """Each calibrated scenario's drops at the calibration carrier (``calibration_drop``), seeds
    0..``seeds``-1 pooled: ``count x seeds`` devices' coupling losses and geometries, and each
    seed's mean gaps (``per_seed``: scenario -> quantity -> one value per seed)."""
    from scenarios.reports.cell import calibration_drop

    pooled = {}
    for scenario, preset in PRESETS.items():
        runs = [calibration_drop(preset, seed, count, {"carrier_hz": CALIBRATION_CARRIER_HZ}) for seed in range(seeds)]
        loss = np.concatenate([r["coupling_loss_db"] for r in runs])
        geometry = np.concatenate([r["geometry_db"] for r in runs])
        each = [mean_gaps(scenario, r["coupling_loss_db"], r["geometry_db"]) for r in runs]
        pooled[scenario] = {"coupling_loss_db": loss, "geometry_db": geometry,
                            "per_seed": {q: [e[q] for e in each] for q in ("coupling_loss_db", "geometry_db")}}
    return pooled


def markdown_table(dropped: dict[str, dict]) -> str:
    """The percentile table of docs/physical-layer.md: this layout beside the reference."""
    lines = ["| scenario | quantity | percentile | this layout | 3GPP reference | gap |", "|---|---|---|---|---|---|"]
    for scenario, d in dropped.items():
        for row in compare(scenario, d["coupling_loss_db"], d["geometry_db"]):
            lines.append(f"| {scenario.upper()} | {row['quantity'].replace('_db', '').replace('_', ' ')} | {row['percentile']}th | "
                         f"{row['value_db']:.1f} dB | {row['reference_db']:.1f} dB | {row['gap_db']:+.1f} dB |")
        for name, gap in mean_gaps(scenario, d["coupling_loss_db"], d["geometry_db"]).items():
            each = d["per_seed"][name]
            lines.append(f"| {scenario.upper()} | {name.replace('_db', '').replace('_', ' ')} | mean of 5th..95th | "
                         f"one seed's: {min(each):+.2f} to {max(each):+.2f} dB | | {gap:+.2f} dB |")
    return "\n".join(lines)
