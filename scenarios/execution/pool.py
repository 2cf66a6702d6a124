"""Worker processes for many runs (``run_calls``): started from the fork server, ending with
their parent, cancelled at once on Ctrl-C.

Workers start from ``learning.worker_start``'s fork server, never as forks of this process
(which may have touched CUDA), so ``compare``, ``sweep``, ``reproduce`` and ``lambda-study`` work
next to a GPU; each worker loads the plugins this process loaded before it takes a run, and
initializes its own device. A worker ends with its parent, even one killed by SIGKILL
(``start.die_with``). The runs of one command share the results of the trainer's computations
that they make alike (``learning.reuse``: the round-0 evaluation of ``theta^0``, set-up
gradients), in each worker, or here when they run one after another. Ctrl-C (or any failure)
in the parent cancels the queued runs and stops the running ones; their result folders are
written atomically, so nothing half-written stays.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Callable, Sequence

from learning import worker_start as start

start.preload(["scenarios.execution.runner"])


def _initialize(owner_pid: int, setup: tuple, threads: int) -> None:
    from learning import reuse
    from learning.engine.workers import set_workers

    start.begin_worker(owner_pid, setup, threads)
    set_workers(1)  # training in this process: no nested training workers
    reuse.keep()  # the runs this worker takes share what they compute alike (learning/reuse.py)


def start_pool_server(jobs: int, calls: int) -> None:
    """Start the fork server the workers of ``run_calls(calls, jobs)`` will come from now, if
    that will start workers: a command calls it before its own checks and set-up (its data, its
    plan), which then run beside the server's imports of torch and the project."""
    if jobs > 1 and calls > 1 and "forkserver" in multiprocessing.get_all_start_methods():
        start.start_server()


def worker_pool(jobs: int, threads: int = 1) -> ProcessPoolExecutor:
    """``jobs`` worker processes, one torch thread each by default, ending with this one."""
    return ProcessPoolExecutor(max_workers=jobs, mp_context=start.context(), initializer=_initialize,
                               initargs=(os.getpid(), start.setup_calls(), threads))


def run_calls(calls: Sequence[Callable[[], object]], jobs: int, done: Callable[[int], None] | None = None) -> list:
    """Each call's result, in order: one after another here when ``jobs`` <= 1 (or one call), else
    on ``jobs`` worker processes (calls must pickle); ``done(finished)`` after each. Calls are
    independent runs, so the results do not depend on ``jobs``."""
    if jobs <= 1 or len(calls) <= 1:
        from learning import reuse

        results = []
        with reuse.kept():  # the runs share what they compute alike (learning/reuse.py), for this command only
            for call in calls:
                results.append(call())
                if done:
                    done(len(results))
        return results
    pool = worker_pool(jobs)
    try:
        with start.main_left_out():  # workers start as calls are submitted
            futures = [pool.submit(call) for call in calls]
        for finished, _ in enumerate(as_completed(futures), 1):
            if done:
                done(finished)
        results = [future.result() for future in futures]
    except BaseException:  # Ctrl-C: nothing queued runs after it
        _stop(pool)
        raise
    pool.shutdown()
    return results


def _stop(pool: ProcessPoolExecutor) -> None:
    """Cancel the queued calls and kill the running ones (their folders are written atomically)."""
    processes = list(getattr(pool, "_processes", None) or {})  # no public handle before Python 3.14
    pool.shutdown(wait=False, cancel_futures=True)
    for pid in processes:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
