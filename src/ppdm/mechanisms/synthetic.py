"""Model-based synthetic records: a Gaussian copula fitted per class (scipy only).

Each class (stratum) gets its own model: every column's empirical distribution (its sorted values,
linearly interpolated) and the correlation of the columns' normal scores. The release draws as many new
records per class as the class has, from that model; no released row is derived from one person's row,
so a row points at nobody (linkage succeeds at about chance), while the per-class distributions and
correlations that classifiers use survive. Small classes borrow strength from the whole table: their
correlation matrix is shrunk towards the pooled one.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from scipy.special import ndtr, ndtri

from ppdm.mechanisms.base import Mechanism, seed_from, strata_of
from ppdm.mechanisms.tails import code_rare_categories, code_tails
from ppdm.utils.rows import row_dtype
from ppdm.utils.validation import check_int

__all__ = ["GaussianCopula"]

#: synthetic rows drawn at a time (their normal scores are the only working array beside the release)
_DRAW_BLOCK = 32_768


def _normal_scores(A: np.ndarray, rows: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """Van der Waerden scores of each column of ``A[rows]`` (None: all rows): Phi^-1(rank / (n + 1)), ties at
    their mean rank, written into ``out`` when given (a buffer of that shape).

    Ranked a column at a time: ranking the whole table at once makes several table-sized temporaries.
    """
    n = len(A) if rows is None else len(rows)
    Z = np.empty((n, A.shape[1]), dtype=np.float64) if out is None else out
    for j in range(A.shape[1]):
        r = _average_ranks(A[:, j] if rows is None else A[rows, j])
        r /= n + 1
        Z[:, j] = ndtri(r, out=r)
    return Z


def _average_ranks(col: np.ndarray) -> np.ndarray:
    """``scipy.stats.rankdata(col)`` (1-based, ties at their mean rank), equal to it bit for bit, with a
    sort and a few row-length vectors: a million distinct values take 25 MB where ``rankdata`` takes 57."""
    c = np.asarray(col, dtype=np.float64)  # a column of the table is sorted as it is, not copied first
    n = len(c)
    if n == 0 or np.isnan(c).any():
        from scipy.stats import rankdata

        return np.asarray(rankdata(c), dtype=np.float64)
    order = np.argsort(c, kind="stable")
    c = c[order]
    new = np.empty(n, dtype=bool)  # where a run of equal sorted values starts
    new[0] = True
    np.not_equal(c[1:], c[:-1], out=new[1:])
    del c
    out = np.empty(n)
    if new.all():  # no ties: a value's rank is its place in the sorted order
        for s in range(0, n, _DRAW_BLOCK):  # a block of ranks at a time, not a row-length vector of them
            out[order[s:s + _DRAW_BLOCK]] = np.arange(s + 1, min(n, s + _DRAW_BLOCK) + 1, dtype=np.float64)
        return out
    run = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    del new
    ends = np.append(starts[1:], n)
    mean_rank = 0.5 * (starts + ends + 1)  # a run's mean 1-based rank, exact in halves
    for s in range(0, n, _DRAW_BLOCK):
        out[order[s:s + _DRAW_BLOCK]] = mean_rank[run[s:s + _DRAW_BLOCK]]
    return out


def _correlation(Z: np.ndarray, chunk: int = 65_536) -> np.ndarray:
    """Pearson correlation of the columns, accumulated over row chunks (no centred copy of the table)."""
    n, m = Z.shape
    if n < 3:
        return np.eye(m)
    mean = Z.mean(axis=0)
    cross = np.zeros((m, m))
    for s in range(0, n, chunk):
        D = Z[s:s + chunk] - mean
        cross += D.T @ D
        del D  # one chunk at a time
    sd = np.sqrt(np.diag(cross))
    with np.errstate(divide="ignore", invalid="ignore"):
        C = cross / np.outer(sd, sd)
    C = np.where(np.isfinite(C), C, 0.0)
    np.fill_diagonal(C, 1.0)
    return C


def _quantiles(sorted_col: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The empirical quantile function (linear between order statistics) at probabilities ``u``."""
    n = len(sorted_col)
    pos = np.clip(u * (n + 1) - 1.0, 0.0, n - 1.0)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, n - 1)
    w = pos - lo
    return sorted_col[lo] * (1 - w) + sorted_col[hi] * w


