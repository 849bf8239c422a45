"""Sequential CART synthesis: synthetic records drawn variable by variable from classification trees.

The method of synthpop (Reiter 2005; Nowok, Raab and Dibben 2016): within each class, the first variable
is drawn from its marginal (a bootstrap); every later variable gets a regression tree fitted on the real
records' earlier variables, the synthetic record falls into one of its leaves through its own (already
synthetic) earlier variables, and takes the variable's value from a real record drawn at random in that
leaf. A leaf holds at least ``min_leaf`` real records, so every value comes from a crowd, and no released
row copies a person's row: each of its variables comes from an independently drawn donor.

A variable can span several design columns (``variables``): the one-hot block of a categorical column is
then drawn as one unit, so a released row always holds a valid category.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from ppdm.exceptions import ParameterError
from ppdm.mechanisms.base import Mechanism, seed_from, strata_of
from ppdm.mechanisms.tails import code_rare_categories, code_tails
from ppdm.utils.validation import check_int

__all__ = ["CARTSynthesis"]


def _variables(spec: Sequence[Sequence[int]] | None, m: int) -> list[np.ndarray]:
    """The column groups drawn together: the given ones, then every column not in a group on its own."""
    groups = [np.asarray(g, dtype=np.int64) for g in (spec or ()) if len(g)]
    used = np.concatenate(groups) if groups else np.empty(0, dtype=np.int64)
    if len(used) and (used.min() < 0 or used.max() >= m or len(np.unique(used)) != len(used)):
        raise ParameterError(f"variables must be disjoint groups of column positions below {m}")
    rest = np.setdiff1d(np.arange(m), used)
    # single columns first (in table order), then the groups: numbers condition the categories drawn after
    return [np.array([j]) for j in rest] + groups


def _leaf_donors(leaves_real: np.ndarray, leaves_synth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For each synthetic leaf, the index of a real record drawn uniformly from the same leaf."""
    order = np.argsort(leaves_real, kind="stable")
    ordered = leaves_real[order]
    lo = np.searchsorted(ordered, leaves_synth, "left")
    hi = np.searchsorted(ordered, leaves_synth, "right")
    return order[lo + (rng.random(len(leaves_synth)) * (hi - lo)).astype(np.int64)]


def _leaves(tree: object, S: np.ndarray, columns: np.ndarray, rows: np.ndarray | None = None,
            chunk: int = 65_536, *, checked: bool = True) -> np.ndarray:
    """The tree's leaf of every row of ``S`` (or of ``S[rows]``) on ``columns``, a block of rows at a time (the
    tree reads float32 copies of what it is given: never of the whole table). ``checked=False``: the values are
    known finite, and each block goes to the tree as float32 without scikit-learn's input validation."""
    n = len(S) if rows is None else len(rows)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    blocks = ((S[s:s + chunk] if rows is None else S[rows[s:s + chunk]])[:, columns] for s in range(0, n, chunk))
    if checked:
        return np.concatenate([tree.apply(b) for b in blocks])  # type: ignore[attr-defined]
    return np.concatenate([tree.apply(b.astype(np.float32), check_input=False)  # type: ignore[attr-defined]
                           for b in blocks])


def _needs_validation(R32: np.ndarray) -> bool:
    """Whether the trees' input must go through scikit-learn's validation: some fitted value is not finite in
    float32 (a synthetic value is a fitted record's, so the synthetic rows are finite when these are)."""
    return not bool(np.isfinite(R32).all())


