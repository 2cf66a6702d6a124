"""Plugin code runs from its source: what a run records of its plugins is what it ran.

A run records the digest of every plugin file it executed (``scenarios.plugins.executed_files``,
the provenance in ``config.json``) and is run again when one of them changes. Python, though,
imports a module from the bytecode it cached beside it (``__pycache__``) while the source's
modification time, in whole seconds, and its size still match the cache's. A helper rewritten
within the same second to text of the same length (a script that sets ``SCALE = 0.0`` where
``SCALE = 1.0`` stood and runs again) would run its old code under its new digest.

So once plugins load, every module that is neither Python's, an installed library's nor
fl-cosim's (the code the digest covers) is compiled from its source as it is imported: no
bytecode is read or written for it, and its source is read bounded (``SourceLoader``). Python's, the libraries' and fl-cosim's modules import as
before.
"""

from __future__ import annotations

import importlib.machinery
import os
import sys
from pathlib import Path
from typing import Iterable

from contract.files import read_bytes


MAX_SOURCE_BYTES = 16 << 20  # a plugin's module: a larger one is refused, never read


class SourceLoader(importlib.machinery.SourceFileLoader):
    """A ``.py`` file's loader that compiles the file as it is now, at every import, read as
    every file a user hands in (``contract.files``): a regular file of at most
    ``MAX_SOURCE_BYTES`` (a helper that is a FIFO or a device is refused, never waited on)."""

    def get_code(self, fullname: str):
        return self.source_to_code(read_bytes(self.path, MAX_SOURCE_BYTES), self.path)


class SourceFinder:
    """Before Python's path finder on ``sys.meta_path``: the module it finds, with a
    ``SourceLoader`` where the file lies outside ``others`` (folders)."""

    def __init__(self, others: Iterable[Path]):
        self.others = tuple(os.path.join(str(folder), "") for folder in others)

    def find_spec(self, fullname: str, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or type(spec.loader) is not importlib.machinery.SourceFileLoader:
            return spec
        if os.path.realpath(spec.origin).startswith(self.others):
            return spec
        spec.loader = SourceLoader(fullname, spec.origin)
        return spec


def from_source(others: Iterable[Path]) -> None:
    """From now on in this process, a module whose file lies outside ``others`` (Python's, the
    libraries' and fl-cosim's folders) is compiled from its source (once: later calls keep the
    first finder)."""
    if any(isinstance(finder, SourceFinder) for finder in sys.meta_path):
        return
    finders = sys.meta_path
    path_finder = importlib.machinery.PathFinder
    finders.insert(finders.index(path_finder) if path_finder in finders else len(finders), SourceFinder(others))
