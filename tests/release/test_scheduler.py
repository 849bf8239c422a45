"""The sweep's scheduler: each task picked the moment a worker is free, with every result so far in hand."""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

from ppdm.release.scheduler import run_pulled


def _task(i: int, seconds: float) -> tuple[float, int]:
    started = time.monotonic()
    time.sleep(seconds)
    return started, os.getpid()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_task_opened_by_a_result_starts_before_the_tasks_still_waiting(workers: int) -> None:
    # task 0 is slow; when task 1 ends it opens task 10, which must start before 2..5 do
    waiting = [(0, 0.6), *[(i, 0.05) for i in range(1, 6)]]
    opened: list[tuple[int, float]] = []
    got: dict[Any, tuple[float, int]] = {}

    def pick() -> Any:
        queue = opened or waiting
        if not queue:
            return None
        i, s = queue.pop(0)
        return i, _task, (i, s)

    def done(key: Any, res: tuple[float, int]) -> None:
        got[key] = res
        if key == 1:
            opened.append((10, 0.05))

    run_pulled(pick, done, workers)
    assert sorted(got) == [0, 1, 2, 3, 4, 5, 10]
    assert got[10][0] < min(got[i][0] for i in (2, 3, 4, 5))
    pids = {pid for _, pid in got.values()}
    if workers == 1:
        assert pids == {os.getpid()}  # in this process
    else:
        assert os.getpid() not in pids and len(pids) == 2  # two worker processes: task 0 beside the others
        assert got[0][1] not in {got[i][1] for i in (1, 2, 3, 4, 5)}


def test_a_task_error_reaches_the_caller_and_the_next_run_has_workers() -> None:
    def boom(i: int) -> None:
        raise MemoryError("out of memory")

    tasks = [(0, boom, (0,)), (1, _task, (1, 0.2))]
    with pytest.raises(MemoryError):
        run_pulled(lambda: tasks.pop(0) if tasks else None, lambda k, r: None, 2)
    got: dict[Any, Any] = {}
    more = [(i, _task, (i, 0.01)) for i in range(3)]
    run_pulled(lambda: more.pop(0) if more else None, got.__setitem__, 2)
    assert sorted(got) == [0, 1, 2]


def _square(x: int) -> int:
    return x * x


def test_joblib_runs_after_the_sweeps_pool() -> None:
    """A large table's confirmation runs through joblib after the sweep's pool: it must get a pool of its own
    (it was handed the sweep's pool, which lacks joblib's memmapping state, and failed with an internal error
    on every table between 20,000 and 200,000 rows)."""
    from joblib import Parallel, delayed

    got: dict[Any, Any] = {}
    tasks = [(i, _square, (i,)) for i in range(4)]
    run_pulled(lambda: tasks.pop() if tasks else None, got.__setitem__, 2)
    assert got == {i: i * i for i in range(4)}
    assert Parallel(n_jobs=2)(delayed(_square)(i) for i in range(6)) == [i * i for i in range(6)]
