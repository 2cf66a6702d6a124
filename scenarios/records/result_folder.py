"""The result folder, its whole format in one module (no torch, no simpy): the files a run
writes (``rounds.csv``, ``devices.csv``, ``trace.csv``, ``plans.jsonl``, ``config.json``,
``summary.json``), the sealed index, the folder hash, and the reader that the reports, the API
and every command use (``read_run``, ``read_table``, ``read_plans``: typed, checked); figures
draw its ``RunCurve``.

A folder is complete when its sealed index ``checksums.json`` lists the SHA-256 of every file
of the folder, ``summary.json`` included, the index's own seal (the SHA-256 of that list)
matches, every file is a regular file (no link, pipe or device) matching its checksum, and
no JSON file holds a non-finite number. A truncated, edited or NaN-bearing folder is refused
with one line (``ResultError``, a ``UsageError``). Every reader goes through
``folder_problem`` and ``scenarios.records.reading`` (size, depth and finite-number limits).

The seal detects damage and edits made without recomputing it; it is not a signature:
whoever can write the folder can write a matching index, so a forged folder's numbers are
checked only for being well-formed and finite.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from contract import RoundPlan
from contract.checks import check_plan
from scenarios.records.atomic import csv_text, json_text, number_cell, output_dir, staged_folder
from scenarios.errors import UsageError
from scenarios.records.reading import MAX_JSON_BYTES, MAX_TABLE_BYTES, ReadError, finite_float, open_regular, parse_json, read_text

if TYPE_CHECKING:  # the records' types, never loaded here: this module stays without simpy
    from netsim import RoundRecord, TraceEvent

FORMAT_VERSION = 2  # 2: hash-named folders, checksums (now in the sealed checksums.json), empty cells for non-finite numbers
TRACE_FIELDS = ("round", "kind", "entity", "start", "end", "bits", "energy_j", "reason")
RESULT_FILES = ("config.json", "rounds.csv", "devices.csv", "trace.csv", "plans.jsonl")
SUMMARY_FILE = "summary.json"
INDEX_FILE = "checksums.json"  # the sealed index, written last: a folder without it is unfinished
SEALED_FILES = RESULT_FILES + (SUMMARY_FILE,)
# config keys that differ between seeds of one configuration: the seed, what follows from it, versions
SEED_KEYS = ("seed", "device_samples_per_update", "provenance")


@dataclass(frozen=True)
class RecordedKind:
    """What a recorded system's ``kind`` answers (``config.json`` keeps the kind it was written
    with; none: a normalized system): its clock's unit, the record's field holding that unit's
    length on the clock (None: the clock counts in it), and whether its rounds record energy.
    The systems answer the same themselves (``netsim.kind``; a test holds the two equal)."""

    time_unit: str
    unit_field: str | None
    records_energy: bool


RECORDED_KINDS = {None: RecordedKind("T_dl", "t_dl", False), "physical": RecordedKind("s", None, True)}


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
    time_scale: float = 1.0  # the recorded clock per time unit (its system's T_dl; 1 on a cell)

    @property
    def end_time(self) -> float:
        """The run's simulated time at its end, in ``time_unit`` (as ``time``)."""
        return float(self.summary["simulated_time"]) / self.time_scale


def file_sha256(path: Path, follow: bool = True) -> str:
    """SHA-256 of a regular file's bytes (ReadError for anything else, or past ``MAX_TABLE_BYTES``)."""
    digest, size = hashlib.sha256(), 0
    with open_regular(path, follow) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            size += len(block)
            if size > MAX_TABLE_BYTES:
                raise ReadError(f"{path} is larger than {MAX_TABLE_BYTES:,} bytes")
            digest.update(block)
    return digest.hexdigest()


