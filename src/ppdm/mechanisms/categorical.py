"""Mechanisms for categorical columns: PRAM, global recoding of rare categories, local suppression.

Each is a scikit-learn style transformer on a 2-D array of category labels (one column per categorical
attribute; ``None`` or NaN is a missing cell). A released cell is always one of the column's original
categories, or missing where local suppression removed it.

* :class:`PRAM` (post-randomisation; Gouweleeuw et al. 1998, the invariant form of Shlomo and de Waal
  2006 as documented for sdcMicro's ``pram``): every cell changes category at random by a transition
  matrix that keeps each category's expected frequency. It protects against linkage on the column (an
  attacker cannot trust any single released value) while tables of counts stay unbiased.
* :class:`RareCategoryRecoding` (global recoding): categories rarer than a share of the rows are merged
  into one published value, so a rare value no longer singles a person out. It protects the people with
  rare values; the merged categories are reported in ``mapping_``.
* :class:`LocalSuppression`: the fewest cells (greedily) of the quasi-identifier columns are blanked so
  that every record's combination of values is shared by at least ``k`` records (k-anonymity, a blank
  matching any value). It protects against re-identification by the combination of those columns.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ppdm.exceptions import InputError, ParameterError
from ppdm.mechanisms.base import strata_of
from ppdm.utils.validation import check_supported_input

__all__ = ["PRAM", "RareCategoryRecoding", "LocalSuppression", "invariant_matrix", "pram_matrix",
           "k_anonymity_counts"]


def _as_cells(X: object) -> np.ndarray:
    """A 2-D object array of labels (a 1-D input is one column); a scipy sparse matrix is refused (as a 0-D
    object array it would be reported as a shape ``()``), and so are complex numbers."""
    check_supported_input(X)
    A = np.asarray(X.to_numpy(dtype=object) if isinstance(X, pd.DataFrame) else X, dtype=object)
    if A.ndim == 1:
        A = A[:, None]
    if A.ndim != 2 or A.shape[0] == 0:
        raise InputError(f"expected a 2-D table of categories with at least one row; got shape {A.shape}")
    return A


def _missing(col: np.ndarray) -> np.ndarray:
    return np.asarray(pd.isna(pd.Series(col, dtype=object)), dtype=bool)


def _codes(col: np.ndarray) -> tuple[np.ndarray, list[Any]]:
    """Integer codes of a column (-1 where missing) and its categories in sorted text order."""
    miss = _missing(col)
    present = col[~miss]
    cats = sorted(set(present.tolist()), key=str)
    lookup = {c: i for i, c in enumerate(cats)}
    codes = np.full(len(col), -1, dtype=np.int64)
    codes[~miss] = [lookup[v] for v in present]
    return codes, cats


# -- PRAM --------------------------------------------------------------------------------------------


def invariant_matrix(P: np.ndarray, counts: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """The invariant transition matrix built from a transition matrix ``P`` and category counts.

    With ``lam = counts @ P`` and the backward matrix ``Q[k, j] = P[j, k] counts[j] / lam[k]``, the product
    ``R = P Q`` satisfies ``counts @ R = counts``; the released matrix is ``alpha R + (1 - alpha) I``, which
    is still row-stochastic and invariant (``alpha`` scales the amount of change).

    Parameters
    ----------
    P : ndarray of shape (c, c)
        Row-stochastic transition probabilities ``P[j, k] = Pr(released k | original j)``.
    counts : ndarray of shape (c,)
        Frequency of each category (positive).
    alpha : float, default=1.0
        Amount of perturbation, in [0, 1].

    Returns
    -------
    ndarray of shape (c, c)
    """
    P = np.asarray(P, dtype=np.float64)
    t = np.asarray(counts, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] != P.shape[1] or P.shape[0] != t.size:
        raise ParameterError(f"P must be square with one row per category; got {P.shape} for {t.size} categories")
    if not 0.0 <= alpha <= 1.0:
        raise ParameterError(f"alpha must lie in [0, 1]; got {alpha}")
    lam = t @ P
    Q = (P * t[:, None]).T / np.where(lam > 0, lam, 1.0)[:, None]
    R = P @ Q
    return alpha * R + (1.0 - alpha) * np.eye(len(t))


def pram_matrix(counts: np.ndarray, pd_min: float, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """An invariant PRAM matrix for categories with these counts.

    The diagonal of the first matrix ``P`` is drawn uniformly in ``[pd_min, 1]`` per category and the rest
    of each row spread evenly over the other categories; :func:`invariant_matrix` then makes it invariant.
    """
    c = len(counts)
    if c == 1:
        return np.ones((1, 1))
    diag = rng.uniform(pd_min, 1.0, size=c)
    P = np.repeat(((1.0 - diag) / (c - 1))[:, None], c, axis=1)
    np.fill_diagonal(P, diag)
    return invariant_matrix(P, counts, alpha)


class PRAM(TransformerMixin, BaseEstimator):
    """Post-randomisation with an invariant transition matrix, column by column.

    Parameters
    ----------
    pd : float, default=0.8
        Smallest diagonal entry of the first transition matrix (the retention probability before the
        invariant step), in (0, 1].
    alpha : float, default=0.5
        Amount of perturbation of the invariant matrix, in [0, 1] (0 releases the data unchanged).
    within_strata : bool, default=True
        With ``y`` given to ``fit_transform``, one matrix per stratum (the class label in ``ppdm release``),
        so each class keeps its own expected category frequencies.
    random_state : None, int or Generator
        Seeds the matrices and the draws (the release key in ``ppdm release``).

    Attributes
    ----------
    categories_ : list of list
        Each column's categories (the order of the matrices' rows).
    matrices_ : list of dict
        Per column, the transition matrix of each stratum (key ``None`` without strata).
    """

    _stochastic: ClassVar[bool] = True
    _uses_label: ClassVar[bool] = True

    def __init__(self, pd: float = 0.8, alpha: float = 0.5, *, within_strata: bool = True,
                 random_state: object = None) -> None:
        self.pd = pd
        self.alpha = alpha
        self.within_strata = within_strata
        self.random_state = random_state

    def fit(self, X: object, y: object = None) -> PRAM:
        self.fit_transform(X, y)
        return self

    def fit_transform(self, X: object, y: object = None, **fit_params: object) -> np.ndarray:
        if not 0.0 < float(self.pd) <= 1.0:
            raise ParameterError(f"pd must lie in (0, 1]; got {self.pd}")
        if not 0.0 <= float(self.alpha) <= 1.0:
            raise ParameterError(f"alpha must lie in [0, 1]; got {self.alpha}")
        A = _as_cells(X)
        strata = strata_of(y, len(A), self.within_strata)
        rng = np.random.default_rng(self.random_state)  # type: ignore[arg-type]
        out = A.copy()
        self.categories_, self.matrices_ = [], []
        for j in range(A.shape[1]):
            codes, cats = _codes(A[:, j])
            mats: dict[Any, np.ndarray] = {}
            new = codes.copy()
            for s in np.unique(strata):
                rows = np.flatnonzero((strata == s) & (codes >= 0))
                if rows.size == 0:
                    continue
                counts = np.bincount(codes[rows], minlength=len(cats)).astype(np.float64)
                # categories absent from a stratum stay absent: the matrix acts on the present ones
                present = np.flatnonzero(counts > 0)
                R = pram_matrix(counts[present], float(self.pd), float(self.alpha), rng)
                local = np.searchsorted(present, codes[rows])
                cum = np.cumsum(R[local], axis=1)
                u = rng.random((rows.size, 1))
                pick = np.minimum((cum < u).sum(axis=1), len(present) - 1)
                new[rows] = present[pick]
                full = np.eye(len(cats))
                full[np.ix_(present, present)] = R
                mats[None if strata.max() == 0 else str(s)] = full
            keep = new >= 0
            col = out[:, j].copy()
            col[keep] = np.asarray(cats, dtype=object)[new[keep]]
            out[:, j] = col
            self.categories_.append(cats)
            self.matrices_.append(mats)
        return out

    def transform(self, X: object) -> np.ndarray:
        """PRAM draws depend on the table's frequencies: a new table is randomised on its own."""
        return self.fit_transform(X)


