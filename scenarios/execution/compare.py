"""Comparison tables over algorithms and seeds (journal Tables I and II), plus time and bits
to reach a target accuracy. Built from result folders, so finished runs are reused."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from scenarios.errors import UsageError
from scenarios.records.result_folder import check_seeds, read_run
from scenarios.execution.progress import Progress
from scenarios.records.atomic import number_cell
from scenarios.reports.over_seeds import (CENSORED, SCORED, SPREAD, TIME_FORMATS, TIME_HEADERS, ToTarget, first_reach, mean_std,
                                          pm, target_cell, to_target)
from scenarios.execution.runner import RunSpec, run_experiment
from scenarios.execution.pool import run_calls
from scenarios.reports.tables import CELL_COUNTS, DROP_COLUMNS, ENERGY_SPLIT, ROUND_COLUMNS, jain_fields


@dataclass(frozen=True)
class Row:
    """One label over its seeds: accuracies as (mean, sample std) over the seeds that finished;
    time, bits and energy to the target censored at the run's end for the seeds that never
    reached it (``scenarios.reports.over_seeds``); the wireless numbers where the runs have them
    (energy on a physical cell; never-scheduled devices and Jain's indices with a scheduler)."""

    label: str
    mean_accuracy: tuple[float | None, float | None]  # mean, sample std over the seeds that finished
    worst_accuracy: tuple[float | None, float | None]
    time_to_target: ToTarget | None  # in time_unit
    bits_to_target: ToTarget | None  # downlink + uplink
    reached: int
    seeds: int
    diverged: int
    flagged: int  # runs with a training-failure sign (scenarios.records.health): at chance, loss rising
    streams: str  # the streams each seed's run sent ("4", or "4/5/5" where the seeds differ)
    total_bits: float
    time_unit: str = "T_dl"  # seconds ("s") on a physical cell
    devices: int = 0
    energy_j: tuple[float | None, float | None] | None = None  # all devices, whole run (physical cells)
    energy_to_target_j: ToTarget | None = None  # all devices
    never_scheduled: tuple[float | None, float | None] | None = None  # devices (with a scheduler)
    jain: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)  # summary field -> mean, std
    # summary field -> the seeds where that index is null (all counts 0: nobody scheduled, nothing
    # arrived; netsim.scheduling.jain_index), left out of its mean, counted here
    jain_undefined: dict[str, int] = field(default_factory=dict)
    # on a cell: devices never heard, drops by reason, energy by direction (CELL_FIELDS) -> mean, std
    cell: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    # every run: its training rounds' duration (mean, median; in time_unit) and its dropped
    # device-rounds by every reason (ROUND_COLUMNS) -> mean, std over the seeds that finished
    rounds: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)


def label_row(label: str, cs: Sequence, target: float | None) -> Row:
    """The row of one label's runs ``cs`` (its seeds) against ``target``."""
    done = [c for c in cs if c.summary.get("status", "finished") == "finished"]
    hits = [first_reach(c, target) if target is not None else None for c in done]

    def censored(values, horizon) -> ToTarget | None:
        """``values``: a curve's series; ``horizon``: where a seed that never reached the target
        counts, the run's horizon (its time budget, or what it spent by its end), never its last
        evaluation (which a budget or an evaluation period can leave short of it)."""
        if target is None or not done:
            return None
        series = [values(c) for c in done]
        return to_target([None if h is None else s[h] for h, s in zip(hits, series)], [horizon(c) for c in done])

    bits = lambda c: np.add(c.downlink_bits, c.uplink_bits).tolist()  # noqa: E731
    total_bits = lambda c: float(c.summary["downlink_bits"]) + float(c.summary["uplink_bits"])  # noqa: E731
    physical = bool(done) and all(c.energy_j is not None for c in done)
    summaries = [c.summary for c in done]
    return Row(
        label=label,
        mean_accuracy=mean_std([c.summary["final_mean_accuracy"] for c in done]),
        worst_accuracy=mean_std([c.summary["final_worst_accuracy"] for c in done]),
        time_to_target=censored(lambda c: c.time, lambda c: c.end_time),
        bits_to_target=censored(bits, total_bits),
        reached=sum(h is not None for h in hits),
        seeds=len(cs),
        diverged=len(cs) - len(done),
        flagged=sum(1 for c in cs if c.summary.get("training_flags")),
        streams=streams_cell([int(c.summary["streams"]) for c in cs]),
        total_bits=float(np.mean([c.summary["downlink_bits"] + c.summary["uplink_bits"] for c in cs])),
        time_unit=cs[0].time_unit,
        devices=int(cs[0].config.get("num_devices", 0)),
        energy_j=mean_std([s["energy_j"] for s in summaries]) if physical else None,
        energy_to_target_j=censored(lambda c: c.energy_j, lambda c: float(c.summary["energy_j"])) if physical else None,
        never_scheduled=(mean_std([s["never_scheduled"] for s in summaries])
                         if summaries and all("never_scheduled" in s for s in summaries) else None),
        jain={name: mean_std([s.get(name) for s in summaries]) for name in jain_fields(summaries)},
        jain_undefined={name: sum(1 for s in summaries if name in s and s[name] is None) for name in jain_fields(summaries)},
        cell={name: mean_std([s[name] for s in summaries]) for name in CELL_FIELDS
              if summaries and all(name in s for s in summaries)},
        rounds={name: mean_std([s[name] for s in summaries]) for name in ROUND_COLUMNS
                if summaries and all(name in s for s in summaries)},
    )


