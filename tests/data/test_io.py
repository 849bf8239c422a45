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
