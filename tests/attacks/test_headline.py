"""The issue's headline figures on WDBC (rank-4 thin SVD of the raw data; a rotation and 31 known pairs)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdm.attacks import linkage_rates, run_attacks, run_attacks_named


def test_wdbc_rank4_svd_release(wdbc: pd.DataFrame) -> None:
    A = wdbc.drop(columns="class").to_numpy(float)
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    B = (U[:, :4] * s[:4]) @ Vt[:4]
    assert abs(np.linalg.norm(A - B) / np.linalg.norm(A) - 0.0054) < 5e-5
    face = run_attacks(A, B, "outsider", attacks=["face_value"])[0]
    assert 0.33 < face.within_5pct < 0.36
    rates = linkage_rates(A, B)["rates"]
    assert 0.9 < rates["raw"] < 0.96 and rates["projected"] == 1.0


def test_wdbc_rotation_from_31_pairs(wdbc: pd.DataFrame) -> None:
    A = wdbc.drop(columns="class").to_numpy(float)
    Q = np.linalg.qr(np.random.default_rng(1).normal(size=(30, 30)))[0]
    r = run_attacks(A, A @ Q, "known-io:31", attacks=["known_io"])[0]
    assert r.rmse < 1e-8 and r.details["key_recovery_rmse"] < 1e-8


def test_known_columns_linkage(rng: np.random.Generator) -> None:
    X = rng.normal(size=(300, 4))
    Y = X.copy()
    Y[:, 2:] = rng.normal(size=(300, 2))  # only the first two columns survive
    r = run_attacks_named(X, Y, "known-columns:a,b", attacks=["linkage"], columns=["a", "b", "c", "d"])[0]
    assert list(r.details["rates"]) == ["known_columns"] and r.reidentification_rate == 1.0
