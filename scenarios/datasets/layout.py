"""The one search for a dataset's files under a data directory, shared by every reader and the status report."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from scenarios.errors import DatasetError

if TYPE_CHECKING:
    from scenarios.datasets.catalog import DatasetInfo


def search_folders(info: DatasetInfo, data_dir: str | Path) -> list[Path]:
    """The folders searched for `info`, in order: its sub-folders of data_dir ("" is data_dir itself)."""
    data_dir = Path(data_dir).expanduser()
    folders = [data_dir / sub if sub else data_dir for sub in info.folders]
    return list(dict.fromkeys(folders))


def locate(info: DatasetInfo, data_dir: str | Path, wanted: Sequence[Sequence[str]]) -> list[Path]:
    """One path per wanted file, all from the first searched folder that holds every one of them.

    Each entry of `wanted` lists the names one file may have (plain or gzip, tarball or
    extracted folder), preferred first. Keeping all files in one folder stops a reader from
    pairing MNIST images with Fashion-MNIST labels. Raises DatasetError naming the expected
    files, the folders searched and how to get the data.
    """
    folders = search_folders(info, data_dir)
    for folder in folders:
        found = [next((folder / name for name in names if (folder / name).exists()), None) for names in wanted]
        if all(found):
            return found
    expected = ", ".join(" or ".join(names) for names in wanted)
    searched = ", ".join(str(folder) for folder in folders)
    raise DatasetError(f"{info.name}: data not found: expected {expected} in one of: {searched}; {info.how_to_get}")
