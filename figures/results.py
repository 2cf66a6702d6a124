"""A small reader of result folders (no torch, no simpy): what figures need."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path


class ResultError(ValueError):
    """A folder that is not a complete result folder."""


@dataclass(frozen=True)
class RunCurve:
    label: str
    rounds: list[int]
    time: list[float]  # in units of T_dl (normalized systems) or seconds (physical cells): ``time_unit``
    mean_accuracy: list[float]
    worst_accuracy: list[float]
    downlink_bits: list[float]
    uplink_bits: list[float]
    summary: dict
    config: dict
    time_unit: str = "T_dl"
    energy_j: list[float] | None = None  # cumulative energy of all devices (physical cells)


def read_run(folder: str | Path) -> RunCurve:
    """The evaluated rounds of one run (time normalized by ``T_dl``, or in seconds on a physical cell)."""
    folder = Path(folder)
    try:
        summary = json.loads((folder / "summary.json").read_text())
        config = json.loads((folder / "config.json").read_text())
        with open(folder / "rounds.csv", newline="") as handle:
            rows = [row for row in csv.DictReader(handle) if row["mean_accuracy"] != ""]
        physical = config["system"].get("kind") == "physical"
        t_dl = 1.0 if physical else float(config["system"]["t_dl"])
        return RunCurve(
            label=summary["label"],
            rounds=[int(r["round"]) for r in rows],
            time=[float(r["time"]) / t_dl for r in rows],
            mean_accuracy=[float(r["mean_accuracy"]) for r in rows],
            worst_accuracy=[float(r["worst_accuracy"]) for r in rows],
            downlink_bits=[float(r["downlink_bits"]) for r in rows],
            uplink_bits=[float(r["uplink_bits"]) for r in rows],
            summary=summary,
            config=config,
            time_unit="s" if physical else "T_dl",
            energy_j=[float(r["energy_j"]) for r in rows] if physical else None,
        )
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ResultError(f"{folder} is not a result folder ({error.__class__.__name__}: {error})") from None
