"""Condensed pairwise dissimilarities, computed in row blocks into a float32 vector."""

from __future__ import annotations

from typing import Any

import numpy as np

from ppdm.distances.binary import BINARY, binary_block
from ppdm.distances.mixed import MixedTable, column_ranges, gower_block, huang_block
from ppdm.exceptions import InputError, ParameterError
from ppdm.utils.validation import check_memory

__all__ = ["DISSIMILARITIES", "NUMERIC", "MIXED", "pairwise", "n_pairs", "condensed_index", "cross"]

NUMERIC = ("euclidean", "minkowski", "manhattan", "chebyshev", "mahalanobis", "cosine")
MIXED = ("gower", "huang")
DISSIMILARITIES = NUMERIC + tuple(f"binary-{b}" for b in BINARY if b != "cosine") + MIXED

_BLOCK_ELEMENTS = 4_000_000


def n_pairs(n: int) -> int:
    return n * (n - 1) // 2


def condensed_index(i: np.ndarray, j: np.ndarray, n: int) -> np.ndarray:
    """Position of pair (i, j), i < j, in the condensed vector."""
    i, j = np.asarray(i, np.int64), np.asarray(j, np.int64)
    return n * i - i * (i + 1) // 2 + (j - i - 1)


class _Prepared:
    """A metric bound to fitted statistics (covariance, ranges), able to compute row-vs-row blocks."""

    def __init__(self, metric: str, data: Any, r: float, weight: float) -> None:
        if metric not in DISSIMILARITIES:
            raise ParameterError(f"unknown dissimilarity '{metric}'; choose one of {', '.join(DISSIMILARITIES)}")
        self.metric, self.r, self.weight = metric, r, weight
        if metric in MIXED:
            self.data = data if isinstance(data, MixedTable) else MixedTable(np.asarray(data, float),
                                                                             np.empty((len(data), 0), np.int32))
            self.ranges = column_ranges(self.data.num)
        else:
            if isinstance(data, MixedTable):
                if data.cat.shape[1]:
                    raise InputError(f"dissimilarity '{metric}' is numeric only but the table has categorical "
                                     "columns; use --dissimilarity gower or huang")
                data = data.num
            A = np.asarray(data, dtype=np.float64)
            if not np.isfinite(A).all():
                raise InputError(f"dissimilarity '{metric}' needs complete numeric data; fill the missing cells "
                                 "or use gower (which skips them)")
            self.data = A
            if metric == "mahalanobis":
                self.VI = np.linalg.pinv(np.atleast_2d(np.cov(A, rowvar=False)))
            if metric.startswith("binary-") and not np.isin(A, (0.0, 1.0)).all():
                raise InputError(f"dissimilarity '{metric}' needs 0/1 columns; recode them or use gower")
        if metric == "minkowski" and not r > 0:
            raise ParameterError(f"Minkowski r must be positive (got {r})")

    @property
    def n(self) -> int:
        return self.data.n_rows if isinstance(self.data, MixedTable) else self.data.shape[0]

    def rows(self, a: int, b: int) -> Any:
        return self.data.rows(a, b) if isinstance(self.data, MixedTable) else self.data[a:b]

    def block(self, A: Any, B: Any) -> np.ndarray:
        from scipy.spatial.distance import cdist

        m = self.metric
        if m == "gower":
            return gower_block(A, B, self.ranges)
        if m == "huang":
            return huang_block(A, B, self.weight)
        if m.startswith("binary-"):
            return 1.0 - binary_block(A, B, m.split("-", 1)[1])
        if m == "minkowski":
            return cdist(A, B, "chebyshev") if np.isinf(self.r) else cdist(A, B, "minkowski", p=self.r)
        if m == "manhattan":
            return cdist(A, B, "cityblock")
        if m == "mahalanobis":
            return cdist(A, B, "mahalanobis", VI=self.VI)
        if m == "cosine":
            out = cdist(A, B, "cosine")
            return np.nan_to_num(out, nan=1.0)
        return cdist(A, B, m)


def prepare(data: Any, metric: str = "euclidean", *, r: float = 2.0, weight: float = 1.0) -> _Prepared:
    return _Prepared(metric, data, r, weight)


def pairwise(data: Any, metric: str = "euclidean", *, r: float = 2.0, weight: float = 1.0,
             dtype: type = np.float32, max_bytes: float = 2 * 1024**3) -> np.ndarray:
    """Condensed dissimilarities of every pair ``i < j`` (scipy ``pdist`` order).

    Parameters
    ----------
    data : ndarray (n, m) or MixedTable
    metric : str
        One of :data:`DISSIMILARITIES`. ``binary-*`` are ``1 - similarity``; cosine is ``1 - cos``.
    r : float
        Minkowski exponent (``inf`` = Chebyshev).
    weight : float
        Weight of a categorical mismatch in ``huang``.
    dtype : numpy dtype
        Storage type of the result (float32 halves the memory of float64).
    max_bytes : float
        Refuse when the result would exceed this many bytes.
    """
    P = data if isinstance(data, _Prepared) else prepare(data, metric, r=r, weight=weight)
    n = P.n
    M = n_pairs(n)
    check_memory(M * np.dtype(dtype).itemsize, f"{M} pairwise dissimilarities",
                 "use the landmark mode (landmarks=...) or sample the rows", budget=max_bytes)
    out = np.empty(M, dtype=dtype)
    pos = 0
    a = 0
    while a < n - 1:
        b = min(n - 1, a + max(1, _BLOCK_ELEMENTS // max(n - a, 1)))
        blk = P.block(P.rows(a, b), P.rows(a, n))
        mask = np.triu(np.ones(blk.shape, dtype=bool), k=1)
        vals = blk[mask]
        out[pos:pos + vals.size] = vals
        pos += vals.size
        a = b
    return out


def cross(P: _Prepared, other: Any) -> np.ndarray:
    """Dissimilarities between the rows of ``other`` and the prepared data (rows x n)."""
    return P.block(other, P.data)
