"""Reading a file a user hands in, bounded: the primitives of ``scenarios.records.reading`` (the
one reader of result folders and users' files), here so that every layer reads the same way
(``netsim`` reads an availability trace with them). Standard library only.

Each file is opened without blocking and read only when it is a regular file (a FIFO, a
device such as ``/dev/zero`` or a folder is refused; ``follow=False`` refuses a symbolic link
too), up to a size limit: no read waits on a writer or grows without end. Text must be UTF-8;
JSON numbers must be finite (``NaN``, ``Infinity``, ``1e999`` are refused) and JSON nested at
most ``MAX_DEPTH`` deep. Every failure is a ``ReadError``: one line naming the file (a
``UsageError``, exit status 2 on the command line, and a ``ValueError``).
"""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path

from contract.setting import UsageError

MAX_JSON_BYTES = 64 << 20  # config.json, summary.json, checksums.json, a study's JSON, an availability trace
MAX_DEPTH = 64  # nesting of JSON and TOML: every file fl-cosim writes stays below 8


class ReadError(UsageError, ValueError):
    """A file that cannot be read as what it should be (one line naming it)."""


def open_regular(path: str | Path, follow: bool = True):
    """``path`` opened for reading in binary, if it is a regular file (a FIFO is opened without
    waiting for a writer, then refused); ``follow=False`` refuses a symbolic link too."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if not follow and os.path.islink(path):
            raise ReadError(f"{path} is a symbolic link, not a file of the folder") from None
        raise ReadError(f"cannot read {path}: {error.strerror or error}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(mode) else "a pipe" if stat.S_ISFIFO(mode) else "a device or socket"
        raise ReadError(f"{path} is {kind}, not a regular file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_bytes(path: str | Path, limit: int, follow: bool = True) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes."""
    with open_regular(path, follow) as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as error:
            raise ReadError(f"cannot read {path}: {error.strerror or error}") from None
    if len(data) > limit:
        raise ReadError(f"{path} is larger than {limit:,} bytes")
    return data


def read_text(path: str | Path, limit: int, follow: bool = True) -> str:
    """The UTF-8 text of a regular file of at most ``limit`` bytes."""
    return decoded(read_bytes(path, limit, follow), path)


def decoded(data: bytes, path: str | Path) -> str:
    """``data`` (read from ``path``) as UTF-8 text."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ReadError(f"{path} is not UTF-8 text (byte {error.start})") from None


def finite_float(text: str) -> float:
    """``float(text)`` when it is a finite number (ValueError otherwise: ``nan``, ``inf``, ``1e999``)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"it holds {text}")
    return value


def _refuse_constant(name: str):
    raise ValueError(f"it holds {name}")


def parse_json(text: str):
    """``json.loads`` with finite numbers only and at most ``MAX_DEPTH`` levels (ValueError)."""
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_float=finite_float)
    except RecursionError:
        raise ValueError(f"it is nested deeper than {MAX_DEPTH} levels") from None
    check_depth(data)
    return data


def check_depth(data, limit: int = MAX_DEPTH) -> None:
    """ValueError when lists and tables inside ``data`` nest deeper than ``limit``."""
    level = [(data, 1)]
    while level:
        value, depth = level.pop()
        if isinstance(value, (dict, list, tuple)):
            if depth > limit:
                raise ValueError(f"it is nested deeper than {limit} levels")
            level += [(item, depth + 1) for item in (value.values() if isinstance(value, dict) else value)]


def json_value(data: bytes, path: str | Path):
    """The finite, bounded JSON value of ``data`` (read from ``path``; ReadError naming it otherwise)."""
    text = decoded(data, path)
    try:
        return parse_json(text)
    except ValueError as error:
        raise ReadError(f"{path} is not valid JSON ({error})") from None


def read_json(path: str | Path, limit: int = MAX_JSON_BYTES, follow: bool = True):
    """The finite, bounded JSON value in a regular file (ReadError naming it otherwise)."""
    return json_value(read_bytes(path, limit, follow), path)
