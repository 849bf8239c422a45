"""Predicates on mixed records and how many records of a table meet each of them, vectorised.

A condition is ``low <= value <= high`` on one column of :meth:`ppdm.attacks.mixed.MixedTable.values`
(a gap is ``+inf`` there). Every condition holds on a contiguous run of its column's sorted values, so the
records meeting it are a run of that column's sort order, found by binary search. A conjunction is counted
either with bitsets (each run's records as the difference of two prefix bitsets of the column's order, the
conditions ANDed and the bits counted) or, when the bitsets would not fit :data:`BITSET_BYTES`, by checking
the other conditions on the records of the rarest condition's run only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Predicates", "ColumnIndex", "count_matches", "TOP"]

#: upper end of a ``>=`` condition: every number but a gap (``+inf``) is below it
TOP = float(np.finfo(np.float64).max)
#: records checked in one block of the run-based count
MAX_CELLS = 1_000_000
#: largest size of a table's prefix bitsets (one per distinct value of every column)
BITSET_BYTES = 192 * 1024**2
#: predicates whose bitsets are combined at a time
BITSET_BLOCK = 4096
_POPCOUNT8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


@dataclass(frozen=True)
class Predicates:
    """Conjunctions of conditions ``low <= value <= high`` on columns of :meth:`MixedTable.values`.

    ``x == v`` is ``[v, v]``, ``x <= v`` is ``[-inf, v]``, ``x >= v`` is ``[v, TOP]`` and ``isna`` is
    ``[inf, inf]`` (a gap is ``+inf`` there, so only ``isna`` finds it).

    Attributes
    ----------
    columns : ndarray of shape (n_predicates, n_conditions)
    low, high : ndarray of shape (n_predicates, n_conditions)
    """

    columns: np.ndarray
    low: np.ndarray
    high: np.ndarray

    def __len__(self) -> int:
        return int(self.columns.shape[0])

    def take(self, rows: np.ndarray) -> Predicates:
        """The predicates at ``rows``."""
        return Predicates(self.columns[rows], self.low[rows], self.high[rows])


def _popcount(words: np.ndarray) -> np.ndarray:
    """Set bits of each row of a (rows, W) uint64 array."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(words).sum(axis=1, dtype=np.int64)
    return _POPCOUNT8[words.view(np.uint8)].sum(axis=1, dtype=np.int64)


