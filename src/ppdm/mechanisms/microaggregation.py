"""Multivariate microaggregation: MDAV (Domingo-Ferrer and Mateo-Sanz 2002).

Records are grouped into clusters of at least ``k`` similar records and each record is released as its
group's centroid, so every released row is shared by ``k`` or more records: a row can point at a group,
never at a person (k-anonymity on the released numeric block), while the group structure that
classifiers and clusterings use survives. Within strata (typically the class label), groups never mix
strata, so class structure is kept exactly.

MDAV: while at least ``3k`` records remain, take the record farthest from the centroid of the remaining
ones and group it with its ``k - 1`` nearest neighbours, then the record farthest from that one with its
``k - 1`` nearest; with ``2k..3k - 1`` left, one more group around the farthest record and the rest; below
``2k``, the rest form the last group. Every group therefore has between ``k`` and ``2k - 1`` records.
The cost is ``O(n^2 m / k)``: tables beyond ``max_exact_rows`` records (per stratum) are first split
recursively at the median of their widest principal direction into blocks of about ``max_exact_rows``
records (never fewer than ``k``), and MDAV runs inside each block.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ppdm.exceptions import ParameterError
from ppdm.mechanisms.base import Mechanism
from ppdm.utils.validation import check_int

__all__ = ["MDAV", "mdav_groups"]


def _farthest(X: np.ndarray, point: np.ndarray) -> int:
    d = ((X - point) ** 2).sum(axis=1)
    return int(np.argmax(d))


def _nearest(X: np.ndarray, point: np.ndarray, k: int) -> np.ndarray:
    d = ((X - point) ** 2).sum(axis=1)
    if k >= len(d):
        return np.arange(len(d))
    part = np.argpartition(d, k - 1)[:k]
    # stable order among equals keeps the grouping deterministic
    return part[np.lexsort((part, d[part]))]


def mdav_groups(X: np.ndarray, k: int) -> np.ndarray:
    """Group label of every row by exact MDAV (groups of ``k`` to ``2k - 1`` rows; fewer than k rows: one group)."""
    n = len(X)
    labels = np.full(n, -1, dtype=np.int64)
    if n < 2 * k:
        labels[:] = 0
        return labels
    remaining = np.arange(n)
    g = 0

    def take(center: np.ndarray) -> None:
        nonlocal remaining, g
        sel = _nearest(X[remaining], center, k)
        labels[remaining[sel]] = g
        g += 1
        keep = np.ones(len(remaining), dtype=bool)
        keep[sel] = False
        remaining = remaining[keep]

    while len(remaining) >= 3 * k:
        c = X[remaining].mean(axis=0)
        r = X[remaining[_farthest(X[remaining], c)]]
        take(r)
        s = X[remaining[_farthest(X[remaining], r)]]
        take(s)
    if len(remaining) >= 2 * k:
        c = X[remaining].mean(axis=0)
        take(X[remaining[_farthest(X[remaining], c)]])
    labels[remaining] = g
    return labels


def _blocks(X: np.ndarray, rows: np.ndarray, size: int, k: int) -> list[np.ndarray]:
    """Split ``rows`` at the median of their widest principal direction until blocks hold <= ``size`` rows."""
    if len(rows) <= size or len(rows) < 4 * k:
        return [rows]
    Z = X[rows] - X[rows].mean(axis=0)
    # the leading right singular vector from a few power iterations (cheap for tall blocks)
    v = np.ones(Z.shape[1]) / np.sqrt(Z.shape[1])
    for _ in range(8):
        w = Z.T @ (Z @ v)
        nrm = np.linalg.norm(w)
        if nrm == 0:
            break
        v = w / nrm
    proj = Z @ v
    # split sizes are multiples of k, so blocks never leave a remainder smaller than k behind
    half = max(k, (len(rows) // 2) // k * k)
    order = np.argsort(proj, kind="stable")
    return _blocks(X, rows[order[:half]], size, k) + _blocks(X, rows[order[half:]], size, k)


class MDAV(Mechanism):
    """Microaggregation by MDAV: each record released as the centroid of its group of >= ``k`` records.

    Parameters
    ----------
    k : int, default=10
        Minimum group size (groups hold ``k`` to ``2k - 1`` records).
    within_strata : bool, default=True
        Group within the strata given to ``fit(X, y)`` (the class label in ``ppdm release``), so no group
        mixes classes. Without ``y`` the whole table is one stratum.
    max_exact_rows : int, default=5000
        Strata larger than this are split into blocks of about this many records first (see the module).
    random_state : ignored
        MDAV is deterministic; the parameter keeps the common mechanism interface.

    Attributes
    ----------
    groups_ : ndarray of shape (n,)
        Group of every record (key material: it says which records were merged).
    centroids_ : ndarray of shape (n_groups, m)
    n_groups_ : int
    """

    _secret = ("groups_",)
    _table_level: ClassVar[bool] = True
    _uses_label: ClassVar[bool] = True

    def __init__(self, k: int = 10, *, within_strata: bool = True, max_exact_rows: int = 5000,
                 random_state: object = None) -> None:
        self.k = k
        self.within_strata = within_strata
        self.max_exact_rows = max_exact_rows
        self.random_state = random_state

    def fit(self, X: object, y: object = None) -> MDAV:
        A = self._check_X(X, reset=True)
        k = check_int(self.k, "k", low=1)
        size = check_int(self.max_exact_rows, "max_exact_rows", low=2)
        n = len(A)
        if k > n:
            raise ParameterError(f"k = {k} exceeds the {n} records; choose k <= {n}")
        strata = np.zeros(n, dtype=np.int64)
        if y is not None and self.within_strata:
            yy = np.asarray(y)
            if len(yy) != n:
                raise ParameterError(f"y has {len(yy)} values for {n} records")
            strata = np.unique(yy.astype(str), return_inverse=True)[1].astype(np.int64)
        groups = np.full(n, -1, dtype=np.int64)
        next_group = 0
        for s in np.unique(strata):
            rows = np.flatnonzero(strata == s)
            for block in _blocks(A, rows, max(size, 2 * k), k):
                local = mdav_groups(A[block], k)
                groups[block] = local + next_group
                next_group += int(local.max()) + 1
        self.groups_ = groups
        sums = np.zeros((next_group, A.shape[1]))
        np.add.at(sums, groups, A)
        counts = np.bincount(groups, minlength=next_group)
        self.centroids_ = sums / counts[:, None]
        self.n_groups_ = int(next_group)
        self.n_rows_ = n
        return self

    def transform(self, X: object) -> np.ndarray:
        """The nearest group centroid of each row (``fit_transform`` releases each record's own group)."""
        from ppdm.utils.neighbors import nearest_neighbors

        self._check_fitted()
        A = self._check_X(X, reset=False)
        return self.centroids_[nearest_neighbors(A, self.centroids_, 1)[:, 0]]

    def fit_transform(self, X: object, y: object = None, **fit_params: object) -> np.ndarray:
        return self.fit(X, y).centroids_[self.groups_]
