"""Alotaibi (2015) Tables 5.8 / 5.9 (NP and CC at p = n - 1) on Iris and Wine, checked against brute-force
recomputations written here (the full reproduction, synthetic set included, runs with
``ppdm reproduce alotaibi2015-tables-5-6-5-9``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdm.experiments import REPRODUCTIONS, ReproductionReport
from ppdm.experiments.alotaibi2015_structure import load_labelled, real_table, three_groups


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return real_table(["Iris", "Wine"])


def _knn(A: np.ndarray, k: int) -> np.ndarray:
    D = ((A[:, None, :] - A[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(D, np.inf)
    return np.argsort(D, axis=1, kind="stable")[:, :k]


def _cc(A: np.ndarray, y: np.ndarray) -> float:
    vals = []
    for k in range(3, 11):
        same = y[_knn(A, k)] == y[:, None]
        vals.append(np.mean([same[y == c].mean() for c in np.unique(y)]))
    return float(np.mean(vals))


def _np(A: np.ndarray, B: np.ndarray) -> float:
    vals = []
    for k in range(3, 11):
        a, b = _knn(A, k), _knn(B, k)
        vals.append(np.mean([len(set(a[i]) & set(b[i])) / k for i in range(len(A))]))
    return float(np.mean(vals))


@pytest.mark.parametrize("name,stem", [("Iris", "iris"), ("Wine", "wine")])
def test_deterministic_cells_match_a_brute_force(table: pd.DataFrame, name: str, stem: str) -> None:
    Z, y = load_labelled(stem)
    v = table[table["dataset"] == name].set_index("method")
    assert v.loc["x", "cc"] == pytest.approx(_cc(Z, y), abs=1e-9)
    # PCA at p = n - 1: drop the axis of least variance (eigenvectors of the covariance)
    w, V = np.linalg.eigh(np.cov(Z, rowvar=False))
    Y = Z @ V[:, np.argsort(w)[::-1][: Z.shape[1] - 1]]
    # Iris repeats records: neighbours at equal distance may be taken in another order (1e-4 here)
    assert v.loc["pca", "np"] == pytest.approx(_np(Z, Y), abs=1e-3)
    assert v.loc["pca", "cc"] == pytest.approx(_cc(Y, y), abs=1e-3)


def test_measured_against_the_thesis(table: pd.DataFrame) -> None:
    v = table.set_index(["dataset", "method"])
    # PCA NP holds at the printed two decimals (Table 5.8: Iris 0.93, Wine 0.97)
    assert abs(v.loc[("Iris", "pca"), "np"] - 0.93) <= 0.015
    assert abs(v.loc[("Wine", "pca"), "np"] - 0.97) <= 0.015
    # DEVIATION: CC of X is below the printed values (Iris 0.95, Wine 0.96) by about 0.02
    assert 0.90 < v.loc[("Iris", "x"), "cc"] < 0.935 and 0.92 < v.loc[("Wine", "x"), "cc"] < 0.95
    # PCA and NMDS have the best NP (the thesis' claim holds); DEVIATION: DCT is not the lowest (RP is)
    for name in ("Iris", "Wine"):
        npv = v.loc[name, "np"].drop("x")
        assert npv.idxmax() in ("pca", "nmds")
        assert npv.idxmin() == "rp"


def test_three_groups() -> None:
    Z, y = three_groups(300, 20, seed=1)
    assert Z.shape == (300, 20) and np.bincount(y).tolist() == [100, 100, 100]
    assert np.allclose(Z.mean(axis=0), 0) and np.allclose(Z.std(axis=0, ddof=1), 1)


def test_registered_and_reports() -> None:
    r = REPRODUCTIONS["alotaibi2015-tables-5-6-5-9"]
    assert r.slow and r.options == ("data_dir",)
    rep = ReproductionReport(r.id, r.title)
    rep.add("Iris", "claim", 0.0, 1.0, 0.0, "statistical", "measured")
    assert [c.row for c in rep.failed] == ["Iris"]