def streams_cell(per_seed: Sequence[int]) -> str:
    """The streams of a label's runs: one number when every seed sent as many, else each seed's."""
    return str(per_seed[0]) if len(set(per_seed)) == 1 else "/".join(map(str, per_seed))


def run_all(specs: list[RunSpec], out_root: Path, data_dir: str | None, jobs: int,
            progress: bool = False, reuse: bool = True) -> list[str]:
    """Result folders of ``specs``, in order; with ``jobs`` > 1, runs go to that many worker
    processes (one torch thread each, killed with this process). Runs are independent, so the
    numbers do not change. A progress line counts finished runs (``progress``)."""
    bar = Progress("runs", len(specs), unit="runs") if progress else None
    try:
        calls = [functools.partial(run_experiment, spec, out_root, data_dir, False, reuse) for spec in specs]
        return [summary["result_dir"] for summary in run_calls(calls, jobs, bar.update if bar else None)]
    finally:
        if bar:
            bar.close()


def compare(
    specs_by_label: dict[str, list[RunSpec]],
    out_root: Path,
    data_dir: str | None,
    target: float | None,
    progress: bool = False,
    jobs: int = 1,
    reuse: bool = True,
) -> tuple[list[Row], float | None, dict[str, list]]:
    """Run (or reuse) every spec; the target defaults to 90% of the best mean final accuracy.
    Diverged runs count in ``diverged`` and in no mean. Returns the rows, the target and each
    label's run curves (for per-seed tables). A label's specs differ in the seed alone (checked
    before any run, and on the resolved configs after: ``check_seeds``)."""
    for label, specs in specs_by_label.items():
        seeds, first = [spec.seed for spec in specs], dataclasses.replace(specs[0], seed=0)
        if len(set(seeds)) != len(seeds) or any(dataclasses.replace(spec, seed=0) != first for spec in specs):
            raise UsageError(f"{label}: its runs must differ in the seed alone, each seed once (seeds {seeds})")
    flat = [s for specs in specs_by_label.values() for s in specs]
    folders = iter(run_all(flat, out_root, data_dir, jobs, progress, reuse))
    curves = {label: [read_run(next(folders)) for _ in specs] for label, specs in specs_by_label.items()}
    rows, target = summarize(curves, target)
    return rows, target, curves


def summarize(curves: dict[str, Sequence], target: float | None) -> tuple[list[Row], float | None]:
    """One row per label of ``curves`` (label -> its seeds' curves); ``target`` defaults to 90%
    of the best label's mean final accuracy."""
    if target is None:
        means = [mean_std([c.summary["final_mean_accuracy"] for c in cs])[0] for cs in curves.values()]
        means = [m for m in means if m is not None]
        target = round(0.9 * max(means), 4) if means else None
    for label, cs in curves.items():
        check_seeds(label, cs)
    return [label_row(label, cs, target) for label, cs in curves.items()], target


