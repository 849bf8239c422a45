"""Tail coding: released numbers that never single out the few real records holding them.

Synthetic records made of real values (sequential CART draws each value from a real donor, the Gaussian
copula maps its draws onto the empirical marginal) copy rare and extreme values exactly: a unique income or
the oldest person's age comes out as it was, and a predicate read off the release (``income == 51100``,
``age >= 90``) isolates that person. Tail coding maps every released value of a column onto values that at
least ``k`` real records stand behind:

* a value that at least ``k`` real records hold is kept;
* the ``k`` lowest and the ``k`` highest real records form the bottom and top groups (top and bottom coding):
  a value in them is released as the group's inner edge, so ``x >= top`` holds for at least ``k`` records;
* the other rare values (held by fewer than ``k`` records) are sorted into runs of ``k`` records each and
  released as their run's mean: a value that ``k`` records stand behind, in between their own values.

Only the column's real values decide the coding (never the released ones), so it is a fixed map applied to
whatever the mechanism drew.

A categorical column (a one-hot block of a whole table's design) is coded the same way: a category that fewer
than ``k`` real records hold is never released; a row that drew it gets the column's most frequent category.
"""

from __future__ import annotations

import numpy as np

__all__ = ["TailCoding", "code_tails", "code_rare_categories"]


class TailCoding:
    """The tail coding of one column, fitted on its real values (see the module).

    Parameters
    ----------
    k : int
        Fewest real records behind a released value.
    """

    def __init__(self, k: int) -> None:
        self.k = int(k)

    def fit(self, real: np.ndarray) -> TailCoding:
        v = np.sort(np.asarray(real, dtype=np.float64)[np.isfinite(real)])
        n, k = len(v), self.k
        self.keep_: np.ndarray = np.zeros(0)
        if n < 2 * k or k <= 1:  # too few records to code: the column is left as it is
            self.lo_, self.hi_ = -np.inf, np.inf
            self.edges_, self.means_ = np.zeros(0), np.zeros(0)
            return self
        values, counts = np.unique(v, return_counts=True)
        # top and bottom coding: the k-th lowest and k-th highest real values are the released extremes
        self.lo_, self.hi_ = float(v[k - 1]), float(v[n - k])
        self.keep_ = values[(counts >= k) & (values >= self.lo_) & (values <= self.hi_)]
        rare = v[(v > self.lo_) & (v < self.hi_) & ~np.isin(v, self.keep_)]
        # runs of k rare values (the last run takes the remainder); a value is coded by the run it falls in
        starts = np.arange(0, len(rare), k)
        if len(starts) > 1 and len(rare) - starts[-1] < k:
            starts = starts[:-1]
        self.edges_ = rare[starts] if len(rare) else np.zeros(0)
        ends = np.append(starts[1:], len(rare))
        self.means_ = np.array([rare[a:b].mean() for a, b in zip(starts, ends, strict=True)]) if len(rare) else \
            np.zeros(0)
        return self

    def transform(self, values: np.ndarray) -> np.ndarray:
        """``values`` coded (a new array; gaps stay gaps)."""
        x = np.asarray(values, dtype=np.float64)
        out = np.clip(x, self.lo_, self.hi_)
        if len(self.edges_) == 0:
            return out
        inside = (out > self.lo_) & (out < self.hi_) & ~np.isin(out, self.keep_) & np.isfinite(out)
        run = np.clip(np.searchsorted(self.edges_, out[inside], side="right") - 1, 0, len(self.means_) - 1)
        out[inside] = self.means_[run]
        return out


def code_tails(released: np.ndarray, real: np.ndarray, columns: np.ndarray, k: int,
               strata: np.ndarray | None = None) -> np.ndarray:
    """``released`` with each of ``columns`` tail-coded against the same column of ``real`` (in place), within
    each stratum (``strata``: a label per row of both, the rows of a class synthesised from that class)."""
    groups = [np.arange(len(real))] if strata is None else [np.flatnonzero(strata == s) for s in np.unique(strata)]
    for rows in groups:
        for j in columns:
            released[rows, j] = TailCoding(k).fit(real[rows, j]).transform(released[rows, j])
    return released


def code_rare_categories(released: np.ndarray, real: np.ndarray, blocks: list[np.ndarray], k: int) -> np.ndarray:
    """``released`` with, in each one-hot block of ``blocks``, the rows whose category fewer than ``k`` rows of
    ``real`` hold given the block's most frequent category instead (in place; a category is a block's largest
    entry)."""
    for block in blocks:
        if len(block) < 2:
            continue
        counts = np.bincount(real[:, block].argmax(axis=1), minlength=len(block))
        held = (real[:, block] != 0).any(axis=1)
        counts = np.bincount(real[held][:, block].argmax(axis=1), minlength=len(block)) if held.any() else counts
        rare = counts < k
        if not rare.any() or rare.all():
            continue
        chosen = released[:, block].argmax(axis=1)
        rows = np.flatnonzero(rare[chosen] & (released[:, block] != 0).any(axis=1))
        if len(rows):
            top = int(counts.argmax())
            weight = released[rows][:, block].max(axis=1)
            released[np.ix_(rows, block)] = 0.0
            released[rows, block[top]] = weight
    return released
