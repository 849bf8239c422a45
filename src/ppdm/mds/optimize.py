"""Steepest descent on Kruskal stress-1 with monotone (PAV) disparities and step-size control."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ppdm.mds.stress import vdot

__all__ = ["Solution", "descend"]

_WINDOW = 25  # accepted steps over which the relative improvement is judged (BB steps are non-monotone)


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
    pairs: Any,
    Y0: np.ndarray,
    *,
    ratio: bool = False,
    max_iter: int = 200,
    tol_stress: float = 1e-6,
    tol_improve: float = 1e-4,
    tol_step: float = 1e-4,
    step: str = "adaptive",
    step_size: float = 0.2,
    callback: Callable[[int, float], None] | None = None,
) -> Solution:
    """Minimise stress-1 from ``Y0`` over a pair layout (:mod:`ppdm.mds.pairs`).

    ``ratio=True`` fits ratio disparities ``c * delta`` instead of monotone ones (random-start warm-up).

    ``step='adaptive'``: steepest descent along ``-g`` with Barzilai-Borwein step lengths
    ``s.s / s.y`` (``s``, ``y`` = change of configuration and of gradient), accepted when the stress is
    below the largest of the last 10 accepted values (non-monotone safeguard) and cut by 0.3 otherwise;
    the best configuration seen is returned. The first step moves ``step_size * ||Y||``.
    ``step='thesis'``: fixed relative step ``step_size`` and stop at the first stress increase,
    returning the previous configuration (the thesis's rule).

    Stops when the stress falls below ``tol_stress``, when the best stress improved by less than
    ``tol_improve`` (relative) per accepted step over the last 25 accepted steps, when a step moves
    no coordinate by more than ``tol_step`` (the configuration has unit RMS radius), or after
    ``max_iter`` stress evaluations.
    """
    Y = _normalise(np.asarray(Y0, dtype=np.float64))
    S, s_raw, t_raw = pairs.evaluate(Y, ratio)
    pairs.accept()
    trace = [S]
    best_Y, best_S = Y, S
    best_hist = [S]
    reason = "max_iter"
    g = None
    eta = 0.0
    it = 0
    while it < max_iter:
        if best_S < tol_stress:
            reason = "stress"
            break
        if g is None:
            g = pairs.gradient(Y, s_raw, t_raw)
            gn = float(np.sqrt(vdot(g, g)))
            if gn == 0:
                reason = "gradient"
                break
            eta = step_size * float(np.sqrt(vdot(Y, Y))) / gn
        delta = eta * g
        if np.abs(delta).max() < tol_step:
            reason = "step"
            break
        it += 1
        Yn = _normalise(Y - delta)
        Sn, sn, tn = pairs.evaluate(Yn, ratio)
        if callback is not None:
            callback(it, min(best_S, Sn))
        if step == "thesis":
            if Sn >= S:
                reason = "increase"
                break
            pairs.accept()
            Y, S, s_raw, t_raw = Yn, Sn, sn, tn
            g = pairs.gradient(Y, s_raw, t_raw)
            trace.append(S)
            best_Y, best_S = Y, S
            continue
        if Sn < max(trace[-10:]):
            pairs.accept()
            gn_vec = pairs.gradient(Yn, sn, tn)
            sv = (Yn - Y).ravel()
            yv = (gn_vec - g).ravel()
            sy = vdot(sv, yv)
            eta = vdot(sv, sv) / sy if sy > 0 else eta * 2.0
            Y, S, s_raw, t_raw, g = Yn, Sn, sn, tn, gn_vec
            trace.append(S)
            if S < best_S:
                best_Y, best_S = Y, S
            best_hist.append(best_S)
            if len(best_hist) > _WINDOW:
                old = best_hist[-_WINDOW - 1]
                if old > 0 and (old - best_S) / old < _WINDOW * tol_improve:
                    reason = "improvement"
                    break
        else:
            eta *= 0.3
    return Solution(best_Y, best_S, it, reason, trace)
