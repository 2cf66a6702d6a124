"""How worker processes start: from a fork server, never by forking the process that asks.

A process that has touched CUDA (or, on a machine with a GPU, run autograd at all) cannot be
forked safely: the child fails with "Cannot re-initialize CUDA in forked subprocess" or
"Unable to handle autograd's threading in combination with fork-based multiprocessing". So
every worker of the project (the ``processes`` backend's training workers, the run pool of
``compare``/``sweep``/``reproduce``) is started by ``multiprocessing``'s ``forkserver``: a
clean server process, started once per process on first use (or earlier, ``start_server``),
that has imported torch and the project (``preload``) and forks each worker from itself. A
worker starts in milliseconds and inherits nothing of its requester but what it is sent, so
each worker initializes its own device, and several workers may share one GPU.

A fresh worker has none of the requester's run-time state: ``setup_calls()`` are picklable
calls it runs first (loading the ``--plugin`` modules loaded here, say), made as the worker
starts by the makers given to ``add_setup``, before it reads any work that names their
classes. ``die_with(pid)`` makes a worker end with the process that asked for it;
``main_left_out()`` keeps the requester's main script from running again in its workers.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import select
import signal
import sys
import threading
import types
from contextlib import contextmanager
from multiprocessing.context import BaseContext
from typing import Callable, Iterable, Iterator

_PR_SET_PDEATHSIG = 1

_preload: list[str] = ["torch", "numpy", "learning.training"]
_setup_makers: dict[str, Callable[[], Callable[[], object] | None]] = {}


def preload(modules: Iterable[str]) -> None:
    """Modules the fork server imports once, so that workers start with them loaded; only takes
    effect before the server starts (a worker imports what it lacks itself)."""
    for module in modules:
        if module not in _preload:
            _preload.append(module)


def context() -> BaseContext:
    """The ``multiprocessing`` context every worker starts from (``forkserver``)."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(list(_preload))
    return ctx


def start_server() -> None:
    """Start the fork server now, so that its imports (``preload``) run beside what this process
    does before it asks for its first worker; a no-op where it already runs."""
    from multiprocessing import forkserver

    context()
    forkserver.ensure_running()


@contextmanager
def main_left_out() -> Iterator[None]:
    """Workers started inside this block do not import the requester's main script again (as
    ``multiprocessing`` otherwise does): they run the project's functions only, and a script
    without an ``if __name__ == "__main__"`` guard must not run again in each of them. The main
    module is named ``__main__`` for the start (``multiprocessing.spawn.get_preparation_data``
    then sends no path, and the worker skips the import)."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    had, spec = hasattr(main, "__spec__"), getattr(main, "__spec__", None)
    main.__spec__ = types.SimpleNamespace(name="__main__")
    try:
        yield
    finally:
        if had:
            main.__spec__ = spec
        else:
            del main.__spec__


def add_setup(name: str, make: Callable[[], Callable[[], object] | None]) -> None:
    """``make()``, asked as each worker starts, gives a picklable call the worker runs before
    its work (None: nothing to do now)."""
    _setup_makers[name] = make


def setup_calls() -> tuple[Callable[[], object], ...]:
    """The calls a worker started now runs first."""
    return tuple(call for call in (make() for make in _setup_makers.values()) if call is not None)


def die_with(owner_pid: int) -> None:
    """In a new worker: end when process ``owner_pid`` (the one that asked for it) ends.

    The worker's parent is the fork server, which exits when its owner does; the kernel then
    kills the worker (``PR_SET_PDEATHSIG``, Linux). As a second guard a thread waits on the
    owner itself (a ``pidfd``, readable once the owner has ended; Linux 5.3+), and elsewhere
    the worker ends at EOF on its pipe. Exits now if the owner is already gone."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if not alive(owner_pid):
        os._exit(1)
    try:
        owner = os.pidfd_open(owner_pid)
    except (AttributeError, OSError):
        return

    def watch() -> None:
        select.select([owner], [], [])  # blocks until the owner has ended
        os._exit(1)

    threading.Thread(target=watch, name="owner-watch", daemon=True).start()


def begin_worker(owner_pid: int, calls: Iterable[Callable[[], object]], threads: int = 1) -> None:
    """What every worker does first: end with its owner, leave Ctrl-C to the owner, train at
    ``threads`` torch threads, run the setup calls."""
    die_with(owner_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import torch

    torch.set_num_threads(threads)
    for call in calls:
        call()


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True  # no /proc: signal 0 is all there is
