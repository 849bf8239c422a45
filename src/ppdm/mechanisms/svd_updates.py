"""Factor updates of a rank-K SVD (Zha & Simon 1999; Wang 2008 Ch. 6) and the mergeable column statistics
that let a stream re-standardise without its past rows. :class:`ppdm.mechanisms.incremental.IncrementalSVD`
is the estimator built on them.

Row updating: new rows ``T`` (q x m) are split into their projection ``T V`` on the current right basis
and a residual; the residual's economy QR (``r = min(m, q)``) gives new basis vectors ``Q``; the small
core ``[[S, 0], [T V, R^T]]`` ((K + q) x (K + r)) is decomposed and truncated to rank K, and the factors
are rotated: ``V <- [V Q] Vc``, ``U <- [[U, 0], [0, I]] Uc``. Column updating is the transpose.

The state is kept in the preprocessed space. ``keep_u=False`` drops ``U`` entirely, so an update costs
O(q m (K + r)) whatever the number of rows absorbed (append-only releases); ``keep_u=True`` keeps ``U``
so the whole table's rank-K approximation can be re-released (refresh) and columns can be added.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["row_update", "column_update", "affine_update", "reorthogonalize", "orthogonality", "batch_stats",
           "merge_stats", "affine_from_stats"]


# --------------------------------------------------------------------------------- factor updates


def _core_svd(core: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rank-k SVD of the small core matrix (LAPACK; the core is at most (K + q) x (K + r))."""
    try:
        Uc, sc, Vct = np.linalg.svd(core, full_matrices=False)
    except np.linalg.LinAlgError:
        # the divide-and-conquer driver occasionally fails to converge on cores with many zero
        # singular values (a batch inside the current subspace); the QR-iteration driver does not
        from scipy.linalg import svd

        Uc, sc, Vct = svd(core, full_matrices=False, lapack_driver="gesvd")
    return Uc[:, :k], sc[:k], Vct[:k].T