JAIN_NAMES = {"jain_fairness_scheduled": "Jain's index, scheduled rounds", "jain_fairness_arrived": "Jain's index, arrived uploads"}
CELL_FIELDS = (*CELL_COUNTS, *ENERGY_SPLIT)
CELL_NAMES = {"never_heard": "never heard", "dropped_downlink_outage": "dropped: downlink outage",
              "dropped_uplink_outage": "dropped: uplink outage", "dropped_deadline": "dropped: deadline",
              "transmit_energy_j": "energy (J): uplink", "receive_energy_j": "energy (J): downlink",
              "compute_energy_j": "energy (J): compute", "idle_energy_j": "energy (J): idle"}
ROUND_NAMES = {"round_duration_mean": "round duration: mean", "round_duration_median": "round duration: median",
               **{name: "dropped: " + name.removeprefix("dropped_").replace("_", " ") for name in DROP_COLUMNS}}


def _per_device(value: float | None, devices: int) -> float | None:
    return None if value is None or not devices else value / devices


def _energy_cell(pair: tuple[float | None, float | None], devices: int, censored: int = 0) -> str:
    if pair[0] is None:
        return "-"
    return (">= " if censored else "") + f"{pm(pair, '.4g')} / {_per_device(pair[0], devices):.4g}"


def _columns(rows: Sequence[Row]) -> tuple[list[str], bool, bool, list[str], list[str]]:
    """What the rows hold: their time units (in order), energy, never-scheduled, Jain fields,
    cell fields (``CELL_FIELDS`` order)."""
    units = list(dict.fromkeys(r.time_unit for r in rows))
    return (units, any(r.energy_j is not None for r in rows), any(r.never_scheduled is not None for r in rows),
            sorted({name for r in rows for name in r.jain}), [name for name in CELL_FIELDS if any(name in r.cell for r in rows)])


def _round_columns(rows: Sequence[Row], cell: Sequence[str], dropped_only: bool = False) -> list[str]:
    """The rows' round durations and drops by reason (``ROUND_COLUMNS`` order) not among the
    ``cell`` columns; ``dropped_only``: a reason only where some row dropped for it."""
    def shown(name: str) -> bool:
        if not any(name in r.rounds for r in rows) or name in cell:
            return False
        return not (dropped_only and name in DROP_COLUMNS) or any((r.rounds.get(name, (None,))[0] or 0) > 0 for r in rows)
    return [name for name in ROUND_COLUMNS if shown(name)]


def jain_cell(pair: tuple[float | None, float | None], undefined: int) -> str:
    """A Jain index over seeds: its mean (±std) over the seeds where it is defined, and how many
    seeds it is undefined in (all counts 0: ``netsim.scheduling.jain_index``), ``-`` in none."""
    if not undefined:
        return pm(pair, ".3f")
    why = f"undefined in {undefined} seed{'s' if undefined > 1 else ''}: all counts 0"
    return f"- ({why})" if pair[0] is None else f"{pm(pair, '.3f')} ({why})"


