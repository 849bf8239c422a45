"""Known input-output attack on linear releases (rotation, projection, any affine map).

Liu, Giannella & Kargupta (2006): with known original records and their released rows, a linear
release is inverted by least squares. With at least p + 1 pairs (p released columns) the affine map is
fitted exactly; with p pairs the linear map. With fewer pairs the map is assumed distance preserving and
fitted by orthogonal Procrustes; an attacker who also knows each column's distribution then completes
the map column by column: the released values, sorted, must reproduce the column's sorted values, which
is a linear least-squares problem once the order is fixed (iterated to a fixed point), and every column
recovered exactly constrains the others to be orthogonal to it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["known_io_attack", "procrustes"]

# rows used by the marginal refinement (its sorts are O(n log n) per iteration)
_REFINE_ROWS = 20_000


def procrustes(Yk: np.ndarray, Xk: np.ndarray) -> np.ndarray:
    """The matrix W with orthonormal rows/columns minimising ``||Yk W - Xk||_F``."""
    U, _, Vt = np.linalg.svd(Yk.T @ Xk, full_matrices=False)
    return U @ Vt


def known_io_attack(
    X: np.ndarray,
    Y: np.ndarray,
    known: np.ndarray,
    *,
    marginals: bool = True,
    rng: np.random.Generator | None = None,
    out_rows: np.ndarray | None = None,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Reconstruct every record (or only ``out_rows``) from the release and the known pairs
    ``(X[known], Y[known])``.

    Only ``X[known]`` (and, with ``marginals``, each column's sorted values) is used from the original.

    Returns
    -------
    X_hat : ndarray of shape (n, m), or (len(out_rows), m)
    details : dict
        ``method`` ('affine', 'linear', 'procrustes', 'procrustes+marginals') and, when the pairs determine
        the forward map, ``key_recovery_rmse``: RMSE of the fitted forward map against the release (0 means
        the attacker holds the key).
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    n, m = X.shape
    p = Y.shape[1]
    Xk, Yk = X[known], Y[known]
    k = len(known)
    Yo = Y if out_rows is None else Y[out_rows]
    details: dict[str, Any] = {"n_known_pairs": int(k)}
    if k >= p + 1:
        Yk1 = np.column_stack([Yk, np.ones(k)])
        W = np.linalg.lstsq(Yk1, Xk, rcond=None)[0]
        X_hat = Yo @ W[:-1] + W[-1]
        details["method"] = "affine"
    elif k >= p:
        W = np.linalg.lstsq(Yk, Xk, rcond=None)[0]
        X_hat = Yo @ W
        details["method"] = "linear"
    else:
        W = procrustes(Yk, Xk)
        details["method"] = "procrustes"
        if marginals and p == m:
            W, n_exact = _refine_with_marginals(X, Y, Xk, Yk, W, rng)
            details["method"] = "procrustes+marginals"
            details["columns_recovered_exactly"] = int(n_exact)
        X_hat = Yo @ W
    # the forward map (the key) from the same pairs, when they determine it
    if k >= m + 1:
        F = np.linalg.lstsq(np.column_stack([Xk, np.ones(k)]), Yk, rcond=None)[0]
        details["key_recovery_rmse"] = _forward_rmse(X, Y, F[:-1], F[-1])
    elif k >= m:
        F = np.linalg.lstsq(Xk, Yk, rcond=None)[0]
        details["key_recovery_rmse"] = _forward_rmse(X, Y, F, 0.0)
    return X_hat, details


def _forward_rmse(X: np.ndarray, Y: np.ndarray, F: np.ndarray, c: Any, chunk: int = 65_536) -> float:
    """RMSE of the forward map ``X F + c`` against the release, in row chunks (no table-sized temporaries)."""
    total = 0.0
    for s in range(0, len(X), chunk):
        D = X[s:s + chunk] @ F  # one chunk-sized array, shifted in place
        D += c
        D -= Y[s:s + chunk]
        total += float(np.einsum("ij,ij->", D, D))
        del D  # one chunk at a time
    return float(np.sqrt(total / max(Y.size, 1)))


def _refine_with_marginals(
    X: np.ndarray, Y: np.ndarray, Xk: np.ndarray, Yk: np.ndarray, W: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """Complete an orthogonal map column by column from each column's sorted values."""
    n, m = X.shape
    rows = np.arange(n) if n <= _REFINE_ROWS else np.sort(rng.choice(n, _REFINE_ROWS, replace=False))
    Ys = Y[rows]
    # the attacker's knowledge of column j: its sorted values (quantiles when refining on a row sample)
    q = (np.arange(len(rows)) + 0.5) / len(rows)
    from ppdm.utils.linalg import column_quantiles

    M = np.sort(X, axis=0) if len(rows) == n else column_quantiles(X, q)
    scale = float(max(X.max(initial=0.0), -X.min(initial=0.0))) or 1.0
    W = W.copy()
    exact = np.zeros(m, dtype=bool)
    for _ in range(m):
        progress = False
        for j in np.flatnonzero(~exact):
            w, res = _fit_column(Ys, M[:, j], Yk, Xk[:, j], W[:, exact], W[:, j])
            res0 = _marginal_residual(Ys, M[:, j], W[:, j])
            if res <= res0:
                W[:, j] = w
            if res < 1e-8 * scale:
                exact[j] = True
                progress = True
        if exact.all() or not progress:
            break
    return W, int(exact.sum())


def _marginal_residual(Ys: np.ndarray, sorted_col: np.ndarray, w: np.ndarray) -> float:
    return float(np.linalg.norm(np.sort(Ys @ w) - sorted_col) / np.sqrt(len(sorted_col)))


def _fit_column(
    Ys: np.ndarray, sorted_col: np.ndarray, Yk: np.ndarray, xk: np.ndarray, done: np.ndarray, w: np.ndarray,
    max_iter: int = 300,
) -> tuple[np.ndarray, float]:
    """Alternate: order the released values by ``Ys @ w``, then least squares under the linear constraints."""
    C = np.vstack([Yk, done.T])
    d = np.concatenate([xk, np.zeros(done.shape[1])])
    w0 = np.linalg.lstsq(C, d, rcond=None)[0]
    _, s, Vt = np.linalg.svd(C)
    r = int((s > 1e-10 * s[0]).sum()) if len(s) else 0
    N = Vt[r:].T
    if N.shape[1] == 0:
        return w0, _marginal_residual(Ys, sorted_col, w0)
    YN = Ys @ N
    P = np.linalg.pinv(YN)
    Yw0 = Ys @ w0
    w = w0 + N @ (N.T @ (w - w0))
    target = np.empty(len(sorted_col))
    for _ in range(max_iter):
        target[np.argsort(Ys @ w, kind="stable")] = sorted_col
        w_new = w0 + N @ (P @ (target - Yw0))
        if np.max(np.abs(w_new - w)) < 1e-14 * max(1.0, float(np.abs(w).max())):
            w = w_new
            break
        w = w_new
    return w, _marginal_residual(Ys, sorted_col, w)
