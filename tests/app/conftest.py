"""The workbench's fixtures: a small bundled table, a small grid, a workbench with its Starlette app."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.release.conftest import CHOICE_CONFIG

pytest.importorskip("starlette", reason="ppdm app needs the app extra: pip install 'ppdm[app]'")


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
    config.write_text(CHOICE_CONFIG)
    uploads = tmp / "uploads"
    uploads.mkdir(mode=0o700)
    return {"table": table, "config": config, "cache": tmp / "cache", "out": tmp / "release", "uploads": uploads,
            "tmp": tmp}
