"""Distances between two numeric records (thesis eqs 2.7-2.11)."""

from __future__ import annotations

import numpy as np

from ppdm.exceptions import ParameterError

__all__ = ["minkowski", "euclidean", "manhattan", "chebyshev", "mahalanobis"]


def minkowski(x: np.ndarray, y: np.ndarray, r: float = 2.0) -> float:
    """``(sum |x_k - y_k|^r)^(1/r)``, ``r > 0``; ``r = inf`` is Chebyshev."""
    if not r > 0:
        raise ParameterError(f"Minkowski r must be positive (got {r}); use r=1 (Manhattan) or r=2 (Euclidean)")
    diff = np.abs(np.asarray(x, float) - np.asarray(y, float))
    if np.isinf(r):
        return float(diff.max(initial=0.0))
    return float((diff**r).sum() ** (1.0 / r))


def euclidean(x: np.ndarray, y: np.ndarray) -> float:
    return minkowski(x, y, 2.0)


def manhattan(x: np.ndarray, y: np.ndarray) -> float:
    return minkowski(x, y, 1.0)


def chebyshev(x: np.ndarray, y: np.ndarray) -> float:
    return minkowski(x, y, np.inf)


def mahalanobis(x: np.ndarray, y: np.ndarray, cov: np.ndarray) -> float:
    """``sqrt((x - y) cov^-1 (x - y)^T)``; a singular covariance uses the pseudo-inverse."""
    d = np.asarray(x, float) - np.asarray(y, float)
    return float(np.sqrt(max(d @ np.linalg.pinv(np.asarray(cov, float)) @ d, 0.0)))
