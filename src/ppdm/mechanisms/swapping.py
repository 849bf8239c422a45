"""Rank swapping (Moore 1996; the ``rankSwap`` of statistical disclosure control).

Each column is swapped on its own: the values are sorted, and each value not yet swapped is exchanged with
a value chosen at random among those not yet swapped whose rank is at most ``p`` per cent of the records
above it. Every released column holds exactly the original's values (its distribution is kept), each moved
to another record of similar rank, so a record's released values are near its own but rarely equal to them.

What it does not protect: the values themselves are published (a rare extreme value is still in the
release, on another record of similar rank), and with a small ``p`` each value stays close to its owner's.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ppdm.mechanisms.base import Mechanism, seed_from
from ppdm.utils.validation import check_real

__all__ = ["RankSwap", "rank_swap_column"]


def rank_swap_column(x: np.ndarray, window: int, rng: np.random.Generator) -> np.ndarray:
    """Permutation ``perm`` of the rows such that ``x[perm]`` is ``x`` rank-swapped within ``window`` ranks."""
    n = len(x)
    order = np.argsort(x, kind="stable")  # order[r]: the row holding rank r
    partner = np.arange(n)  # partner[r]: the rank whose value rank r receives
    free = np.ones(n, dtype=bool)
    for r in range(n):
        if not free[r]:
            continue
        free[r] = False
        hi = min(n, r + window + 1)
        if hi <= r + 1:
            continue
        # uniform among the free ranks of the window: draw in the window until a free one (most are free),
        # then fall back to listing them
        s = -1
        for t in rng.integers(r + 1, hi, size=16):
            if free[t]:
                s = int(t)
                break
        if s < 0:
            options = np.flatnonzero(free[r + 1:hi]) + r + 1
            if options.size == 0:
                continue  # nothing left to swap with: the value stays
            s = int(options[rng.integers(options.size)])
        free[s] = False
        partner[r], partner[s] = s, r
    perm = np.empty(n, dtype=np.int64)
    perm[order] = order[partner]
    return perm


class RankSwap(Mechanism):
    """Rank swapping of every column within ``p`` per cent of the records.

    Parameters
    ----------
    p : float, default=5.0
        Largest rank distance of a swap, in per cent of the number of records (sdcMicro's ``P``).
    random_state : int, Generator or None

    Attributes
    ----------
    seed_ : int
        Seed of the swaps (key material: it undoes the release).
    """

    _mixes_columns: ClassVar[bool] = False
    _secret = ("seed_",)
    _stochastic = True
    _table_level: ClassVar[bool] = True
    _scale_free: ClassVar[bool] = True

    def __init__(self, p: float = 5.0, *, random_state: object = None) -> None:
        self.p = p
        self.random_state = random_state

    def fit(self, X: object, y: object = None) -> RankSwap:
        self._check_X(X, reset=True)
        check_real(self.p, "p", low=0.0, high=100.0)
        self.seed_ = seed_from(self.random_state)
        return self

    def transform(self, X: object) -> np.ndarray:
        """Swap the columns of ``X`` (the swaps are drawn from the key for every call, in column order)."""
        self._check_fitted()
        A = self._check_X(X, reset=False)
        n = len(A)
        window = int(np.floor(float(self.p) / 100.0 * n))
        out = np.empty_like(A)
        for j in range(A.shape[1]):
            rng = np.random.default_rng([self.seed_, j])
            out[:, j] = A[rank_swap_column(A[:, j], window, rng), j]
        return out
