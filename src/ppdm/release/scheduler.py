"""Run a sweep's candidate stages over worker processes, as they become ready.

A stage's tasks are not all known at its start: a rung of an epsilon ladder is measured only when the rung
above it says so (:func:`ppdm.release.halving.ladder_rungs`), and such a rung costs more than most of a small
table's sweep. Run in rounds, the rung waits for every other task of its round and then runs alone, one core
idle. Here a task's follow-ups join the queue the moment it ends, ahead of the tasks not yet started, and a
worker never waits for a round: one task per worker in flight, the next one taken as soon as a worker is free.

Locally the tasks run on a reusable pool of ``workers`` processes (each worker's native thread pools sized to
its share of the cores, as joblib sizes them); with one worker (or one task), in this process; on a cluster
(``workers`` is None), through joblib's active backend, in rounds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["Task", "run_tasks"]

#: a task: (its index, the function, its arguments); the function returns ``(index, result)``
Task = tuple[int, Callable[..., tuple[int, Any]], tuple[Any, ...]]
#: the follow-ups of a task that ended, from its index and result
Then = Callable[[int, Any], list[Task]]


def run_tasks(tasks: list[Task], workers: int | None, then: Then | None = None) -> Iterator[tuple[int, Any]]:
    """``(index, result)`` of every task and of every follow-up ``then`` adds, as they end.

    ``tasks`` start in the order given; a follow-up starts before any task not yet started (on a cluster, with
    the next round).
    """
    from joblib import effective_n_jobs

    if workers is None:
        yield from _in_rounds(tasks, then)
        return
    n = int(effective_n_jobs(workers))
    if n <= 1 or len(tasks) <= 1 and then is None:
        yield from _here(tasks, then)
        return
    yield from _on_pool(tasks, n, then)


def _here(tasks: list[Task], then: Then | None) -> Iterator[tuple[int, Any]]:
    """The tasks one after the other in this process, follow-ups first."""
    queue = list(tasks)
    while queue:
        _, fn, args = queue.pop(0)
        i, res = fn(*args)
        yield i, res
        if then is not None:
            queue[:0] = then(i, res)


def _in_rounds(tasks: list[Task], then: Then | None) -> Iterator[tuple[int, Any]]:
    """The tasks through joblib's active backend (a cluster's workers), round by round: a round's follow-ups
    make the next round."""
    from joblib import Parallel, delayed

    while tasks:
        follow: list[Task] = []
        done = Parallel(n_jobs=-1, return_as="generator_unordered")(delayed(fn)(*args) for _, fn, args in tasks)
        for i, res in done:
            yield i, res
            if then is not None:
                follow += then(i, res)
        tasks = follow


def _on_pool(tasks: list[Task], n: int, then: Then | None) -> Iterator[tuple[int, Any]]:
    """The tasks on ``n`` local worker processes, at most ``n`` in flight, follow-ups first."""
    from concurrent.futures import FIRST_COMPLETED, wait

    from joblib import cpu_count
    from joblib.externals.loky import get_reusable_executor

    threads = str(max(1, cpu_count() // n))  # the cores shared out, as joblib's own pool does
    names = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
             "NUMEXPR_NUM_THREADS")
    env = dict.fromkeys(names, threads)
    pool = get_reusable_executor(max_workers=n, env=env, timeout=300)
    queue = list(tasks)
    running: dict[Any, int] = {}
    try:
        while queue or running:
            while queue and len(running) < n:
                i, fn, args = queue.pop(0)
                running[pool.submit(fn, *args)] = i
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                running.pop(future)
                i, res = future.result()
                yield i, res
                if then is not None:
                    queue[:0] = then(i, res)
    except BaseException:
        # stopped (an error, the steward's cancel, Ctrl-C): nothing left running on the workers
        for future in running:
            future.cancel()
        pool.shutdown(wait=False, kill_workers=True)
        raise

