"""A small reader of result folders (no torch, no simpy): what figures and every command read.

A folder is complete when its sealed index ``checksums.json`` lists the SHA-256 of every file
of the folder, ``summary.json`` included, the index's own seal (the SHA-256 of that list)
matches, every file matches its checksum, and no JSON file holds NaN or Infinity. A
truncated, edited or NaN-bearing folder is refused with one line (``ResultError``, a
``UsageError``). Every reader goes through ``folder_problem``.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

from scenarios.errors import UsageError

RESULT_FILES = ("config.json", "rounds.csv", "devices.csv", "trace.csv", "plans.jsonl")
SUMMARY_FILE = "summary.json"
INDEX_FILE = "checksums.json"  # the sealed index, written last: a folder without it is unfinished
SEALED_FILES = RESULT_FILES + (SUMMARY_FILE,)


class ResultError(UsageError, ValueError):
    """A folder that is not a complete result folder (one line, exit status 2 on the command line)."""


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


def _refuse_constant(name: str):
    raise ValueError(f"it holds {name}")


def strict_json(text: str):
    """``json.loads`` that refuses NaN and Infinity (ValueError): no such number passes as one."""
    return json.loads(text, parse_constant=_refuse_constant)


def seal(files: dict[str, str]) -> str:
    """The seal of an index: the SHA-256 of its file list in canonical JSON."""
    return hashlib.sha256(json.dumps(files, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def index_text(texts: dict[str, str]) -> str:
    """The sealed index of a folder whose files hold ``texts`` (name -> content)."""
    files = {name: hashlib.sha256(texts[name].encode("utf-8")).hexdigest() for name in sorted(texts)}
    return json.dumps({"files": files, "seal": seal(files)}, indent=2, sort_keys=True) + "\n"


def folder_problem(folder: str | Path) -> str | None:
    """Why ``folder`` is not a complete result folder (None when it is): no or a damaged sealed
    index, a file missing, a file whose SHA-256 differs, or a JSON file holding NaN or Infinity."""
    folder = Path(folder)
    try:
        if not folder.is_dir():
            return "no such folder"
        index = strict_json((folder / INDEX_FILE).read_text())
    except FileNotFoundError:
        return f"it has no {INDEX_FILE} (unfinished, or written before folders were sealed)"
    except (OSError, ValueError) as error:
        return f"its {INDEX_FILE} is unreadable ({error.__class__.__name__})"
    files = index.get("files") if isinstance(index, dict) else None
    if not isinstance(files, dict) or set(files) != set(SEALED_FILES) or index.get("seal") != seal(files):
        return f"its {INDEX_FILE} is damaged (its seal does not match its list)"
    for name in SEALED_FILES:
        try:
            matches = file_sha256(folder / name) == files[name]
        except OSError:
            return f"{name} is missing or unreadable"
        if not matches:
            return f"{name} does not match its checksum in {INDEX_FILE} (truncated or modified)"
    for name in ("config.json", SUMMARY_FILE):
        try:
            if not isinstance(strict_json((folder / name).read_text()), dict):
                return f"its {name} is not a JSON object"
        except (OSError, ValueError) as error:
            return f"its {name} is unreadable ({error})"
    return None


def check_folder(folder: str | Path) -> Path:
    """``folder``, verified as a complete result folder; ResultError (one line) otherwise."""
    problem = folder_problem(folder)
    if problem is not None:
        raise ResultError(f"{folder} is not a complete result folder: {problem}")
    return Path(folder)


def read_summary(folder: str | Path) -> dict:
    """The verified ``summary.json`` of a complete result folder (ResultError otherwise)."""
    return strict_json((check_folder(folder) / SUMMARY_FILE).read_text())


def _number(text: str) -> float:
    return float(text) if text != "" else math.nan


def read_run(folder: str | Path) -> RunCurve:
    """The evaluated rounds of one run (time normalized by ``T_dl``, or in seconds on a physical cell); ResultError if the folder
    is not complete."""
    folder = check_folder(folder)
    try:
        summary = strict_json((folder / SUMMARY_FILE).read_text())
        config = strict_json((folder / "config.json").read_text())
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
