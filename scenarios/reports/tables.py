"""The per-run results table: one row per run and seed, plain numbers (an empty cell where there
is none), for CSV and Parquet that pandas reads directly."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from contract.plan import DROP_REASONS
from scenarios.records.atomic import atomic_write_bytes, atomic_write_text, csv_text, number_cell

RUN_COLUMNS = ["run", "scenario", "algorithm", "label", "system", "seed", "status", "diverged_round", "diverged_reason",
               "training_flags", "training_notes", "rounds", "streams", "final_mean_accuracy", "final_worst_accuracy", "simulated_time", "downlink_bits",
               "uplink_bits", "clustering_ari", "estimation_error"]
NUMBER_COLUMNS = {"final_mean_accuracy", "final_worst_accuracy", "simulated_time", "downlink_bits", "uplink_bits",
                  "clustering_ari", "estimation_error"}
# every run's device-rounds dropped by each reason (contract.plan.DROP_REASONS;
# scenarios.execution.runner.drop_fields) and its training rounds' duration in the clock's unit
# (a buffered run's: between aggregations), mean and median (runner.duration_fields)
DROP_COLUMNS = tuple(f"dropped_{reason.replace('-', '_')}" for reason in DROP_REASONS)
ROUND_DURATION = ("round_duration_mean", "round_duration_median")
ROUND_COLUMNS = (*ROUND_DURATION, *DROP_COLUMNS)
# the numbers every run on a cell has (scenarios.execution.runner.cell_fairness): who was never
# heard, the device-rounds dropped by the radio's reasons
CELL_COUNTS = ("never_heard", "dropped_downlink_outage", "dropped_uplink_outage", "dropped_deadline")
# the energy of a run on a cell, by direction and state (joules, all devices, whole run)
ENERGY_SPLIT = ("transmit_energy_j", "receive_energy_j", "compute_energy_j", "idle_energy_j")
# the wireless numbers a run has on a physical cell (energy, drops) or with a scheduler (participation)
WIRELESS_COLUMNS = ("energy_j", "energy_per_device_j", *ENERGY_SPLIT, *CELL_COUNTS, "never_scheduled")


def jain_fields(summaries: Sequence[dict]) -> list[str]:
    """The summary fields holding a Jain index (``jain_*``: over scheduled rounds, and over
    arrived uploads where the run records it), read by name, in a fixed order; a null one (all
    counts 0: ``netsim.scheduling.jain_index``) is its field too, its cell empty."""
    return sorted({k for s in summaries for k, v in s.items() if k.startswith("jain") and (v is None or isinstance(v, (int, float)))})


def run_columns(summaries: Sequence[dict]) -> list[str]:
    """``RUN_COLUMNS`` and the wireless columns any of ``summaries`` has."""
    present = {k for s in summaries for k in s} | ({"energy_per_device_j"} if any(s.get("device_energy_j") for s in summaries) else set())
    shown = RUN_COLUMNS + [c for c in WIRELESS_COLUMNS if c in present] + jain_fields(summaries)
    return shown + [c for c in ROUND_COLUMNS if c in present and c not in shown]


def run_row(summary: dict, extra: dict | None = None) -> dict:
    """One run's row (``extra``: more columns, such as the settings a sweep varies)."""
    diverged = summary.get("diverged") or {}
    row = {
        "run": Path(summary["result_dir"]).name if "result_dir" in summary else "",
        "scenario": summary["scenario"], "algorithm": summary["algorithm"], "label": summary["label"],
        "system": summary["system"], "seed": summary["seed"], "status": summary.get("status", "finished"),
        "diverged_round": diverged.get("round"), "diverged_reason": diverged.get("reason"),
        "training_flags": "; ".join(summary.get("training_flags") or ()) or None,
        "training_notes": "; ".join(summary.get("training_notes") or ()) or None,
        "rounds": summary["rounds"], "streams": summary["streams"],
    }
    row.update({k: summary.get(k) for k in RUN_COLUMNS if k not in row})
    row.update({k: summary[k] for k in (*WIRELESS_COLUMNS, *jain_fields([summary]), *ROUND_COLUMNS) if k in summary})
    if summary.get("device_energy_j"):
        row["energy_per_device_j"] = summary["energy_j"] / len(summary["device_energy_j"])
    row.update(extra or {})
    return row


def cell(column: str, value) -> str:
    if value is None:
        return ""
    if column in NUMBER_COLUMNS or column in WIRELESS_COLUMNS or column in ROUND_COLUMNS or isinstance(value, float):
        return number_cell(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def rows_csv(rows: Sequence[dict], columns: Sequence[str]) -> str:
    return csv_text(list(columns), ([cell(c, row.get(c)) for c in columns] for row in rows))


def write_tables(rows: Sequence[dict], columns: Sequence[str], stem: Path) -> list[Path]:
    """``stem``.csv, and ``stem``.parquet when pyarrow is importable (both atomic); the paths."""
    csv_path = stem.with_suffix(".csv")
    text = rows_csv(rows, columns)
    atomic_write_text(csv_path, text)
    written = [csv_path]
    try:
        import pyarrow  # noqa: F401 (pandas writes Parquet through it)
    except ImportError:
        return written
    import io

    import pandas

    frame = pandas.read_csv(io.StringIO(text))  # the Parquet file reads back as the CSV does
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    parquet_path = stem.with_suffix(".parquet")
    atomic_write_bytes(parquet_path, buffer.getvalue())
    written.append(parquet_path)
    return written