def table_rows(rows: Sequence[Row]) -> tuple[list[str], list[list[str]]]:
    """The human-readable table (Markdown and the terminal): means with the sample std over
    seeds in brackets; one time column per time unit; to-target cells censored (``>=``); the
    wireless columns where the runs have them; the rounds' duration, and the drops by each
    reason that some row has."""
    units, energy, never, jain, cell = _columns(rows)
    rounds = _round_columns(rows, cell, dropped_only=True)
    header = (["algorithm", "streams", "mean acc % (Table I)", "worst acc % (Table II)"]
              + [TIME_HEADERS.get(u, f"time to target ({u})") for u in units]
              + ["bits to target", "reached", "diverged", "flagged", "total bits"]
              + (["energy (J): total / per device", "energy to target (J): total / per device"] if energy else [])
              + (["never scheduled"] if never else []) + [JAIN_NAMES.get(name, name) for name in jain]
              + [CELL_NAMES[name] for name in cell] + [ROUND_NAMES[name] for name in rounds])
    body = []
    for r in rows:
        cells = [r.label, r.streams, pm(r.mean_accuracy, ".1f", 100), pm(r.worst_accuracy, ".1f", 100)]
        cells += [target_cell(r.time_to_target, TIME_FORMATS.get(u, ".4g")) if r.time_to_target and r.time_unit == u
                  else "-" for u in units]
        cells += [target_cell(r.bits_to_target, ".4g") if r.bits_to_target else "-", f"{r.reached}/{r.seeds}",
                  f"{r.diverged}/{r.seeds}", f"{r.flagged}/{r.seeds}", f"{r.total_bits:.4g}"]
        if energy:
            to = r.energy_to_target_j
            cells += ["-" if r.energy_j is None else _energy_cell(r.energy_j, r.devices),
                      "-" if to is None else _energy_cell((to.mean, to.std), r.devices, to.censored)]
        if never:
            cells.append(pm(r.never_scheduled, ".3g") if r.never_scheduled else "-")
        cells += [jain_cell(r.jain.get(name, (None, None)), r.jain_undefined.get(name, 0)) for name in jain]
        cells += [pm(r.cell[name], ".4g") if name in r.cell else "-" for name in cell]
        cells += [pm(r.rounds[name], ".4g") if name in r.rounds else "-" for name in rounds]
        body.append(cells)
    return header, body


def numeric_rows(rows: Sequence[Row]) -> tuple[list[str], list[list[str]]]:
    """The same table with plain numbers, one column each (empty cell: none), for CSV: ``_std``
    is the sample std over seeds; ``censored`` the seeds that never reached the target, counted
    at their run's end in every ``*_to_target`` mean; a Jain index's ``_undefined`` the seeds
    where it is null (all counts 0), left out of its mean; every drop reason's column, 0 included."""
    units, energy, never, jain, cell = _columns(rows)
    rounds = _round_columns(rows, cell)
    header = ["algorithm", "streams", "mean_accuracy", "mean_accuracy_std", "worst_accuracy", "worst_accuracy_std",
              "time_unit", "time_to_target", "time_to_target_std", "bits_to_target", "bits_to_target_std", "reached",
              "censored", "diverged", "flagged", "seeds", "total_bits", "devices"]
    if energy:
        header += ["energy_j", "energy_j_std", "energy_per_device_j", "energy_to_target_j", "energy_to_target_j_std",
                   "energy_to_target_per_device_j"]
    if never:
        header += ["never_scheduled", "never_scheduled_std"]
    for name in jain:
        header += [name, f"{name}_std", f"{name}_undefined"]
    for name in (*cell, *rounds):
        header += [name, f"{name}_std"]
    empty = ToTarget(None, None, 0, 0)
    body = []
    for r in rows:
        time, bits = r.time_to_target or empty, r.bits_to_target or empty
        cells = [r.label, r.streams, *map(number_cell, (*r.mean_accuracy, *r.worst_accuracy)), r.time_unit,
                 *map(number_cell, (time.mean, time.std, bits.mean, bits.std)), r.reached, time.censored, r.diverged,
                 r.flagged, r.seeds, number_cell(r.total_bits), r.devices]
        if energy:
            spent, to = r.energy_j or (None, None), r.energy_to_target_j or empty
            cells += [number_cell(v) for v in (*spent, _per_device(spent[0], r.devices), to.mean, to.std,
                                               _per_device(to.mean, r.devices))]
        if never:
            cells += [number_cell(v) for v in (r.never_scheduled or (None, None))]
        for name in jain:
            cells += [number_cell(v) for v in r.jain.get(name, (None, None))] + [r.jain_undefined.get(name, 0)]
        for name in cell:
            cells += [number_cell(v) for v in r.cell.get(name, (None, None))]
        for name in rounds:
            cells += [number_cell(v) for v in r.rounds.get(name, (None, None))]
        body.append(cells)
    return header, body


def markdown(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in body]) + "\n"


def legend(target: float | None) -> str:
    """What the table's numbers are (printed above it)."""
    return (f"Target mean accuracy: {target}. Cells: mean over the seeds that finished, ({SPREAD}) in brackets; "
            f"to target: {CENSORED}; {SCORED}.")
