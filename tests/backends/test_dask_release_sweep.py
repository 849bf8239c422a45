"""`ppdm release --backend dask`: the candidates are scored as tasks on a Dask cluster, with the same result."""

from __future__ import annotations

import os
import zipfile
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


def test_an_unreachable_scheduler_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ppdm.backends import dask_cluster
    from ppdm.exceptions import ParameterError

    monkeypatch.setattr(dask_cluster, "CONNECT_TIMEOUT", "1s")  # nothing answers there: no need to wait 20 s
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


@pytest.mark.parametrize("kind", ["Parquet", "CSV"])
def test_on_a_cluster_the_workers_read_a_large_input_themselves(tmp_path: Path, client,  # type: ignore[no-untyped-def]
                                                              monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    from ppdm.data import io

    src = tmp_path / f"table.{kind.lower()}"
    df = make_table(n=1500, m=5).drop(columns=["site"])
    df.to_parquet(src, index=False) if kind == "Parquet" else df.to_csv(src, index=False)
    here = _large_release(tmp_path, monkeypatch, src, "here")
    read_here = []
    real_read = io.read_table

    def watched(source, **kw):  # type: ignore[no-untyped-def]
        read_here.append(source)
        return real_read(source, **kw)

    # this process (the client) never reads the table: only the cluster's worker processes do
    monkeypatch.setattr(io, "read_table", watched)
    mask = os.umask(0o027)  # this user's umask, not the workers' (started with another), governs the files
    try:
        there = _large_release(tmp_path, monkeypatch, src, "there", backend="dask",
                               scheduler=client.scheduler.address)
    finally:
        os.umask(mask)
    assert read_here == []
    out = "release.csv"  # the library writes CSV unless told otherwise
    assert (tmp_path / "there" / out).stat().st_mode & 0o777 == 0o640
    # no worker keeps the table once the release is written
    held = client.run(lambda: len(__import__("ppdm.release.cluster", fromlist=["_HELD"])._HELD))
    assert set(held.values()) == {0}
    confirmed = [c for c in there["candidates"] if c["measured_on"]["stage"] == "confirmation"]
    assert confirmed
    for c in confirmed:  # each confirmation says where its design came from
        assert c["measured_on"]["design"] == f"read from the {kind} input by the Dask worker that confirmed it"
    assert all("design" not in c["measured_on"] for c in here["candidates"])
    assert f"its workers read the {kind} input themselves" in there["utility_note"]
    assert "the chosen release was made and written by a worker" in there["utility_note"]
    # the same scores as the run here: every draw comes from the key, wherever it runs
    assert there["chosen"]["method"] == here["chosen"]["method"]
    assert there["chosen"]["params"] == here["chosen"]["params"]
    for a, b in zip(here["candidates"], there["candidates"], strict=True):
        assert a["measured_on"]["stage"] == b["measured_on"]["stage"]
        assert a["utility"] == pytest.approx(b["utility"])
        assert a["risk"]["reidentification"] == pytest.approx(b["risk"]["reidentification"])
    assert there["original_utility"] == pytest.approx(here["original_utility"])
    assert there["input"] == here["input"] and there["fidelity"] == here["fidelity"]
    # the worker wrote the same release and state as this machine does (the same key), owner-only state
    assert (tmp_path / "there" / out).read_bytes() == (tmp_path / "here" / out).read_bytes()
    states = [zipfile.ZipFile(tmp_path / d / "release.state") for d in ("here", "there")]
    assert states[0].namelist() == states[1].namelist()  # the same entries (a zip's times differ)
    assert all(states[0].read(n) == states[1].read(n) for n in states[0].namelist())
    assert (tmp_path / "there" / "release.state").stat().st_mode & 0o077 == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["here", src.name, "there"]  # no temporary left


def test_a_text_table_smaller_than_its_size_suggested_is_released_here(  # type: ignore[no-untyped-def]
        tmp_path: Path, client, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CSV's rows are estimated from its size to send it to the workers; the worker that reads it counts
    them, and a table small enough to sweep on every row comes back here (as if no cluster had read it)."""
    from ppdm.release import source

    src = tmp_path / "table.csv"
    make_table(n=400, m=5).drop(columns=["site"]).to_csv(src, index=False)
    here = _large_release(tmp_path, monkeypatch, src, "here")
    monkeypatch.setattr(source, "estimated_text_rows", lambda path: 10**6)  # a size that promised many rows
    there = _large_release(tmp_path, monkeypatch, src, "there", backend="dask", scheduler=client.scheduler.address)
    # swept on every row, as here: nothing screened on a sample, nothing read by the workers
    assert not any(c.get("measured_on", {}).get("stage") in ("screening", "confirmation") for c in there["candidates"])
    assert "read the CSV input themselves" not in there.get("utility_note", "")
    assert there["chosen"]["method"] == here["chosen"]["method"]
    assert there["chosen"]["params"] == here["chosen"]["params"]
    assert [c["utility"] for c in there["candidates"]] == [c["utility"] for c in here["candidates"]]
    assert (tmp_path / "there" / "release.csv").read_bytes() == (tmp_path / "here" / "release.csv").read_bytes()
    held = client.run(lambda: len(__import__("ppdm.release.cluster", fromlist=["_HELD"])._HELD))
    assert set(held.values()) == {0}  # the worker that read it dropped it


def test_a_worker_that_cannot_see_the_output_refuses(tmp_path: Path) -> None:
    from ppdm.exceptions import OutputError
    from ppdm.release import load_config
    from ppdm.release.cluster import TableOnWorkers, write_release
    from ppdm.release.table import TableSpec

    table = TableOnWorkers(TableSpec(str(tmp_path / "t.parquet")), load_config(None, {}), 0, 500, 1000, "x")
    with pytest.raises(OutputError, match="cannot see the output directory"):
        write_release(table, str(tmp_path / "gone" / ".out.tmp"), str(tmp_path / "out"), {}, [], {}, [], None,
                      None, False, False)


def test_a_worker_that_reads_another_table_than_the_profile_refuses(tmp_path: Path) -> None:
    from ppdm.exceptions import InputError
    from ppdm.release import cluster, load_config
    from ppdm.release.table import TableSpec

    src = tmp_path / "table.parquet"
    df = make_table(n=300, m=4).drop(columns=["site"])
    df.to_parquet(src, index=False)
    table = cluster.TableOnWorkers(TableSpec(str(src), id="pid", label="y"), load_config(None, {"seed": 1}), 1,
                                   20_000, 300)
    cluster._HELD.clear()
    facts = cluster.profile(table, 100)
    assert len(facts["sample"][0]) == 100 and facts["shape"] == (300, 4)
    table = cluster.TableOnWorkers(table.spec, table.cfg, 1, 20_000, 300, facts["fingerprint"])
    with table.rows_in_place() as (X, y, shown, holdout):  # the same table: made once, kept
        assert X is cluster._HELD[table._key()].X and len(y) == 300 and holdout is not None
        assert X.flags.writeable and y.flags.writeable and shown.flags.writeable  # this task's, in turn
    assert not X.flags.writeable and not y.flags.writeable and not shown.flags.writeable  # shared again
    cluster._HELD.clear()
    df.assign(x0=df["x0"] + 1.0).to_parquet(src, index=False)  # the file changed under the workers
    with pytest.raises(InputError, match="read a different table"):
        table.load()
    cluster._HELD.clear()


def test_a_confirmation_on_a_worker_moves_its_rows_in_place_and_puts_them_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from ppdm.release import cluster, load_config, scale
    from ppdm.release.table import TableSpec

    src = tmp_path / "table.parquet"
    make_table(n=900, m=4).drop(columns=["site"]).to_parquet(src, index=False)
    table = cluster.TableOnWorkers(TableSpec(str(src), id="pid", label="y"), load_config(None, {"seed": 2}), 2,
                                   500, 900)
    cluster._HELD.clear()
    prep = table.load()
    X0, y0, shown0, holdout = prep.X.copy(), prep.y.copy(), prep.categories.copy(), prep.folds[0]
    moved = []
    real = scale.training_rows_first

    def spy(X, train, test, *, in_place, beside=()):  # type: ignore[no-untyped-def]
        out = real(X, train, test, in_place=in_place, beside=beside)
        moved.append(np.shares_memory(out[0], X))  # the training rows are the table's own first rows
        return out

    monkeypatch.setattr(scale, "training_rows_first", spy)
    kw: dict = {"preprocess": "zscore", "threat": "population", "seed": 2, "key_seed": 5, "targets": 400,
                "first_batch": 400, "max_reidentification": 1.0}
    there = scale.score_at_scale(table, None, "noise", {"scale": 0.6}, **kw)
    assert moved == [True]
    # the worker's table is as it was read, and shared read-only again
    np.testing.assert_array_equal(prep.X, X0)
    np.testing.assert_array_equal(prep.y, y0)
    np.testing.assert_array_equal(prep.categories, shown0)
    assert not prep.X.flags.writeable and not prep.y.flags.writeable
    # the same measures as a copy of the training rows made from the same table
    here = scale.score_at_scale(X0, y0, "noise", {"scale": 0.6}, categories=shown0, holdout=holdout, **kw)
    assert moved == [True, False]
    assert there["utility"] == here["utility"] and there["value"] == here["value"]
    assert there["risk"] == here["risk"]
    cluster._HELD.clear()


def test_on_the_cluster_path_a_misnamed_column_is_refused_from_the_file_schema(tmp_path: Path) -> None:
    from ppdm.exceptions import InputError
    from ppdm.keys import release_key
    from ppdm.release import load_config
    from ppdm.release.cluster import TableOnWorkers, release_on_cluster
    from ppdm.release.table import TableSpec

    src = tmp_path / "table.parquet"
    make_table(n=50, m=3).drop(columns=["site"]).to_parquet(src, index=False)
    cfg = load_config(None, {})
    for spec, message in [(TableSpec(str(src), id="pid", label="nolabel"), "--label names column 'nolabel'"),
                          (TableSpec(str(src), label="y", drop=("zz",)), "--drop names column 'zz'"),
                          (TableSpec(str(src), label="y", roles="zz=drop"), "--roles names column 'zz'")]:
        # refused before any worker is asked (there is no cluster here at all)
        with pytest.raises(InputError, match=message):
            release_on_cluster(spec, cfg, release_key(None), tmp_path / "out", False, cache=None, progress=False,
                               where="x", keep_ids=False, escape_formulas=False, rows=50)
    assert not (tmp_path / "out").exists()
    text = tmp_path / "table.csv"  # a text table: its header line, read here
    make_table(n=50, m=3).drop(columns=["site"]).to_csv(text, index=False)
    with pytest.raises(InputError, match="--label names column 'nolabel'"):
        release_on_cluster(TableSpec(str(text), id="pid", label="nolabel"), cfg, release_key(None), tmp_path / "out",
                           False, cache=None, progress=False, where="x", keep_ids=False, escape_formulas=False,
                           rows=None)
    assert not (tmp_path / "out").exists()
    gone = TableOnWorkers(TableSpec(str(tmp_path / "elsewhere.parquet")), cfg, 0, 500, 50)
    with pytest.raises(InputError, match="cannot see the input 'elsewhere.parquet'"):
        gone.load()
