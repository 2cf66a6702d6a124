"""Fetch a dataset's published files into the data directory, md5-checked and atomically placed."""

from __future__ import annotations

import hashlib
import http.client
import os
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import IO

from scenarios.datasets.catalog import DataFile, DatasetInfo, file_md5, get_dataset
from scenarios.errors import DatasetError

CHUNK_BYTES = 1 << 20


def _copy_verified(stream: IO[bytes], data_file: DataFile, dest: Path, origin: str) -> None:
    """Copy stream to a temporary file beside dest while hashing it, check the md5, rename into place.

    The temporary file is removed on every failure, so dest is either the old file or a whole,
    verified new one.
    """
    handle, temp_name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    temp = Path(temp_name)
    try:
        digest = hashlib.md5()
        with os.fdopen(handle, "wb") as out:
            while chunk := stream.read(CHUNK_BYTES):
                digest.update(chunk)
                out.write(chunk)
        md5 = digest.hexdigest()
        if data_file.md5s and md5 not in data_file.md5s:
            raise DatasetError(
                f"download of {origin} failed: md5 {md5} matches no known-good md5 of {data_file.name} "
                f"({', '.join(data_file.md5s)}); nothing was kept"
            )
        os.replace(temp, dest)
    finally:
        temp.unlink(missing_ok=True)


def _describe(exc: Exception, timeout_s: float) -> str:
    """A short cause for a failed request."""
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, TimeoutError):
        return f"no answer within {timeout_s:g} s"
    if isinstance(exc, urllib.error.URLError):
        return f"cannot connect: {exc.reason}"
    return f"{type(exc).__name__}: {exc}"


def _download(url: str, data_file: DataFile, dest: Path, timeout_s: float) -> None:
    """Fetch url to dest via _copy_verified; every failure becomes a one-line DatasetError naming url."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            _copy_verified(response, data_file, dest, url)
    except DatasetError:
        raise
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise DatasetError(f"download of {url} failed: {_describe(exc, timeout_s)}") from exc


def _unpack(archive_path: Path, archive_url: str, files: list[DataFile], folder: Path) -> None:
    """Take `files` (matched by base name) out of a downloaded zip, each md5-checked and atomically placed."""
    try:
        with zipfile.ZipFile(archive_path) as archive:
            members = {PurePosixPath(member).name: member for member in archive.namelist()}
            for data_file in files:
                member = members.get(data_file.name)
                if member is None:
                    raise DatasetError(f"download of {archive_url} failed: the archive lacks {data_file.name}")
                with archive.open(member) as stream:
                    _copy_verified(stream, data_file, folder / data_file.name, f"{archive_url} ({member})")
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise DatasetError(f"download of {archive_url} failed: unreadable zip: {exc}") from exc


def _is_in_place(data_file: DataFile, path: Path) -> bool:
    """Whether path already holds the file: present, and matching a known md5 when one is known."""
    return path.is_file() and (not data_file.md5s or file_md5(path) in data_file.md5s)


def _url(base_url: str, name: str) -> str:
    return f"{base_url.rstrip('/')}/{name}"


def download_dataset(
    name: str,
    data_dir: str | Path,
    base_url: str | None = None,
    timeout_s: float = 30,
    *,
    report: Callable[[str], None] | None = None,
) -> list[Path]:
    """Download dataset `name` into its folder under data_dir; returns the paths of its files.

    base_url replaces the canonical URL (a mirror, or a local server in tests). Files already
    in place with a known-good md5 are kept. Every file is checked against its known md5s and
    renamed into place only when whole and good, so a failure never leaves a partial file.
    EMNIST is published only as one zip of all splits (about 535 MB): it is fetched, checked,
    the split's four files are taken out of it, and it is deleted (a good gzip.zip already in
    the folder is used instead, and kept). report, if given, receives
    one line per step (for a command line to print).
    Raises DatasetError, one line naming the URL and the cause, on an unreachable host, an
    HTTP error, a timeout (timeout_s per blocking network operation) or an md5 mismatch; and
    for a dataset without a canonical URL when no base_url is given.
    """
    info: DatasetInfo = get_dataset(name)
    folder = Path(data_dir).expanduser() / info.folders[0]
    source = base_url or info.base_url
    if source is None:
        files = ", ".join(f.name for f in info.files)
        raise DatasetError(f"{name}: cannot download: {info.download_note}; copy {files} into {folder}")
    say = report or (lambda line: None)
    created = _missing_folders(folder)
    try:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DatasetError(f"{folder}: cannot create the dataset folder: {exc}") from exc
        return _fetch_into(info, folder, source, timeout_s, say)
    except BaseException:
        for path in created:  # leave nothing behind a failed first download: no folder it made, the data dir's included
            try:
                path.rmdir()
            except OSError:  # not empty (files kept from before, or whole verified ones), or never made
                break
        raise


def _missing_folders(folder: Path) -> list[Path]:
    """``folder`` and those of its ancestors that do not exist yet, deepest first."""
    missing = []
    while not folder.exists() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    return missing


def _fetch_into(info: DatasetInfo, folder: Path, source: str, timeout_s: float, say) -> list[Path]:
    """Fetch the files of ``info`` that are not already good in ``folder``."""
    pending = [f for f in info.files if not _is_in_place(f, folder / f.name)]
    for data_file in info.files:
        if data_file not in pending:
            say(f"{folder / data_file.name}: already in place")
    if pending and info.archive is not None:
        archive_url = _url(source, info.archive.name)
        archive_path = folder / info.archive.name
        fetched = not _is_in_place(info.archive, archive_path)  # a good copy placed there by hand is reused, and kept
        if fetched:
            say(f"fetching {archive_url}")
            _download(archive_url, info.archive, archive_path, timeout_s)
        try:
            _unpack(archive_path, archive_url, pending, folder)
        finally:
            if fetched:
                archive_path.unlink(missing_ok=True)
    else:
        for data_file in pending:
            url = _url(source, data_file.name)
            say(f"fetching {url}")
            _download(url, data_file, folder / data_file.name, timeout_s)
    return [folder / f.name for f in info.files]
