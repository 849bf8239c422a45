"""A release by parts (`ppdm release --backend dask --part-rows N`): rows go to parts by a keyed draw, each part
is read and released by one worker, and the parts come back as one release and one state."""

from __future__ import annotations

import decimal
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.backends.conftest import make_table


@pytest.fixture
def small_screens(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables of a few thousand rows screened on samples as large ones are (parts of 1,000-1,200 rows)."""
    from ppdm.release import scale

    monkeypatch.setattr(scale, "SCREEN_ABOVE", 500)
    monkeypatch.setattr(scale, "SCREEN_ROWS", 300)


def _refused_by_parts(tmp_path: Path, client, df: pd.DataFrame, match: str) -> None:  # type: ignore[no-untyped-def]
    """A release by parts of ``df`` (3 parts, key seed 5) stops with ``match`` and leaves nothing behind."""
    from ppdm.exceptions import InputError
    from ppdm.release import load_config, release

    src = tmp_path / "table.parquet"
    df.to_parquet(src, index=False)
    cfg = load_config(None, {"methods": [{"method": "mdav", "grid": {"k": [20]}}], "threat": "population",
                             "seed": 5, "policy": {"max_reidentification": 1.0, "max_within_5pct": 1.0,
                                 "max_singling_out": 1.0, "max_linkability": 1.0, "max_membership_outliers": 1.0}})
    with pytest.raises(InputError, match=match):
        release(src, output_dir=tmp_path / "out", config=cfg, id="pid", label="y", use_cache=False, progress=False,
                backend="dask", scheduler=client.scheduler.address, part_rows=1200)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.parquet"]  # nothing written, no temporary left


def test_the_keyed_parts_cut_every_row_once_across_blocks() -> None:
    from ppdm.keys import PART_BLOCK, part_rows, part_sizes

    n, parts = 2 * PART_BLOCK + 17, 3
    rows = [part_rows(12345, parts, n, j) for j in range(parts)]
    every = np.sort(np.concatenate(rows))
    assert np.array_equal(every, np.arange(n))  # each row in one part, none twice
    assert [len(r) for r in rows] == part_sizes(12345, parts, n)
    assert all(np.all(np.diff(r) > 0) for r in rows)
    # about a third each, and another key cuts the rows another way
    assert all(abs(len(r) - n / parts) < 5 * np.sqrt(n) for r in rows)
    assert not np.array_equal(part_rows(54321, parts, n, 0), rows[0])
    # a block's draws do not depend on the table's length: the first rows go where they went
    shorter = part_rows(12345, parts, PART_BLOCK + 5, 1)
    assert np.array_equal(shorter, rows[1][rows[1] < PART_BLOCK + 5])


def test_a_part_read_from_parquet_is_those_rows_of_the_whole_table(tmp_path: Path) -> None:
    from ppdm.data.io import read_table
    from ppdm.keys import part_rows
    from ppdm.release.parts import read_part

    rng = np.random.default_rng(0)
    n = 70_000  # past a block of rows, over two files of small row groups
    df = pd.DataFrame({"i": rng.integers(0, 100, n), "f": rng.normal(size=n),
                       "s": rng.choice(["a", "b", None], n), "b": rng.random(n) < 0.5,
                       "d": pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 999, n), "D"),
                       "money": [decimal.Decimal(int(v)) / 100 for v in rng.integers(0, 10**6, n)]})
    df.loc[rng.choice(n, 50, replace=False), "f"] = np.nan
    folder = tmp_path / "t"
    folder.mkdir()
    df.iloc[:41_000].to_parquet(folder / "a.parquet", index=False, row_group_size=3_000)
    df.iloc[41_000:].to_parquet(folder / "b.parquet", index=False, row_group_size=7_000)
    whole = read_table(folder)
    files = sorted(folder.iterdir())
    for j in range(3):
        part = read_part(files, 777, 3, n, j)
        expected = whole.iloc[part_rows(777, 3, n, j)].reset_index(drop=True)
        pd.testing.assert_frame_equal(part, expected)


def test_part_rows_needs_the_dask_backend_and_a_part_worth_screening(tmp_path: Path) -> None:
    from ppdm.exceptions import ParameterError
    from ppdm.release import release

    df = make_table(n=50, m=3)
    with pytest.raises(ParameterError, match="add --backend dask"):
        release(df, output_dir=tmp_path / "a", part_rows=1_000_000)
    src = tmp_path / "t.parquet"
    df.to_parquet(src, index=False)
    with pytest.raises(ParameterError, match="--part-rows must be an integer of at least 40,000"):
        release(src, output_dir=tmp_path / "b", part_rows=1000, backend="dask")
    # a frame or a text file is not cut into parts: asked for, that is an error, not a silent whole release
    for source in (df, tmp_path / "t.csv"):
        df.to_csv(tmp_path / "t.csv", index=False)
        with pytest.raises(ParameterError, match="--part-rows cuts a Parquet input"):
            release(source, output_dir=tmp_path / "c", part_rows=100_000, backend="dask")
    assert not any((tmp_path / d).exists() for d in "abc")


def test_a_part_whose_columns_differ_from_the_first_is_refused(tmp_path: Path) -> None:
    from ppdm.backends._blockwise import Hidden
    from ppdm.exceptions import InputError
    from ppdm.release import default_config
    from ppdm.release.cluster import _HELD, TableOnWorkers, _forget, columns_of
    from ppdm.release.table import TableSpec

    src = tmp_path / "t.parquet"
    make_table(n=400, m=3).drop(columns=["site"]).to_parquet(src, index=False)
    spec = TableSpec(str(src), id="pid", label="y")
    as_read = TableOnWorkers(spec, default_config(), 0, 20_000, 200, parts=2, part=1, total=400,
                             assignment=Hidden(5))
    columns = columns_of(as_read.load())
    _forget()
    assert columns[-1] is False and [c[0] for c in columns[:-1]] == ["pid", "x0", "x1", "x2", "y"]
    # the first part read x0 as categories (say): this part, reading numbers, refuses to go on
    first = (columns[0], ("x0", "categorical", "quasi-identifier", "perturbed"), *columns[2:])
    table = replace(as_read, columns=first)
    with pytest.raises(InputError, match="part 2 of the table has other column types or roles than its first part "
                                         r"\(column 'x0': continuous, perturbed; in the first part categorical"):
        table.load()
    assert _HELD == {}  # the refused table is not kept
    _forget()


@pytest.mark.dask
def test_a_release_by_parts_is_each_part_released_by_a_worker_and_streamed_into_one(
        tmp_path: Path, client, small_screens: None) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("distributed")
    from distributed import get_task_stream

    from ppdm.flow.artifacts import align_with_state
    from ppdm.keys import assignment_entropy, part_rows, release_key
    from ppdm.release import load_config, release
    from ppdm.state import read_header, verify_state

    df = make_table(n=3000, m=5).drop(columns=["site"])
    src = tmp_path / "table.parquet"
    df.to_parquet(src, index=False)
    cfg = load_config(None, {"methods": [{"method": "noise", "grid": {"scale": [1.0, 2.0]}},
                                         {"method": "rotation", "grid": {}}],
                             "threat": "population", "seed": 3, "output_format": "parquet"})
    with get_task_stream(client) as stream:
        there = release(src, output_dir=tmp_path / "there", config=cfg, id="pid", label="y", use_cache=False,
                        progress=False, backend="dask", scheduler=client.scheduler.address, part_rows=1200).record
    writes = [t for t in stream.data if t.get("status") == "OK" and "write_release" in str(t.get("key"))]
    assert len(writes) == 3  # one worker task per part
    assert there["parts"]["count"] == 3 and sum(there["parts"]["rows"]) == 3000
    assert there["input"]["n_rows"] == 3000
    assert "released by parts" in there["utility_note"]
    assert "within each part" in there["identity"]["layout"]
    released = pd.read_parquet(tmp_path / "there" / "release.parquet")
    assert len(released) == 3000 and released["pid"].is_unique
    assert not set(released["pid"].astype(str)) & set(df["pid"].astype(str))  # pseudonyms, not the ids
    # the owner puts the release back in the original order from the state: by the ids' pseudonyms, or by
    # the parts' rows (from the key) and each part's row order; each row's label is its record's
    by_id = align_with_state(df, released, tmp_path / "there" / "release.state", "pid")
    by_order = align_with_state(df, released, tmp_path / "there" / "release.state", None)
    assert np.array_equal(by_id["pid"].to_numpy(), df["pid"].to_numpy())
    assert np.array_equal(by_id["y"].to_numpy(), df["y"].to_numpy())
    assert np.allclose(by_order["x0"].to_numpy(), by_id["x0"].to_numpy())
    # the first part is the release this machine makes of the first part's rows with the same key
    n0 = there["parts"]["rows"][0]
    first = df.iloc[part_rows(assignment_entropy(release_key(3)), 3, 3000, 0)].reset_index(drop=True)
    here = release(first, output_dir=tmp_path / "here", config=cfg, id="pid", label="y", use_cache=False,
                   progress=False).record
    assert here["chosen"]["method"] == there["chosen"]["method"]
    assert here["chosen"]["risk"] == there["chosen"]["risk"]
    pd.testing.assert_frame_equal(released.iloc[:n0].reset_index(drop=True),
                                  pd.read_parquet(tmp_path / "here" / "release.parquet"))
    # the second part has draws of its own: its rows released with the first part's draws (the same key
    # here, so the same pseudonyms) come out otherwise
    n1 = there["parts"]["rows"][1]
    second = df.iloc[part_rows(assignment_entropy(release_key(3)), 3, 3000, 1)].reset_index(drop=True)
    release(second, output_dir=tmp_path / "second", config=cfg, id="pid", label="y", use_cache=False,
            progress=False)
    with_first = pd.read_parquet(tmp_path / "second" / "release.parquet").set_index("pid")
    own = released.iloc[n0:n0 + n1].set_index("pid").loc[with_first.index]
    assert own["y"].equals(with_first["y"])  # the same records
    assert not np.allclose(own["x0"].to_numpy(), with_first["x0"].to_numpy())
    # one state: checked array by array, the other parts' arrays beside the first's, owner-only
    state = tmp_path / "there" / "release.state"
    header = verify_state(state, "release")
    assert read_header(state)["parts"]["rows"] == there["parts"]["rows"]
    assert {"part1.identity.order", "part2.identity.order", "identity.order"} <= set(header["arrays"])
    assert len(header["parts"]["states"]) == 2
    assert state.stat().st_mode & 0o077 == 0
    assert sorted(p.name for p in (tmp_path / "there").iterdir()) == [
        "release.json", "release.parquet", "release.state", "report.html"]
    # no temporary left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["here", "second", "table.parquet", "there"]
    held = client.run(lambda: len(__import__("ppdm.release.cluster", fromlist=["_HELD"])._HELD))
    assert set(held.values()) == {0}
    with zipfile.ZipFile(state) as z:  # the state holds no row of the release
        assert all(n.endswith(".npy") or n == "header.json" for n in z.namelist())


def test_part_rows_without_dask_is_one_line_and_exit_2_at_the_command_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    src = tmp_path / "t.csv"
    make_table(n=60, m=3).to_csv(src, index=False)
    done = subprocess.run([sys.executable, "-m", "ppdm", "release", str(src), "-o", str(tmp_path / "out"),
                           "--part-rows", "100000"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "--part-rows cuts a table for a Dask cluster's workers; add --backend dask" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.dask
def test_an_id_repeated_in_two_parts_is_refused_and_nothing_is_written(
        tmp_path: Path, client, small_screens: None) -> None:  # type: ignore[no-untyped-def]
    from ppdm.keys import assignment_entropy, part_rows, release_key

    df = make_table(n=3000, m=4)  # with a text column: released whole
    entropy = assignment_entropy(release_key(5))
    # the first row of the second part takes the id of the first row of the first: each part alone is fine
    first, second = part_rows(entropy, 3, 3000, 0)[0], part_rows(entropy, 3, 3000, 1)[0]
    df.loc[second, "pid"] = df.loc[first, "pid"]
    _refused_by_parts(tmp_path, client, df, "--id column 'pid' has 1 duplicate value")


def test_a_whole_table_with_a_repeated_id_is_refused_as_a_numeric_one(tmp_path: Path) -> None:
    from ppdm.exceptions import InputError
    from ppdm.release import release

    df = make_table(n=200, m=3)
    df.loc[7, "pid"] = df.loc[3, "pid"]
    with pytest.raises(InputError, match="--id column 'pid' has 1 duplicate value"):
        release(df, output_dir=tmp_path / "out", id="pid", label="y", use_cache=False, progress=False)
    assert not (tmp_path / "out").exists()


@pytest.mark.dask
def test_a_release_by_parts_with_kept_ids_comes_back_in_the_original_order(
        tmp_path: Path, client, small_screens: None) -> None:  # type: ignore[no-untyped-def]
    from ppdm.flow.artifacts import align_with_state
    from ppdm.release import load_config, release

    # 2,600 rows are far below the 200,000 above which a cluster reads a table itself: asked for parts of
    # 1,000 rows, it is released by parts all the same
    df = make_table(n=2600, m=3).drop(columns=["site"])
    src = tmp_path / "table.parquet"
    df.to_parquet(src, index=False)
    cfg = load_config(None, {"methods": [{"method": "noise", "grid": {"scale": [1.0]}}], "threat": "population",
                             "policy": {"max_reidentification": 1.0, "max_within_5pct": 1.0,
                                 "max_singling_out": 1.0, "max_linkability": 1.0, "max_membership_outliers": 1.0}})
    with pytest.warns(Warning, match="--keep-ids"):
        rec = release(src, output_dir=tmp_path / "out", config=cfg, id="pid", label="y", use_cache=False,
                      progress=False, backend="dask", scheduler=client.scheduler.address, part_rows=1000,
                      keep_ids=True).record
    assert rec["parts"]["count"] == 3 and "within each part" in rec["identity"]["layout"]
    released = pd.read_csv(tmp_path / "out" / "release.csv")
    assert sorted(released["pid"]) == sorted(df["pid"])  # the ids as they were, rows part after part
    assert not released["pid"].equals(df["pid"])
    for id in ("pid", None):
        back = align_with_state(df, released, tmp_path / "out" / "release.state", id)
        assert np.array_equal(back["pid"].to_numpy(), df["pid"].to_numpy())
        assert np.array_equal(back["y"].to_numpy(), df["y"].to_numpy())


@pytest.mark.dask
def test_a_part_that_reads_a_column_otherwise_stops_the_release_with_that_column(
        tmp_path: Path, client, small_screens: None) -> None:  # type: ignore[no-untyped-def]
    from ppdm.keys import assignment_entropy, part_rows, release_key

    df = make_table(n=3000, m=3)
    # 'z' has values in the first part only: the second part finds it empty (dropped), the first perturbs it
    df["z"] = np.nan
    first = part_rows(assignment_entropy(release_key(5)), 3, 3000, 0)
    df.loc[first, "z"] = np.arange(len(first), dtype=float)
    _refused_by_parts(tmp_path, client, df, r"part [23] of the table has other column types or roles than its "
                                            r"first part \(column 'z'")
