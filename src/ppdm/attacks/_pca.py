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
#: rows per block when the moments of a large table are accumulated (no whole-table copy is made)
_BLOCK = 65_536
#: rows per block of the sign search's component scores
_SCORE_BLOCK = 16_384
#: components whose scores the sign search holds at a time (both sides, :data:`KS_ROWS` rows each)
_SIGN_GROUP = 4


def _block(A: np.ndarray, rows: np.ndarray | None, start: int, stop: int, m: int,
           loc: np.ndarray | None, scale: np.ndarray | None) -> np.ndarray:
    """Rows ``start:stop`` of ``A`` (or of ``A[rows]``), standardised when asked, zero-padded to ``m`` columns."""
    B = A[start:stop] if rows is None else A[rows[start:stop]]
    if B.dtype != np.float64 or np.may_share_memory(B, A):  # a view is copied (picked rows are a copy already)
        B = np.array(B, dtype=np.float64)
    if loc is not None and scale is not None:
        B -= loc
        B /= scale
    if B.shape[1] < m:
        B = np.column_stack([B, np.zeros((len(B), m - B.shape[1]))])
    return B[:, :m]


def _scores(A: np.ndarray, rows: np.ndarray, m: int, loc: np.ndarray | None, scale: np.ndarray | None,
            mu: np.ndarray, U: np.ndarray, cols: slice) -> np.ndarray:
    """``((A[rows] - mu) @ U)[:, cols]`` (standardised when asked), made :data:`_SCORE_BLOCK` rows at a time:
    the scores of a few components and one small block, not a centred copy of the rows beside them. Each block
    is multiplied by all of ``U`` and the columns taken, so a component's scores do not depend on the group."""
    out = np.empty((len(rows), len(range(*cols.indices(U.shape[1])))))
    for s in range(0, len(rows), _SCORE_BLOCK):
        B = _block(A, rows, s, s + _SCORE_BLOCK, m, loc, scale)
        B -= mu
        out[s:s + len(B)] = (B @ U)[:, cols]
        del B  # one block at a time
    return out


def _moments(A: np.ndarray, rows: np.ndarray | None, m: int, loc: np.ndarray | None,
             scale: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sample covariance (ddof 1, zero variances set to 1e-4 as in Algorithm 4.3 step 2) of the
    selected rows, accumulated block by block in two passes."""
    n = len(A) if rows is None else len(rows)
    total = np.zeros(m)
    for s in range(0, n, _BLOCK):
        total += _block(A, rows, s, s + _BLOCK, m, loc, scale).sum(axis=0)
    mu = total / n
    C = np.zeros((m, m))
    for s in range(0, n, _BLOCK):
        D = _block(A, rows, s, s + _BLOCK, m, loc, scale)
        D -= mu
        C += D.T @ D
        del D  # one block at a time
    C /= max(n - 1, 1)
    d = np.diag(C).copy()
    C[np.diag_indices_from(C)] = np.where(d == 0, 1e-4, d)
    return mu, C


def pca_attack(
    X: np.ndarray, Y: np.ndarray, sample_rows: np.ndarray, *, out_rows: np.ndarray | None = None,
    loc: np.ndarray | None = None, scale: np.ndarray | None = None,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Reconstruct the records from the release and the attacker's sample ``X[sample_rows]``.

    ``out_rows``: reconstruct only these rows (in their order; default every row), so that a large table's
    attack on a sample of targets never holds a table-sized estimate. ``loc``/``scale``: run the attack in the
    standardised coordinates ``(A - loc) / scale`` of both tables (without standardised copies of them) and
    return the estimate in ``X``'s units.
    """
    from scipy.stats import ks_2samp

    from ppdm.attacks._filtering import ks_statistic

    n, m = X.shape
    sample_rows = np.asarray(sample_rows)
    every = len(sample_rows) == n and bool((sample_rows == np.arange(n)).all())
    s_rows = None if every else sample_rows
    mu_s, C_s = _moments(X, s_rows, m, loc, scale)
    mu_y, C_y = _moments(Y, None, m, loc, scale)
    _, Us = _eig_desc(C_s)
    _, Uy = _eig_desc(C_y)
    # the sign of each component: the one whose scores match the sample's in distribution (the smaller KS
    # statistic, i.e. the larger p-value), compared on at most KS_ROWS rows of each side
    pick = np.random.default_rng(0)
    n_s = len(sample_rows)
    a_rows = np.arange(n_s) if n_s <= KS_ROWS else np.sort(pick.choice(n_s, KS_ROWS, replace=False))
    b_rows = np.arange(n) if n <= KS_ROWS else np.sort(pick.choice(n, KS_ROWS, replace=False))
    signs = np.ones(m)
    pvals = np.empty(m)
    a_sample = sample_rows[a_rows]
    # a few components at a time: on a large table both sides' scores of every component would be 32 MB
    for g in range(0, m, _SIGN_GROUP):
        cols = slice(g, min(m, g + _SIGN_GROUP))
        Ps = _scores(X, a_sample, m, loc, scale, mu_s, Us, cols)
        Py = _scores(Y, b_rows, m, loc, scale, mu_y, Uy, cols)
        for i in range(cols.start, cols.stop):
            a, b = Ps[:, i - g], Py[:, i - g]
            d_plus, d_minus = ks_statistic(a, np.sort(b)), ks_statistic(a, np.sort(-b))
            signs[i] = 1.0 if d_plus <= d_minus else -1.0
            pvals[i] = ks_2samp(a, signs[i] * b, method="asymp").pvalue
        del Ps, Py
    out = np.arange(n) if out_rows is None else np.asarray(out_rows)
    X_hat = np.empty((len(out), m))
    for s in range(0, len(out), _BLOCK):
        Z = ((_block(Y, out, s, s + _BLOCK, m, loc, scale) - mu_y) @ Uy * signs) @ Us.T + mu_s
        X_hat[s:s + len(Z)] = Z if scale is None or loc is None else Z * scale + loc
    details: dict[str, Any] = {"sample_size": int(len(sample_rows)),
                               "components_same_distribution": int((pvals > 0.05).sum()),
                               **eigen_matching_distances(C_s, C_y)}
    return X_hat, details
