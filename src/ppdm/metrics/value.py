"""Data value distortion metrics (Wang 2008 Sec. 2.3): RE (= VD), RP, RK, CP, CK.

Rank conventions (``rank_mode``):

* ``'sort_index'``: ``Rank_j^i`` is the row index found at sorted position j of column i (MATLAB
  ``[~, I] = sort(A(:, i))``). Reproduces the RP/CP values of every dissertation table.
* ``'rank'``: ``Rank_j^i`` is the position of element j in the ascending sort of column i.
  Reproduces Table 2.1.

Both use a stable sort, so tied values keep row order. RK and CK are the same under both.
"""

from __future__ import annotations

import numpy as np

from ppdm.exceptions import InputError
from ppdm.utils.validation import check_choice

__all__ = [
    "RANK_MODES",
    "relative_error",
    "rank_position",
    "rank_maintenance",
    "attribute_rank_change",
    "attribute_rank_maintenance",
    "value_metrics",
]

RANK_MODES = ("sort_index", "rank")


def _pair(A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    if A.shape != B.shape:
        raise InputError(f"original {A.shape} and release {B.shape} differ in shape; compare matching tables")
    return A, B


def _ranks(M: np.ndarray, rank_mode: str, axis: int = 0) -> np.ndarray:
    check_choice(rank_mode, "rank_mode", RANK_MODES)
    order = np.argsort(M, axis=axis, kind="stable")
    if rank_mode == "sort_index":
        return order
    return np.argsort(order, axis=axis, kind="stable")


def _fro(M: np.ndarray) -> float:
    """Frobenius norm by einsum: ``np.linalg.norm`` takes a threaded BLAS dot, which stalls on a busy machine."""
    M = M.reshape(M.shape[0], -1) if M.ndim != 2 else M
    return float(np.sqrt(np.einsum("ij,ij->", M, M)))


def _fro_diff(A: np.ndarray, B: np.ndarray, chunk: int = 65_536) -> float:
    """``||A - B||_F``, a block of rows at a time: no table-sized difference."""
    diff = 0.0
    for s in range(0, A.shape[0], chunk):
        D = A[s:s + chunk] - B[s:s + chunk]
        D = D.reshape(D.shape[0], -1) if D.ndim != 2 else D
        diff += float(np.einsum("ij,ij->", D, D))
        del D  # one block at a time
    return float(np.sqrt(diff))


def relative_error(A: np.ndarray, B: np.ndarray) -> float:
    """RE = ``||A - B||_F / ||A||_F`` (the "value difference" VD of Xu et al. 2006)."""
    A, B = _pair(A, B)
    den = _fro(A)
    return _fro_diff(A, B) / den if den > 0 else float("nan")


def rank_position(A: np.ndarray, B: np.ndarray, rank_mode: str = "sort_index") -> float:
    """RP: mean absolute change of the per-column ranks, in rank positions (random ~ n/3)."""
    A, B = _pair(A, B)
    return float(np.abs(_ranks(A, rank_mode) - _ranks(B, rank_mode)).mean())


def rank_maintenance(A: np.ndarray, B: np.ndarray, rank_mode: str = "sort_index") -> float:
    """RK: fraction of per-column ranks left unchanged."""
    A, B = _pair(A, B)
    return float((_ranks(A, rank_mode) == _ranks(B, rank_mode)).mean())


def _mean_ranks(A: np.ndarray, B: np.ndarray, rank_mode: str) -> tuple[np.ndarray, np.ndarray]:
    return _ranks(A.mean(axis=0), rank_mode), _ranks(B.mean(axis=0), rank_mode)


def attribute_rank_change(A: np.ndarray, B: np.ndarray, rank_mode: str = "sort_index") -> float:
    """CP: mean absolute change of the rank of each column's mean."""
    A, B = _pair(A, B)
    ra, rb = _mean_ranks(A, B, rank_mode)
    return float(np.abs(ra - rb).mean())


def attribute_rank_maintenance(A: np.ndarray, B: np.ndarray, rank_mode: str = "sort_index") -> float:
    """CK: fraction of columns whose mean keeps its rank."""
    A, B = _pair(A, B)
    ra, rb = _mean_ranks(A, B, rank_mode)
    return float((ra == rb).mean())


def value_metrics(A: np.ndarray, B: np.ndarray, rank_mode: str = "sort_index") -> dict[str, float]:
    """RE, RP, RK, CP and CK in one pass, a column at a time (a large table's ranks are never all held)."""
    A, B = _pair(A, B)
    check_choice(rank_mode, "rank_mode", RANK_MODES)
    ma, mb = _mean_ranks(A, B, rank_mode)
    den = _fro(A)
    moved = 0.0
    kept = 0
    for j in range(A.shape[1]):
        ra, rb = _ranks(A[:, j], rank_mode), _ranks(B[:, j], rank_mode)
        moved += float(np.abs(ra - rb).sum())
        kept += int(np.count_nonzero(ra == rb))
    cells = max(A.size, 1)
    return {
        "re": _fro_diff(A, B) / den if den > 0 else float("nan"),
        "rp": moved / cells if A.size else float("nan"),
        "rk": kept / cells if A.size else float("nan"),
        "cp": float(np.abs(ma - mb).mean()),
        "ck": float((ma == mb).mean()),
    }
