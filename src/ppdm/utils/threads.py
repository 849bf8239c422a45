"""One thread for small OpenMP kernels: scikit-learn's neighbour searches on tables of a few thousand records.

scikit-learn runs its pairwise-distance reductions (``kneighbors``, ``KNeighborsClassifier.predict``,
``pairwise_distances_argmin_min``) on an OpenMP team of one thread per core. On small problems the team costs
more than it saves, and far more when another process holds a core: its threads wait for one another. On 2
cores with one of them busy, a 5-neighbour search of 114 records among 455 (30 columns) took 23 to 86 ms with
the team and 0.7 to 2.3 ms on one thread; 1,000 among 4,000 (14 columns) 137 to 144 ms against 14 to 17 ms;
5,000 among 5,000 (40 columns) 142 ms against 99 ms; 20,000 among 20,000 (20 columns), 8e9 cells, the same
(1.1 to 1.3 s either way). Such a search below :data:`ONE_THREAD_CELLS` runs on one thread.

BLAS (OpenBLAS's threads) behaves alike: an SVD of WDBC's 569 x 30 design took 54 ms a call with two threads
while the other core was busy. A small table's work in the main process runs on one thread of every pool
(:func:`small_table_threads`); a sweep's workers are given one thread each already
(:mod:`ppdm.release.scheduler`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["ONE_THREAD_CELLS", "SMALL_TABLE_VALUES", "openmp_threads_for", "small_table_threads"]

#: values of a table's design below which its work in this process runs on one thread of every pool
SMALL_TABLE_VALUES = 2_000_000
#: queries x reference records x columns below which a search runs on one OpenMP thread (at most a few tens of
#: milliseconds on one core: what a team of two could save is less than what it costs under load)
ONE_THREAD_CELLS = 200_000_000


@functools.cache
def _controller() -> Any:
    """threadpoolctl's view of the process's thread pools, taken once scikit-learn's OpenMP runtime is loaded
    (a controller is about 10 ms to make and 0.02 ms to use)."""
    import sklearn.neighbors  # noqa: F401 (loads the OpenMP runtime the controller must see)
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextmanager
def openmp_threads_for(cells: float) -> Iterator[None]:
    """Run the block on one OpenMP thread when its search has fewer than :data:`ONE_THREAD_CELLS` cells
    (queries x reference records x columns); otherwise leave the pool as it is."""
    if cells >= ONE_THREAD_CELLS:
        yield
        return
    with _controller().limit(limits=1, user_api="openmp"):
        yield


@contextmanager
def small_table_threads(values: float) -> Iterator[None]:
    """Run the block on one thread of every pool (BLAS and OpenMP) when the table has fewer than
    :data:`SMALL_TABLE_VALUES` values; otherwise leave the pools as they are."""
    if values >= SMALL_TABLE_VALUES:
        yield
        return
    with _controller().limit(limits=1):
        yield
