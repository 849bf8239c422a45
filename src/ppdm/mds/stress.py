"""Kruskal stress-1 and its gradient, evaluated in row blocks over the condensed pair layout."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

__all__ = ["kruskal_stress", "raw_stress_terms", "vdot", "PairBlocks", "distances", "gradient"]

_BLOCK_ELEMENTS = 2_000_000


def kruskal_stress(d: np.ndarray, dhat: np.ndarray) -> float:
    """``sqrt(sum (dhat - d)^2 / sum d^2)`` over the pairs (stress-1, eq. 3.12)."""
    s, t = raw_stress_terms(d, dhat)
    return float(np.sqrt(s / t)) if t > 0 else 0.0


def vdot(x: np.ndarray, y: np.ndarray) -> float:
    """``sum x * y`` over all entries, by einsum.

    Not BLAS: a threaded BLAS dot on a vector of some thousand entries stalls for milliseconds when the
    machine is busy (hundreds of times the work), and the optimiser calls it every step.
    """
    return float(np.einsum("i,i->", np.ravel(x), np.ravel(y)))


def raw_stress_terms(d: np.ndarray, dhat: np.ndarray) -> tuple[float, float]:
    """``S* = sum (d - dhat)^2`` and ``T* = sum d^2`` in float64."""
    d64 = np.asarray(d, dtype=np.float64)
    r = np.subtract(d64, dhat, dtype=np.float64)
    return vdot(r, r), vdot(d64, d64)


class PairBlocks:
    """Row blocks ``[a, b)`` of the pairs ``i < j``: each block's pairs are contiguous in condensed order."""

    def __init__(self, n: int, block_elements: int = _BLOCK_ELEMENTS) -> None:
        self.n = n
        self.blocks: list[tuple[int, int, int, int]] = []
        a, pos = 0, 0
        while a < n - 1:
            b = min(n - 1, a + max(1, block_elements // max(n - a, 1)))
            size = sum(n - i - 1 for i in range(a, b))
            self.blocks.append((a, b, pos, pos + size))
            pos += size
            a = b
        self._masks: dict[int, np.ndarray] = {}
        self._cache = n * n <= 4 * 10**7

    def mask(self, a: int, b: int) -> np.ndarray:
        m = self._masks.get(a)
        if m is None:
            m = np.triu(np.ones((b - a, self.n - a), dtype=bool), k=1)
            if self._cache:
                self._masks[a] = m
        return m

    def __iter__(self) -> Iterator[tuple[int, int, int, int]]:
        return iter(self.blocks)


def _block_dist(Y: np.ndarray, sq: np.ndarray, a: int, b: int) -> np.ndarray:
    D2 = Y[a:b] @ Y[a:].T
    D2 *= -2.0
    D2 += sq[a:b, None]
    D2 += sq[None, a:]
    np.maximum(D2, 0.0, out=D2)
    return np.sqrt(D2, out=D2)


def distances(Y: np.ndarray, blocks: PairBlocks, out: np.ndarray) -> np.ndarray:
    """Condensed distances of the rows of ``Y`` into ``out``."""
    sq = np.einsum("ij,ij->i", Y, Y)
    for a, b, lo, hi in blocks:
        out[lo:hi] = _block_dist(Y, sq, a, b)[blocks.mask(a, b)]
    return out


def gradient(Y: np.ndarray, dhat: np.ndarray, blocks: PairBlocks, s_raw: float, t_raw: float,
             d: np.ndarray | None = None) -> np.ndarray:
    """Gradient of stress-1 with the disparities held fixed (spec eq. 3.17, correct sign).

    ``dS/dy_i = S * sum_j [(d_ij - dhat_ij)/S* - d_ij/T*] (y_i - y_j)/d_ij``; the pair weight
    ``c_ij = ((1 - dhat_ij/d_ij)/S* - 1/T*)`` gives ``g = S * (diag(C 1) Y - C Y)``.
    """
    S = np.sqrt(s_raw / t_raw)
    sq = np.einsum("ij,ij->i", Y, Y)
    g = np.zeros_like(Y)
    for a, b, lo, hi in blocks:
        mask = blocks.mask(a, b)
        D = d[lo:hi] if d is not None else _block_dist(Y, sq, a, b)[mask]
        with np.errstate(divide="ignore", invalid="ignore"):
            c = dhat[lo:hi] / D
            np.subtract(1.0, c, out=c)
            c /= s_raw
            c -= 1.0 / t_raw
            c[D <= 0] = 0.0
        C = np.zeros(mask.shape)
        C[mask] = c
        rs, cs = C.sum(1), C.sum(0)
        g[a:b] += rs[:, None] * Y[a:b] - C @ Y[a:]
        g[a:] += cs[:, None] * Y[a:] - C.T @ Y[a:b]
    return S * g
