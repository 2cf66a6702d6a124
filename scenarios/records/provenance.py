"""What produced a result: fl-cosim's version (and commit, run from a git checkout), the digest
of the code that ran (``code``: the package's sources and every plugin file with the modules
beside it that the run imported by its end, whose paths ``code_files`` keeps), Python and the
libraries whose numbers a run depends on, the torch threads. Recorded in every ``config.json``
under ``provenance`` with the digest of the dataset files the run read (``data``,
``scenarios.datasets.layout.data_digest``); it is not part of the folder's hash, and a folder
recorded by another version, other code or other data is run again rather than reused
(``scenarios.execution.runner.reusable``)."""

from __future__ import annotations

import functools
import hashlib
import platform
import subprocess
from importlib import metadata
from pathlib import Path

PACKAGES = ("contract", "netsim", "learning", "scenarios", "figures")  # pyproject's packages
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
    root = Path(__file__).resolve().parents[2]
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


def files_digest(files, root: Path | None = None) -> str:
    """SHA-256 over each file's name (relative to ``root``, else its own) and the SHA-256 of its
    bytes, in order: the same files elsewhere give the same digest."""
    digest = hashlib.sha256()
    for path in files:
        name = str(path.relative_to(root)) if root else path.name
        digest.update(f"{name}\0{hashlib.sha256(path.read_bytes()).hexdigest()}\n".encode())
    return digest.hexdigest()


def package_folders() -> tuple[Path, ...]:
    root = Path(__file__).resolve().parents[2]
    return tuple(root / name for name in PACKAGES)


@functools.cache
def package_digest() -> str:
    """The digest of fl-cosim's own sources (every ``.py`` file of its packages): a changed
    source changes it, committed or not."""
    root = Path(__file__).resolve().parents[2]
    return files_digest(sorted(p for folder in package_folders() for p in folder.rglob("*.py")), root)


def code_digest(plugin_files=()) -> str:
    """The digest of the code a run executes: the package's sources and, when plugins are
    loaded, each plugin file and the modules it imported (``scenarios.plugins.plugin_files``)."""
    if not plugin_files:
        return package_digest()
    return hashlib.sha256(f"{package_digest()}\n{files_digest(plugin_files)}".encode()).hexdigest()


def code_record(plugin_files=()) -> dict:
    """``code``, the digest of the package and of ``plugin_files``, and, when there are plugin
    files, ``code_files``: their absolute paths, for a later reuse to digest the same files."""
    files = sorted({Path(path).resolve() for path in plugin_files})
    return {"code": code_digest(files), **({"code_files": [str(path) for path in files]} if files else {})}


def code_now(recorded: dict, loaded: dict) -> str | None:
    """The digest, now, of the code a recorded run executed (``recorded``, its provenance: the
    plugin files of its ``code_files``) and of the plugin files loaded now (``loaded``'s); None
    when a recorded file is gone or the record is not a list of paths."""
    files = [recorded.get("code_files", []), loaded.get("code_files", [])]
    if not all(isinstance(paths, list) and all(isinstance(p, str) for p in paths) for paths in files):
        return None
    try:
        return code_record([path for paths in files for path in paths])["code"]
    except OSError:
        return None


def provenance_problem(then: dict, now: dict) -> str | None:
    """Why a result recorded with the provenance ``then`` is not what the fl-cosim version, code
    (``code_now``: the package, the plugins loaded now and every plugin module the recorded
    result had imported) and dataset files of ``now`` would give (None: it is)."""
    if then.get("fl_cosim") != now["fl_cosim"]:
        return f"it was made by fl-cosim {then.get('fl_cosim')}, this is {now['fl_cosim']}"
    code = code_now(then, now)  # the code it ran, as it is now: a helper a method imported included
    for key, what, current in (("code", "code", code), ("data", "dataset files", now["data"])):
        if then.get(key) != current:
            return f"its {what} differ (digest {_short(then.get(key))} then, {_short(current)} now)"
    return None


def _short(digest) -> str:
    return digest[:12] if isinstance(digest, str) else "none"


def provenance(data: str | None = None, plugin_files=()) -> dict:
    """The provenance record of a run whose dataset files have the digest ``data`` (None: the
    run reads no dataset file), run with the plugin files executed by now (``plugin_files``:
    ``scenarios.plugins.executed_files``, digested before the run trains, so a file that cannot
    be read stops it there; recorded again after the run with every plugin module it imported:
    ``code_record``)."""
    import torch

    return {"fl_cosim": fl_cosim_version(), "commit": checkout_commit(), **code_record(plugin_files), "data": data,
            **library_versions(), "torch_threads": torch.get_num_threads()}
