"""The main job on a large whole table: `ppdm release` of a 1,000,000-row table of mixed column types.

The table (``PPDM_BENCH_ROWS``, default 1,000,000): an id, numbers (lognormal income, two with 2 % gaps),
integers, a date, a boolean, two categorical columns (one of 15 categories) and a 3-class label. Measured in
the same run: one ``ppdm perturb`` of its numbers without gaps (the peer: what a single mechanism costs on this
file) and the default ``ppdm release``. Targets (issue: the main job at scale): the release under 10 minutes
and within 120x the one perturb; peak resident memory below 4x the table as it is held in memory (a table of
text and dates is several times larger as a frame than as Parquet, whose compression says little about what
a program must hold).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from bench_release_scale import _timed


def _table(n: int, path: Path) -> None:
    import pandas as pd

    rng = np.random.default_rng(77)
    region = rng.choice([f"R{i:02d}" for i in range(15)], n, p=np.r_[np.full(5, 0.12), np.full(10, 0.04)])
    age = rng.integers(18, 90, n)
    latent = rng.normal(size=n)
    smoker = rng.random(n) < 0.2
    bmi = (24 + 3 * latent + rng.normal(0, 3, n)).round(1)
    bp = (110 + 0.5 * age + 2 * latent + rng.normal(0, 8, n)).round(0)
    score = 0.04 * (age - 50) + 0.1 * (bmi - 24) + 0.8 * smoker + 0.01 * (bp - 140) + rng.normal(0, 1, n)
    bmi[rng.random(n) < 0.02] = np.nan
    chol = (180 + 0.8 * age + 10 * smoker + rng.normal(0, 25, n)).round(1)
    chol[rng.random(n) < 0.02] = np.nan
    df = pd.DataFrame({
        "pid": rng.permutation(n) + 100_000, "region": region, "sex": rng.choice(["F", "M"], n), "age": age,
        "income": np.exp(10 + 0.3 * latent + 0.01 * (age - 50) + rng.normal(0, 0.5, n)).round(2),
        "visits": rng.poisson(1 + 0.03 * (age - 18)), "bmi": bmi, "bp": bp, "smoker": smoker, "chol": chol,
        "enrolled": (pd.Timestamp("2010-01-01") + pd.to_timedelta(rng.integers(0, 5000, n), unit="D")
                     ).strftime("%Y-%m-%d"),
        "risk": np.where(score > 1, "high", np.where(score > 0, "mid", "low"))})
    df.to_parquet(path, index=False)


def _in_process(code: str) -> str:
    """``code`` run in a process of its own (see ``bench_release_scale._make_table``), its printed output."""
    setup = f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
    return subprocess.run([sys.executable, "-c", setup + code], check=True, capture_output=True, text=True).stdout


def run() -> bool:
    n = int(os.environ.get("PPDM_BENCH_ROWS", 1_000_000))
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "table.parquet"
        _in_process(f"from pathlib import Path; from bench_release_mixed import _table; "
                    f"_table({n}, Path({str(src)!r}))")
        size = src.stat().st_size
        held = int(_in_process(f"import pandas as pd; "
                               f"print(pd.read_parquet({str(src)!r}).memory_usage(deep=True).sum())"))
        t_one, _ = _timed(["perturb", str(src), "--method", "svd", "--rank", "3", "--id", "pid", "--label", "risk",
                           "--columns", "age,income,visits,bp", "-o", str(Path(tmp) / "one.parquet")])
        out = Path(tmp) / "release"
        t_rel, peak = _timed(["release", str(src), "--id", "pid", "--label", "risk", "-o", str(out), "--no-cache"])
        chosen = json.loads((out / "release.json").read_text())["chosen"]
    ratio = t_rel / t_one
    print(f"  {n:,} rows, 12 mixed columns: one perturb of its numbers {t_one:.1f} s, release {t_rel:.0f} s = "
          f"{ratio:.0f}x (target <= 120x, under 600 s)")
    print(f"  peak resident memory of the release {peak / 2**20:.0f} MiB = {peak / held:.2f}x the table as held in "
          f"memory ({held / 2**20:.0f} MiB; the Parquet file: {size / 2**20:.0f} MiB) (target < 4x)")
    print(f"  chosen {chosen['method']} {chosen['params']}: re-identification {chosen['risk']['reidentification']:.4f}"
          f", interval {chosen['risk'].get('reidentification_interval')}")
    return ratio <= 120 and t_rel < 600 and peak < 4 * held
