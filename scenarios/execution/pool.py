"""Worker processes that die with their parent, and the one way many runs use them (``run_calls``).

A worker pool's processes must not outlive the command that started them: when the parent is
killed (even by SIGKILL, which runs no clean-up) each worker is killed by the kernel
(Linux ``PR_SET_PDEATHSIG``) and, as a second guard on any system, a watcher thread in the
worker exits when its parent process is gone.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Callable, Sequence

PR_SET_PDEATHSIG = 1
PARENT_POLL_S = 0.5  # how often the watcher looks for its parent (process management only)


def die_with_parent(parent_pid: int) -> None:
    """In a worker: be killed when process ``parent_pid`` ends (call first thing)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent_pid:  # the parent died before the request above
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(PARENT_POLL_S)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _initialize(parent_pid: int, threads: int) -> None:
    die_with_parent(parent_pid)
    import torch

    from learning.engine.workers import set_workers

    torch.set_num_threads(threads)
    set_workers(1)  # training in this process: no nested training workers


def worker_pool(jobs: int, threads: int = 1) -> ProcessPoolExecutor:
    """``jobs`` forked worker processes, one torch thread each by default, dying with this one."""
    return ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"),
                               initializer=_initialize, initargs=(os.getpid(), threads))


def run_calls(calls: Sequence[Callable[[], object]], jobs: int, done: Callable[[int], None] | None = None) -> list:
    """Each call's result, in order: one after another here when ``jobs`` <= 1 (or one call), else
    on ``jobs`` worker processes; ``done(finished)`` after each. Calls are independent runs, so
    the results do not depend on ``jobs``."""
    if jobs <= 1 or len(calls) <= 1:
        results = []
        for call in calls:
            results.append(call())
            if done:
                done(len(results))
        return results
    with worker_pool(jobs) as pool:
        futures = [pool.submit(call) for call in calls]
        for finished, _ in enumerate(as_completed(futures), 1):
            if done:
                done(finished)
        return [future.result() for future in futures]
