"""`ppdm release --backend dask`: the candidates are scored as tasks on a Dask cluster, with the same result."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.backends.conftest import make_table

pytest.importorskip("dask")
pytest.importorskip("distributed")
pytestmark = pytest.mark.dask


def _release(tmp_path: Path, name: str, **kw: object) -> dict:
    from ppdm.release import load_config, release

    df = make_table(n=400, m=5).drop(columns=["site"])
    cfg = load_config(None, {"methods": [{"method": "noise", "grid": {"scale": [0.5, 1.0, 2.0]}},
                                         {"method": "mdav", "grid": {"k": [10]}}],
                             "threat": "population", "seed": 3})
    res = release(df, output_dir=tmp_path / name, config=cfg, id="pid", label="y", use_cache=False,
                  progress=False, **kw)
    return res.record


def test_the_sweep_runs_on_the_cluster_and_chooses_as_here(tmp_path: Path, client) -> None:  # type: ignore[no-untyped-def]
    from distributed import get_task_stream

    here = _release(tmp_path, "here")
    with get_task_stream(client) as stream:
        there = _release(tmp_path, "there", backend="dask", scheduler=client.scheduler.address)
    ran = [t for t in stream.data if t.get("status") == "OK"]
    workers = {t["worker"] for t in ran}
    assert len(ran) >= 2 and workers <= set(client.scheduler_info()["workers"])  # tasks ran on the workers
    # the cluster computed the same scores (every draw comes from the key, wherever it runs)
    assert there["chosen"]["method"] == here["chosen"]["method"]
    assert there["chosen"]["params"] == here["chosen"]["params"]
    assert len(here["candidates"]) == len(there["candidates"]) == 4
    for a, b in zip(here["candidates"], there["candidates"], strict=True):
        assert a["params"] == b["params"]
        assert a["utility"] == pytest.approx(b["utility"])
        assert a["risk"]["reidentification"] == pytest.approx(b["risk"]["reidentification"])
    assert "Dask cluster (scheduler)" in there["utility_note"]
    assert "Dask cluster" not in (here.get("utility_note") or "")
    assert os.path.exists(tmp_path / "there" / "release.json")


def test_scheduler_needs_the_dask_backend(tmp_path: Path) -> None:
    from ppdm.exceptions import ParameterError

    with pytest.raises(ParameterError, match="add --backend dask"):
        _release(tmp_path, "bad", scheduler="tcp://127.0.0.1:1")


def test_an_unreachable_scheduler_is_one_clear_error(tmp_path: Path) -> None:
    from ppdm.exceptions import ParameterError

    with pytest.raises(ParameterError, match="cannot reach the Dask scheduler"):
        _release(tmp_path, "gone", backend="dask", scheduler="tcp://127.0.0.1:9")
    assert not (tmp_path / "gone").exists()  # nothing written
