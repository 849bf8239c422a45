"""Data pattern distortion metrics (Wang 2008 Sec. 2.4): DistVal, DistMaintain, CorrVal,
CorrMaintain, VarP.

Pairwise-distance metrics touch n(n-1)/2 pairs. Up to ``max_pairs`` pairs they are exact (computed
in row chunks); above it they are computed on a seeded random sample of rows, and the result says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ppdm.exceptions import InputError
from ppdm.utils.validation import check_choice

__all__ = [
    "MAX_PAIRS",
    "PairSample",
    "pair_sample",
    "range_normalize",
    "dist_val",
    "dist_maintain",
    "corr_val",
    "corr_maintain",
    "varp",
    "pattern_metrics",
]

MAX_PAIRS = 10_000_000


def range_normalize(A: np.ndarray) -> np.ndarray:
    """Per-matrix min-max scaling of each column to [0, 1]; constant columns become 0."""
    A = np.asarray(A, dtype=np.float64)
    lo = A.min(axis=0)
    span = A.max(axis=0) - lo
    return (A - lo) / np.where(span == 0, 1.0, span)


@dataclass(frozen=True)
class PairSample:
    """Rows used for pairwise metrics: all rows, or a seeded sample when the table is large."""

    rows: np.ndarray
    sampled: bool
    n_rows: int

    @property
    def n_pairs(self) -> int:
        k = len(self.rows)
        return k * (k - 1) // 2

    def describe(self) -> str:
        if not self.sampled:
            return f"exact over all {self.n_pairs} pairs"
        return f"sampled: {len(self.rows)} of {self.n_rows} rows ({self.n_pairs} pairs), seeded"


def pair_sample(n: int, max_pairs: int = MAX_PAIRS, random_state: int = 0) -> PairSample:
    """All rows if n(n-1)/2 <= max_pairs, else a seeded sample of rows that fits."""
    if n * (n - 1) // 2 <= max_pairs:
        return PairSample(np.arange(n), False, n)
    k = int((1 + np.sqrt(1 + 8 * max_pairs)) / 2)
    rows = np.sort(np.random.default_rng(random_state).choice(n, size=k, replace=False))
    return PairSample(rows, True, n)


def _pdist(A: np.ndarray) -> np.ndarray:
    from scipy.spatial.distance import pdist

    return pdist(A)


def _check_pair(A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    if A.shape[0] != B.shape[0]:
        raise InputError(f"original has {A.shape[0]} rows and release {B.shape[0]}; compare matching tables")
    return A, B


def _stable_ranks(v: np.ndarray) -> np.ndarray:
    """Position of each entry in the stable ascending sort (one sort plus a scatter)."""
    order = np.argsort(v, kind="stable")
    ranks = np.empty_like(order)
    ranks[order] = np.arange(len(v))
    return ranks


def dist_val(A: np.ndarray, B: np.ndarray, *, sample: PairSample | None = None) -> float:
    """DistVal = ``||pdist(A) - pdist(B)|| / ||pdist(A)||`` (Euclidean, scipy pdist order)."""
    A, B = _check_pair(A, B)
    s = sample or pair_sample(len(A))
    num = den = 0.0
    Ar, Br = A[s.rows], B[s.rows]
    # chunk over rows so no more than ~chunk * n distances live at once
    chunk = max(1, 4_000_000 // max(1, len(Ar)))
    for i in range(0, len(Ar), chunk):
        da = _block_dists(Ar, i, chunk)
        db = _block_dists(Br, i, chunk)
        num += float(((da - db) ** 2).sum())
        den += float((da**2).sum())
    return float(np.sqrt(num / den)) if den > 0 else float("nan")


def _block_dists(A: np.ndarray, start: int, size: int) -> np.ndarray:
    """Distances from rows start..start+size to every later row (upper triangle of the block)."""
    from scipy.spatial.distance import cdist

    block = A[start : start + size]
    D = cdist(block, A[start:])
    mask = np.triu(np.ones((len(block), len(A) - start), dtype=bool), k=1)
    return D[mask]


#: the sort order of the last original's distances: a sweep compares one original with many releases
_ORDER_CACHE: dict[bytes, np.ndarray] = {}


def _distance_order(A: np.ndarray) -> np.ndarray:
    """Stable ascending sort order of ``pdist(A)``, remembered for the last ``A`` seen (by content)."""
    import hashlib

    key = hashlib.blake2b(np.ascontiguousarray(A).tobytes(), digest_size=16).digest() + repr(A.shape).encode()
    order = _ORDER_CACHE.get(key)
    if order is None:
        order = np.argsort(_pdist(A), kind="stable")
        _ORDER_CACHE.clear()
        _ORDER_CACHE[key] = order
    return order


def dist_maintain(A: np.ndarray, B: np.ndarray, *, sample: PairSample | None = None) -> float:
    """DistMaintain (%): share of pairwise distances whose rank among all distances is unchanged.

    A pair keeps its rank exactly when it sits at the same position of both stable sort orders, so
    the share is that of equal positions in the two orders (the original's order is reused across calls).
    """
    A, B = _check_pair(A, B)
    s = sample or pair_sample(len(A))
    order_a = _distance_order(A[s.rows])
    order_b = np.argsort(_pdist(B[s.rows]), kind="stable")
    return 100.0 * float((order_a == order_b).mean())


def corr_val(A: np.ndarray, B: np.ndarray) -> float:
    """CorrVal = ``||A^T A - B^T B||_F / ||A^T A||_F``."""
    A, B = _check_pair(A, B)
    SA, SB = A.T @ A, B.T @ B
    return float(np.linalg.norm(SA - SB) / np.linalg.norm(SA))


def _tril_colmajor(m: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Lower-triangle indices (offset -k) in MATLAB column-major order."""
    i, j = np.tril_indices(m, -k)
    order = np.lexsort((i, j))
    return i[order], j[order]


def corr_maintain(A: np.ndarray, B: np.ndarray, variant: str = "written") -> float:
    """CorrMaintain (%): share of attribute inner products whose rank is unchanged.

    ``variant='written'`` ranks the m(m-1)/2 off-diagonal entries of ``S = A^T A``; ``'legacy'``
    ranks the m(m+1)/2 lower-triangle entries including the diagonal, subtracts m and divides by
    m(m-1)/2, which reproduces the dissertation's Appendix A for k >= 4.
    """
    check_choice(variant, "variant", ("written", "legacy"))
    A, B = _check_pair(A, B)
    m = A.shape[1]
    if m < 2:
        return float("nan")
    SA, SB = A.T @ A, B.T @ B
    i, j = _tril_colmajor(m, 1 if variant == "written" else 0)
    same = int((_stable_ranks(SA[i, j]) == _stable_ranks(SB[i, j])).sum())
    if variant == "legacy":
        same -= m
    return 100.0 * same / (m * (m - 1) / 2)


def varp(singular_values: np.ndarray, k: int) -> float:
    """VarP = ``sum_{i<=k} sigma_i / sum_i sigma_i`` (singular values, not squared)."""
    s = np.asarray(singular_values, dtype=np.float64)
    return float(s[:k].sum() / s.sum())


def pattern_metrics(
    A: np.ndarray,
    B: np.ndarray,
    *,
    normalize: str | None = None,
    max_pairs: int = MAX_PAIRS,
    random_state: int = 0,
    corr_variant: str = "written",
) -> dict[str, object]:
    """DistVal, DistMaintain, CorrVal and CorrMaintain, optionally on range-normalised data."""
    check_choice(normalize or "none", "normalize", ("none", "range"))
    A, B = _check_pair(A, B)
    if normalize == "range":
        A, B = range_normalize(A), range_normalize(B)
    s = pair_sample(len(A), max_pairs, random_state)
    out: dict[str, object] = {
        "distval": dist_val(A, B, sample=s),
        "distmaintain_pct": dist_maintain(A, B, sample=s),
        "pairs": s.describe(),
    }
    if A.shape[1] == B.shape[1]:
        out["corrval"] = corr_val(A, B)
        out["corrmaintain_pct"] = corr_maintain(A, B, corr_variant)
    return out
