"""`ppdm perturb --backend dask` without --scheduler starts (and stops) its own loopback LocalCluster."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.backends.conftest import make_table

pytest.importorskip("dask")
pytest.importorskip("distributed")
pytestmark = pytest.mark.dask


def test_cli_starts_a_local_cluster(tmp_path: Path) -> None:
    from ppdm.pipeline import perturb

    df = make_table(n=1200).drop(columns=["site"])
    d = tmp_path / "data"
    d.mkdir()
    for i, idx in enumerate(np.array_split(np.arange(len(df)), 3)):
        df.iloc[idx].to_parquet(d / f"part{i}.parquet", index=False)
    out = tmp_path / "rel"
    ppdm = Path(sys.executable).with_name("ppdm")
    p = subprocess.run([str(ppdm), "perturb", str(d / "*.parquet"), "--keep-ids", "--method", "svd", "--rank", "2",
                        "--backend", "dask", "--id", "pid", "--label", "y", "-o", str(out), "--json"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    assert summary["cluster"].startswith("local (") and summary["n_partitions"] == 3
    got = pd.read_parquet(out)
    ref = perturb(df, keep_ids=True, method="svd", params={"rank": 2}, id="pid", label="y").release
    A, B = ref.to_numpy(float), got.to_numpy(float)
    assert np.abs(A - B).max() / np.abs(A).max() < 1e-8
