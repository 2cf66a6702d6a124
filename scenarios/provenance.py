"""What produced a result: fl-cosim's version (and commit, run from a git checkout), Python and the
libraries whose numbers a run depends on, the torch threads. Recorded in every ``config.json``
under ``provenance``; it is not part of the folder's hash, and a folder recorded by another
fl-cosim version is run again rather than reused (``scenarios.execution.runner.reusable``)."""

from __future__ import annotations

import functools
import platform
import subprocess
from importlib import metadata
from pathlib import Path

LIBRARIES = {"torch": "torch", "numpy": "numpy", "simpy": "simpy", "scikit_learn": "scikit-learn"}


@functools.cache
def fl_cosim_version() -> str:
    try:
        return metadata.version("fl-cosim")
    except metadata.PackageNotFoundError:  # imported from a source tree that was never installed
        return "unknown"


@functools.cache
def checkout_commit() -> str | None:
    """The git commit of the source tree, with ``-dirty`` when it has uncommitted changes; None
    outside a git checkout."""
    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return None
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("-dirty" if dirty else "")


@functools.cache
def library_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for key, distribution in LIBRARIES.items():
        try:
            versions[key] = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            versions[key] = "not installed"
    return versions


def provenance() -> dict:
    import torch

    return {"fl_cosim": fl_cosim_version(), "commit": checkout_commit(), **library_versions(),
            "torch_threads": torch.get_num_threads()}
