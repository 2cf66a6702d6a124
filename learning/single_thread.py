"""scikit-learn's clustering, and the Gram matrix of eq. 9's gradient distances, on one thread
of their native libraries (BLAS and OpenMP).

k-means (eq. 11, FeSEM's seeding, pFedLIA's 2-means), silhouettes (Algorithm 2) and OPTICS
(pFedLIA) run on a row per device, tens to hundreds of rows, where the threads of OpenBLAS and
OpenMP cost more than they save: a silhouette curve of 100 devices takes about half the time
on one thread (``python3 -m benchmarks.clustering_threads``, ``docs/benchmarks.md``). Their sums
then no longer depend on the machine's cores either: on two BLAS threads a silhouette differs
from one thread's in its last bits.
"""

from __future__ import annotations

import functools
from contextlib import AbstractContextManager


@functools.cache
def native_threads():
    """threadpoolctl's handle on the BLAS and OpenMP libraries loaded at its first call
    (scikit-learn's among them); ``.info()`` lists their thread counts."""
    import sklearn.cluster  # noqa: F401  their native libraries loaded first, so the controller holds them
    import sklearn.metrics  # noqa: F401
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def one_thread() -> AbstractContextManager:
    """Within ``with``: every BLAS and OpenMP library loaded at the first call runs one thread
    (their settings restored on leaving)."""
    return native_threads().limit(limits=1)
