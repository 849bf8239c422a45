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
def test_giving_back_after_an_arrow_read_lowers_the_resident_set(tmp_path) -> None:
    import pyarrow.parquet as pq

    n, m = 400_000, 20  # 64 MB of float64
    pd.DataFrame(np.random.default_rng(0).normal(size=(n, m)), columns=[f"c{j}" for j in range(m)]).to_parquet(
        tmp_path / "t.parquet")
    df = pq.read_table(tmp_path / "t.parquet").to_pandas()
    df = df[["c0"]].copy()  # the Arrow table and 61 MB of the frame freed; Arrow's allocator keeps its part
    before = _rss_mb()
    give_back()
    after = _rss_mb()
    assert before - after > 30, f"resident set {before:.0f} MB -> {after:.0f} MB"
    assert df.shape == (n, 1)


_READ_PEAK = """
import sys
import numpy as np, pandas as pd, pyarrow.parquet
from ppdm.data.io import read_table
from ppdm.data.schema import resolve_schema
def status(field):
    with open("/proc/self/status") as fh:
        return next(int(l.split()[1]) for l in fh if l.startswith(field)) / 1024
warm = read_table(sys.argv[2])  # every module the read loads, loaded before the start is taken
resolve_schema(warm, columns=None, id=None, label=None, drop=()).matrix(warm, consume=True)
base = status("VmRSS")
df = read_table(sys.argv[1])
X = resolve_schema(df, columns=None, id=None, label=None, drop=()).matrix(df, consume=True)
# the high-water mark of this process's memory (ru_maxrss would carry the forking parent's over the exec)
print(status("VmHWM") - base, X.nbytes / 2**20, df.shape[1])
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the resident set from /proc")
def test_a_parquet_table_and_its_design_are_held_about_once_while_they_are_made(tmp_path) -> None:
    """Read a column at a time and consumed into the design: the peak is the frame and the design (about two
    tables: writing the design's first column touches every page of it), where reading whole (Arrow table,
    frame) and then copying held 3.9."""
    import subprocess

    n, m = 400_000, 20  # 61 MiB of float64
    pd.DataFrame(np.random.default_rng(0).normal(size=(n, m)), columns=[f"c{j}" for j in range(m)]).to_parquet(
        tmp_path / "t.parquet")
    pd.DataFrame({f"c{j}": [1.0, 2.0] for j in range(m)}).to_parquet(tmp_path / "warm.parquet")
    out = subprocess.run([sys.executable, "-c", _READ_PEAK, str(tmp_path / "t.parquet"),
                          str(tmp_path / "warm.parquet")], capture_output=True, text=True, check=True).stdout.split()
    peak, table, left = float(out[0]), float(out[1]), int(out[2])
    assert left == 0  # every released column left the frame as it was copied
    assert peak < 2.5 * table, f"peak {peak:.0f} MiB above the start for a {table:.0f} MiB table"


def test_give_back_is_harmless_when_there_is_nothing_to_give() -> None:
    give_back()
    give_back()


def test_joblib_worker_restarts_are_quiet_and_nothing_else_is() -> None:
    import warnings

    from ppdm.utils.memory import quiet_worker_restarts

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        quiet_worker_restarts()
        warnings.warn("A worker stopped while some jobs were given to the executor. This can be caused by a too "
                      "short worker timeout or by a memory leak.", UserWarning, stacklevel=1)
        warnings.warn("A worker stopped for another reason", UserWarning, stacklevel=1)
    assert [str(w.message) for w in seen] == ["A worker stopped for another reason"]
