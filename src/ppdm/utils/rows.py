"""Sets of row numbers of an ``n``-row table, by a mask of the rows instead of sorting.

``np.setdiff1d`` and ``np.intersect1d`` sort what they are given (and concatenate both sides): on a million
rows that is about 60 MB of temporaries for a few thousand rows of answer. A boolean mask costs ``n`` bytes.
"""

from __future__ import annotations

import numpy as np

__all__ = ["row_dtype", "rows_except", "rows_among"]


def row_dtype(n: int) -> type[np.integer]:
    """The integer type for row numbers of an ``n``-row table: 32 bits while they fit (half the memory of
    a million-row index), 64 beyond."""
    return np.int32 if n < 2**31 else np.int64


def _as_rows(rows: np.ndarray) -> np.ndarray:
    """Row numbers as an integer array usable as an index, without copying one that already is."""
    rows = np.asarray(rows)
    return rows if rows.dtype.kind in "iu" else rows.astype(np.int64)


def rows_except(n: int, rows: np.ndarray) -> np.ndarray:
    """The rows ``0..n-1`` not in ``rows``, sorted (``np.setdiff1d(np.arange(n), rows)``)."""
    keep = np.ones(n, dtype=bool)
    keep[_as_rows(rows)] = False
    return np.flatnonzero(keep)


def rows_among(rows: np.ndarray, within: np.ndarray, n: int) -> np.ndarray:
    """The distinct ``rows`` that are also in ``within``, sorted (``np.intersect1d(rows, within)``); all
    are row numbers of an ``n``-row table."""
    inside = np.zeros(n, dtype=bool)
    inside[_as_rows(within)] = True
    rows = _as_rows(rows)
    return np.unique(rows[inside[rows]])  # sorts only the rows asked about (a sample of targets)
