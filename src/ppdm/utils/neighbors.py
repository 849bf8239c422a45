"""Exact Euclidean nearest neighbours with bounded memory.

Delegates to scikit-learn's brute-force search (public API), whose kernel fuses the distance products with
the arg-k-min in cache-sized chunks; ``block_bytes`` sets its working memory, so no query x reference
matrix larger than that ever exists. Distances are recomputed exactly for the chosen neighbours.
"""

from __future__ import annotations

import numpy as np

__all__ = ["nearest_neighbors", "BLOCK_BYTES"]

#: working memory of one distance chunk
BLOCK_BYTES = 64 * 1024**2
#: values of the query-neighbour differences recomputed at a time (two such arrays: 4 MB)
DISTANCE_CELLS = 262_144
#: queries searched as their distinct rows when there are at least this many and at most this share distinct;
#: not above DEDUP_MAX_ROWS, where finding them (a hash table of the queries' rows) would cost the memory a large
#: table's confirmation is kept within
DEDUP_ROWS = 1000
DEDUP_SHARE = 0.5
DEDUP_MAX_ROWS = 200_000
#: query x reference x column differences at most for the direct search (8 MB): scikit-learn's search costs a
#: thread pool's start-up per call, tens of milliseconds on a loaded machine, which many small searches (one
#: per group of records) would pay again and again
SMALL_CELLS = 1_048_576


def nearest_neighbors(
    queries: np.ndarray,
    reference: np.ndarray,
    k: int = 1,
    *,
    exclude_self: bool = False,
    block_bytes: int = BLOCK_BYTES,
    return_distance: bool = False,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Indices of the ``k`` nearest reference rows of every query row, nearest first.

    Parameters
    ----------
    queries : ndarray of shape (q, m)
    reference : ndarray of shape (n, m)
    k : int
        Neighbours per query (``k <= n``, minus one with ``exclude_self``).
    exclude_self : bool
        Queries are the reference rows themselves (same order): skip each row's own index.
    block_bytes : int
        Memory budget of one distance chunk.
    return_distance : bool
        Also return the Euclidean distances.

    Returns
    -------
    idx : ndarray of shape (q, k)
    dist : ndarray of shape (q, k), only with ``return_distance``
    """
    Qm = np.ascontiguousarray(queries, dtype=np.float64)
    R = np.ascontiguousarray(reference, dtype=np.float64)
    if not exclude_self and Qm.shape[1] and DEDUP_ROWS <= len(Qm) <= DEDUP_MAX_ROWS:
        # a microaggregated release repeats each group's row k times: its distinct rows are searched once
        # (the same rows get the same neighbours; the search costs queries x reference). Rows are told apart by
        # their bytes, hashed: a sort of the rows would cost every search of distinct rows several milliseconds
        import pandas as pd

        inverse, _ = pd.factorize(Qm.view(np.dtype((np.void, Qm.dtype.itemsize * Qm.shape[1]))).ravel())
        n_distinct = int(inverse.max()) + 1 if len(inverse) else 0
        if n_distinct <= DEDUP_SHARE * len(Qm):
            first = np.unique(inverse, return_index=True)[1]  # each distinct row's first place
            out = _search(Qm[first], R, k, exclude_self=False, block_bytes=block_bytes,
                          return_distance=return_distance)
            return (out[0][inverse], out[1][inverse]) if isinstance(out, tuple) else out[inverse]
    return _search(Qm, R, k, exclude_self=exclude_self, block_bytes=block_bytes, return_distance=return_distance)


def _search(Qm: np.ndarray, R: np.ndarray, k: int, *, exclude_self: bool, block_bytes: int,
            return_distance: bool) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    import sklearn
    from sklearn.neighbors import NearestNeighbors

    from ppdm.utils.threads import openmp_threads_for

    kk = k + 1 if exclude_self else k
    cells = len(Qm) * len(R) * max(1, Qm.shape[1])
    if cells <= SMALL_CELLS:
        idx = _small_search(Qm, R, kk)
    else:
        with sklearn.config_context(working_memory=max(1, block_bytes // 1024**2)), openmp_threads_for(cells):
            nn = NearestNeighbors(n_neighbors=kk, algorithm="brute").fit(R)
            idx = nn.kneighbors(Qm, return_distance=False)
    if exclude_self:
        own = idx == np.arange(len(Qm))[:, None]
        # drop the row's own index (or, when a duplicate row hid it, the farthest candidate)
        own[~own.any(axis=1), -1] = True
        idx = idx[~own].reshape(len(Qm), k)
    idx = idx.astype(np.int64, copy=False)
    if not return_distance:
        return idx
    # recomputed a block of queries at a time: ten thousand queries' neighbours side by side would cost
    # 2 x q x k x m values (26 MB at k = 8, m = 20) beside the pool block being searched
    dist = np.empty(idx.shape)
    step = max(1, DISTANCE_CELLS // max(1, idx.shape[1] * Qm.shape[1]))
    for s in range(0, len(Qm), step):
        diff = Qm[s:s + step, None, :] - R[idx[s:s + step]]
        dist[s:s + step] = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
    return idx, dist


def _small_search(Q: np.ndarray, R: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` nearest rows of ``R`` for each row of ``Q`` from one exact distance matrix (a small search):
    nearest first, equal distances in the reference's order."""
    diff = Q[:, None, :] - R[None, :, :]
    d2 = np.einsum("ijk,ijk->ij", diff, diff)
    order = np.argsort(d2, axis=1, kind="stable")
    return order[:, :k]