class CARTSynthesis(Mechanism):
    """Synthetic records by sequential classification and regression trees, fitted per class.

    Parameters
    ----------
    min_leaf : int, default=20
        Fewest real records in a tree's leaf: the crowd a released value is drawn from. Larger is more
        private and smoother.
    variables : list of lists of int or None, default=None
        Column groups drawn as one variable (the one-hot block of a categorical column in ``ppdm release``);
        every other column is its own variable.
    per_class : bool, default=True
        Synthesise each stratum given to ``fit(X, y)`` (the label in ``ppdm release``) from its own records.
    tail_k : int or None, default=None
        Tail coding of the released values (:mod:`ppdm.mechanisms.tails`): every released number of a single
        column is one that at least ``tail_k`` real records stand behind (a donor's value would be copied
        exactly, a unique income or the oldest age among them), and no category that fewer real records hold
        is released; None: ``min_leaf``; 1: values as drawn.
    max_fit_rows : int, default=20000
        Trees of a larger stratum are grown on a seeded sample of this many of its records (the donors are
        then that sample's records), which keeps the cost linear in the rows.
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
    _scale_free: ClassVar[bool] = True
    _uses_label: ClassVar[bool] = True
    #: ``ppdm release`` passes the categorical blocks of a whole table as ``variables``
    _uses_blocks: ClassVar[bool] = True

    def __init__(self, *, min_leaf: int = 20, variables: list[list[int]] | None = None, per_class: bool = True,
                 tail_k: int | None = None, max_fit_rows: int = 20_000, random_state: object = None) -> None:
        self.min_leaf = min_leaf
        self.variables = variables
        self.tail_k = tail_k
        self.per_class = per_class
        self.max_fit_rows = max_fit_rows
        self.random_state = random_state

    def fit(self, X: object, y: object = None) -> CARTSynthesis:
        A = self._check_X(X, reset=True)
        if int(self.min_leaf) < 1:
            raise ParameterError(f"min_leaf must be at least 1 (got {self.min_leaf})")
        if int(self.max_fit_rows) < 2:
            raise ParameterError(f"max_fit_rows must be at least 2 (got {self.max_fit_rows})")
        self.variables_ = [g.tolist() for g in _variables(self.variables, A.shape[1])]
        self.strata_ = strata_of(y, len(A), self.per_class)
        self.seed_ = seed_from(self.random_state)
        self._A = A  # kept only for the draw of this fit; never exported (not a fitted attribute)
        return self

    def fit_transform(self, X: object, y: object = None, **fit_params: object) -> np.ndarray:
        self.fit(X, y)
        A, strata = self._A, self.strata_
        rng = np.random.default_rng(self.seed_)
        groups = [np.asarray(g, dtype=np.int64) for g in self.variables_]
        out = np.empty_like(A)
        classes = np.unique(strata)
        for s in classes:
            rows = np.flatnonzero(strata == s)
            # drawn straight into the release: a stratum's rows where they are, one stratum's as a block
            self._synthesise(A, rows, groups, rng, into=out, at=None if len(classes) == 1 else rows)
        k = int(self.min_leaf) if self.tail_k is None else check_int(self.tail_k, "tail_k", low=1)
        code_tails(out, A, np.concatenate([g for g in groups if len(g) == 1] or [np.zeros(0, dtype=np.int64)]), k,
                   strata)
        code_rare_categories(out, A, [g for g in groups if len(g) > 1], k)
        del self._A
        return out

    def _synthesise(self, A: np.ndarray, rows: np.ndarray, groups: list[np.ndarray],
                    rng: np.random.Generator, into: np.ndarray | None = None,
                    at: np.ndarray | None = None) -> np.ndarray:
        """The synthetic rows of the stratum ``A[rows]``, written into ``into`` (at its rows ``at``; None: its
        first rows) when given. Only the fitted records (at most ``max_fit_rows``) and one column group of the
        synthetic rows are held: never a copy of the stratum, nor of all its columns per draw."""
        from sklearn.tree import DecisionTreeRegressor

        n = len(rows)
        fit_rows = rng.choice(n, int(self.max_fit_rows), replace=False) if n > self.max_fit_rows else np.arange(n)
        R = A[rows[fit_rows]]
        S = np.empty((n, A.shape[1]), dtype=A.dtype) if into is None else into

        def put(cols: np.ndarray, values: np.ndarray) -> None:
            if at is None:
                S[:, cols] = values
            else:
                S[np.ix_(at, cols)] = values

        # the trees read float32: one copy of the fitted records, and (every value finite, the usual case) no
        # validation of each tree's input (on 64 columns it took a fifth of a CART release). The trees and their
        # leaves are the same either way: scikit-learn's validation makes the same float32 copy
        with np.errstate(over="ignore"):  # a value beyond float32 is infinite there: validated, then refused
            R32 = R.astype(np.float32)
        checked = _needs_validation(R32)
        first = groups[0]
        put(first, R[:, first][rng.integers(0, len(R), n)])
        done = first
        for g in groups[1:]:
            if len(R) < 2 * int(self.min_leaf):  # too few records for a split: the marginal of the stratum
                donors = rng.integers(0, len(R), n)
            else:
                tree = DecisionTreeRegressor(min_samples_leaf=int(self.min_leaf),
                                             random_state=int(rng.integers(0, 2**31 - 1)))
                X_fit = R32[:, done]
                tree.fit(X_fit, R[:, g] if len(g) > 1 else R[:, g[0]], check_input=checked)
                donors = _leaf_donors(tree.apply(X_fit, check_input=checked),
                                      _leaves(tree, S, done, at, checked=checked), rng)
            put(g, R[:, g][donors])
            done = np.concatenate([done, g])
        return S

    def transform(self, X: object) -> np.ndarray:
        """Synthetic records cannot be made for new rows one by one: the release is the fitted table's."""
        raise ParameterError("synthetic records are drawn for a whole table; use fit_transform (ppdm perturb)")
