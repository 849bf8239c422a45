"""PCA-based known-sample attack (Alotaibi 2015, Sec. 4.5, Algorithm 4.3; Liu et al. 2006).

The attacker holds a sample S from the same distribution and assumes the release preserves distances.
The release (zero-padded to m columns if narrower) and S are decomposed into their covariance
eigenvectors; each release component's sign is chosen by a two-sample Kolmogorov-Smirnov test against the
sample's component (per component, which is equivalent to the exhaustive 2^m search when the p-values are
combined per component), and the records are mapped back with ``X' = (Y - mu_Y) U_Y^s U_S^T + mu_S``.
Also reported: the eigenstructure distortion of eqs. 4.25-4.26 (matching distances of eigenvalues and of
eigenvector angles).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["pca_attack", "eigen_matching_distances"]


def _eig_desc(C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w, V = np.linalg.eigh(C)
    return w[::-1], V[:, ::-1]


def _cov(A: np.ndarray) -> np.ndarray:
    C = np.cov(A, rowvar=False)
    C = np.atleast_2d(C)
    d = np.diag(C).copy()
    C[np.diag_indices_from(C)] = np.where(d == 0, 1e-4, d)  # Algorithm 4.3 step 2
    return C


def eigen_matching_distances(C_s: np.ndarray, C_y: np.ndarray) -> dict[str, float]:
    """Matching distance of eigenvalues (sorted: optimal) and of eigenvector angles (bottleneck matching)."""
    from scipy.optimize import linear_sum_assignment

    ws, Us = _eig_desc(C_s)
    wy, Uy = _eig_desc(C_y)
    md_val = float(np.max(np.abs(ws - wy)))
    ang = np.arccos(np.clip(np.abs(Us.T @ Uy), 0.0, 1.0))
    # bottleneck assignment: the smallest threshold that still admits a perfect matching
    best = float(ang.max())
    for thr in np.unique(ang):
        r, c = linear_sum_assignment((ang > thr).astype(float))
        if not (ang[r, c] > thr).any():
            best = float(thr)
            break
    return {"eigenvalue_md": md_val, "eigenvector_md_rad": best}


#: the sign search compares each component's distributions on at most this many rows per side
KS_ROWS = 100_000


def pca_attack(
    X: np.ndarray, Y: np.ndarray, sample_rows: np.ndarray
) -> tuple[np.ndarray, dict[str, Any]]:
    """Reconstruct the records from the release and the attacker's sample ``X[sample_rows]``."""
    from scipy.stats import ks_2samp

    n, m = X.shape
    Yp = Y if Y.shape[1] == m else np.column_stack([Y, np.zeros((n, m - Y.shape[1]))])[:, :m]
    S = X[sample_rows]
    mu_s, mu_y = S.mean(axis=0), Yp.mean(axis=0)
    C_s, C_y = _cov(S), _cov(Yp)
    _, Us = _eig_desc(C_s)
    _, Uy = _eig_desc(C_y)
    Ps, Py = (S - mu_s) @ Us, (Yp - mu_y) @ Uy
    from ppdm.attacks._filtering import ks_statistic

    # the sign of each component: the one whose scores match the sample's in distribution (the smaller KS
    # statistic, i.e. the larger p-value), compared on at most KS_ROWS rows of each side
    pick = np.random.default_rng(0)
    a_rows = np.arange(len(Ps)) if len(Ps) <= KS_ROWS else np.sort(pick.choice(len(Ps), KS_ROWS, replace=False))
    b_rows = np.arange(len(Py)) if len(Py) <= KS_ROWS else np.sort(pick.choice(len(Py), KS_ROWS, replace=False))
    signs = np.ones(m)
    pvals = np.empty(m)
    for i in range(m):
        a, b = Ps[a_rows, i], Py[b_rows, i]
        d_plus, d_minus = ks_statistic(a, np.sort(b)), ks_statistic(a, np.sort(-b))
        signs[i] = 1.0 if d_plus <= d_minus else -1.0
        pvals[i] = ks_2samp(a, signs[i] * b, method="asymp").pvalue
    X_hat = (Py * signs) @ Us.T + mu_s
    details: dict[str, Any] = {"sample_size": int(len(sample_rows)),
                               "components_same_distribution": int((pvals > 0.05).sum()),
                               **eigen_matching_distances(C_s, C_y)}
    return X_hat, details
