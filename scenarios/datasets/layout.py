"""The one search for a dataset's files under a data directory, shared by every reader and the status report."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from scenarios.errors import DatasetError
from scenarios.records.reading import ReadError, open_regular

if TYPE_CHECKING:
    from scenarios.datasets.catalog import DatasetInfo

READ: dict[tuple[str, str], Path] = {}  # (dataset, data dir) -> the folder its readers read it from
_DIGESTS: dict[tuple, str] = {}  # (path, size, mtime, inode, ctime) -> SHA-256 of its bytes: each file hashed once


def search_folders(info: DatasetInfo, data_dir: str | Path) -> list[Path]:
    """The folders searched for `info`, in order: its sub-folders of data_dir ("" is data_dir itself)."""
    data_dir = Path(data_dir).expanduser()
    folders = [data_dir / sub if sub else data_dir for sub in info.folders]
    return list(dict.fromkeys(folders))


def locate(info: DatasetInfo, data_dir: str | Path, wanted: Sequence[Sequence[str]], reading: bool = True) -> list[Path]:
    """One path per wanted file, all from the first searched folder that holds every one of them.

    Each entry of `wanted` lists the names one file may have (plain or gzip, tarball or
    extracted folder), preferred first. Keeping all files in one folder stops a reader from
    pairing MNIST images with Fashion-MNIST labels. Raises DatasetError naming the expected
    files, the folders searched and how to get the data. ``reading``: the files are noted as
    read (``data_digest``).
    """
    folders = search_folders(info, data_dir)
    for folder in folders:
        found = [next((folder / name for name in names if (folder / name).exists()), None) for names in wanted]
        if all(found):
            if reading:
                READ[(info.name, _key(data_dir))] = folder
            return found
    expected = ", ".join(" or ".join(names) for names in wanted)
    searched = ", ".join(str(folder) for folder in folders)
    raise DatasetError(f"{info.name}: data not found: expected {expected} in one of: {searched}; {info.how_to_get}")


def _key(data_dir: str | Path) -> str:
    return str(Path(data_dir).expanduser().absolute())


def data_digest(info: DatasetInfo, data_dir: str | Path) -> str | None:
    """The SHA-256 over the names and bytes of the dataset's files (each in the form its readers
    read: an extracted folder, every file in it) in the folder they were read from in this
    process; None when it was not read (a built-in or generated dataset). Every file of the
    dataset counts, whichever split a run read, so the digest does not depend on what else ran."""
    folder = READ.get((info.name, _key(data_dir)))
    if folder is None:
        return None
    digest = hashlib.sha256()
    for data_file in info.files:
        path = next((folder / name for name in data_file.read_order if (folder / name).exists()), None)
        if path is None:
            continue
        members = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for member in members:
            digest.update(f"{member.relative_to(folder).as_posix()}\0{_file_sha256(member)}\n".encode())
    return digest.hexdigest()


def _file_sha256(path: Path) -> str:
    """SHA-256 of a regular file's bytes, computed once per version of the file (size, times, inode)."""
    stat = path.stat()
    key = (str(path.absolute()), stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns)
    if key not in _DIGESTS:
        digest = hashlib.sha256()
        try:
            with open_regular(path) as stream:
                while block := stream.read(1 << 20):
                    digest.update(block)
        except ReadError as error:
            raise DatasetError(str(error)) from None
        _DIGESTS[key] = digest.hexdigest()
    return _DIGESTS[key]
