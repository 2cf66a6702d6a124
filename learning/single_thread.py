"""scikit-learn's clustering on one thread of its native libraries (BLAS and OpenMP), and
NumPy's matrix products on a row per device on one BLAS thread.

k-means (eq. 11, FeSEM's seeding, pFedLIA's 2-means), silhouettes (Algorithm 2) and OPTICS
(pFedLIA) run on a row per device, tens to hundreds of rows, where the threads of OpenBLAS and
OpenMP cost more than they save: a silhouette curve of 100 devices takes about half the time
on one thread (``python3 -m benchmarks.clustering_threads``, ``docs/benchmarks.md``). Their sums
then no longer depend on the machine's cores either: on two BLAS threads a silhouette differs
from one thread's in its last bits. The same holds for the Gram matrix of eq. 9's gradient
distances (``blas_one_thread``): 20 devices of a 62,006-parameter CNN took 1.4 s on OpenBLAS's
two threads of a loaded 2-core machine, 4 ms on one.
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


@functools.cache
def _blas_threads():
    """threadpoolctl's handle on the BLAS libraries loaded at its first call (NumPy's among
    them), without loading scikit-learn (whose import costs about 2 s)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController().select(user_api="blas")


def blas_one_thread() -> AbstractContextManager:
    """Within ``with``: every BLAS library loaded at the first call runs one thread (restored on leaving)."""
    return _blas_threads().limit(limits=1)
