"""Result folders, written atomically: a run is built in a hidden temporary folder and renamed
into place, so an interrupted or failed run never leaves a partial folder.

Files: ``config.json`` (resolved config), ``rounds.csv`` (one row per round), ``trace.csv``
(every network event), ``plans.jsonl`` (each round's plan, to re-time without retraining),
``summary.json``, and ``checksums.json`` (written last: the sealed index of every file's
SHA-256, checked by every reader in ``figures.results``).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

from scenarios.errors import UsageError

STAGING_SUFFIX = ".partial"  # a result folder being written: .NAME.PID.RANDOM.partial
TMP_SUFFIX = ".tmp"  # a file being written: .NAME.PID.RANDOM.tmp


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, payload: bytes) -> None:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=TMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def number_cell(value) -> str:
    """A float as CSV text: its exact repr, or an empty cell when it is not finite (NaN never
    passes as a number; pandas reads the empty cell as missing)."""
    if value is None:
        return ""
    value = float(value)
    return repr(value) if math.isfinite(value) else ""


def csv_text(header, rows) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def finite(data):
    """``data`` with every non-finite float replaced by None (JSON ``null``), recursively."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: finite(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [finite(v) for v in data]
    if hasattr(data, "item") and getattr(data, "ndim", None) == 0:  # numpy scalars
        return finite(data.item())
    return data


def json_text(data, indent: int | None = 2) -> str:
    """Canonical JSON (sorted keys); never NaN or Infinity."""
    return json.dumps(finite(data), indent=indent, sort_keys=True, allow_nan=False) + "\n"


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_output_dir(path: Path) -> Path:
    """Check, without creating anything, that ``path`` is or can become a writable folder.

    The nearest existing ancestor must be a folder in which a file can be created (probed
    with a temporary file that is removed at once). UsageError otherwise.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UsageError(f"cannot write to output folder {str(path)!r}: it is a file")
    ancestor = path
    while not ancestor.exists():
        if ancestor.parent == ancestor:
            break
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise UsageError(f"cannot write to output folder {str(path)!r}: {str(ancestor)!r} is not a folder")
    try:
        probe = tempfile.NamedTemporaryFile(dir=ancestor, prefix=".probe-", delete=True)
        probe.close()
    except OSError as error:
        raise UsageError(f"cannot write to output folder {str(path)!r}: {error.strerror or error}") from None
    return path


def make_output_dir(path: Path) -> Path:
    """Create ``path`` (after ``check_output_dir``): the moment results are about to be written."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageError(f"cannot write to output folder {str(path)!r}: {error.strerror or error}") from None
    return path


def ensure_writable_dir(path: Path) -> Path:
    """Check, then create ``path``."""
    return make_output_dir(check_output_dir(path))


@contextmanager
def staged_folder(final: Path):
    """Yield a temporary folder beside ``final`` (named with this process id); on success it
    replaces ``final`` at once."""
    final = Path(final)
    staging = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}.{os.getpid()}.", suffix=STAGING_SUFFIX))
    try:
        yield staging
        if final.exists():
            shutil.rmtree(final)
        os.replace(staging, final)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def remove_stale_staging(folder: Path) -> list[Path]:
    """Remove staging folders and temporary files left in ``folder`` by processes that no
    longer run (a killed run or sweep); returns what was removed."""
    folder = Path(folder)
    removed = []
    if not folder.is_dir():
        return removed
    for entry in folder.iterdir():
        staging = entry.name.endswith(STAGING_SUFFIX) and entry.is_dir()
        temporary = entry.name.endswith(TMP_SUFFIX) and entry.is_file()
        if not entry.name.startswith(".") or not (staging or temporary):
            continue
        parts = entry.name.split(".")  # .NAME.PID.RANDOM.partial or .tmp
        pid = int(parts[-3]) if len(parts) >= 4 and parts[-3].isdigit() else None
        if pid is not None and _alive(pid):
            continue
        if staging:
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(entry)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (killed, not yet reaped) is not running
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True
