"""Result folders, written atomically: a run is built in a hidden temporary folder and renamed
into place, so an interrupted or failed run never leaves a partial folder.

Files: ``config.json`` (resolved config), ``rounds.csv`` (one row per round), ``trace.csv``
(every network event), ``plans.jsonl`` (each round's plan, to re-time without retraining),
``summary.json``, and ``checksums.json`` (written last: the sealed index of every file's
SHA-256, checked by every reader in ``scenarios.records.result_folder``).
"""

from __future__ import annotations

import csv
import errno
import hashlib
import io
import json
import math
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

from learning.worker_start import alive
from scenarios.errors import UsageError, WriteError

STAGING_SUFFIX = ".partial"  # a result folder being written: .NAME.PID.RANDOM.partial
TMP_SUFFIX = ".tmp"  # a file being written: .NAME.PID.RANDOM.tmp
ROOM_FOR_NAMES = 320  # what an output folder's path must leave to PATH_MAX: a staging run folder and a file in it


def current_umask() -> int:
    """This process's umask (from /proc, so it is never changed, even for a moment)."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def writing(path: Path):
    """Turn an OSError while writing ``path`` (disk full, permission, name too long, read-only
    file system) into one line naming it (``WriteError``)."""
    try:
        yield
    except OSError as error:
        raise WriteError(f"cannot write {_short(path)!r}: {error.strerror or error}") from None


def output_name(text, option: str = "--out"):
    """``text`` unless it names nothing (an empty ``--out`` would write into the current folder)."""
    if text is not None and not str(text).strip():
        raise UsageError(f"{option} must name a folder or file, got {str(text)!r}")
    return text


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, payload: bytes) -> None:
    """Write ``payload`` to ``path`` through a temporary file (readable as the umask says) and a
    rename: a failed write leaves nothing behind (WriteError)."""
    path = Path(path)
    with writing(path):
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=TMP_SUFFIX)
        try:
            os.fchmod(fd, 0o666 & ~current_umask())  # mkstemp makes it private (0600)
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
    path = Path(output_name(path))
    try:
        if path.exists() and not path.is_dir():
            raise UsageError(f"cannot write to output folder {str(path)!r}: it is a file")
        ancestor = path
        while not ancestor.exists():
            if ancestor.parent == ancestor:
                break
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            raise UsageError(f"cannot write to output folder {str(path)!r}: {str(ancestor)!r} is not a folder")
        too_long = _too_long(path, ancestor)
        if too_long:
            raise UsageError(f"cannot write to output folder {_short(path)!r}: {too_long}")
        probe = tempfile.NamedTemporaryFile(dir=ancestor, prefix=".probe-", delete=True)
        probe.close()
    except OSError as error:
        raise UsageError(f"cannot write to output folder {_short(path)!r}: {error.strerror or error}") from None
    return path


def _too_long(path: Path, ancestor: Path) -> str | None:
    """Why ``path`` cannot hold result folders on its file system (a name or the whole path too long)."""
    name_max, path_max = os.pathconf(ancestor, "PC_NAME_MAX"), os.pathconf(ancestor, "PC_PATH_MAX")
    for part in path.parts:
        if len(os.fsencode(part)) > name_max:
            return f"a name of {len(os.fsencode(part))} bytes, above the file system's {name_max}"
    length = len(os.fsencode(str(path.absolute())))
    if length + ROOM_FOR_NAMES > path_max:
        return f"a path of {length} bytes leaves no room for result folders under the file system's {path_max}"
    return None


def _short(path: Path) -> str:
    """``path`` as text, its middle elided past 80 characters (an error stays one readable line)."""
    text = str(path)
    return text if len(text) <= 80 else f"{text[:38]}...{text[-38:]}"


CREATED: list[Path] = []  # output folders this process created, in order (``remove_empty_created``)


def make_output_dir(path: Path) -> Path:
    """Create ``path`` (after ``check_output_dir``): the moment results are about to be written.
    The folders it creates are noted, so a failed command can remove them while still empty."""
    path = Path(path)
    missing = []
    ancestor = path
    while not ancestor.exists() and ancestor.parent != ancestor:
        missing.append(ancestor)
        ancestor = ancestor.parent
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise WriteError(f"cannot write to output folder {_short(path)!r}: {error.strerror or error}") from None
    CREATED.extend(reversed(missing))
    return path


def remove_empty_created(since: int = 0) -> None:
    """Remove the output folders created after the first ``since`` (deepest first) that are
    still empty: what a failed command made and never filled."""
    while len(CREATED) > since:
        try:
            CREATED.pop().rmdir()
        except OSError:  # not empty, or gone
            pass


@contextmanager
def output_dir(path: Path):
    """``make_output_dir`` for what the block writes: the folders it created are removed again
    when the block fails and leaves them empty (a failed run leaves no empty ``--out``)."""
    since = len(CREATED)
    make_output_dir(path)
    try:
        yield Path(path)
    except BaseException:
        remove_empty_created(since)
        raise


def ensure_writable_dir(path: Path) -> Path:
    """Check, then create ``path``."""
    return make_output_dir(check_output_dir(path))


@contextmanager
def staged_folder(final: Path):
    """Yield a temporary folder beside ``final`` (named with this process id, readable as the
    umask says); on success it takes ``final``'s place (``replace_folder``). A failed write
    (WriteError) leaves nothing behind."""
    final = Path(final)
    with writing(final):
        staging = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}.{os.getpid()}.", suffix=STAGING_SUFFIX))
    try:
        with writing(final):
            os.chmod(staging, 0o777 & ~current_umask())  # mkdtemp makes it private (0700)
            yield staging
            replace_folder(staging, final)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def replace_folder(staging: Path, final: Path) -> None:
    """Rename the whole folder ``staging`` to ``final``. An old ``final`` is first renamed away
    (to a unique staging name, then removed), never deleted in place: concurrent writers of one
    folder each rename a whole folder in, so ``final`` is always one whole folder, the last."""
    for _ in range(1000):
        try:
            os.rename(staging, final)
            return
        except OSError as error:
            if error.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
        old = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}.{os.getpid()}.", suffix=STAGING_SUFFIX))
        try:
            os.rename(final, old / "old")
        except FileNotFoundError:  # another writer moved it away first
            pass
        shutil.rmtree(old, ignore_errors=True)
    raise OSError(errno.EBUSY, f"{final} kept being replaced by other writers")


def check_replaceable(final: Path) -> None:
    """UsageError, before any work, when ``final`` exists but a finished run could not take its
    place: a symbolic link, not a folder, or a folder this process cannot read or remove."""
    final = Path(final)
    if final.is_symlink():
        raise UsageError(f"{_short(final)!r} is a symbolic link, not a run folder; remove it or give another --out")
    if not final.exists():
        return
    if not final.is_dir():
        raise UsageError(f"{_short(final)!r} exists and is not a folder; remove it or give another --out")
    if not (os.access(final, os.R_OK | os.W_OK | os.X_OK) and os.access(final.parent, os.W_OK | os.X_OK)):
        raise UsageError(f"{_short(final)!r} exists and cannot be read or replaced (permissions); fix them or give another --out")


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
        if pid is not None and alive(pid):
            continue
        if staging:
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(entry)
    return removed
