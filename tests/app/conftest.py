"""The workbench's fixtures: a small bundled table, a small grid, a workbench with its Starlette app."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="ppdm app needs the app extra: pip install 'ppdm[app]'")

#: two noise levels and microaggregation on WDBC within a loose policy: three candidates measured fully, so
#: that the steward has a choice; a run takes about 20 s on one core
SMALL_GRID = """
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


@pytest.fixture(scope="module")
def app_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The bundled WDBC table (with an id column), the small grid, a cache and an output directory."""
    from ppdm import datasets

    tmp = tmp_path_factory.mktemp("app")
    table = tmp / "wdbc.csv"
    df = datasets.load("wdbc")
    df.insert(0, "id", range(1, len(df) + 1))
    df.to_csv(table, index=False)
    config = tmp / "small.yaml"
    config.write_text(SMALL_GRID)
    uploads = tmp / "uploads"
    uploads.mkdir(mode=0o700)
    return {"table": table, "config": config, "cache": tmp / "cache", "out": tmp / "release", "uploads": uploads,
            "tmp": tmp}
