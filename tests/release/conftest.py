from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest


@pytest.fixture(scope="module")
def wdbc_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from ppdm import datasets

    p = tmp_path_factory.mktemp("data") / "wdbc.csv"
    df = datasets.load("wdbc")
    df.insert(0, "pid", range(1, len(df) + 1))
    df.to_csv(p, index=False)
    return p


SMALL_CONFIG = """
methods:
  - method: svd
    grid: {rank: [1, 3]}
  - method: noise
    grid: {scale: [0.3, 1.0]}
  - method: rotation
threat: population
policy: {objective: knn_pct, max_reidentification: 0.9, max_within_5pct: 0.9, max_singling_out: 1.0,
         max_linkability: 1.0, max_membership_outliers: 1.0}
n_jobs: 1
"""


@pytest.fixture
def small_config(tmp_path: Path) -> Path:
    p = tmp_path / "release.yaml"
    p.write_text(SMALL_CONFIG)
    return p


def read_release(out: Path) -> pd.DataFrame:
    return pd.read_csv(out / "release.csv")


#: two noise levels and microaggregation, all within a loose policy: three candidates measured fully, so that
#: a steward has a choice (the override tests and the app's); a run takes about 20 s on one core
CHOICE_CONFIG = """
methods:
  - method: noise
    grid: {scale: [1.0, 2.0]}
  - method: mdav
    grid: {k: [20]}
threat: population
policy: {max_reidentification: 0.9, max_within_5pct: 0.9, max_singling_out: 1.0, max_linkability: 1.0,
         max_membership_outliers: 1.0}
n_jobs: 1
"""
