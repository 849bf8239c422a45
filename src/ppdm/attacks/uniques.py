"""Special uniques: records unique on a small subset of their categorical columns (as SUDA finds them).

A record unique on all of its quasi-identifiers may still hide in a crowd on any few of them; a record
unique on two or three of them (a *minimal sample unique* of small size, Elliot et al.'s SUDA) is the one an
intruder who knows only those few facts singles out. This module counts, for every subset of at most
``max_size`` columns:

- in the original, the records unique on some subset (the population's own exposure, before any release);
- in the release, the rows unique on some subset whose values there are also unique in the original: such a
  row points at exactly one real person, and in the aligned layout we can check whether it is that row's own
  person (the singling out that works), against the chance of pointing at the right one of n.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np

__all__ = ["special_uniques"]

#: above this many columns only pairs are searched (the number of triples grows with the cube)
MAX_COLUMNS_FOR_TRIPLES = 12


def _column_codes(orig: np.ndarray, rel: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each column's values as integers shared by both tables (a value absent from the original: its own)."""
    from pandas import factorize

    co = np.empty(orig.shape, dtype=np.int64)
    cr = np.empty(rel.shape, dtype=np.int64)
    sizes = np.empty(orig.shape[1], dtype=np.int64)
    for j in range(orig.shape[1]):
        codes, uniq = factorize(np.concatenate([orig[:, j], rel[:, j]]).astype(str))
        co[:, j], cr[:, j] = codes[: len(orig)], codes[len(orig):]
        sizes[j] = max(len(uniq), 1)
    return co, cr, sizes


def _combined(codes: np.ndarray, cols: tuple[int, ...], sizes: np.ndarray) -> np.ndarray:
    out = codes[:, cols[0]].copy()
    for j in cols[1:]:
        out = out * sizes[j] + codes[:, j]
    return out


def special_uniques(orig: np.ndarray, rel: np.ndarray, *, max_size: int = 3,
                    own: np.ndarray | None = None) -> dict[str, Any]:
    """Special uniques of the original and of the release on subsets of at most ``max_size`` columns.

    Parameters
    ----------
    orig, rel : arrays of shape (n, m) and (n_rel, m)
        The categorical columns of the original records and of the released rows (object or numbers).
    max_size : int, default=3
        Largest subset searched (2 when there are more than :data:`MAX_COLUMNS_FOR_TRIPLES` columns).
    own : array of int, optional
        Row i of ``rel`` was made from row ``own[i]`` of ``orig`` (the evaluation's aligned layout): the share
        of released special uniques that point at their own person is then measured.

    Returns
    -------
    dict
        ``original_share`` (original records unique on some subset), ``release_share`` (released rows unique
        on some subset), ``pointing_share`` (released rows unique on a subset whose values single out one
        real person), ``correct_share`` (of all released rows, those pointing at their own person; only with
        ``own``), ``chance`` (the share pointing at their own person by luck:
        ``pointing_share / n``), ``max_size`` and ``subsets`` searched.
    """
    n, m = orig.shape
    if m == 0 or n == 0:
        return {"original_share": 0.0, "release_share": 0.0, "pointing_share": 0.0,
                "correct_share": None if own is None else 0.0, "chance": 0.0, "max_size": 0, "subsets": 0}
    size = min(max_size, m, 2 if m > MAX_COLUMNS_FOR_TRIPLES else max_size)
    co, cr, sizes = _column_codes(orig, rel)
    orig_unique = np.zeros(n, dtype=bool)
    rel_unique = np.zeros(len(rel), dtype=bool)
    pointing = np.zeros(len(rel), dtype=bool)
    correct = np.zeros(len(rel), dtype=bool)
    subsets = 0
    for s in range(1, size + 1):
        for cols in combinations(range(m), s):
            if np.prod(sizes[list(cols)].astype(float)) >= 2.0**62:
                continue  # the combined code would overflow; such a subset is unique almost everywhere anyway
            subsets += 1
            ko, kr = _combined(co, cols, sizes), _combined(cr, cols, sizes)
            uo, inv_o, count_o = np.unique(ko, return_inverse=True, return_counts=True)
            orig_unique |= count_o[inv_o] == 1
            ur, inv_r, count_r = np.unique(kr, return_inverse=True, return_counts=True)
            unique_here = count_r[inv_r] == 1
            rel_unique |= unique_here
            # the real records with the released row's values on this subset
            pos = np.clip(np.searchsorted(uo, kr), 0, len(uo) - 1)
            one_real = unique_here & (uo[pos] == kr) & (count_o[pos] == 1)
            pointing |= one_real
            if own is not None:
                correct |= one_real & (ko[own] == kr)  # the one real person with these values is the row's own
    return {"original_share": float(orig_unique.mean()), "release_share": float(rel_unique.mean()),
            "pointing_share": float(pointing.mean()),
            "correct_share": None if own is None else float(correct.mean()),
            # a row pointing at one real person points at its own by chance 1 / n
            "chance": float(pointing.mean()) / n, "max_size": int(size), "subsets": int(subsets)}
