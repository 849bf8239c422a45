from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdm.data import atomic_write, check_output_path, read_table, write_table
from ppdm.exceptions import InputError, OutputError


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "is empty"),
        ("   \n\n", "is empty"),
        ("a,b\n", "no data rows"),
        ("a,a,b\n1,2,3\n", "column name 'a' twice"),
        ("a;b;c\n1;2;3\n", "';'-separated"),
        ("a\tb\tc\n1\t2\t3\n", "tab-separated"),
        ("a,,c\n1,2,3\n", "unnamed column"),
        ("a,b\n1,2\n3,4,5,6\n", "not a well-formed table"),
    ],
)
def test_bad_text_tables(tmp_path: Path, text: str, match: str) -> None:
    f = tmp_path / "t.csv"
    f.write_text(text)
    with pytest.raises(InputError, match=match):
        read_table(f)


def test_binary_and_non_utf8(tmp_path: Path) -> None:
    f = tmp_path / "b.csv"
    f.write_bytes(b"\x00\x01garbage")
    with pytest.raises(InputError, match="binary"):
        read_table(f)
    f.write_bytes("a,b\n\xe9,1\n".encode("latin-1"))
    with pytest.raises(InputError, match="UTF-8"):
        read_table(f)


def test_a_large_text_table_is_checked_beyond_its_first_bytes(tmp_path: Path) -> None:
    """Above the bytes checked before parsing (64 KB), the table is parsed from the file: its faults get the
    same one-line answers, and a character cut by the check's boundary reads whole."""
    rows = "".join(f"{i},\u00e9t\u00e9 {i},{i / 8}\n" for i in range(20_000))  # two-byte characters throughout
    # the id column's name is padded until the 64 KB boundary falls inside a two-byte character
    text = next(t for pad in range(64) if (t := f"id{'_' * pad},name,v\n" + rows).encode()[65535] == 0xC3)
    f = tmp_path / "big.csv"
    f.write_bytes(text.encode())
    df = read_table(f)
    assert len(df) == 20_000 and df["name"].iloc[-1] == "\u00e9t\u00e9 19999" and df["v"].iloc[3] == 0.375
    raw = text.encode()
    f.write_bytes(raw[:300_000] + b"\xe9" + raw[300_000:])  # a Latin-1 byte far past the first 64 KB
    with pytest.raises(InputError, match="not UTF-8 text"):
        read_table(f)
    f.write_bytes(b"\n" * 70_000 + b"a,b\n1,2\n3,4\n")  # blank lines beyond the first bytes, then the table
    assert read_table(f)["b"].tolist() == [2, 4]
    f.write_bytes(b" \n" * 40_000)
    with pytest.raises(InputError, match="is empty"):
        read_table(f)
    wide = ",".join(f"c{j:06d}" for j in range(10_000))  # a header longer than the bytes checked first
    f.write_text(wide + "\n" + ",".join("1" * 10_000) + "\n" + ",".join("2" * 10_000) + "\n")
    assert read_table(f).shape == (2, 10_000)


def test_a_text_table_is_parsed_without_holding_copies_of_its_text(tmp_path: Path) -> None:
    """Reading a CSV grows the process by about its table, not by copies of its text (decoded whole and
    wrapped for the parser, this CSV grew it by nine times its size before it was parsed)."""
    import subprocess
    import sys

    rng = np.random.default_rng(0)
    f = tmp_path / "t.csv"
    pd.DataFrame(rng.normal(size=(400_000, 8)).round(6), columns=list("abcdefgh")).to_csv(f, index=False)
    size = f.stat().st_size
    small = tmp_path / "small.csv"
    small.write_text("a,b\n1,2\n3,4\n")
    # every module a read loads, loaded before the start is taken; the high-water mark is this process's own
    # (ru_maxrss would carry the forking parent's over the exec)
    probe = ("import sys\n"
             "from ppdm.data import read_table\n"
             "def status(field):\n"
             "    return next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith(field)) * 1024\n"
             "read_table(sys.argv[2])\n"
             "before = status('VmRSS')\n"
             "df = read_table(sys.argv[1])\n"
             "print(status('VmHWM') - before, len(df))\n")
    out = subprocess.run([sys.executable, "-c", probe, str(f), str(small)], capture_output=True, text=True,
                         check=True).stdout
    grew, rows = map(int, out.split())
    assert rows == 400_000
    assert grew < 3 * size, f"reading a {size >> 20} MB CSV grew the process by {grew >> 20} MB"


def test_bom_is_stripped_and_tsv_and_parquet(tmp_path: Path) -> None:
    f = tmp_path / "bom.csv"
    f.write_bytes("\ufeffa,b\n1,2\n3,4\n".encode())
    assert list(read_table(f).columns) == ["a", "b"]
    t = tmp_path / "x.tsv"
    t.write_text("a\tb\n1\t2\n3\t4\n")
    assert read_table(t)["b"].tolist() == [2, 4]
    df = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    write_table(df, tmp_path / "x.parquet")
    assert read_table(tmp_path / "x.parquet").equals(df)
    write_table(df, tmp_path / "y.parquet")
    both = read_table(str(tmp_path / "*.parquet"))
    assert len(both) == 4


def test_missing_input_and_arrays() -> None:
    with pytest.raises(InputError, match="does not exist"):
        read_table("no/such/file.csv")
    assert list(read_table(np.zeros((3, 2))).columns) == ["x1", "x2"]
    with pytest.raises(InputError, match="2-D"):
        read_table(np.zeros(3))


