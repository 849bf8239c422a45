"""The sweep's scheduler: every task's result once, follow-ups ahead of the tasks not yet started."""

from __future__ import annotations

import os
import time

import pytest

from ppdm.release.scheduler import run_tasks


def _task(i: int, seconds: float) -> tuple[int, tuple[float, int]]:
    started = time.monotonic()
    time.sleep(seconds)
    return i, (started, os.getpid())


@pytest.mark.parametrize("workers", [1, 2])
def test_a_follow_up_starts_before_the_tasks_still_queued(workers: int) -> None:
    # task 0 is slow; the one that ends first (1) opens task 10, which must start before 2..5 do
    tasks = [(0, _task, (0, 0.6)), *[(i, _task, (i, 0.05)) for i in range(1, 6)]]

    def then(i: int, _: object) -> list:
        return [(10, _task, (10, 0.05))] if i == 1 else []

    got = dict(run_tasks(tasks, workers, then))
    assert sorted(got) == [0, 1, 2, 3, 4, 5, 10]
    assert got[10][0] < min(got[i][0] for i in (2, 3, 4, 5))
    pids = {pid for _, pid in got.values()}
    if workers == 1:
        assert pids == {os.getpid()}  # in this process
    else:
        assert os.getpid() not in pids and len(pids) == 2  # on two worker processes, task 0 beside the others
        assert got[0][1] not in {got[i][1] for i in (1, 2, 3, 4, 5)}


def test_a_task_error_reaches_the_caller() -> None:
    def boom(i: int) -> tuple[int, int]:
        raise MemoryError("out of memory")

    with pytest.raises(MemoryError):
        list(run_tasks([(0, boom, (0,)), (1, _task, (1, 0.01))], 2))
