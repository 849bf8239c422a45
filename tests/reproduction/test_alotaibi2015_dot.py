"""Alotaibi (2015) Table 5.10 on one small set (the full reproduction, 10 sets, runs with
``ppdm reproduce alotaibi2015-table-5-10``).
"""

from __future__ import annotations

import numpy as np

from ppdm.experiments import REPRODUCTIONS
from ppdm.experiments.alotaibi2015_dot import dot_rmse, run, unit_columns


def test_unit_columns_and_rmse() -> None:
    X = unit_columns(50, 8, seed=3)
    assert np.allclose(np.linalg.norm(X, axis=0), 1.0)
    Q, _ = np.linalg.qr(np.random.default_rng(1).standard_normal((8, 8)))
    assert dot_rmse(X, X @ Q) < 1e-12  # a rotation keeps every dot product
    Y = X.copy()
    Y[0, 0] += 0.5  # changes the products of record 0 with the 49 others
    G, H = X @ X.T, Y @ Y.T
    expect = np.sqrt(sum((G[0, j] - H[0, j]) ** 2 for j in range(1, 50)) / (50 * 49 / 2))
    assert abs(dot_rmse(X, Y) - expect) < 1e-12


def test_error_falls_with_p_for_pca() -> None:
    d = run(n_sets=1, m=60, n=20, p_values=(4, 10, 18))
    v = d[d["method"] == "pca"].sort_values("p")["rmse"].to_numpy()
    assert len(d) == 15 and (np.diff(v) < 0).all()


def test_registered() -> None:
    assert REPRODUCTIONS["alotaibi2015-table-5-10"].slow
