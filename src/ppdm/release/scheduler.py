"""Run a sweep's candidate stages over worker processes, each task chosen the moment a worker is free.

A sweep's tasks are not all known at its start: a rung of an epsilon ladder is measured only when the rung
above it says so (:func:`ppdm.release.ladder.ladder_rungs`), and a candidate's full battery only while it could
still beat the best candidate measured so far. Run in rounds, a costly task (a rung's fit) holds back every
task of the next round while the other cores idle. Here the caller's ``pick`` is asked for the next task
whenever a worker is free, with everything measured so far in hand (``done`` is told of each result first),
and the run ends when ``pick`` has nothing and nothing is running.

Locally the tasks run on a pool of ``workers`` processes for the run (each worker's native thread pools sized
to its share of the cores, as joblib sizes them), shut down at its end; with one worker, in this process; on a
cluster (``workers`` is None), through joblib's active backend, in rounds of at most as many tasks as it has
workers.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

__all__ = ["Task", "local_workers", "run_pulled"]

#: a task: (its key, the function, its arguments); the function's result goes to ``done(key, result)``
Task = tuple[Hashable, Callable[..., Any], tuple[Any, ...]]


_SAID: set[tuple[int, int]] = set()


def local_workers(n_jobs: int) -> int:
    """The worker processes a sweep runs for ``n_jobs`` (joblib's counting: -1 every core, -2 all but one), at
    most one per core: each is a whole Python process, and more than the cores only share them (``-j 999``
    started about 240 processes on 2 cores and had not finished a 7-second sweep in 100 s). Says so when it
    runs fewer than asked."""
    import warnings

    from joblib import cpu_count, effective_n_jobs

    cores = max(1, int(cpu_count()))
    asked = int(effective_n_jobs(n_jobs))
    if asked > cores and (asked, cores) not in _SAID:
        _SAID.add((asked, cores))  # a run asks at every stage: said once
        warnings.warn(f"--jobs {n_jobs}: this machine has {cores} core(s); the sweep runs {cores} worker(s)",
                      UserWarning, stacklevel=1)
    return max(1, min(asked, cores))


def run_pulled(pick: Callable[[], Task | None], done: Callable[[Hashable, Any], None], workers: int | None) -> None:
    """Run the tasks ``pick`` gives, as workers become free, until it gives none and none is running.

    Parameters
    ----------
    pick : callable
        The next task to start, or None when none can start now (one may once a running task is done).
    done : callable
        Told ``(key, result)`` of every task, in this process, as each ends.
    workers : int or None
        Local worker processes (``-1``: every core); None: joblib's active backend (a cluster).
    """
    from joblib import effective_n_jobs

    n = int(effective_n_jobs(-1)) if workers is None else local_workers(workers)
    if workers is None:
        _in_rounds(pick, done, n)
    elif n <= 1:
        _here(pick, done)
    else:
        _on_pool(pick, done, n)


def _here(pick: Callable[[], Task | None], done: Callable[[Hashable, Any], None]) -> None:
    while (task := pick()) is not None:
        key, fn, args = task
        done(key, fn(*args))


def _in_rounds(pick: Callable[[], Task | None], done: Callable[[Hashable, Any], None], n: int) -> None:
    from joblib import Parallel, delayed

    while True:
        batch: list[Task] = []
        while len(batch) < max(1, n) and (task := pick()) is not None:
            batch.append(task)
        if not batch:
            return
        keys = [key for key, _, _ in batch]
        for key, res in zip(keys, Parallel(n_jobs=-1)(delayed(fn)(*args) for _, fn, args in batch), strict=True):
            done(key, res)


def _on_pool(pick: Callable[[], Task | None], done: Callable[[Hashable, Any], None], n: int) -> None:
    from concurrent.futures import FIRST_COMPLETED, wait

    from joblib import cpu_count
    from joblib.externals.loky import get_reusable_executor

    threads = str(max(1, cpu_count() // n))  # the cores shared out, as joblib's own pool does
    names = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
             "NUMEXPR_NUM_THREADS")
    pool = get_reusable_executor(max_workers=n, env=dict.fromkeys(names, threads), timeout=300)
    running: dict[Any, Hashable] = {}
    finished_all = False
    try:
        while True:
            while len(running) < n and (task := pick()) is not None:
                key, fn, args = task
                running[pool.submit(fn, *args)] = key
            if not running:
                finished_all = True
                return
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                done(running.pop(future), future.result())
    finally:
        if not finished_all:  # stopped (an error, the steward's cancel, Ctrl-C): nothing left running
            for future in running:
                future.cancel()
        # the pool lives for this run only: joblib's own pools (a large table's confirmation, the attacks'
        # workers) come from another factory of the same process-wide slot, which cannot take this one over.
        # Its idle workers take most of a second to exit (satimage's sweep: 0.78 s): they do so while the
        # chosen release and the report are made, not before
        pool.shutdown(wait=False, kill_workers=not finished_all)
