"""What the machine that asks for a release knows of an input without reading its rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ppdm.release.source import estimated_text_rows, input_kind, parquet_rows, text_table


def test_a_text_tables_rows_are_counted_when_small_and_estimated_from_its_size_when_large(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    small = tmp_path / "small.csv"
    pd.DataFrame(rng.normal(size=(700, 3))).to_csv(small, index=False)
    assert estimated_text_rows(small) == 700
    small.write_bytes(small.read_bytes().rstrip(b"\n"))  # no newline after the last row
    assert estimated_text_rows(small) == 700
    large = tmp_path / "large.csv"  # 8 MB: estimated from its first megabyte
    pd.DataFrame({f"c{j}": rng.normal(size=120_000).round(d) for j, d in enumerate((1, 3, 6, 9))}).to_csv(
        large, index=False)  # lines of varying length
    assert abs(estimated_text_rows(large) - 120_000) < 0.05 * 120_000


def test_only_a_single_text_file_or_parquet_is_an_input_a_worker_reads(tmp_path: Path) -> None:
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0]})
    df.to_csv(tmp_path / "t.csv", index=False)
    df.to_csv(tmp_path / "t.tsv", sep="\t", index=False)
    df.to_parquet(tmp_path / "t.parquet", index=False)
    assert text_table(tmp_path / "t.csv") == tmp_path / "t.csv" and input_kind(tmp_path / "t.csv") == "CSV"
    assert input_kind(tmp_path / "t.tsv") == "TSV"
    assert text_table(tmp_path / "t.parquet") is None and input_kind(tmp_path / "t.parquet") == "Parquet"
    assert parquet_rows(tmp_path / "t.parquet") == 3 and parquet_rows(tmp_path / "t.csv") is None
    assert text_table(str(tmp_path / "*.csv")) is None and text_table(df) is None
    assert text_table(tmp_path / "missing.csv") is None
