"""Exact Euclidean nearest neighbours in row chunks: never more than a fixed budget of distances at once.

The squared distances of a chunk of queries to every reference row come from one BLAS product
(``|q|^2 - 2 q.x + |x|^2``); the chunk size is chosen so that the block stays under ``block_bytes``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["nearest_neighbors", "BLOCK_BYTES"]

#: bytes of one distance block (queries x references); 128 MiB keeps 100k x 100k searches cache-friendly
BLOCK_BYTES = 128 * 1024**2


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
        Memory budget of one distance block.
    return_distance : bool
        Also return the Euclidean distances.

    Returns
    -------
    idx : ndarray of shape (q, k)
    dist : ndarray of shape (q, k), only with ``return_distance``
    """
    Qm = np.ascontiguousarray(queries, dtype=np.float64)
    R = np.ascontiguousarray(reference, dtype=np.float64)
    n = R.shape[0]
    kk = k + 1 if exclude_self else k
    r2 = np.einsum("ij,ij->i", R, R)
    chunk = max(1, int(block_bytes // (8 * max(n, 1))))
    idx = np.empty((Qm.shape[0], k), dtype=np.int64)
    dist = np.empty((Qm.shape[0], k)) if return_distance else None
    for s in range(0, Qm.shape[0], chunk):
        C = Qm[s : s + chunk]
        D = C @ R.T
        D *= -2.0
        D += r2[None, :]
        D += np.einsum("ij,ij->i", C, C)[:, None]
        if exclude_self:
            D[np.arange(len(C)), np.arange(s, s + len(C))] = np.inf
        if kk == 1:
            part = np.argmin(D, axis=1)[:, None]
        else:
            part = np.argpartition(D, kk - 1, axis=1)[:, :kk]
            order = np.argsort(np.take_along_axis(D, part, axis=1), axis=1, kind="stable")
            part = np.take_along_axis(part, order, axis=1)
        part = part[:, :k]
        idx[s : s + len(C)] = part
        if dist is not None:
            dist[s : s + len(C)] = np.sqrt(np.clip(np.take_along_axis(D, part, axis=1), 0.0, None))
    return (idx, dist) if dist is not None else idx
