from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import pdist
from scipy.stats import spearmanr

from ppdm.cli import main
from ppdm.pipeline import perturb
from tests.conftest import SHARED


def _run(args: list[str]) -> int:
    try:
        main(args)
    except SystemExit as e:
        return int(e.code or 0)
    return 0


def test_perturb_nmds_wine_auto(tmp_path, capsys) -> None:
    from ppdm import datasets

    src = tmp_path / "wine.csv"
    datasets.load("wine").to_csv(src, index=False)
    out = tmp_path / "rel.csv"
    assert _run(["perturb", str(src), "--method", "nmds", "--dims", "auto", "--label", "class", "-o", str(out)]) == 0
    rel = pd.read_csv(out)
    dims = [c for c in rel.columns if c.startswith("d")]
    assert 1 <= len(dims) < 13 and rel.columns[-1] == "class"
    assert len(rel) == 178


def test_perturb_nmds_wine_strict_refuses(tmp_path, capsys) -> None:
    from ppdm import datasets

    src = tmp_path / "wine.csv"
    datasets.load("wine").to_csv(src, index=False)
    out = tmp_path / "rel.csv"
    assert _run(["perturb", str(src), "--method", "nmds", "--label", "class", "--strict", "-o", str(out)]) == 2
    assert "linear" in capsys.readouterr().err
    assert not out.exists()


def test_mixed_table_gower_and_others_refuse(tmp_path) -> None:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"id": range(80), "age": rng.integers(18, 80, 80), "job": rng.choice(["a", "b", "c"], 80),
                       "hours": rng.normal(40, 5, 80), "class": rng.choice(["x", "y"], 80)})
    res = perturb(df, method="nmds", params={"n_components": 2, "dissimilarity": "gower"}, id="id", label="class")
    assert list(res.release.columns) == ["id", "d1", "d2", "class"]
    from ppdm.exceptions import InputError

    with pytest.raises(InputError, match="text"):
        perturb(df, method="svd", params={"rank": 1}, id="id", label="class", columns=["age", "job"])


@pytest.mark.slow
def test_adult_sample_gower_cli(tmp_path) -> None:
    src = SHARED / "datasets" / "adult.csv"
    if not src.exists():
        pytest.skip("shared datasets not available")
    sample = tmp_path / "adult.csv"
    pd.read_csv(src).iloc[:400].to_csv(sample, index=False)
    out = tmp_path / "rel.csv"
    assert _run(["perturb", str(sample), "--method", "nmds", "--dims", "6", "--dissimilarity", "gower",
                 "--label", "class", "-o", str(out)]) == 0
    rel = pd.read_csv(out)
    assert [c for c in rel.columns if c != "class"] == [f"d{k}" for k in range(1, 7)]


def test_mds_dims_command(tmp_path, capsys) -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2)) @ rng.normal(size=(2, 5)) + 0.05 * rng.normal(size=(60, 5))
    src = tmp_path / "t.csv"
    pd.DataFrame(X, columns=list("abcde")).to_csv(src, index=False)
    png = tmp_path / "s.png"
    assert _run(["mds-dims", str(src), "--plot", str(png), "--json"]) == 0
    import json

    res = json.loads(capsys.readouterr().out)
    assert res["dims"] == [1, 2, 3, 4] and res["elbow"] == 2
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert all(a >= b - 1e-6 for a, b in zip(res["stress"], res["stress"][1:], strict=False))
    assert _run(["mds-dims", str(src), "--plot", str(png)]) == 2  # exists, no --force


def test_release_keeps_distance_order(tmp_path) -> None:
    rng = np.random.default_rng(2)
    X = rng.normal(size=(90, 4))
    res = perturb(pd.DataFrame(X, columns=list("abcd")), method="nmds", params={"n_components": 3}, seed=1,
                  keep_ids=True)
    Z = (X - X.mean(0)) / X.std(0, ddof=1)
    # one of four independent dimensions is lost, so the order is kept only approximately
    assert spearmanr(pdist(Z), pdist(res.release.to_numpy())).statistic > 0.9
