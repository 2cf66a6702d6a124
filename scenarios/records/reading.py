"""The one reader of every file a result folder or a user hands in (no torch, no simpy).

Each file is opened without blocking and read only when it is a regular file (a FIFO, a
device such as ``/dev/zero`` or a folder is refused; inside a result folder a symbolic link is
refused too: ``follow=False``), up to a size limit; text must be UTF-8; JSON and CSV numbers
must be finite (``NaN``, ``Infinity``, ``1e999``, ``nan``, ``inf`` are refused) and JSON and
TOML nested at most ``MAX_DEPTH`` deep; gzip data is inflated only as far as needed. Every
failure is a ``ReadError``: one line naming the file, exit status 2 on the command line. The
primitives (opening, bounded reading, JSON) live in ``contract.files``, where every layer reads
with them (``netsim`` an availability trace); the table and sweep limits and gzip are here.
"""

from __future__ import annotations

import gzip

from contract.files import (MAX_DEPTH, MAX_JSON_BYTES, ReadError, check_depth, finite_float, open_regular, parse_json,
                            read_bytes, read_json, read_text)

__all__ = ["MAX_DEPTH", "MAX_JSON_BYTES", "MAX_SWEEP_BYTES", "MAX_TABLE_BYTES", "ReadError", "check_depth", "finite_float",
           "gunzipped", "open_regular", "parse_json", "read_bytes", "read_json", "read_text"]

MAX_TABLE_BYTES = 2 << 30  # a result folder's CSV and JSONL files: a larger one is refused, never read
MAX_SWEEP_BYTES = 16 << 20  # a sweep file


def gunzipped(stream):
    """``stream`` decompressed when it starts with the gzip magic (else as it is): unlike
    tarfile's own stream mode, a truncated gzip stream is an error (EOFError), never a short archive."""
    if stream.peek(2)[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=stream)
    return stream
