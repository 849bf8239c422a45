"""Similarities between binary records from the 2x2 contingency counts (thesis eqs 2.12-2.15).

``a`` = #(0,0), ``b`` = #(0,1), ``c`` = #(1,0), ``d`` = #(1,1).
"""

from __future__ import annotations

import numpy as np

from ppdm.exceptions import InputError
from ppdm.utils.validation import check_choice

__all__ = ["binary_counts", "binary_similarity", "BINARY"]

BINARY = ("smc", "jaccard", "hamman", "cosine")


def binary_counts(x: np.ndarray, y: np.ndarray) -> tuple[int, int, int, int]:
    x, y = np.asarray(x), np.asarray(y)
    if not (np.isin(x, (0, 1)).all() and np.isin(y, (0, 1)).all()):
        raise InputError("binary similarities need 0/1 values; recode the columns (or use gower)")
    x, y = x.astype(bool), y.astype(bool)
    return int((~x & ~y).sum()), int((~x & y).sum()), int((x & ~y).sum()), int((x & y).sum())


def binary_similarity(x: np.ndarray, y: np.ndarray, kind: str = "smc") -> float:
    """Simple matching, Jaccard, Hamman or cosine similarity of two 0/1 vectors."""
    check_choice(kind, "binary similarity", BINARY)
    a, b, c, d = binary_counts(x, y)
    tot = a + b + c + d
    if kind == "smc":
        return (a + d) / tot
    if kind == "jaccard":
        return d / (b + c + d) if b + c + d else 1.0
    if kind == "hamman":
        return ((a + d) - (b + c)) / tot
    nx, ny = np.sqrt(c + d), np.sqrt(b + d)
    return d / (nx * ny) if nx * ny else 0.0


def binary_block(A: np.ndarray, B: np.ndarray, kind: str) -> np.ndarray:
    """Similarities between every row of ``A`` and every row of ``B`` (0/1 float arrays)."""
    d = A @ B.T
    sa, sb = A.sum(1)[:, None], B.sum(1)[None, :]
    m = A.shape[1]
    b = sb - d
    c = sa - d
    a = m - b - c - d
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "smc":
            s = (a + d) / m
        elif kind == "jaccard":
            s = np.where(b + c + d > 0, d / (b + c + d), 1.0)
        elif kind == "hamman":
            s = ((a + d) - (b + c)) / m
        else:
            den = np.sqrt(sa * sb)
            s = np.where(den > 0, d / den, 0.0)
    return s
