"""Linear-leak guard: how well a linear map reconstructs the input from the release (and back)."""

from __future__ import annotations

import numpy as np

__all__ = ["linear_r2", "linear_leak"]


def linear_r2(A: np.ndarray, B: np.ndarray) -> float:
    """Overall R^2 of the least-squares affine map ``B -> A`` (1 = A is exactly linear in B)."""
    B1 = np.column_stack([B, np.ones(B.shape[0])])
    coef, *_ = np.linalg.lstsq(B1, A, rcond=None)
    res = A - B1 @ coef
    tot = ((A - A.mean(axis=0)) ** 2).sum()
    return float(1.0 - (res**2).sum() / tot) if tot > 0 else 1.0


def linear_leak(X: np.ndarray, Y: np.ndarray, *, max_rows: int = 20_000, random_state: object = 0
                ) -> dict[str, float]:
    """R^2 of X from Y and of Y from X (on at most ``max_rows`` sampled rows)."""
    n = X.shape[0]
    if n > max_rows:
        idx = np.sort(np.random.default_rng(random_state).choice(n, max_rows, replace=False))  # type: ignore[arg-type]
        X, Y = X[idx], Y[idx]
    return {"r2_input_from_release": linear_r2(X, Y), "r2_release_from_input": linear_r2(Y, X),
            "rows": int(min(n, max_rows))}
