"""Result folders, written atomically: a run is built in a hidden temporary folder and renamed
into place, so an interrupted or failed run never leaves a partial folder.

Files: ``config.json`` (resolved config), ``rounds.csv`` (one row per round), ``trace.csv``
(every network event), ``plans.jsonl`` (each round's plan, to re-time without retraining),
``summary.json``.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

from scenarios.errors import UsageError


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def csv_text(header, rows) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def json_text(data) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def ensure_writable_dir(path: Path) -> Path:
    """Create ``path`` if needed and check that files can be written there (UsageError if not)."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=path, prefix=".probe-", delete=True)
        probe.close()
    except OSError as error:
        raise UsageError(f"cannot write to output folder {str(path)!r}: {error.strerror or error}") from None
    return path


@contextmanager
def staged_folder(final: Path):
    """Yield a temporary folder beside ``final``; on success it replaces ``final`` at once."""
    final = Path(final)
    staging = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}.", suffix=".partial"))
    try:
        yield staging
        if final.exists():
            shutil.rmtree(final)
        os.replace(staging, final)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