def test_output_checks(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text("a\n1\n")
    with pytest.raises(OutputError, match="is the input"):
        check_output_path(src, inputs=[src], force=True)
    with pytest.raises(OutputError, match="already exists"):
        check_output_path(src)
    assert check_output_path(src, force=True) == src
    with pytest.raises(OutputError, match="does not exist"):
        check_output_path(tmp_path / "nodir" / "x.csv")


def test_atomic_write_leaves_nothing_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as f:
            f.write(b"partial")
            raise RuntimeError("crash")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.csv"]


def _typed_frame(n: int = 50) -> pd.DataFrame:
    """Every column type a Parquet table brings: numbers, booleans, text with gaps, categories, dates with and
    without a time zone, nullable integers, decimals, and a text column whose first rows are all empty."""
    import decimal

    rng = np.random.default_rng(0)
    df = pd.DataFrame({
        "f": rng.standard_normal(n), "i": rng.integers(0, 9, n), "b": rng.integers(0, 2, n).astype(bool),
        "s": ["é" + str(i) if i % 3 else None for i in range(n)], "c": pd.Categorical(rng.choice(["p", "q"], n)),
        "t": pd.date_range("2020-01-01", periods=n, freq="D"),
        "tz": pd.date_range("2020-01-01", periods=n, freq="h", tz="UTC"),
        "I": pd.array(rng.integers(0, 5, n), dtype="Int64"), "fn": np.where(rng.random(n) < 0.2, np.nan, 1.0),
        "dec": [decimal.Decimal("1.5")] * n, "late": [None] * 10 + ["x"] * (n - 10)})
    df.loc[3, "I"] = pd.NA
    return df


@pytest.mark.parametrize("layout", ["plain", "stored index", "named index", "no index"])
def test_parquet_read_a_column_at_a_time_equals_pandas(tmp_path: Path, layout: str) -> None:
    from ppdm.data.cells import numbers_as_floats, times_in_utc

    df = _typed_frame()
    frame = {"stored index": df.set_index("i"), "named index": df.rename_axis("rowid")}.get(layout, df)
    frame.to_parquet(tmp_path / "t.parquet", index=False if layout == "no index" else None)
    # as pandas reads it, but for the times with a zone: the same instants in UTC, without the zone
    expected = numbers_as_floats(times_in_utc(pd.read_parquet(tmp_path / "t.parquet").reset_index(drop=True)))
    got = read_table(tmp_path / "t.parquet")
    pd.testing.assert_frame_equal(got, expected)
    assert "__index_level_0__" not in got.columns  # a stored index is not a column of the table


def test_parquet_read_of_several_files_equals_their_concatenation(tmp_path: Path) -> None:
    from ppdm.data.cells import numbers_as_floats, times_in_utc

    df = _typed_frame()
    (tmp_path / "parts").mkdir()
    df.iloc[:20].to_parquet(tmp_path / "parts" / "a.parquet")
    df.iloc[20:].to_parquet(tmp_path / "parts" / "b.parquet")
    pd.testing.assert_frame_equal(read_table(tmp_path / "parts"), numbers_as_floats(times_in_utc(df.copy())))


def test_parquet_written_a_row_group_at_a_time_equals_one_write(tmp_path: Path, monkeypatch) -> None:
    import pyarrow.parquet as pq

    import ppdm.data.io as io_module

    monkeypatch.setattr(io_module, "_PARQUET_ROWS", 7)
    df = _typed_frame()
    write_table(df, tmp_path / "blocks.parquet")
    df.to_parquet(tmp_path / "whole.parquet", index=False)
    assert pq.ParquetFile(tmp_path / "blocks.parquet").metadata.num_row_groups == 8
    assert pq.read_schema(tmp_path / "blocks.parquet").equals(pq.read_schema(tmp_path / "whole.parquet"))
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "blocks.parquet"),
                                  pd.read_parquet(tmp_path / "whole.parquet"))


def test_csv_written_as_it_is_formatted_equals_the_whole_text(tmp_path: Path) -> None:
    df = pd.concat([_typed_frame()] * 3000, ignore_index=True)  # several of pandas' blocks of rows
    write_table(df, tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_bytes() == df.to_csv(index=False, lineterminator="\n").encode("utf-8")


def test_parquet_booleans_beside_gaps_are_booleans_whoever_wrote_them(tmp_path: Path) -> None:
    """Arrow's booleans with gaps and no pandas type recorded (another writer, a release by parts, a release of
    earlier versions) are read as booleans, not as text."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    f = tmp_path / "b.parquet"
    pq.write_table(pa.table({"a": [1.0, 2.0, 3.0], "b": pa.array([True, None, False])}), f)
    old = tmp_path / "o.parquet"
    pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": pd.Series([True, None, False], dtype=object)}).to_parquet(old)
    for path in (f, old):
        b = read_table(path)["b"]
        assert str(b.dtype) == "boolean" and b.isna().tolist() == [False, True, False]


def test_parquet_outputs_keep_booleans_integers_and_text_beside_gaps(tmp_path: Path) -> None:
    df = pd.DataFrame({"b": pd.Series([True, None, False], dtype=object), "i": pd.Series([1, np.nan, 3], dtype=object),
                       "c": pd.Series(["x", 2, None], dtype=object)})
    write_table(df, tmp_path / "t.parquet")
    back = pd.read_parquet(tmp_path / "t.parquet")
    assert [str(t) for t in back.dtypes] == ["boolean", "Int64", "object"]
    assert back["c"].tolist() == ["x", "2", None] and back["i"].tolist()[::2] == [1, 3]
    assert df["c"].tolist() == ["x", 2, None]  # the frame written is left as it was