def seal(files: dict[str, str]) -> str:
    """The seal of an index: the SHA-256 of its file list in canonical JSON."""
    return hashlib.sha256(json.dumps(files, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("utf-8")).hexdigest()


def index_text(texts: dict[str, str]) -> str:
    """The sealed index of a folder whose files hold ``texts`` (name -> content)."""
    files = {name: hashlib.sha256(texts[name].encode("utf-8")).hexdigest() for name in sorted(texts)}
    return json.dumps({"files": files, "seal": seal(files)}, indent=2, sort_keys=True, allow_nan=False) + "\n"


def folder_problem(folder: str | Path) -> str | None:
    """Why ``folder`` is not a complete result folder (None when it is): no or a damaged sealed
    index, a file missing, not a regular file or whose SHA-256 differs, or a JSON file that
    is not an object of finite numbers."""
    folder = Path(folder)
    try:
        if not folder.is_dir():
            return "no such folder"
        if not (folder / INDEX_FILE).exists() and not (folder / INDEX_FILE).is_symlink():
            return f"it has no {INDEX_FILE} (unfinished, or written before folders were sealed)"
        index = _json_file(folder / INDEX_FILE)
    except OSError as error:
        return f"its {INDEX_FILE} is unreadable ({error.strerror or error})"
    except ValueError as error:
        return f"its {INDEX_FILE} is unreadable ({error})"
    files = index.get("files") if isinstance(index, dict) else None
    if not isinstance(files, dict) or set(files) != set(SEALED_FILES) or index.get("seal") != seal(files):
        return f"its {INDEX_FILE} is damaged (its seal does not match its list)"
    for name in SEALED_FILES:
        try:
            matches = file_sha256(folder / name, follow=False) == files[name]
        except ReadError as error:
            return f"{name} is missing or unreadable ({str(error).removeprefix(str(folder / name) + ' ')})"
        if not matches:
            return f"{name} does not match its checksum in {INDEX_FILE} (truncated or modified)"
    for name in ("config.json", SUMMARY_FILE):
        try:
            if not isinstance(_json_file(folder / name), dict):
                return f"its {name} is not a JSON object"
        except ValueError as error:
            return f"its {name} is unreadable ({error})"
    return None


def _json_file(path: Path):
    """The JSON value of a file of a result folder (ValueError naming what is wrong)."""
    try:
        return parse_json(read_text(path, MAX_JSON_BYTES, follow=False))
    except ReadError as error:
        raise ResultError(str(error).removeprefix(f"{path} ")) from None


def check_folder(folder: str | Path) -> Path:
    """``folder``, verified as a complete result folder; ResultError (one line) otherwise."""
    problem = folder_problem(folder)
    if problem is not None:
        raise ResultError(f"{folder} is not a complete result folder: {problem}")
    return Path(folder)


def read_summary(folder: str | Path) -> dict:
    """The verified ``summary.json`` of a complete result folder (ResultError otherwise)."""
    return _json_file(check_folder(folder) / SUMMARY_FILE)


def read_config(folder: str | Path, checked: bool = False) -> dict:
    """The verified ``config.json`` of a complete result folder (ResultError otherwise);
    ``checked``: the folder was just checked."""
    return _json_file(Path(folder if checked else check_folder(folder)) / "config.json")


def read_table(folder: str | Path, name: str, checked: bool = False) -> list[dict]:
    """The rows of a CSV file of a complete result folder (``rounds.csv``, ``devices.csv``,
    ``trace.csv``); ``checked``: the folder was just checked."""
    path = Path(folder if checked else check_folder(folder)) / name
    try:
        return list(csv.DictReader(io.StringIO(read_text(path, MAX_TABLE_BYTES, follow=False), newline="")))
    except (ReadError, csv.Error) as error:
        raise ResultError(f"{folder} is not a result folder ({name}: {error})") from None


def read_plans(folder: str | Path) -> list[RoundPlan | None]:
    """Each round's plan from ``plans.jsonl``, indexed by round (None: a round that sent nothing,
    such as a set-up round); ResultError unless line ``r`` is round ``r``'s record, every round
    of the run has one, and its plan holds what the engine accepts of a learner
    (``contract.checks.check_plan``: devices of the run, each once, finite non-negative bits,
    finite positive compute scales)."""
    folder = check_folder(folder)
    try:
        return _plans(folder)
    except (ReadError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise ResultError(f"{folder} has no readable plans.jsonl ({error})") from None


def plans_problem(folder: Path) -> str | None:
    """Why the plans of a complete folder do not read (``read_plans``; None when they do)."""
    try:
        _plans(folder)
    except (ReadError, ValueError, KeyError, TypeError, AttributeError) as error:
        return f"its plans.jsonl is unreadable ({error})"
    return None


def _plans(folder: Path) -> list[RoundPlan | None]:
    config, summary = read_config(folder, checked=True), _json_file(folder / SUMMARY_FILE)
    devices, rounds = config["num_devices"], summary["rounds"]
    records = [parse_json(line) for line in read_text(folder / "plans.jsonl", MAX_TABLE_BYTES, follow=False).splitlines()]
    plans = []
    for expected, record in enumerate(records):
        if not isinstance(record["round"], int) or not (record["plan"] is None or isinstance(record["plan"], dict)):
            raise ValueError(f"line {record!r:.60} is not a round and its plan")
        if record["round"] != expected:
            raise ValueError(f"line {expected + 1} is round {record['round']}, not {expected}")
        plans.append(None if record["plan"] is None else _plan(record["plan"], devices, expected))
    if not isinstance(rounds, int) or len(plans) != rounds + 1:
        raise ValueError(f"it holds {len(plans)} rounds, the run {rounds!r} after round 0")
    return plans


def _plan(data: dict, devices: int, server_round: int) -> RoundPlan:
    """A recorded plan, checked as the engine checks a learner's (``contract.checks``)."""
    plan = RoundPlan.from_dict(data)
    check_plan(plan, devices, f"round {server_round}")
    return plan


def _number(text: str) -> float:
    """A CSV cell: a finite number, or NaN for an empty cell (``nan``/``inf`` text is refused)."""
    return finite_float(text) if text != "" else math.nan


def read_run(folder: str | Path) -> RunCurve:
    """The evaluated rounds of one run, time in its system's unit (``RECORDED_KINDS``: normalized
    by ``T_dl``, or in seconds on a physical cell); ResultError if the folder is not complete."""
    folder = check_folder(folder)
    summary, config = _json_file(folder / SUMMARY_FILE), _json_file(folder / "config.json")
    rows = [row for row in read_table(folder, "rounds.csv", checked=True) if row.get("mean_loss") != ""]
    try:
        kind = RECORDED_KINDS.get(config["system"].get("kind"))
        if kind is None:
            raise ValueError(f"its system's kind {config['system']['kind']!r} is none of {', '.join(map(str, RECORDED_KINDS))}")
        unit = 1.0 if kind.unit_field is None else finite_float(str(config["system"][kind.unit_field]))
        if unit <= 0:
            raise ValueError(f"its system's {kind.unit_field} is {unit}, not a positive time")
        return RunCurve(
            label=str(summary["label"]),
            rounds=[int(r["round"]) for r in rows],
            time=[finite_float(r["time"]) / unit for r in rows],
            mean_accuracy=[_number(r["mean_accuracy"]) for r in rows],
            worst_accuracy=[_number(r["worst_accuracy"]) for r in rows],
            downlink_bits=[finite_float(r["downlink_bits"]) for r in rows],
            uplink_bits=[finite_float(r["uplink_bits"]) for r in rows],
            summary=summary,
            config=config,
            folder=str(folder),
            time_unit=kind.time_unit,
            energy_j=[finite_float(r["energy_j"]) for r in rows] if kind.records_energy else None,
            time_scale=unit,
        )
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ResultError(f"{folder} is not a result folder ({error.__class__.__name__}: {error})") from None


# --- writing ---------------------------------------------------------------------------------
def config_hash(config: dict) -> str:
    """SHA-256 of the canonical JSON of a resolved config (the identity of a run), its provenance
    (versions, commit, threads) left out: the same settings name the same folder on any machine."""
    settings = {key: value for key, value in config.items() if key != "provenance"}
    return hashlib.sha256(json_text(settings, indent=None).encode("utf-8")).hexdigest()


def write_folder(final: Path, files: dict[str, str]) -> None:
    """Write ``files`` (name -> text, ``summary.json`` included) and, last, their sealed index
    into ``final``, atomically: the folder appears complete or not at all."""
    texts = {**files, INDEX_FILE: index_text(files)}
    with output_dir(final.parent), staged_folder(final) as folder:
        for name, text in texts.items():
            (folder / name).write_bytes(text.encode("utf-8"))


def rounds_csv(records: list[RoundRecord], num_devices: int, energy: bool = False, diverged_round: int | None = None) -> str:
    """One row per round; with ``energy`` (a network that records it) also the round's energy,
    cumulative energy and each device's energy in the round (``energy_j_<d>``), in joules. Non-finite numbers are
    empty cells; the evaluation of a diverged round is left empty: its accuracies measure nothing."""
    header = ["round", "time", "duration", "downlink_bits", "uplink_bits", "streams", "participants", "received",
              "computed", "arrived", "mean_accuracy", "worst_accuracy", "mean_loss"] + [f"accuracy_{d}" for d in range(num_devices)]
    if energy:
        header += ["round_energy_j", "energy_j"] + [f"energy_j_{d}" for d in range(num_devices)]
    rows, downlink, uplink, spent = [], 0.0, 0.0, 0.0
    for r in records:
        downlink += r.downlink_bits
        uplink += r.uplink_bits
        participants = len(r.plan.participants) if r.plan else 0
        received = len(r.outcome.received) if r.outcome else 0
        computed = len(r.outcome.computed) if r.outcome else 0
        row = [r.server_round, number_cell(r.end), number_cell(r.duration), number_cell(downlink), number_cell(uplink),
               r.num_streams, participants, received, computed, len(r.arrived)]
        if r.evaluation is None or r.server_round == diverged_round:
            row += [""] * (3 + num_devices)
        else:
            e = r.evaluation
            row += [number_cell(e.mean_accuracy), number_cell(e.worst_accuracy), number_cell(e.mean_loss)]
            row += [number_cell(a) for a in e.accuracy]
        if energy:
            per_device = [float((r.energy_j or {}).get(d, 0.0)) for d in range(num_devices)]
            spent += sum(per_device)
            row += [number_cell(sum(per_device)), number_cell(spent)] + [number_cell(j) for j in per_device]
        rows.append(row)
    return csv_text(header, rows)


def devices_csv(records: list[RoundRecord], num_devices: int, diverged_round: int | None = None) -> str:
    """The long table: one row per round and device (round, device, accuracy, loss, energy_j,
    scheduled, received, computed, arrived), as analysis tools expect. Empty cells as in rounds.csv."""
    header = ["round", "device", "accuracy", "loss", "energy_j", "scheduled", "received", "computed", "arrived"]
    rows = []
    for r in records:
        evaluated = r.evaluation is not None and r.server_round != diverged_round
        sets = [set(r.plan.participants) if r.plan else set(), set(r.outcome.received) if r.outcome else set(),
                set(r.outcome.computed) if r.outcome else set(), set(r.arrived)]
        for d in range(num_devices):
            energy = "" if r.energy_j is None else repr(float(r.energy_j.get(d, 0.0)))
            numbers = [number_cell(r.evaluation.accuracy[d]), number_cell(r.evaluation.loss[d])] if evaluated else ["", ""]
            rows.append([r.server_round, d, *numbers, energy, *(int(d in s) for s in sets)])
    return csv_text(header, rows)


def trace_csv(trace: list[TraceEvent]) -> str:
    return csv_text(TRACE_FIELDS, ([e.round, e.kind, e.entity, number_cell(e.start), number_cell(e.end), number_cell(e.bits),
                                    number_cell(e.energy_j), e.reason] for e in trace))


def plans_jsonl(records: list[RoundRecord]) -> str:
    return "".join(json.dumps({"round": r.server_round, "plan": r.plan.to_dict() if r.plan else None}, allow_nan=False) + "\n" for r in records)


def check_seeds(label: str, curves: Sequence) -> None:
    """UsageError unless ``curves`` (``RunCurve`` s of one label, for a mean or a band) are runs
    that differ in the seed alone: no folder twice, no seed twice (a copy of a run is not another
    seed), the same resolved config but for the seed (``SEED_KEYS``)."""
    from scenarios.errors import UsageError

    folders = [str(Path(c.folder).resolve()) for c in curves if c.folder]
    twice = next((f for f in folders if folders.count(f) > 1), None)
    if twice is not None:
        raise UsageError(f"{label}: folder {twice} is given twice; a mean over seeds takes each run once")
    seeds = [c.config.get("seed") for c in curves]
    twice = next((seed for seed in seeds if seeds.count(seed) > 1), None)
    if twice is not None:
        raise UsageError(f"{label}: {seeds.count(twice)} runs of seed {twice} (copies of one run); a mean over seeds "
                         "takes one run per seed")
    first = curves[0].config
    for c in curves[1:]:
        differ = sorted(k for k in {*first, *c.config} - set(SEED_KEYS) if first.get(k) != c.config.get(k))
        if differ:
            raise UsageError(f"{label}: its runs differ in more than the seed ({', '.join(differ)}); a mean over seeds "
                             "needs runs of one configuration")


def configuration_key(curve) -> str:
    """The run's resolved config but for the seed (``SEED_KEYS``), as canonical JSON: runs with
    one key differ in the seed alone (``check_seeds``)."""
    return json.dumps({k: v for k, v in curve.config.items() if k not in SEED_KEYS}, sort_keys=True, allow_nan=False)


def _flat(value, prefix: str = "") -> dict:
    """A nested config as dotted key -> value (``system.cell.speed_kmh``)."""
    if isinstance(value, dict):
        return {k: v for key, inner in value.items() for k, v in _flat(inner, f"{prefix}{key}.").items()}
    return {prefix.rstrip("."): value}


# what tells runs of one label apart, in the order a legend names it: the system, a cell's speed,
# the orchestrator, the budget (a run's clock.until)
def _system(config: dict):
    return (config.get("system") or {}).get("name")


def _speed(config: dict):
    system = config.get("system") or {}
    return f"{(system.get('cell') or {}).get('speed_kmh', 0.0):g} km/h" if system.get("kind") == "physical" else None


def _orchestrator(config: dict):
    return (config.get("clock") or {}).get("orchestrator", "sync")


def _budget(config: dict):
    until = (config.get("clock") or {}).get("until") or {}
    return "until " + ",".join(f"{k}={v:g}" for k, v in sorted(until.items())) if until else "no budget"


DIFFERENCES = (_system, _speed, _orchestrator, _budget)


def configuration_names(configs: Sequence[dict]) -> list[str]:
    """Per config, what tells it apart from the others (``configs``: resolved configs of runs that
    share a label): its system, a cell's speed, its orchestrator or its budget where they differ,
    else the settings that differ (``KEY=VALUE``, at most three); "" where nothing but the seed
    differs."""
    names = [[] for _ in configs]
    for part in DIFFERENCES:
        values = [part(c) for c in configs]
        if len({json.dumps(v, sort_keys=True, allow_nan=False) for v in values if v is not None}) > 1:  # a speed tells cells apart, not a cell from the rest
            for name, value in zip(names, values):
                if value is not None:  # a normalized system has no speed
                    name.append(str(value))
    if not any(names):
        flats = [_flat({k: v for k, v in c.items() if k not in SEED_KEYS}) for c in configs]
        keys = sorted({k for f in flats for k in f if len({json.dumps(g.get(k), allow_nan=False) for g in flats}) > 1})
        for name, flat in zip(names, flats):
            name.extend(f"{key.rsplit('.', 1)[-1]}={flat.get(key, 'none')}" for key in keys[:3])
    return [", ".join(name) for name in names]


def seed_groups(curves: Sequence, with_system: bool = False) -> dict[str, list]:
    """Runs pooled as seeds of one configuration: those whose resolved configs differ in the seed
    alone (``configuration_key``, the test of ``check_seeds``), under one label in first-seen
    order. Configurations that share a run label carry what differs between them (``label
    (system, speed, orchestrator, budget)``, ``configuration_names``), or the configuration's
    short hash where even that is the same; ``with_system``: every label names its system."""
    by_key: dict[str, list] = {}
    for curve in curves:
        by_key.setdefault(configuration_key(curve), []).append(curve)
    labels = {key: runs[0].label for key, runs in by_key.items()}
    parts = {key: [str(runs[0].summary.get("system", ""))] if with_system else [] for key, runs in by_key.items()}
    for label in dict.fromkeys(labels.values()):
        keys = [key for key, given in labels.items() if given == label]
        if len(keys) > 1:
            for key, name in zip(keys, configuration_names([by_key[key][0].config for key in keys])):
                parts[key] += [part for part in name.split(", ") if part and part not in parts[key]]
    named = {key: labels[key] + (f" ({', '.join(parts[key])})" if parts[key] else "") for key in by_key}
    for label in set(named.values()):
        keys = [key for key, given in named.items() if given == label]
        if len(keys) > 1:  # nothing readable tells them apart: the configuration's hash does
            for key in keys:
                named[key] = f"{label} [{hashlib.sha256(key.encode()).hexdigest()[:6]}]"
    return {named[key]: runs for key, runs in by_key.items()}
