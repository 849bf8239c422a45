"""Steepest descent on Kruskal stress-1 with monotone (PAV) disparities and step-size control."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ppdm.mds.pav import MonotoneFit
from ppdm.mds.stress import PairBlocks, distances, gradient, raw_stress_terms

__all__ = ["Solution", "descend"]


@dataclass
class Solution:
    Y: np.ndarray
    stress: float
    n_iter: int
    converged: str
    trace: list[float] = field(default_factory=list)


def _normalise(Y: np.ndarray) -> np.ndarray:
    """Centre and scale to unit RMS distance from the centroid (stress-1 is scale free)."""
    Y = Y - Y.mean(axis=0)
    rms = np.sqrt((Y * Y).sum() / Y.shape[0])
    return Y / rms if rms > 0 else Y


def descend(
    fit: MonotoneFit,
    Y0: np.ndarray,
    *,
    max_iter: int = 200,
    tol_stress: float = 1e-6,
    tol_improve: float = 1e-4,
    tol_step: float = 1e-4,
    step: str = "adaptive",
    step_size: float = 0.2,
    blocks: PairBlocks | None = None,
    callback: Callable[[int, float], None] | None = None,
) -> Solution:
    """Minimise stress-1 from ``Y0``.

    ``step='adaptive'``: the step is ``alpha * ||Y|| / ||g||`` along ``-g``; a step that lowers the stress
    is kept and ``alpha`` grows by 1.5, a step that raises it is undone and ``alpha`` shrinks by 0.3.
    ``step='thesis'``: fixed ``alpha`` and stop at the first stress increase, returning the previous
    configuration (the thesis's rule).

    Stops when the stress falls below ``tol_stress``, when an accepted step improves it by less than
    ``tol_improve`` (relative), when the step moves no coordinate by more than ``tol_step`` (relative
    to the configuration's scale), or after ``max_iter`` evaluations.
    """
    n = Y0.shape[0]
    blocks = blocks or PairBlocks(n)
    M = n * (n - 1) // 2
    dtype = np.float64 if M < 4_000_000 else np.float32
    dbuf, dnew = np.empty(M, dtype=dtype), np.empty(M, dtype=dtype)
    Y = _normalise(np.asarray(Y0, dtype=np.float64))

    def evaluate(Z: np.ndarray, buf: np.ndarray) -> tuple[float, float, float, np.ndarray]:
        distances(Z, blocks, buf)
        dhat = fit(buf)
        s, t = raw_stress_terms(buf, dhat)
        return (float(np.sqrt(s / t)) if t > 0 else 0.0), s, t, dhat

    S, s_raw, t_raw, dhat = evaluate(Y, dbuf)
    trace = [S]
    alpha = step_size
    reason = "max_iter"
    it = 0
    while it < max_iter:
        it += 1
        if S < tol_stress:
            reason = "stress"
            break
        g = gradient(Y, dhat, blocks, s_raw, t_raw, dbuf)
        gn = np.linalg.norm(g)
        if gn == 0:
            reason = "gradient"
            break
        delta = (alpha * np.linalg.norm(Y) / gn) * g
        if np.abs(delta).max() < tol_step:
            reason = "step"
            break
        Yn = _normalise(Y - delta)
        Sn, sn, tn, dhn = evaluate(Yn, dnew)
        if callback is not None:
            callback(it, min(S, Sn))
        if Sn < S:
            improve = (S - Sn) / S
            Y, S, s_raw, t_raw, dhat = Yn, Sn, sn, tn, dhn
            dbuf, dnew = dnew, dbuf
            trace.append(S)
            if step == "adaptive":
                alpha *= 1.5
            if improve < tol_improve:
                reason = "improvement"
                break
        else:
            if step == "thesis":
                reason = "increase"
                break
            alpha *= 0.3
    return Solution(Y, S, it, reason, trace)
