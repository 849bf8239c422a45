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


def _large_release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, src: Path, name: str, **kw: object) -> dict:
    """A table made 'large' for the test: screened on 300 rows, confirmed one candidate at a time here."""
    from ppdm.release import load_config, release, scale

    monkeypatch.setattr(scale, "SCREEN_ABOVE", 500)
    monkeypatch.setattr(scale, "SCREEN_ROWS", 300)
    monkeypatch.setattr(scale, "ONE_FINALIST_ABOVE", 600)
    cfg = load_config(None, {"methods": [{"method": "noise", "grid": {"scale": [1.0, 2.0]}},
                                         {"method": "rotation", "grid": {}}],
                             "threat": "population", "seed": 3})
    return release(src, output_dir=tmp_path / name, config=cfg, id="pid", label="y", use_cache=False,
                   progress=False, **kw).record


def test_on_a_cluster_the_workers_read_a_large_parquet_input_themselves(tmp_path: Path, client,  # type: ignore[no-untyped-def]
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "table.parquet"
    make_table(n=1500, m=5).drop(columns=["site"]).to_parquet(src, index=False)
    here = _large_release(tmp_path, monkeypatch, src, "here")
    there = _large_release(tmp_path, monkeypatch, src, "there", backend="dask", scheduler=client.scheduler.address)
    confirmed = [c for c in there["candidates"] if c["measured_on"]["stage"] == "confirmation"]
    assert confirmed
    for c in confirmed:  # each confirmation says where its design came from
        assert c["measured_on"]["design"] == "read from the Parquet input by the Dask worker that confirmed it"
    assert all("design" not in c["measured_on"] for c in here["candidates"])
    assert "its workers read the Parquet input themselves" in there["utility_note"]
    assert "the chosen release was computed here" in there["utility_note"]
    # a worker holds the design it read (its fingerprint), not one sent to it
    held = client.run(lambda: list(__import__("ppdm.release.source", fromlist=["_LOADED"])._LOADED))
    assert any(held.values())
    # the same scores as the run here: every draw comes from the key, wherever it runs
    assert there["chosen"]["method"] == here["chosen"]["method"]
    assert there["chosen"]["params"] == here["chosen"]["params"]
    for a, b in zip(here["candidates"], there["candidates"], strict=True):
        assert a["utility"] == pytest.approx(b["utility"])
        assert a["risk"]["reidentification"] == pytest.approx(b["risk"]["reidentification"])


def test_a_worker_that_reads_a_different_table_refuses(tmp_path: Path) -> None:
    import numpy as np

    from ppdm.data.io import read_table
    from ppdm.data.schema import resolve_schema
    from ppdm.exceptions import InputError
    from ppdm.release import source as source_module

    src = tmp_path / "table.parquet"
    df = make_table(n=300, m=4).drop(columns=["site"])
    df.to_parquet(src, index=False)
    schema = resolve_schema(read_table(src), id="pid", label="y")
    X = schema.matrix(read_table(src))
    handle = source_module.parquet_source(src, schema, None, source_module.design_fingerprint(X, schema.released),
                                          len(X))
    assert handle is not None and len(handle) == 300
    source_module._LOADED.clear()
    assert np.array_equal(handle.load(), X)  # the same design, read from the file
    assert source_module.parquet_source(tmp_path / "table.csv", schema, None, "x", 300) is None  # not Parquet
    source_module._LOADED.clear()
    df.assign(x0=df["x0"] + 1.0).to_parquet(src, index=False)  # the file changed under the workers
    with pytest.raises(InputError, match="read a different table"):
        handle.load()
    source_module._LOADED.clear()
