"""Thin SVD with a solver chosen by shape, and chunked Gram matrices.

Tall-skinny data (many rows, few columns) never needs a randomized method: the Gram matrix
``X^T X`` is small, one BLAS pass over the data builds it, and its symmetric eigendecomposition gives
the exact right singular vectors. Wide data use ``X X^T``. Large matrices in both directions use
ARPACK (``lanczos``) or a randomized range finder.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from ppdm.exceptions import ParameterError

__all__ = ["SVD_SOLVERS", "choose_solver", "thin_svd", "gram", "svd_flip_v", "column_mean_std", "column_quantiles",
           "union_mean_std"]

SVD_SOLVERS = ("auto", "exact", "gram", "lanczos", "randomized")

# below this many cells LAPACK's divide-and-conquer SVD is fast and the most accurate choice
_EXACT_CELLS = 4_000_000
# Gram route while the small side stays below this (the Gram matrix is at most 4096^2 doubles = 128 MiB)
_GRAM_SIDE = 4096
_CHUNK_ROWS = 65536


def choose_solver(n: int, m: int, k: int) -> str:
    """The solver ``'auto'`` resolves to for an ``n x m`` matrix and rank ``k``."""
    if n * m <= _EXACT_CELLS:
        return "exact"
    if min(n, m) <= _GRAM_SIDE:
        return "gram"
    return "lanczos" if k <= min(n, m) // 4 else "exact"


def svd_flip_v(Vt: np.ndarray, U: np.ndarray | None = None) -> tuple[np.ndarray | None, np.ndarray]:
    """Fix signs so that the largest-magnitude entry of each right singular vector is positive."""
    idx = np.argmax(np.abs(Vt), axis=1)
    signs = np.sign(Vt[np.arange(Vt.shape[0]), idx])
    signs[signs == 0] = 1.0
    Vt = Vt * signs[:, None]
    if U is not None:
        U = U * signs[None, :]
    return U, Vt


def column_quantiles(X: np.ndarray, q: float | np.ndarray = 0.5) -> np.ndarray:
    """``np.quantile(X, q, axis=0)`` a column at a time (the same values): numpy partitions a copy of the
    whole table, this one column's copy at a time."""
    q = np.asarray(q, dtype=np.float64)
    out = np.empty(q.shape + (X.shape[1],))
    for j in range(X.shape[1]):
        out[..., j] = np.quantile(X[:, j], q)
    return out


def column_mean_std(
    X: np.ndarray, rows: np.ndarray | None = None, *, ddof: int = 1, chunk_rows: int = _CHUNK_ROWS
) -> tuple[np.ndarray, np.ndarray]:
    """Every column's mean and standard deviation over ``rows`` (None: all), in two passes over row chunks:
    no copy of the table (nor of its selected rows) is made."""
    return union_mean_std([X], rows, ddof=ddof, chunk_rows=chunk_rows)


def union_mean_std(
    parts: Sequence[np.ndarray], rows: np.ndarray | None = None, *, ddof: int = 1, chunk_rows: int = _CHUNK_ROWS
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`column_mean_std` of the rows of several tables taken together (``rows``: of a single table),
    without joining them into one."""
    m = parts[0].shape[1]
    n = sum(p.shape[0] for p in parts) if rows is None else len(rows)

    def chunks() -> Iterator[np.ndarray]:
        for p in parts:
            size = p.shape[0] if rows is None else len(rows)
            for start in range(0, size, chunk_rows):
                yield np.asarray(p[start:start + chunk_rows] if rows is None else p[rows[start:start + chunk_rows]],
                                 dtype=np.float64)

    if n == 0:
        return np.full(m, np.nan), np.full(m, np.nan)
    mean = sum((c.sum(axis=0) for c in chunks()), np.zeros(m)) / n
    ss = sum((((c - mean) ** 2).sum(axis=0) for c in chunks()), np.zeros(m))
    with np.errstate(divide="ignore", invalid="ignore"):
        return mean, np.sqrt(ss / (n - ddof)) if n > ddof else np.full(m, np.nan)


def gram(
    X: np.ndarray,
    *,
    offset: np.ndarray | None = None,
    scale: np.ndarray | None = None,
    chunk_rows: int = _CHUNK_ROWS,
) -> np.ndarray:
    """``Z^T Z`` for ``Z = (X - offset) / scale``, built in row chunks so ``Z`` is never materialised."""
    n, m = X.shape
    G = np.zeros((m, m))
    for start in range(0, n, chunk_rows):
        C = X[start : start + chunk_rows]
        if offset is not None:
            C = C - offset
        G += C.T @ C
        del C  # one chunk at a time
    if scale is not None:
        G /= np.outer(scale, scale)
    return G


def _eig_top(G: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-k eigenpairs of a symmetric PSD matrix, largest first."""
    m = G.shape[0]
    w, V = np.linalg.eigh(G) if k > m // 8 or m <= 512 else _eigh_subset(G, k)
    w, V = w[::-1][:k], V[:, ::-1][:, :k]
    return np.sqrt(np.clip(w, 0.0, None)), V


def _eigh_subset(G: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    from scipy.linalg import eigh

    m = G.shape[0]
    return eigh(G, subset_by_index=(m - k, m - 1))


def thin_svd(
    X: np.ndarray,
    k: int,
    *,
    solver: str = "auto",
    rng: np.random.Generator | None = None,
    compute_u: bool = True,
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray, str]:
    """Rank-``k`` truncated SVD ``X ~ U diag(s) Vt``.

    Returns
    -------
    U : ndarray of shape (n, k) or None
        None when ``compute_u`` is False.
    s : ndarray of shape (k,)
    Vt : ndarray of shape (k, m)
    solver : str
        The solver actually used (``'auto'`` resolved).
    """
    if solver not in SVD_SOLVERS:
        raise ParameterError(f"solver must be one of {', '.join(SVD_SOLVERS)}; got '{solver}'")
    n, m = X.shape
    if solver == "auto":
        solver = choose_solver(n, m, k)
    U: np.ndarray | None
    if solver == "exact":
        U, s, Vt = np.linalg.svd(X, full_matrices=False)
        U, s, Vt = U[:, :k], s[:k], Vt[:k]
    elif solver == "gram":
        if n >= m:
            s, V = _eig_top(gram(X), k)
            Vt = V.T
            U = _left_from_right(X, s, Vt) if compute_u else None
        else:
            s, U = _eig_top(gram(X.T), k)
            Vt = _left_from_right(X.T, s, U.T).T
    elif solver == "lanczos":
        from scipy.sparse.linalg import svds

        rng = rng if rng is not None else np.random.default_rng(0)
        v0 = rng.uniform(-1.0, 1.0, size=min(n, m))
        U, s, Vt = svds(X, k=k, v0=v0, solver="arpack")
        order = np.argsort(s)[::-1]
        U, s, Vt = U[:, order], s[order], Vt[order]
    else:
        from sklearn.utils.extmath import randomized_svd

        rng = rng if rng is not None else np.random.default_rng(0)
        U, s, Vt = randomized_svd(X, k, n_iter=7, random_state=int(rng.integers(2**31 - 1)))
    U, Vt = svd_flip_v(Vt, U)
    if not compute_u:
        U = None
    return U, s, Vt, solver


def _left_from_right(X: np.ndarray, s: np.ndarray, Vt: np.ndarray) -> np.ndarray:
    safe = np.where(s > 0, s, 1.0)
    U = (X @ Vt.T) / safe
    U[:, s <= 0] = 0.0
    return U
