"""A small reader of result folders (no torch, no simpy): what figures need.

A folder is complete when its ``summary.json`` lists the SHA-256 of every other file and
each file matches; a truncated or edited file is refused with one line.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

RESULT_FILES = ("config.json", "rounds.csv", "devices.csv", "trace.csv", "plans.jsonl")


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
    folder: str = ""
    time_unit: str = "T_dl"
    energy_j: list[float] | None = None  # cumulative energy of all devices (physical cells)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def folder_problem(folder: str | Path) -> str | None:
    """Why ``folder`` is not a complete result folder (None when it is): a missing or
    unreadable ``summary.json``, a file missing from it, or a file whose SHA-256 differs."""
    folder = Path(folder)
    if not folder.is_dir():
        return "no such folder"
    try:
        summary = json.loads((folder / "summary.json").read_text())
    except FileNotFoundError:
        return "it has no summary.json"
    except (OSError, ValueError) as error:
        return f"its summary.json is unreadable ({error.__class__.__name__})"
    files = summary.get("files") if isinstance(summary, dict) else None
    if not isinstance(files, dict) or set(files) != set(RESULT_FILES):
        return "its summary.json lists no checksums (an older or unfinished folder)"
    for name in RESULT_FILES:
        path = folder / name
        if not path.is_file():
            return f"{name} is missing"
        if file_sha256(path) != files[name]:
            return f"{name} does not match its checksum in summary.json (truncated or modified)"
    return None


def _number(text: str) -> float:
    return float(text) if text != "" else math.nan


def read_run(folder: str | Path) -> RunCurve:
    """The evaluated rounds of one run (time normalized by ``T_dl``, or in seconds on a physical cell); ResultError if the folder
    is not complete."""
    folder = Path(folder)
    problem = folder_problem(folder)
    if problem is not None:
        raise ResultError(f"{folder} is not a complete result folder: {problem}")
    try:
        summary = json.loads((folder / "summary.json").read_text())
        config = json.loads((folder / "config.json").read_text())
        with open(folder / "rounds.csv", newline="") as handle:
            rows = [row for row in csv.DictReader(handle) if row["mean_loss"] != ""]
        physical = config["system"].get("kind") == "physical"
        t_dl = 1.0 if physical else float(config["system"]["t_dl"])
        return RunCurve(
            label=summary["label"],
            rounds=[int(r["round"]) for r in rows],
            time=[float(r["time"]) / t_dl for r in rows],
            mean_accuracy=[_number(r["mean_accuracy"]) for r in rows],
            worst_accuracy=[_number(r["worst_accuracy"]) for r in rows],
            downlink_bits=[float(r["downlink_bits"]) for r in rows],
            uplink_bits=[float(r["uplink_bits"]) for r in rows],
            summary=summary,
            config=config,
            folder=str(folder),
            time_unit="s" if physical else "T_dl",
            energy_j=[float(r["energy_j"]) for r in rows] if physical else None,
        )
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ResultError(f"{folder} is not a result folder ({error.__class__.__name__}: {error})") from None