# -- global recoding ---------------------------------------------------------------------------------


class RareCategoryRecoding(TransformerMixin, BaseEstimator):
    """Merge the categories rarer than ``min_share`` of a column's values into one published value.

    The merged value is itself a category of the original, so the release keeps the column's domain: the
    most frequent of the rare categories when the rare ones together reach ``min_share``, otherwise the
    column's most frequent category. ``mapping_`` says which categories each published value stands for.

    Parameters
    ----------
    min_share : float, default=0.01
        Categories with a smaller share of the column's non-missing values are merged, in (0, 1).

    Attributes
    ----------
    mapping_ : list of dict
        Per column, ``{merged category: published value}``.
    """

    def __init__(self, min_share: float = 0.01) -> None:
        self.min_share = min_share

    def fit(self, X: object, y: object = None) -> RareCategoryRecoding:
        share = float(self.min_share)
        if not 0.0 < share < 1.0:
            raise ParameterError(f"min_share must lie in (0, 1); got {self.min_share}")
        A = _as_cells(X)
        self.mapping_ = []
        for j in range(A.shape[1]):
            col = A[:, j][~_missing(A[:, j])]
            freq = pd.Series(col, dtype=object).value_counts(normalize=True, sort=False)
            # ties in frequency resolve by the category's text, so the result does not depend on row order
            order = sorted(freq.index, key=lambda c: (-freq[c], str(c)))
            rare = [c for c in order if freq[c] < share]
            if not rare:
                self.mapping_.append({})
                continue
            target = rare[0] if sum(freq[c] for c in rare) >= share else order[0]
            self.mapping_.append({c: target for c in rare if c != target})
        return self

    def transform(self, X: object) -> np.ndarray:
        check_is_fitted(self, "mapping_")  # scikit-learn's NotFittedError, not an AttributeError
        A = _as_cells(X)
        if A.shape[1] != len(self.mapping_):
            raise InputError(f"fitted on {len(self.mapping_)} columns; got {A.shape[1]}")
        out = A.copy()
        for j, mapping in enumerate(self.mapping_):
            if mapping:
                col = pd.Series(A[:, j], dtype=object)
                out[:, j] = col.map(lambda v, m=mapping: m.get(v, v)).where(col.notna(), col).to_numpy(dtype=object)
        return out


