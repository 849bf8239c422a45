"""Building blocks of Alotaibi (2015) Figs 4.16 / 4.17 (the PCA-based attack on synthetic data): the
generator, the error of the attack on a PCA release against a hand derivation, and the claim logic on
tables made up here (the full reproduction runs with ``ppdm reproduce alotaibi2015-figs-4-16-4-17``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdm.experiments import REPRODUCTIONS, ReproductionReport
from ppdm.experiments.alotaibi2015_known_points import synthetic
from ppdm.experiments.alotaibi2015_pca_attack import (
    COV_4_16,
    METHODS,
    SHARES,
    _cells_4_16,
    _cells_4_17,
    fig_4_17_set,
    gaussian_2d,
)


def test_registered() -> None:
    r = REPRODUCTIONS["alotaibi2015-figs-4-16-4-17"]
    assert r.slow and r.options == ("trials",)


def test_gaussian_has_the_thesis_covariance() -> None:
    X = gaussian_2d(40_000, seed=1)
    assert np.allclose(np.cov(X, rowvar=False), np.asarray(COV_4_16), atol=0.08)
    assert np.allclose(X.mean(axis=0), 0.0, atol=0.03)


def test_attack_on_a_pca_release_with_every_record_known_projects_onto_the_top_components() -> None:
    # hand derivation: the release holds the top-5 principal scores; knowing every record, the attack aligns
    # them with the sample's axes (the signs match exactly) and the padded columns carry nothing, so X' is
    # the projection of X onto its top-5 principal subspace
    d = fig_4_17_set(0, p_values=(5,), methods=("pca",))
    assert len(d) == len(SHARES) and sorted(d["share"]) == list(SHARES)
    X = synthetic(1000, 11, 0)
    Xc = X - X.mean(axis=0)
    w, V = np.linalg.eigh(np.cov(X, rowvar=False))
    rest = V[:, np.argsort(w)[::-1][5:]]
    expect = float(np.linalg.norm(Xc @ rest, axis=1).mean())
    got = float(d[d["share"] == 1.0]["error"].iloc[0])
    assert got == pytest.approx(expect, rel=1e-6)


def test_fig_4_16_cells_on_made_up_draws() -> None:
    t = pd.DataFrame({"ks_attr1": [0.3, 0.4, 0.2], "ks_attr2": [0.2, 0.5, 0.1], "ks_p_max": [1e-5, 0.2, 0.01],
                      "relative_error": [0.9, 0.01, 0.02], "recovered_spread_ratio": [0.50, 0.51, 0.52]})
    rep = ReproductionReport("t", "t")
    _cells_4_16(rep, t)
    v = [c.computed for c in rep.cells]
    # two draws of three differ in distribution; one is above the 0.05 line; the spread ratio's interval,
    # 0.51 +- 4.30 * 0.01 / sqrt(3), lies below 1
    assert v[0] == pytest.approx(2 / 3) and v[1] == pytest.approx(1 / 3) and v[2] == 1.0
    assert all(c.note.startswith("does not hold as measured") for c in rep.cells)  # the three of NOT_HELD
    t["recovered_spread_ratio"] = [0.5, 1.5, 0.9]  # interval straddles 1
    rep = ReproductionReport("t", "t")
    _cells_4_16(rep, t)
    assert rep.cells[2].computed == 0.0


def test_fig_4_17_cells_on_a_made_up_sweep() -> None:
    rows = []
    level = {"rp": 3.0, "pca": 2.0, "svd": 4.0, "nmds": 5.0, "dct": 3.1}
    for s in range(3):
        for k, base in level.items():
            rows += [{"set": s, "method": k, "p": p, "share": 0.3, "error": base + 2.0 / p + 0.01 * s}
                     for p in range(1, 11) if p != 5]
            rows += [{"set": s, "method": k, "p": 5, "share": sh, "error": base + 0.4 + (1 - sh) + 0.01 * s}
                     for sh in SHARES]
    rep = ReproductionReport("t", "t")
    _cells_4_17(rep, pd.DataFrame(rows))
    got = {c.column: c.computed for c in rep.cells}
    assert got["error at p = 1 above p = 10, every method (95 % CI above 0; 1 = yes)"] == 1.0
    assert got["NMDS and SVD the two highest mean errors over p (1 = yes)"] == 1.0
    assert got["PCA the lowest mean error over p (1 = yes)"] == 1.0
    # RP / DCT = (3 + c) / (3.1 + c): within 10 % at every p
    assert got["RP and DCT quite similar: RP / DCT error within 10 % at every p (worst p)"] == pytest.approx(
        3.0 / 3.1, abs=0.01)
    assert got["error with a 10 % sample above a 100 % sample, every method (95 % CI above 0; 1 = yes)"] == 1.0
    assert len(METHODS) == 5 and all(c.passed in (True, None) for c in rep.cells)
    # the five claims of Fig. 4.17 listed as not held are shown, not checked; the sixth is checked
    shown = [c for c in rep.cells if c.note.startswith("does not hold as measured")]
    assert len(shown) == 5 and sum(c.kind == "statistical" for c in rep.cells) == 1
