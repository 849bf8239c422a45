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

__all__ = ["special_uniques", "text_codes"]

#: above this many columns only pairs are searched (the number of triples grows with the cube)
MAX_COLUMNS_FOR_TRIPLES = 12
#: first size of a hash table of distinct values (it grows with them)
HASH_HINT = 65_536


def text_codes(orig: np.ndarray, rel: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """One column's values compared as text (``str(v)``): codes of the original's values in order of first
    appearance, the release's values in those codes (-1: absent from the original), and how many the original
    has. A column of Python strings (every shown column) is hashed as it is: a million rows cost their codes,
    not a fixed-width text copy and a sort."""
    from pandas import Index, factorize
    from pandas.api.types import infer_dtype

    def as_text(col: np.ndarray) -> np.ndarray:
        col = np.asarray(col)
        # equal objects may differ as text (1 and 1.0, 0.0 and -0.0): anything but strings is made text first
        return col if col.dtype == object and infer_dtype(col, skipna=False) == "string" else col.astype(str)

    # a small first hash table, grown as values come: a table sized for every row costs 30 bytes a row
    codes, uniq = factorize(as_text(orig), size_hint=min(len(orig), HASH_HINT))
    return codes, Index(uniq).get_indexer(as_text(rel)), len(uniq)


def _column_codes(orig: np.ndarray, rel: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each column's values as integers shared by both tables (in order of first appearance, the original's
    rows first; a value absent from the original gets its own)."""
    from pandas import factorize

    co = np.empty(orig.shape, dtype=np.int32 if len(orig) + len(rel) < 2**31 else np.int64)
    cr = np.empty(rel.shape, dtype=co.dtype)
    sizes = np.empty(orig.shape[1], dtype=np.int64)
    for j in range(orig.shape[1]):
        codes, in_orig, k = text_codes(orig[:, j], rel[:, j])
        absent = in_orig < 0
        if absent.any():
            extra, new = factorize(np.asarray(rel[absent, j]).astype(str))
            in_orig[absent] = k + extra
            k += len(new)
        co[:, j], cr[:, j] = codes, in_orig
        sizes[j] = max(k, 1)
    return co, cr, sizes


def _combined(codes: np.ndarray, cols: tuple[int, ...], sizes: np.ndarray) -> np.ndarray:
    out = codes[:, cols[0]].astype(np.int64)
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
    from pandas import Index, factorize

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
            # the original's combinations counted, not sorted: by their codes when there are few possible
            # (a table of counts), else by hashing
            span = int(np.prod(sizes[list(cols)]))
            if span <= max(n, 1024):
                count_o = np.bincount(ko, minlength=span)
                uo = None
                orig_unique |= (count_o == 1)[ko]  # a byte a record, not a count
            else:
                where_o, uo = factorize(ko, size_hint=min(n, HASH_HINT))
                count_o = np.bincount(where_o)
                orig_unique |= (count_o == 1)[where_o]
                del where_o
            _, inv_r, count_r = np.unique(kr, return_inverse=True, return_counts=True)
            unique_here = (count_r == 1)[inv_r]
            rel_unique |= unique_here
            # the real records with the released row's values on this subset
            pos = kr if uo is None else Index(uo).get_indexer(kr)
            one_real = unique_here & (pos >= 0) & (count_o[np.maximum(pos, 0)] == 1)
            pointing |= one_real
            if own is not None:
                correct |= one_real & (ko[own] == kr)  # the one real person with these values is the row's own
    return {"original_share": float(orig_unique.mean()), "release_share": float(rel_unique.mean()),
            "pointing_share": float(pointing.mean()),
            "correct_share": None if own is None else float(correct.mean()),
            # a row pointing at one real person points at its own by chance 1 / n
            "chance": float(pointing.mean()) / n, "max_size": int(size), "subsets": int(subsets)}