# -- local suppression -------------------------------------------------------------------------------


def _coded(A: np.ndarray) -> np.ndarray:
    return np.column_stack([_codes(A[:, j])[0] for j in range(A.shape[1])])


def k_anonymity_counts(X: object, chunk: int = 256) -> np.ndarray:
    """How many records (itself included) each record's combination matches, a missing cell matching any.

    Parameters
    ----------
    X : array of shape (n, m)
        Category labels; ``None``/NaN is a missing (suppressed) cell.
    chunk : int, default=256
        Records compared at a time (memory ``chunk x n x m`` booleans).

    Returns
    -------
    ndarray of shape (n,)
    """
    return _match_counts(_coded(_as_cells(X)), chunk)


def _match_counts(C: np.ndarray, chunk: int = 256) -> np.ndarray:
    out = np.empty(len(C), dtype=np.int64)
    for a in range(0, len(C), chunk):
        out[a:a + chunk] = (_mismatch(C[a:a + chunk], C).sum(axis=2) == 0).sum(axis=1)
    return out


def _mismatch(rows: np.ndarray, C: np.ndarray) -> np.ndarray:
    """``M[i, j, c]``: record ``rows[i]`` and record ``j`` differ on column ``c`` (neither missing)."""
    r = rows[:, None, :]
    c = C[None, :, :]
    return (r != c) & (r >= 0) & (c >= 0)


