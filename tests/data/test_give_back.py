"""Freed memory goes back to the system: Arrow keeps a Parquet table's buffers after they are freed."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from ppdm.utils.memory import give_back


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS line")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the resident set from /proc")
def test_dropping_a_parquet_tables_columns_then_giving_back_lowers_the_resident_set(tmp_path) -> None:
    from ppdm.data.io import read_table

    n, m = 400_000, 20  # 64 MB of float64
    pd.DataFrame(np.random.default_rng(0).normal(size=(n, m)), columns=[f"c{j}" for j in range(m)]).to_parquet(
        tmp_path / "t.parquet")
    df = read_table(tmp_path / "t.parquet")
    df = df.drop(columns=[f"c{j}" for j in range(1, m)])  # 61 MB of buffers freed
    before = _rss_mb()
    give_back()
    after = _rss_mb()
    assert before - after > 30, f"resident set {before:.0f} MB -> {after:.0f} MB"
    assert df.shape == (n, 1)


def test_give_back_is_harmless_when_there_is_nothing_to_give() -> None:
    give_back()
    give_back()
