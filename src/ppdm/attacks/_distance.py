"""Distance-based known-points attack (Alotaibi 2015, Sec. 4.4, Algorithm 4.2).

The attacker knows K reference records (default m + 1, a resolving set of R^m) and, because the release
is assumed to preserve distances, reads a target's original distances to them off the release. The
target is located by Gauss-Newton on ``G(x) = sum_i (||x - r_i|| - d_i)^2``. Privacy per target is
``rho* = ||x - x^|| / mean_j ||x - r_j||`` (eq. 4.20, compared in the original space: variant A) and
``rho`` is its mean over the attacked targets (eq. 4.21); larger means more privacy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["gauss_newton_locate", "distance_attack"]

# targets attacked per call (the solve is batched; above this a seeded sample is attacked)
MAX_TARGETS = 500
#: Gauss-Newton stops once no target's objective falls by more than this share in an iteration
STALL = 1e-9


def gauss_newton_locate(
    references: np.ndarray,
    distances: np.ndarray,
    x0: np.ndarray,
    *,
    tol: float = 1e-10,
    max_iter: int = 100,
    damping: float = 1.0,
    stall: float | None = None,
) -> tuple[np.ndarray, int]:
    """Locate points from their distances to known references (batched Gauss-Newton, eqs. 4.15-4.18).

    Parameters
    ----------
    references : ndarray of shape (K, m)
    distances : ndarray of shape (K,) or (t, K)
        Distances of each of t targets to the references.
    x0 : ndarray of shape (m,) or (t, m)
        Starting points.
    tol : float
        Stop when the largest step is below ``tol``.
    damping : float
        Step length in (0, 1]; 1 is the undamped Gauss-Newton step ``x + lstsq(A, -g)``.
    stall : float or None
        None: the published algorithm, every target iterated until the largest step is below ``tol``. A share
        (the attack's :data:`STALL`): each target stops once its step is below ``tol`` or its objective fell by
        less than that share in an iteration (a release that does not preserve distances has a positive
        minimum, and rounding keeps the steps of one that does above ``tol``: the published loop then runs to
        ``max_iter`` and drifts along the objective's flat directions).

    Returns
    -------
    x : ndarray of shape (m,) or (t, m)
    n_iter : int
    """
    R = np.asarray(references, dtype=np.float64)
    D = np.atleast_2d(np.asarray(distances, dtype=np.float64))
    x = np.array(np.broadcast_to(np.atleast_2d(x0), (D.shape[0], R.shape[1])), dtype=np.float64)

    def residuals(x: np.ndarray, rows: np.ndarray | slice = slice(None)) -> tuple[np.ndarray, np.ndarray,
                                                                                 np.ndarray]:
        diff = x[:, None, :] - R[None, :, :]                # t x K x m
        norm = np.linalg.norm(diff, axis=2)
        norm = np.where(norm == 0, 1e-12, norm)
        return norm - D[rows], diff, norm

    g, diff, norm = residuals(x)
    G = (g**2).sum(axis=1)
    # the targets still moving (a converged or stalled one is left where it is); every one in the published loop
    active: np.ndarray | slice = slice(None) if stall is None else np.arange(len(x))
    it = 0
    for _ in range(max_iter):
        it += 1
        xa, ga, diffa, norma = x[active], g[active], diff[active], norm[active]
        A = diffa / norma[:, :, None]                       # rows grad g_i^T
        step = _batched_lstsq(A, -ga) * damping
        Ga = G[active]
        # backtracking: halve the step of any target whose objective G would grow
        for _half in range(8):
            g_new, diff_new, norm_new = residuals(xa + step, active)
            worse = (g_new**2).sum(axis=1) > Ga
            if not worse.any():
                break
            step[worse] *= 0.5
        x[active] = xa + step
        g[active], diff[active], norm[active] = g_new, diff_new, norm_new
        G_new = (g_new**2).sum(axis=1)
        G[active] = G_new
        if stall is None:
            if np.max(np.abs(step)) < tol:
                break
            continue
        moving = (np.abs(step).max(axis=1) >= tol) & (Ga - G_new > stall * Ga)
        active = np.asarray(active)[moving]
        if not len(active):
            break
    return (x[0] if np.ndim(distances) == 1 else x), it


def multilaterate(references: np.ndarray, distances: np.ndarray) -> np.ndarray:
    """Closed-form start: ``||x - r_i||^2 - ||x - r_0||^2`` is linear in x (least squares over i >= 1)."""
    R = np.asarray(references, dtype=np.float64)
    D = np.atleast_2d(distances)
    c = R.mean(axis=0)
    Rc = R - c
    A = 2 * (Rc[1:] - Rc[0])
    rhs = (D[:, :1] ** 2 - D[:, 1:] ** 2) + (Rc[1:] ** 2).sum(axis=1) - (Rc[0] ** 2).sum()
    return np.linalg.lstsq(A, rhs.T, rcond=None)[0].T + c


def _batched_lstsq(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Least squares per batch item by the normal equations, with a tiny ridge for rank deficiency."""
    At = A.transpose(0, 2, 1)
    AtA = At @ A  # batched BLAS; einsum is several times slower at m ~ 100
    ridge = 1e-10 * np.trace(AtA, axis1=1, axis2=2)[:, None, None] * np.eye(A.shape[2])
    return np.linalg.solve(AtA + ridge, At @ b[..., None])[..., 0]


def distance_attack(
    X: np.ndarray, Y: np.ndarray, known: np.ndarray, rng: np.random.Generator, *, rows_only: bool = False,
    stall: float | None = STALL,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Attack every (or a sample of) unknown record(s); returns estimates, attacked rows (sorted) and rho.

    ``stall``: see :func:`gauss_newton_locate` (None: the published algorithm, as the reproductions run it).

    The estimates are a copy of ``X`` with the attacked rows replaced, or with ``rows_only`` the attacked
    rows' estimates alone (in the order of the attacked rows): a large table is never copied.
    """
    n = X.shape[0]
    from ppdm.utils.rows import rows_except

    unknown = rows_except(n, known)
    targets = unknown if len(unknown) <= MAX_TARGETS else np.sort(rng.choice(unknown, MAX_TARGETS, replace=False))
    Rx, Ry = X[known], Y[known]
    from scipy.spatial.distance import cdist

    from ppdm.utils.memory import check_memory

    # target-to-reference distances in both spaces, plus one batch of t x K x m Jacobians (>= 4e6 values)
    km = Rx.shape[0] * Rx.shape[1]
    jac = min(len(targets) * km, max(4_000_000, km))
    check_memory(8.0 * (3 * len(targets) * len(known) + 4 * jac), f"the distance attack with {len(known)} "
                 "known records", "give fewer known pairs: --threat known-io:100 (the attack needs about m + 1)")
    D = cdist(Y[targets], Ry)
    x0 = multilaterate(Rx, D)
    tol = 1e-10 * float(np.abs(Rx).max() or 1.0)
    est = np.empty((len(targets), X.shape[1]))
    # solve in batches so the t x K x m Jacobians stay small
    batch = max(1, int(4_000_000 // max(1, Rx.shape[0] * Rx.shape[1])))
    for s in range(0, len(targets), batch):
        est[s : s + batch] = np.atleast_2d(
            gauss_newton_locate(Rx, D[s : s + batch], x0[s : s + batch], tol=tol, max_iter=30,
                                stall=stall)[0])
    truth = X[targets]
    denom = cdist(truth, Rx).mean(axis=1)
    rho_star = np.linalg.norm(est - truth, axis=1) / np.where(denom == 0, 1.0, denom)
    details = {"n_references": int(len(known)), "n_targets": int(len(targets)),
               "targets_sampled": bool(len(targets) < len(unknown)),
               "rho": float(rho_star.mean()), "rho_star_median": float(np.median(rho_star))}
    if rows_only:
        return est, targets, details
    X_hat = np.array(X, dtype=np.float64, copy=True)
    X_hat[targets] = est
    return X_hat, targets, details
