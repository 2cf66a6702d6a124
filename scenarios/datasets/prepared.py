"""Parsed datasets kept on disk, so a second run reads arrays instead of parsing files again.

A dataset's arrays as a scenario's source made them (the Stack Overflow posts tokenized and
encoded, an image split decoded) are stored in ``$XDG_CACHE_HOME/fl-cosim/prepared`` (else
``~/.cache/fl-cosim/prepared``) under a name made of what they are, their parser's version and
the digest of the dataset files they came from (``layout.data_digest``, the one a run's reuse
key records): other bytes or another parser never read an old entry. An entry is written
atomically (a temporary file, then a rename); one that cannot be read is made again; one that
cannot be written is only a slower next run.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Callable

import numpy as np

from scenarios.datasets.catalog import user_cache
from scenarios.errors import WriteError
from scenarios.records.atomic import atomic_write_bytes


def prepared_folder() -> Path:
    return user_cache() / "prepared"


def prepared_arrays(what: str, version: int, digest: Callable[[], str | None],
                    parse: Callable[[], tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    """``parse()``'s arrays, read-only: from the cache when it holds ``what`` at parser
    ``version`` for the files of ``digest()`` (None: not all there, nothing looked up), else
    parsed and stored under the digest of the files ``parse`` read (asked again after it)."""
    found = digest()
    arrays = _read(_path(what, version, found)) if found is not None else None
    if arrays is None:
        arrays = tuple(np.asarray(a) for a in parse())
        read = digest()
        if read is not None:
            _write(_path(what, version, read), arrays)
    for array in arrays:
        array.flags.writeable = False
    return arrays


def _path(what: str, version: int, digest: str) -> Path:
    return prepared_folder() / f"{what}-v{version}-{digest}.npz"


def _read(path: Path) -> tuple[np.ndarray, ...] | None:
    try:
        with np.load(path, allow_pickle=False) as stored:
            return tuple(stored[f"a{i}"] for i in range(len(stored.files)))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):  # absent, or not whole: made again
        return None


def _write(path: Path, arrays: tuple[np.ndarray, ...]) -> None:
    buffer = io.BytesIO()
    np.savez(buffer, **{f"a{i}": a for i, a in enumerate(arrays)})
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, buffer.getvalue())
    except (OSError, WriteError):
        pass
