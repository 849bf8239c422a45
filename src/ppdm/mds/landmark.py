"""Out-of-sample placement: put records into a fitted landmark configuration by minimising their stress."""

from __future__ import annotations

import numpy as np

__all__ = ["triangulate", "place", "MonotoneTable"]


class MonotoneTable:
    """A piecewise-linear monotone map (through ``x``, ``y``) resampled on a fine uniform grid.

    A lookup costs a few array passes instead of one binary search per value (``np.interp``), which
    dominates placing a million records against hundreds of landmarks. Values outside ``x`` are clamped.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, size: int = 1 << 16) -> None:
        self.x, self.y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        self.lo, hi = float(self.x[0]), float(self.x[-1])
        self.size = size
        self.scale = (size - 1) / (hi - self.lo) if hi > self.lo else 0.0
        self.v = np.interp(np.linspace(self.lo, hi, size), self.x, self.y)
        self.dv = np.append(np.diff(self.v), 0.0)

    def __call__(self, d: np.ndarray) -> np.ndarray:
        if self.scale == 0.0 or np.isnan(d).any():
            return np.interp(d, self.x, self.y)
        u = np.subtract(d, self.lo, dtype=np.float64)
        u *= self.scale
        np.clip(u, 0.0, self.size - 1, out=u)
        k = u.astype(np.intp)
        u -= k
        u *= self.dv[k]
        u += self.v[k]
        return u


def triangulate(YL: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Closed-form start (landmark MDS): exact when the target distances ``T`` are Euclidean in ``YL``.

    With landmarks centred, ``t_k^2 = |y|^2 + |y_k|^2 - 2 y.y_k`` gives
    ``y = 1/2 (YL^T YL)^-1 YL^T (|y_k|^2 - t_k^2)``.
    """
    c = YL.mean(axis=0)
    Yc = YL - c
    sq = np.einsum("ij,ij->i", Yc, Yc)
    P = np.linalg.pinv(Yc.T @ Yc) @ Yc.T
    return 0.5 * (sq[None, :] - T * T) @ P.T + c


def place(YL: np.ndarray, T: np.ndarray, *, n_iter: int = 30, Y0: np.ndarray | None = None) -> np.ndarray:
    """Minimise ``sum_k (||y - y_k|| - t_k)^2`` for each row of ``T`` (targets to the L landmarks).

    Majorisation (a one-point SMACOF step), which never increases a point's stress:
    ``y <- mean_k [y_k + t_k (y - y_k) / ||y - y_k||]``.
    """
    L = YL.shape[0]
    Y = (triangulate(YL.astype(np.float64), T) if Y0 is None else Y0).astype(YL.dtype)
    sqL = np.einsum("ij,ij->i", YL, YL)
    mean_L = YL.mean(axis=0)
    for _ in range(n_iter):
        D2 = Y @ YL.T
        D2 *= -2.0
        D2 += np.einsum("ij,ij->i", Y, Y)[:, None]
        D2 += sqL[None, :]
        np.maximum(D2, 1e-12, out=D2)
        np.sqrt(D2, out=D2)
        W = np.divide(T, D2, out=D2)
        Y = mean_L + (W.sum(axis=1)[:, None] * Y - W @ YL) / L
    return Y
