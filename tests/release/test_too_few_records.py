"""A table too small for the policy's limits to be measured is refused before any candidate is tried."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from tests.conftest import one_line_error


def _table(tmp_path: Path, n: int) -> Path:
    rng = np.random.default_rng(n)
    src = tmp_path / f"t{n}.csv"
    pd.DataFrame({"age": rng.integers(20, 80, n), "income": rng.normal(5e4, 1e4, n).round(),
                  "sex": rng.choice(["F", "M"], n)}).to_csv(src, index=False)
    return src


def test_one_record_above_the_limit_is_refused_in_one_line(cli: Callable[..., tuple[int, str, str]],
                                                          tmp_path: Path) -> None:
    # 5 records met the default 5 % limits once (CART, every number in the release a real person's)
    code, out, err = cli("release", _table(tmp_path, 5), "-o", tmp_path / "out", "--no-cache")
    msg = one_line_error(code, out, err)
    assert "the table has 5 records: one of them is 20% of the table, above the policy's 5% limit" in msg
    assert "release at least 20 records, or relax the limits (--max-reid and --max-linkability" in msg
    assert not (tmp_path / "out").exists()


def test_relaxed_limits_lower_the_floor(cli: Callable[..., tuple[int, str, str]], tmp_path: Path) -> None:
    code, out, err = cli("release", _table(tmp_path, 8), "-o", tmp_path / "out", "--no-cache", "--max-reid", "0.2",
                         "--max-linkability", "0.2", "--methods", "noise")
    assert "the table has 8 records" not in err  # measured: the sweep ran and said what it found
    code, out, err = cli("release", _table(tmp_path, 3), "-o", tmp_path / "out3", "--no-cache", "--max-reid", "1",
                         "--max-linkability", "1")
    assert "the table has 3 records; a release needs at least 4" in one_line_error(code, out, err)
