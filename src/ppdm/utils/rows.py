"""Sets of row numbers of an ``n``-row table, by a mask of the rows instead of sorting.

``np.setdiff1d`` and ``np.intersect1d`` sort what they are given (and concatenate both sides): on a million
rows that is about 60 MB of temporaries for a few thousand rows of answer. A boolean mask costs ``n`` bytes.
"""

from __future__ import annotations

import numpy as np

__all__ = ["rows_except", "rows_among"]


def rows_except(n: int, rows: np.ndarray) -> np.ndarray:
    """The rows ``0..n-1`` not in ``rows``, sorted (``np.setdiff1d(np.arange(n), rows)``)."""
    keep = np.ones(n, dtype=bool)
    keep[np.asarray(rows, dtype=np.int64)] = False
    return np.flatnonzero(keep)


def rows_among(rows: np.ndarray, within: np.ndarray, n: int) -> np.ndarray:
    """The distinct ``rows`` that are also in ``within``, sorted (``np.intersect1d(rows, within)``); all
    are row numbers of an ``n``-row table."""
    inside = np.zeros(n, dtype=bool)
    inside[np.asarray(within, dtype=np.int64)] = True
    rows = np.asarray(rows, dtype=np.int64)
    return np.unique(rows[inside[rows]])  # sorts only the rows asked about (a sample of targets)