class LocalSuppression(TransformerMixin, BaseEstimator):
    """Blank the fewest cells (greedily) so that every record's combination is shared by >= ``k`` records.

    Records are visited from the rarest combination to the most common (ties by row). While a record
    matches fewer than ``k`` records (a blank matches any value), the cell whose blanking makes it match
    the most records is blanked (ties: the column with more categories, then the leftmost). Blanking only
    ever adds matches, so records already made safe stay safe and one pass suffices. The result is
    k-anonymous; it is a greedy heuristic, not a proven minimum.

    Parameters
    ----------
    k : int, default=5
        Smallest number of records each released combination must match.
    n_fixed : int, default=0
        The first ``n_fixed`` columns take part in the combination but are never blanked (e.g. the group a
        numeric mechanism released a record in: the combination is then that of the whole released row).

    Attributes
    ----------
    suppressed_ : ndarray of shape (n, m), bool
        The cells blanked (key material: it says which records were rare).
    n_suppressed_ : int
    """

    _table_level: ClassVar[bool] = True

    def __init__(self, k: int = 5, n_fixed: int = 0) -> None:
        self.k = k
        self.n_fixed = n_fixed

    def fit(self, X: object, y: object = None) -> LocalSuppression:
        self.fit_transform(X, y)
        return self

    def fit_transform(self, X: object, y: object = None, **fit_params: object) -> np.ndarray:
        k = int(self.k)
        if k < 1:
            raise ParameterError(f"k must be at least 1; got {self.k}")
        A = _as_cells(X)
        C = _coded(A)
        n, m = C.shape
        if k > n:
            raise ParameterError(f"k = {k} exceeds the {n} records; choose k <= {n}")
        fixed = int(self.n_fixed)
        if not 0 <= fixed <= m:
            raise ParameterError(f"n_fixed must lie in [0, {m}]; got {self.n_fixed}")
        levels = np.array([C[:, j].max() + 1 for j in range(m)])
        before = C < 0
        # records that differ on a fixed column never match: each group of equal fixed values is on its own
        groups = (np.unique(C[:, :fixed], axis=0, return_inverse=True)[1].ravel() if fixed
                  else np.zeros(n, dtype=np.int64))
        for g in np.unique(groups):
            rows = np.flatnonzero(groups == g)
            C[rows] = _suppress(C[rows], k, fixed, levels)
        self.suppressed_ = (C < 0) & ~before
        self.n_suppressed_ = int(self.suppressed_.sum())
        out = A.copy()
        out[self.suppressed_] = None
        return out

    def transform(self, X: object) -> np.ndarray:
        """Suppression depends on the whole table: a new table is made k-anonymous on its own."""
        return self.fit_transform(X)


def _suppress(C: np.ndarray, k: int, fixed: int, levels: np.ndarray) -> np.ndarray:
    """The greedy pass of :class:`LocalSuppression` on coded records (-1 blank); returns the blanked codes."""
    C = C.copy()
    counts = _match_counts(C)
    for i in np.lexsort((np.arange(len(C)), counts)):
        while True:
            M = _mismatch(C[i:i + 1], C)[0]  # (n, m)
            diff = M.sum(axis=1)
            if (diff == 0).sum() >= k:
                break
            free = np.flatnonzero(C[i] >= 0)
            free = free[free >= fixed]
            if free.size == 0:  # nothing left to blank (a group smaller than k stays as it is)
                break
            # blanking column c adds the records that differ from i on c alone
            gain = (M[:, free] & (diff == 1)[:, None]).sum(axis=0)
            best = free[np.lexsort((free, -levels[free], -gain))[0]]
            C[i, best] = -1
    return C
