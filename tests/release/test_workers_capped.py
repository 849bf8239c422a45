"""A sweep runs at most one worker per core: -j 999 started about 240 processes on 2 cores and had not finished
a 7-second sweep in 100 s."""

from __future__ import annotations

import pytest
from joblib import cpu_count

from ppdm.release import scheduler


def test_more_workers_than_cores_are_the_cores_and_said_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scheduler, "_SAID", set())
    cores = int(cpu_count())
    with pytest.warns(UserWarning, match=f"--jobs 999: this machine has {cores} core"):
        assert scheduler.local_workers(999) == cores
    assert scheduler.local_workers(999) == cores  # no second warning (pytest's filter would raise none anyway)
    assert scheduler._SAID == {(999, cores)}
    assert scheduler.local_workers(1) == 1 and scheduler.local_workers(-1) == cores


def test_the_sweeps_pool_is_started_with_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweep's scheduler and its older stages (``sweep_workers``) both count workers so."""
    from ppdm.release.config import ReleaseConfig
    from ppdm.release.sweep import sweep_workers

    started: list[int] = []
    monkeypatch.setattr(scheduler, "_on_pool", lambda pick, done, n: started.append(n))
    scheduler.run_pulled(lambda: None, lambda key, res: None, 999)
    cores = int(cpu_count())
    assert started == ([cores] if cores > 1 else [])
    assert sweep_workers(ReleaseConfig.model_validate({"n_jobs": 999})) == cores
