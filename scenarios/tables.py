"""The per-run results table: one row per run and seed, plain numbers (an empty cell where there
is none), for CSV and Parquet that pandas reads directly."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from scenarios.results import atomic_write_bytes, atomic_write_text, csv_text, number_cell

RUN_COLUMNS = ["run", "scenario", "algorithm", "label", "system", "seed", "status", "diverged_round", "diverged_reason",
               "rounds", "streams", "final_mean_accuracy", "final_worst_accuracy", "simulated_time", "downlink_bits",
               "uplink_bits", "clustering_ari", "estimation_error"]
NUMBER_COLUMNS = {"final_mean_accuracy", "final_worst_accuracy", "simulated_time", "downlink_bits", "uplink_bits",
                  "clustering_ari", "estimation_error"}


def run_row(summary: dict, extra: dict | None = None) -> dict:
    """One run's row (``extra``: more columns, such as the settings a sweep varies)."""
    diverged = summary.get("diverged") or {}
    row = {
        "run": Path(summary["result_dir"]).name if "result_dir" in summary else "",
        "scenario": summary["scenario"], "algorithm": summary["algorithm"], "label": summary["label"],
        "system": summary["system"], "seed": summary["seed"], "status": summary.get("status", "finished"),
        "diverged_round": diverged.get("round"), "diverged_reason": diverged.get("reason"),
        "rounds": summary["rounds"], "streams": summary["streams"],
    }
    row.update({k: summary.get(k) for k in RUN_COLUMNS if k not in row})
    row.update(extra or {})
    return row


def cell(column: str, value) -> str:
    if value is None:
        return ""
    if column in NUMBER_COLUMNS or isinstance(value, float):
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
        import pyarrow as pa
        import pyarrow.csv as pacsv
        import pyarrow.parquet as pq
    except ImportError:
        return written
    import io

    table = pacsv.read_csv(io.BytesIO(text.encode("utf-8")),
                           convert_options=pacsv.ConvertOptions(strings_can_be_null=False, column_types=_string_types(rows, columns)))
    buffer = pa.BufferOutputStream()
    pq.write_table(table, buffer)
    parquet_path = stem.with_suffix(".parquet")
    atomic_write_bytes(parquet_path, buffer.getvalue().to_pybytes())
    written.append(parquet_path)
    return written


def _string_types(rows, columns) -> dict:
    """Text columns stay text in Parquet (pyarrow would otherwise guess from the cells)."""
    import pyarrow as pa

    text = {}
    for column in columns:
        values = [row.get(column) for row in rows if row.get(column) is not None]
        if column not in NUMBER_COLUMNS and values and all(isinstance(v, str) for v in values):
            text[column] = pa.string()
    return text
