"""`ppdm stream update --backend dask`: the new rows' release and the state match the in-memory update."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask")
pytest.importorskip("distributed")

from ppdm.streaming import stream_init, stream_update  # noqa: E402
from ppdm.streaming.store import Stream  # noqa: E402
from tests.backends.conftest import make_table  # noqa: E402

pytestmark = pytest.mark.dask

COLS = [f"x{j}" for j in range(7)]


def _dev(a: pd.DataFrame, b: pd.DataFrame) -> float:
    A, B = a[COLS].to_numpy(float), b[COLS].to_numpy(float)
    return float(np.abs(A - B).max() / np.abs(A).max())


def _parquet_parts(df: pd.DataFrame, folder: Path, k: int = 3) -> Path:
    folder.mkdir()
    for i, idx in enumerate(np.array_split(np.arange(len(df)), k)):
        df.iloc[idx].to_parquet(folder / f"b{i}.parquet", index=False)
    return folder


def _projector(s: Stream) -> np.ndarray:
    V = s.est.components_.T
    return V @ V.T


CASES = [
    ({"method": "svd", "rank": 3, "params": {"preprocess": "zscore"}}, True),
    ({"method": "svd", "rank": 2, "params": {"preprocess": "range", "update_stats": True}}, True),
    ({"method": "ssvd", "rank": 3, "params": {"preprocess": "zscore", "sparsify": "cts", "eps_u": 0.4,
                                             "eps_v": 0.3}}, True),
    ({"method": "svd", "rank": 2, "params": {"preprocess": "none", "buffer_rank": 2}}, False),
]


@pytest.mark.parametrize(("init", "append_only"), CASES, ids=lambda c: str(c)[:50])
def test_update_matches_in_memory(tmp_path: Path, init: dict, append_only: bool) -> None:
    df = make_table(n=1500).drop(columns=["site"])
    first, batch, later = df.iloc[:600], df.iloc[600:1200], df.iloc[1200:]
    (tmp_path / "mem").mkdir()
    (tmp_path / "dsk").mkdir()
    stream_init(first, state=tmp_path / "mem" / "s.state", id="pid", label="y", append_only=append_only,
                keep_ids=True, **init)
    shutil.copy(tmp_path / "mem" / "s.state", tmp_path / "dsk" / "s.state")
    src = _parquet_parts(batch, tmp_path / "batch")
    stream_update(tmp_path / "mem" / "s.state", batch, output=tmp_path / "mem" / "new.csv")
    res = stream_update(tmp_path / "dsk" / "s.state", str(src / "*.parquet"), output=tmp_path / "dsk" / "new",
                        backend="dask", scheduler="synchronous")
    assert res.summary["n_new_rows"] == 600 and res.summary["n_partitions"] == 3
    ref, got = pd.read_csv(tmp_path / "mem" / "new.csv"), pd.read_parquet(tmp_path / "dsk" / "new")
    assert got["pid"].tolist() == ref["pid"].tolist() and got["y"].tolist() == ref["y"].tolist()
    assert _dev(ref, got) < 1e-8
    a, b = Stream.load(tmp_path / "mem" / "s.state"), Stream.load(tmp_path / "dsk" / "s.state")
    assert b.est.n_samples_seen_ == 1200 and b.est.n_updates_ == 1
    assert np.allclose(b.est.singular_values_, a.est.singular_values_, rtol=1e-9)
    assert np.abs(_projector(a) - _projector(b)).max() < 1e-9
    assert np.allclose(np.abs(b.est.u_sum_), np.abs(a.est.u_sum_), rtol=1e-8)
    # the next batch, absorbed in memory from either state, gives the same release
    outs = []
    for d in ("mem", "dsk"):
        outs.append(stream_update(tmp_path / d / "s.state", later, output=tmp_path / d / "later.csv"))
    assert _dev(pd.read_csv(tmp_path / "mem" / "later.csv"), pd.read_csv(tmp_path / "dsk" / "later.csv")) < 1e-8
    if not append_only:
        assert Stream.load(tmp_path / "dsk" / "s.state").passthrough["pid"].tolist() == df["pid"].tolist()


def test_cli_update_on_a_local_cluster(tmp_path: Path, client: object, capsys: pytest.CaptureFixture[str]) -> None:
    from ppdm.cli import main

    df = make_table(n=900).drop(columns=["site"])
    first = tmp_path / "first.csv"
    df.iloc[:400].to_csv(first, index=False)
    src = _parquet_parts(df.iloc[400:], tmp_path / "batch")
    state, out = tmp_path / "s.state", tmp_path / "new"

    def run(*args: object) -> int:
        with pytest.raises(SystemExit) as e:
            main([str(a) for a in args])
        return int(e.value.code or 0)

    assert run("stream", "init", first, "--state", state, "--rank", "2", "--append-only", "--keep-ids", "--id",
               "pid", "--label", "y") == 0
    before = state.read_bytes()
    assert run("stream", "update", state, src / "*.parquet", "-o", out, "--backend", "dask", "--json") == 0
    assert '"n_new_rows": 500' in capsys.readouterr().out
    assert pd.read_parquet(out)["pid"].tolist() == df["pid"].iloc[400:].tolist()
    assert state.read_bytes() != before
    # a second update with the same ids is refused in one line, and nothing changes
    after = state.read_bytes()
    assert run("stream", "update", state, src / "*.parquet", "-o", tmp_path / "again", "--backend", "dask",
               "--refresh-all", tmp_path / "all.csv") == 2
    assert "--refresh-all" in capsys.readouterr().err
    assert state.read_bytes() == after and not (tmp_path / "again").exists()


def test_repeated_ids_in_a_partitioned_batch_are_refused(tmp_path: Path) -> None:
    from ppdm.exceptions import InputError

    df = make_table(n=700).drop(columns=["site"])
    stream_init(df.iloc[:300], state=tmp_path / "s.state", rank=2, id="pid", label="y", append_only=True,
                keep_ids=True)
    batch = pd.concat([df.iloc[300:500], df.iloc[450:460]])
    src = _parquet_parts(batch, tmp_path / "batch", k=2)
    before = (tmp_path / "s.state").read_bytes()
    with pytest.raises(InputError, match="repeats ids"):
        stream_update(tmp_path / "s.state", str(src), output=tmp_path / "new", backend="dask",
                      scheduler="synchronous")
    assert (tmp_path / "s.state").read_bytes() == before and not (tmp_path / "new").exists()


def test_ids_already_absorbed_are_refused(tmp_path: Path) -> None:
    from ppdm.exceptions import InputError

    df = make_table(n=700).drop(columns=["site"])
    stream_init(df.iloc[:300], state=tmp_path / "s.state", rank=2, id="pid", label="y", keep_ids=True)
    src = _parquet_parts(df.iloc[290:500], tmp_path / "batch", k=2)  # ten rows were absorbed already
    before = (tmp_path / "s.state").read_bytes()
    with pytest.raises(InputError, match="already absorbed"):
        stream_update(tmp_path / "s.state", str(src), output=tmp_path / "new", backend="dask",
                      scheduler="synchronous")
    assert (tmp_path / "s.state").read_bytes() == before and not (tmp_path / "new").exists()