class ColumnIndex:
    """A table's :meth:`MixedTable.values` with every column's sort order, for counting predicates.

    Parameters
    ----------
    V : ndarray of shape (n, m)
    bitsets : bool, default=True
        Build the prefix bitsets when they fit :data:`BITSET_BYTES`.
    """

    def __init__(self, V: np.ndarray, *, bitsets: bool = True) -> None:
        self.V = V
        n, m = V.shape
        # a column at a time, the order in 32 bits where the rows allow: a million-row release's index costs
        # its sorted values and half as much again, not two more copies of itself and the temporaries
        self.order = np.empty((n, m), dtype=np.int32 if n < 2**31 else np.int64, order="F")
        self.sorted = np.empty((n, m), dtype=V.dtype, order="F")
        for j in range(m):
            self.order[:, j] = np.argsort(V[:, j], kind="stable")
            np.take(V[:, j], self.order[:, j], out=self.sorted[:, j])
        self.words = (n + 63) // 64
        self.bounds: list[np.ndarray] = []
        self.offsets = np.zeros(m, dtype=np.int64)
        self.prefix: np.ndarray | None = None
        if not bitsets or n == 0:
            return
        for j in range(m):
            col = self.sorted[:, j]
            change = np.flatnonzero(col[1:] != col[:-1]) + 1
            self.bounds.append(np.concatenate([[0], change, [n]]))
        sizes = np.array([len(b) for b in self.bounds])
        if int(sizes.sum()) * self.words * 8 + n * self.words * 8 > BITSET_BYTES:
            self.bounds = []
            return
        self.offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        self.prefix = np.empty((int(sizes.sum()), self.words), dtype=np.uint64)
        one = np.zeros((n + 1, self.words), dtype=np.uint64)
        for j in range(m):
            one[:] = 0
            rows = self.order[:, j]
            one[np.arange(1, n + 1), rows // 64] = np.left_shift(np.uint64(1), (rows % 64).astype(np.uint64))
            np.bitwise_or.accumulate(one, axis=0, out=one)
            self.prefix[self.offsets[j]: self.offsets[j] + sizes[j]] = one[self.bounds[j]]

    def __len__(self) -> int:
        return int(self.V.shape[0])

    def ranges(self, predicates: Predicates) -> tuple[np.ndarray, np.ndarray]:
        """Start and stop of each condition's run in its column's order, shape (n_predicates, c)."""
        cols = predicates.columns
        low, high = predicates.low.ravel(), predicates.high.ravel()
        start = np.empty(cols.size, dtype=np.int64)
        stop = np.empty(cols.size, dtype=np.int64)
        for j, at in _by_column(cols):
            start[at] = np.searchsorted(self.sorted[:, j], low[at], side="left")
            stop[at] = np.searchsorted(self.sorted[:, j], high[at], side="right")
        start, stop = start.reshape(cols.shape), stop.reshape(cols.shape)
        return start, np.maximum(stop, start)

    def prefix_rows(self, columns: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Rows of :attr:`prefix` holding the records before ``positions`` of the columns' orders."""
        out = np.empty(columns.size, dtype=np.int64)
        flat = positions.ravel()
        for j, at in _by_column(columns):
            out[at] = self.offsets[j] + np.searchsorted(self.bounds[j], flat[at])
        return out.reshape(columns.shape)


def _by_column(columns: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """Each column named in ``columns`` with the flat positions that name it, from one sort (a mask of every
    condition per column cost more than the searches on a wide table)."""
    flat = columns.ravel()
    # column numbers as 16 bits where they fit: NumPy's stable sort of them is a radix sort
    order = np.argsort(flat.astype(np.uint16) if flat.size and int(flat.max()) < 2**16 else flat, kind="stable")
    cuts = np.flatnonzero(np.diff(flat[order])) + 1
    return [(int(flat[part[0]]), part) for part in np.split(order, cuts) if len(part)]


def _count_bitsets(index: ColumnIndex, predicates: Predicates, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
    assert index.prefix is not None
    lo = index.prefix_rows(predicates.columns, start)
    hi = index.prefix_rows(predicates.columns, stop)
    B, c = predicates.columns.shape
    counts = np.empty(B, dtype=np.int64)
    for s in range(0, B, BITSET_BLOCK):
        e = min(B, s + BITSET_BLOCK)
        acc = index.prefix[hi[s:e, 0]] ^ index.prefix[lo[s:e, 0]]
        for t in range(1, c):
            acc &= index.prefix[hi[s:e, t]] ^ index.prefix[lo[s:e, t]]
        counts[s:e] = _popcount(acc)
    return counts


def _count_runs(index: ColumnIndex, predicates: Predicates, start: np.ndarray, size: np.ndarray) -> np.ndarray:
    B, c = predicates.columns.shape
    rarest = size.argmin(axis=1)
    first = np.take_along_axis(start, rarest[:, None], axis=1)[:, 0]
    length = np.take_along_axis(size, rarest[:, None], axis=1)[:, 0]
    counts = np.zeros(B, dtype=np.int64)
    ends = np.cumsum(length)
    s = 0
    while s < B:
        e = max(s + 1, int(np.searchsorted(ends, (ends[s - 1] if s else 0) + MAX_CELLS, side="right")))
        lens = length[s:e]
        which = np.repeat(np.arange(e - s), lens)  # the predicate each checked record belongs to
        offset = np.arange(len(which)) - np.repeat(np.cumsum(lens) - lens, lens)
        own = rarest[s:e][which]
        rows = index.order[first[s:e][which] + offset, predicates.columns[s:e][which, own]]
        ok = np.ones(len(which), dtype=bool)
        for t in range(c):
            v = index.V[rows, predicates.columns[s:e, t][which]]
            ok &= (own == t) | ((v >= predicates.low[s:e, t][which]) & (v <= predicates.high[s:e, t][which]))
        counts[s:e] = np.bincount(which, weights=ok, minlength=e - s).astype(np.int64)
        s = e
    return counts


def count_matches(index: ColumnIndex, predicates: Predicates) -> np.ndarray:
    """Records of the indexed table meeting each predicate (vectorised; see the module)."""
    B, c = predicates.columns.shape
    if B == 0 or len(index) == 0:
        return np.zeros(B, dtype=np.int64)
    start, stop = index.ranges(predicates)
    if c == 1:
        return stop[:, 0] - start[:, 0]
    if index.prefix is not None:
        return _count_bitsets(index, predicates, start, stop)
    return _count_runs(index, predicates, start, stop - start)