class GaussianCopula(Mechanism):
    """Synthetic records from a Gaussian copula fitted per class (or to the whole table).

    Parameters
    ----------
    per_class : bool, default=True
        Fit one model per stratum given to ``fit(X, y)`` (the label in ``ppdm release``); without ``y`` the
        table is one stratum.
    shrinkage : float, default=0.2
        Weight of the pooled correlation in a class's correlation, for classes with few records; it grows to
        1 for a class no larger than the number of columns.
    tail_k : int, default=20
        Tail coding of the released numbers (:mod:`ppdm.mechanisms.tails`): every released value is one that
        at least ``tail_k`` real records stand behind (the empirical marginals would copy rare and extreme
        values exactly); 1 leaves the marginals as they are.
    variables : list of lists of int or None, default=None
        Column groups that are one categorical variable each (the one-hot blocks ``ppdm release`` passes):
        they are not numbers, and are not tail-coded.
    random_state : int, Generator or None
        Seeds the draws (key material of the release).

    Attributes
    ----------
    seed_ : int
        Seed of the synthetic draws (key material).
    """

    _mixes_columns: ClassVar[bool] = False
    _secret = ("seed_",)
    _stochastic = True
    _table_level: ClassVar[bool] = True
    _keeps_no_row: ClassVar[bool] = True
    _draws_from_model: ClassVar[bool] = True
    _uses_label: ClassVar[bool] = True
    _scale_free: ClassVar[bool] = True
    #: ``ppdm release`` passes the categorical blocks of a whole table as ``variables``
    _uses_blocks: ClassVar[bool] = True

    def __init__(self, *, per_class: bool = True, shrinkage: float = 0.2, tail_k: int = 20,
                 variables: list[list[int]] | None = None, random_state: object = None) -> None:
        self.per_class = per_class
        self.shrinkage = shrinkage
        self.tail_k = tail_k
        self.variables = variables
        self.random_state = random_state

    def fit(self, X: object, y: object = None) -> GaussianCopula:
        A = self._check_X(X, reset=True)
        self.strata_ = strata_of(y, len(A), self.per_class)
        self.seed_ = seed_from(self.random_state)
        self._A = A  # kept only for the draw of this fit; never exported (not a fitted attribute)
        return self

    def fit_transform(self, X: object, y: object = None, **fit_params: object) -> np.ndarray:
        self.fit(X, y)
        A, strata = self._A, self.strata_
        n, m = A.shape
        rng = np.random.default_rng(self.seed_)
        out = np.empty_like(A)
        # the release's own buffer holds the pooled normal scores, then each class's (its first rows), until
        # the draws overwrite it: no score table beside the release
        pooled = _correlation(_normal_scores(A, out=out))
        classes = np.unique(strata)
        factors = []
        for s in classes:
            rows = np.flatnonzero(strata == s).astype(row_dtype(n))  # every class's rows are held until the draws
            nc = len(rows)
            lam = 1.0 if nc <= m + 1 else min(1.0, max(float(self.shrinkage), (m + 1) / nc))
            # one stratum: its scores are the pooled ones
            own = pooled if len(classes) == 1 else _correlation(_normal_scores(A, rows, out=out[:nc]))
            C = (1 - lam) * own + lam * pooled
            w, V = np.linalg.eigh(C)
            factors.append((rows, V * np.sqrt(np.clip(w, 0.0, None))))
        for rows, L in factors:
            nc = len(rows)
            # drawn a block of rows at a time: the same normal stream as one draw of the class (row-major)
            for b in range(0, nc, _DRAW_BLOCK):
                U = rng.standard_normal((min(_DRAW_BLOCK, nc - b), m)) @ L.T
                out[rows[b:b + _DRAW_BLOCK]] = ndtr(U, out=U)
            for j in range(m):  # a column's sorted values at a time: no sorted copy of the class
                col = np.sort(A[rows, j])
                for b in range(0, nc, _DRAW_BLOCK):  # the quantile's working arrays a block of rows long
                    r = rows[b:b + _DRAW_BLOCK]
                    out[r, j] = _quantiles(col, out[r, j])
        blocks = [np.asarray(g, dtype=np.int64) for g in self.variables or () if len(g) > 1]
        numbers = np.setdiff1d(np.arange(m), np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.int64))
        k = check_int(self.tail_k, "tail_k", low=1)
        code_tails(out, A, numbers, k, strata)
        code_rare_categories(out, A, blocks, k)
        del self._A
        return out

    def transform(self, X: object) -> np.ndarray:
        """Synthetic records cannot be made for new rows one by one: the release is the fitted table's."""
        from ppdm.exceptions import ParameterError

        raise ParameterError("synthetic records are drawn for a whole table; use fit_transform (ppdm perturb)")