def _residual_basis(R: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Orthonormal basis ``Q`` of the residual ``R`` (columns, already projected off ``V``), orthogonal to V.

    Returns ``(Q, Rq, Cv)`` with ``R = Q @ Rq + V @ Cv`` to rounding. The residual is orthogonal to V only
    in exact arithmetic, and a rank-deficient residual (a batch inside the current subspace) makes the
    QR pick arbitrary directions; so the basis is projected off V again and re-orthonormalised, and what
    rounding left along V (``Cv``) is handed back to the caller's projection coefficients.
    """
    Q, Rq = np.linalg.qr(R)
    Cq = V.T @ Q
    Q1 = Q - V @ Cq
    d = np.abs(np.diag(Rq))
    if d.size == 0 or d.min() > 1e-8 * max(d.max(), np.finfo(float).tiny):
        # well-conditioned residual: the projection only removes rounding, Q1 stays orthonormal to ~1e-16
        return Q1, Rq, Cq @ Rq
    Q2, R2 = np.linalg.qr(Q1)  # rank-deficient: some columns of Q are arbitrary, re-orthonormalise them
    return Q2, R2 @ Rq, Cq @ Rq


def row_update(
    V: np.ndarray,
    s: np.ndarray,
    T: np.ndarray,
    k: int,
    *,
    residual_rank: int | None = None,
    rng: np.random.Generator | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Add rows ``T`` to the rank-K factorisation ``U diag(s) V^T``.

    Parameters
    ----------
    V : ndarray (m, K)
    s : ndarray (K,)
    T : ndarray (q, m)
    k : int
        Rank kept after the update.
    residual_rank : int, optional
        ``None`` (the paper): the residual's full economy QR, ``r = min(m, q)``. An integer p keeps only a
        rank-p sketch of the residual (randomized range finder, two power iterations), which makes the
        core (K + q) x (K + p); directions of the residual outside its top p are dropped.
    rng : Generator, optional
        Draws the sketch (only with ``residual_rank``).

    Returns
    -------
    Uc : ndarray (K + q, k)
        Rotation of the left factors: ``U_new = [[U @ Uc[:K]], [Uc[K:]]]``.
    s_new : ndarray (k,)
    V_new : ndarray (m, k)
    """
    K = s.shape[0]
    q, m = T.shape
    C = T @ V
    R = T - C @ V.T
    if residual_rank is None:
        Q, Rt, Cv = _residual_basis(R.T, V)  # m x r, r x q
        C = C + Cv.T
        RQ = Rt.T
    else:
        p = max(1, min(int(residual_rank), m, q))
        rng = rng if rng is not None else np.random.default_rng(0)
        Y = R.T @ rng.standard_normal((q, p))
        for _ in range(2):  # power iterations sharpen the sketch towards the residual's top directions
            Y, _ = np.linalg.qr(Y)
            Y = R.T @ (R @ Y)
        Q, _, _ = _residual_basis(Y - V @ (V.T @ Y), V)
        RQ = R @ Q
    r = Q.shape[1]
    core = np.zeros((K + q, K + r))
    core[:K, :K] = np.diag(s)
    core[K:, :K] = C
    core[K:, K:] = RQ
    Uc, sc, Vc = _core_svd(core, k)
    V_new = V @ Vc[:K] + Q @ Vc[K:]
    return Uc, sc, V_new


def column_update(
    U: np.ndarray, s: np.ndarray, V: np.ndarray, F: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Add columns ``F`` (n x p) to ``U diag(s) V^T``; returns ``(U_new, s_new, V_new)`` of rank k."""
    K = s.shape[0]
    p = F.shape[1]
    P = U.T @ F
    Q, Rf, Pu = _residual_basis(F - U @ P, U)  # n x r, r x p with r = min(n, p)
    P = P + Pu
    r = Q.shape[1]
    core = np.zeros((K + r, K + p))
    core[:K, :K] = np.diag(s)
    core[:K, K:] = P
    core[K:, K:] = Rf
    Uc, sc, Vc = _core_svd(core, k)
    U_new = U @ Uc[:K] + Q @ Uc[K:]
    V_new = np.vstack([V @ Vc[:K], Vc[K:]])
    return U_new, sc, V_new


def affine_update(
    U: np.ndarray | None,
    u_sum: np.ndarray,
    n: int,
    s: np.ndarray,
    V: np.ndarray,
    d: np.ndarray,
    c: np.ndarray,
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray, np.ndarray]:
    """Factorise ``U diag(s) V^T diag(d) + 1 c^T``: the same rows under new preprocessing statistics.

    ``u_sum = U^T 1`` (kept even when ``U`` is not) makes the rank-one term computable without ``U``.
    Returns ``(U_new or None, u_sum_new, s_new, V_new)``, still of rank ``len(s)``.
    """
    K = s.shape[0]
    # column scaling: V^T diag(d) = (diag(d) V)^T, re-orthonormalised through a K x K core
    Qv, Rv = np.linalg.qr(d[:, None] * V)
    Ua, sa, Vb = _core_svd(s[:, None] * Rv.T, K)
    V1, U_rot = Qv @ Vb, Ua
    u1 = Ua.T @ u_sum
    if U is not None:
        U = U @ U_rot
    if not np.any(c):
        return U, u1, sa, V1
    # rank-one shift 1 c^T (Brand 2006): extend both bases by the normalised residuals
    ra2 = max(n - float(u1 @ u1), 0.0)
    Ra = np.sqrt(ra2)
    qb = V1.T @ c
    rb = c - V1 @ qb
    Rb = float(np.linalg.norm(rb))
    tiny = 1e-12 * max(1.0, np.sqrt(n) * float(np.linalg.norm(c)))
    a_ext = np.append(u1, Ra if Ra > tiny else 0.0)
    b_ext = np.append(qb, Rb if Rb > tiny else 0.0)
    core = np.zeros((K + 1, K + 1))
    core[:K, :K] = np.diag(sa)
    core += np.outer(a_ext, b_ext)
    Uc, sc, Vc = _core_svd(core, K)
    Qb = rb / Rb if Rb > tiny else np.zeros_like(rb)
    V_new = V1 @ Vc[:K] + np.outer(Qb, Vc[K])
    u_new = Uc.T @ a_ext
    if U is not None:
        pa = (np.ones(U.shape[0]) - U @ u1) / Ra if Ra > tiny else np.zeros(U.shape[0])
        U = U @ Uc[:K] + np.outer(pa, Uc[K])
    return U, u_new, sc, V_new


def orthogonality(M: np.ndarray | None) -> float:
    """Loss of orthogonality ``max |M^T M - I|`` of a matrix with (supposedly) orthonormal columns."""
    if M is None or M.size == 0:
        return 0.0
    G = M.T @ M
    G[np.diag_indices_from(G)] -= 1.0
    return float(np.abs(G).max())


def reorthogonalize(
    U: np.ndarray | None, s: np.ndarray, V: np.ndarray
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray, np.ndarray]:
    """Restore orthonormal factors of the same product; returns ``(U, s, V, left_rotation)``."""
    Qv, Rv = np.linalg.qr(V)
    if U is not None:
        Qu, Ru = np.linalg.qr(U)
        core = Ru @ (s[:, None] * Rv.T)
    else:
        Qu, core = None, s[:, None] * Rv.T
    Uc, sc, Vc = _core_svd(core, s.shape[0])
    return (None if Qu is None else Qu @ Uc), sc, Qv @ Vc, Uc


# ------------------------------------------------------------------------------ statistics helpers


def batch_stats(X: np.ndarray) -> dict[str, np.ndarray | int]:
    mean = X.mean(axis=0)
    return {"n": X.shape[0], "mean": mean, "m2": ((X - mean) ** 2).sum(axis=0), "min": X.min(axis=0),
            "max": X.max(axis=0)}


def merge_stats(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Chan et al. pairwise merge of count, mean and sum of squared deviations; min and max."""
    n = a["n"] + b["n"]
    delta = b["mean"] - a["mean"]
    mean = a["mean"] + delta * (b["n"] / n)
    m2 = a["m2"] + b["m2"] + delta**2 * (a["n"] * b["n"] / n)
    return {"n": n, "mean": mean, "m2": m2, "min": np.minimum(a["min"], b["min"]),
            "max": np.maximum(a["max"], b["max"])}


def affine_from_stats(method: str, st: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Offset and scale of ``method`` (as :class:`ppdm.data.preprocess.Scaler`) from running statistics."""
    m = st["mean"].shape[0]
    offset, scale = np.zeros(m), np.ones(m)
    if method == "zscore":
        offset = st["mean"].copy()
        scale = np.sqrt(st["m2"] / (st["n"] - 1)) if st["n"] > 1 else np.ones(m)
    elif method == "range":
        offset = st["min"].copy()
        scale = st["max"] - st["min"]
    elif method == "minshift":
        offset = st["min"].copy()
    elif method == "nonneg":
        offset = np.minimum(st["min"], 0.0)
    scale = np.where((scale == 0) | ~np.isfinite(scale), 1.0, scale)
    return offset.astype(np.float64), scale.astype(np.float64)
