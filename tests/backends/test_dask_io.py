"""The dask backend end to end: Parquet globs and CSV in, a Parquet directory out, on a LocalCluster."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.backends.conftest import make_table


def _parts(df: pd.DataFrame, folder: Path, k: int = 4) -> Path:
    folder.mkdir()
    for i, idx in enumerate(np.array_split(np.arange(len(df)), k)):
        df.iloc[idx].to_parquet(folder / f"p{i}.parquet", index=False)
    return folder


def test_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from ppdm.backends import load

    monkeypatch.setitem(sys.modules, "ppdm.backends._dask", None)
    with pytest.raises(ImportError, match=r"pip install 'ppdm\[dask\]'"):
        load("dask")


def test_unknown_backend_and_scheduler_without_dask_are_refused(tmp_path: Path, cli) -> None:
    df = make_table(n=30)
    f = tmp_path / "t.csv"
    df.to_csv(f, index=False)
    code, msg = cli(str(f), "--backend", "spark", "-o", str(tmp_path / "o"))
    assert code == 2 and "backend must be one of numpy, dask" in msg
    code, msg = cli(str(f), "--scheduler", "tcp://127.0.0.1:1", "-o", str(tmp_path / "o.csv"))
    assert code == 2 and "--backend dask" in msg




@pytest.mark.dask
def test_cli_parquet_glob_to_parquet_directory(tmp_path: Path, client: object, cli) -> None:
    """The issue's command: equals the in-memory release; roles and row order kept; input untouched."""
    from ppdm.pipeline import perturb

    df = make_table(n=3000)
    d = _parts(df, tmp_path / "data")
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    out = tmp_path / "release_parquet"
    code, msg = cli(str(d / "*.parquet"), "--method", "svd", "--rank", "3", "--backend", "dask", "--id", "pid",
             "--label", "y", "-o", str(out))
    assert code == 0, msg
    got = pd.read_parquet(out)
    num = [c for c in df.columns if c.startswith("x")]  # the numbers, as the partitioned path perturbs them
    ref = perturb(df, keep_ids=True, method="svd", params={"rank": 3}, id="pid", label="y", columns=num).release
    assert list(got.columns) == list(ref.columns)
    assert got["pid"].tolist() == ref["pid"].tolist() and got["site"].tolist() == ref["site"].tolist()
    num = [c for c in ref.columns if c.startswith("x")]
    assert np.abs(got[num].to_numpy() - ref[num].to_numpy()).max() / np.abs(ref[num].to_numpy()).max() < 1e-8
    assert sorted(p.name for p in out.iterdir()) == [f"part.{i:05d}.parquet" for i in range(4)]
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left behind


@pytest.mark.dask
def test_existing_output_needs_force_and_input_is_never_the_output(tmp_path: Path, client: object, cli) -> None:
    df = make_table(n=200)
    d = _parts(df, tmp_path / "data", 2)
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("keep me")
    code, msg = cli(str(d), "--backend", "dask", "--rank", "2", "-o", str(out))
    assert code == 2 and "--force" in msg and (out / "keep.txt").read_text() == "keep me"
    code, msg = cli(str(d), "--backend", "dask", "--rank", "2", "-o", str(out), "--force")
    assert code == 0, msg
    assert not (out / "keep.txt").exists() and len(pd.read_parquet(out)) == 200
    for target in (d, tmp_path):  # the input directory itself, or a directory holding the input
        code, msg = cli(str(d / "*.parquet"), "--backend", "dask", "--rank", "2", "-o", str(target), "--force")
        assert code == 2 and "input" in msg
    assert len(list(d.iterdir())) == 2
    code, msg = cli(str(d), "--backend", "dask", "--rank", "2", "-o", str(tmp_path / "r.csv"))
    assert code == 2 and "Parquet" in msg


@pytest.mark.dask
def test_bad_values_give_one_clean_line_and_no_output(tmp_path: Path, client: object, cli) -> None:
    df = make_table(n=300)
    df.loc[250, "x2"] = np.nan
    d = _parts(df, tmp_path / "data", 3)
    out = tmp_path / "out"
    code, msg = cli(str(d), "--backend", "dask", "--rank", "2", "--id", "pid", "-o", str(out))
    assert code == 2 and "missing or infinite" in msg and "'x2'" in msg, msg
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.dask
def test_csv_input_and_state_file(tmp_path: Path, client: object, cli) -> None:
    """A CSV read in blocks gives the in-memory release; the state file loads back and keys stay out of stdout."""
    from ppdm.backends import load
    from ppdm.pipeline import load_release_state, perturb

    df = make_table(n=2500)
    f = tmp_path / "t.csv"
    df.to_csv(f, index=False)
    out, st = tmp_path / "out", tmp_path / "key.state"
    res = load("dask").perturb(str(f), method="rotation", id="pid", label="y", output=out, state=st, seed=4)
    num = [c for c in df.columns if c.startswith("x")]  # the numbers, as the partitioned path perturbs them
    ref = perturb(df, keep_ids=True, method="rotation", id="pid", label="y", seed=4, columns=num)
    got = pd.read_parquet(out)
    assert np.abs(got[num].to_numpy() - ref.release[num].to_numpy()).max() < 1e-8 * np.abs(df[num].to_numpy()).max()
    mech, scaler, schema, header = load_release_state(st)
    np.testing.assert_array_equal(mech.rotation_, ref.mechanism.rotation_)
    assert st.stat().st_mode & 0o077 == 0
    assert res.summary["re"] == pytest.approx(ref.summary["re"], rel=1e-10)
    code, msg = cli(str(f), "--method", "noise", "--backend", "dask", "--seed", "9", "-o", str(tmp_path / "n"),
                    "--json")
    assert code == 0
    seed_ = perturb(df, keep_ids=True, method="noise", seed=9).mechanism.seed_
    assert str(seed_) not in msg


@pytest.mark.dask
def test_scheduler_address(tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """--scheduler connects to a running scheduler; an unreachable one is a clean error."""
    distributed = pytest.importorskip("distributed")
    from ppdm.backends import dask_cluster as _dask

    df = make_table(n=500)
    d = _parts(df, tmp_path / "data", 2)
    with distributed.LocalCluster(host="127.0.0.1", n_workers=1, processes=False, protocol="tcp",
                                  dashboard_address=":0") as lc:
        code, msg = cli(str(d), "--backend", "dask", "--scheduler", lc.scheduler_address, "--rank", "2", "-o",
                 str(tmp_path / "out"), "--json")
        assert code == 0, msg
        assert '"cluster": "scheduler"' in msg
    monkeypatch.setattr(_dask, "CONNECT_TIMEOUT", "1s")
    code, msg = cli(str(d), "--backend", "dask", "--scheduler", "tcp://127.0.0.1:9", "-o", str(tmp_path / "o2"))
    assert code == 2 and "cannot reach the Dask scheduler" in msg
    assert not (tmp_path / "o2").exists()
