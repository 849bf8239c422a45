"""Nonnegative matrix factorisation solvers: ``A ~ H W`` with ``H >= 0`` (n x K) and ``W >= 0`` (K x m).

Wang (2008) Ch. 4 convention: rows of ``A`` are records, ``H`` holds one factor vector per record and the
rows of ``W`` are basis vectors. Every solver alternates two subproblems of the same form,

    min_{X >= 0}  1/2 ||V - M X||_F^2 + l1 * sum(X) + l2/2 * ||X||_F^2,

given through the Gram matrix ``G = M^T M + l2 I`` (K x K) and ``R = M^T V - l1`` (K x p): the W step
has ``X = W``, ``M = H``; the H step has ``X = H^T``, ``M = W^T``. Solvers:

* ``hals`` (default): hierarchical ALS / exact coordinate descent on the rows of X, with repeated
  inner sweeps while they pay off (the product ``M^T V`` is the expensive part; Gillis & Glineur 2012).
* ``pg``: C.-J. Lin's (2007) alternating NNLS by projected gradients (the dissertation's "NMF"):
  Armijo search with sigma = 0.01, beta = 0.1, at most 20 step trials and 1000 inner iterations; stops
  when the projected-gradient norm falls below ``tol`` times the initial one.
* ``mu``: Lee-Seung multiplicative updates with a 1e-9 guard and W rows normalised to sum 1 ("NMFM").
* ``als``: basic ALS, least squares then clipping at ``eps`` (Algorithm 4).

``hals``, ``mu`` and ``als`` use the same relative projected-gradient stop (evaluated every few
iterations from the matrices each step computes anyway, so half an iteration stale), a maximum
iteration count and a time limit; ``hals`` and ``als`` also stop when the objective decreases by less
than ``tol`` (relative) over a check period.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ppdm.exceptions import ParameterError

__all__ = ["SOLVERS", "INITS", "NMFResult", "nmf_init", "factorize", "nnls_rows", "hoyer_sparseness"]

SOLVERS = ("hals", "pg", "mu", "als")
INITS = ("random", "nndsvd")
_MU_GUARD = 1e-9
_ALS_EPS = 1e-9
_CHECK_EVERY = 5


@dataclass
class NMFResult:
    """Factors and solver diagnostics; ``objective`` is ``||A - H W||_F`` (as in Table 4.6)."""

    H: np.ndarray
    W: np.ndarray
    n_iter: int
    objective: float
    initial_objective: float
    initial_gradient: float
    final_gradient: float
    seconds: float
    solver: str


def hoyer_sparseness(x: np.ndarray) -> float:
    """Hoyer (2004) sparseness of a vector or a matrix (columns stacked): 1 = one nonzero, 0 = flat."""
    v = np.abs(np.asarray(x, dtype=np.float64).ravel(order="F"))
    n = v.size
    l2 = float(np.sqrt(v @ v))
    if n < 2 or l2 == 0:
        return 0.0
    return float((np.sqrt(n) - v.sum() / l2) / (np.sqrt(n) - 1))


def nmf_init(A: np.ndarray, K: int, init: str = "random", rng: np.random.Generator | None = None
             ) -> tuple[np.ndarray, np.ndarray]:
    """Initial ``(H0, W0)``: uniform [0, 1] entries (the papers' choice) or NNDSVD (Boutsidis & Gallopoulos)."""
    n, m = A.shape
    if init == "random":
        rng = rng if rng is not None else np.random.default_rng(0)
        return rng.uniform(size=(n, K)), rng.uniform(size=(K, m))
    if init != "nndsvd":
        raise ParameterError(f"init must be one of {', '.join(INITS)}; got {init!r}")
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    H, W = np.zeros((n, K)), np.zeros((K, m))
    H[:, 0] = np.sqrt(s[0]) * np.abs(U[:, 0])
    W[0] = np.sqrt(s[0]) * np.abs(Vt[0])
    for j in range(1, K):
        u, v = U[:, j], Vt[j]
        up, un, vp, vn = np.maximum(u, 0), np.maximum(-u, 0), np.maximum(v, 0), np.maximum(-v, 0)
        mp = np.linalg.norm(up) * np.linalg.norm(vp)
        mn = np.linalg.norm(un) * np.linalg.norm(vn)
        if mp >= mn:
            a, b, mag = up, vp, mp
        else:
            a, b, mag = un, vn, mn
        if mag > 0:
            scale = np.sqrt(s[j] * mag)
            H[:, j] = scale * a / np.linalg.norm(a)
            W[j] = scale * b / np.linalg.norm(b)
    # NNDSVD leaves exact zeros, which multiplicative updates could never leave; fill them with a small value
    avg = float(A.mean()) / 100.0
    H[H == 0], W[W == 0] = avg, avg
    return H, W


def projgrad_sq(grad: np.ndarray, X: np.ndarray) -> float:
    """Squared norm of the projected gradient: entries where the gradient is negative or X is positive."""
    g = np.where(X > 0, grad, np.minimum(grad, 0.0))
    return float(np.einsum("ij,ij->", g, g))


# ------------------------------------------------------------------------------------- subproblems


def hals_sweep(X: np.ndarray, G: np.ndarray, R: np.ndarray, diag: list[float] | None = None) -> float:
    """One coordinate-descent sweep over the rows of X (in place); returns the squared distance moved.

    The columns of X are independent, so a column block is swept alone (the partitioned backend). ``diag``:
    ``G``'s diagonal as Python floats, when the caller sweeps the same ``G`` again (on small factors the sweeps
    are many and short, and taking the diagonal each time was a sixth of their cost).
    """
    if diag is None:
        diag = G.diagonal().tolist()
    moved = 0.0
    for k in range(X.shape[0]):
        if diag[k] <= 0:
            continue
        new = X[k] + (R[k] - G[k] @ X) / diag[k]
        np.maximum(new, 0.0, out=new)
        d = new - X[k]
        moved += float(d @ d)
        X[k] = new
    return moved


def hals_stop(moved: float, first: float) -> bool:
    """Sweeps stop once one moves X by at most 1 % of the first sweep (or the first did not move)."""
    return moved <= 0.01 * first or first == 0


def _hals_step(X: np.ndarray, G: np.ndarray, R: np.ndarray, max_sweeps: int) -> np.ndarray:
    """Coordinate-descent sweeps over the rows of X (in place); repeats while a sweep still moves X a lot."""
    first = None
    diag = G.diagonal().tolist()
    for _ in range(max_sweeps):
        moved = hals_sweep(X, G, R, diag)
        if first is None:
            first = moved
        if hals_stop(moved, first):
            break
    return X


def subproblem(
    solver: str, X: np.ndarray, G: np.ndarray, R: np.ndarray, tol: float, sweeps: int
) -> tuple[np.ndarray, float]:
    """One update of one factor for ``min_{X>=0} 1/2 ||V - M X||^2`` (``G = M^T M``, ``R = M^T V``).

    Returns the new factor and the (possibly tightened) projected-gradient subproblem tolerance.
    """
    if solver == "pg":
        X, it = _pg_step(X, G, R, tol)
        return X, tol * 0.1 if it == 1 else tol
    if solver == "hals":
        return _hals_step(X, G, R, sweeps), tol
    if solver == "mu":
        return mu_step(X, G, R), tol
    return als_step(G, R), tol


def _pg_step(X: np.ndarray, G: np.ndarray, R: np.ndarray, tol: float, max_iter: int = 1000,
             max_trials: int = 20, sigma: float = 0.01, beta: float = 0.1) -> tuple[np.ndarray, int]:
    """Lin's projected-gradient NNLS with an Armijo step search; returns X and the iterations used."""
    alpha = 1.0
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 (the count is returned)
        grad = G @ X - R
        if np.sqrt(projgrad_sq(grad, X)) < tol:
            break
        Xp = X
        decrease = False
        for trial in range(max_trials):
            Xn = np.maximum(X - alpha * grad, 0.0)
            d = Xn - X
            suff = (1 - sigma) * float(np.sum(grad * d)) + 0.5 * float(np.sum((G @ d) * d)) < 0
            if trial == 0:
                decrease = not suff
                Xp = X
            if decrease:
                if suff:
                    Xp = Xn
                    break
                alpha *= beta
            else:
                if not suff or np.array_equal(Xp, Xn):
                    break
                alpha /= beta
                Xp = Xn
        X = Xp
    return X, it


def mu_step(X: np.ndarray, G: np.ndarray, R: np.ndarray) -> np.ndarray:
    return X * (np.maximum(R, 0.0) / (G @ X + _MU_GUARD))


def als_step(G: np.ndarray, R: np.ndarray) -> np.ndarray:
    X = np.linalg.lstsq(G, R, rcond=None)[0]
    return np.maximum(X, _ALS_EPS)


# ------------------------------------------------------------------------------------------ driver


def factorize(
    A: np.ndarray,
    K: int,
    *,
    solver: str = "hals",
    H0: np.ndarray | None = None,
    W0: np.ndarray | None = None,
    init: str = "random",
    tol: float = 1e-4,
    max_iter: int = 500,
    time_limit: float = 4000.0,
    l1: float = 0.0,
    l2: float = 0.0,
    random_state: object = 0,
    inner_sweeps: int = 10,
) -> NMFResult:
    """Factorise a nonnegative ``A`` (n x m) into ``H`` (n x K) and ``W`` (K x m).

    Parameters
    ----------
    A : ndarray, nonnegative
    K : int
        Inner dimension.
    solver : {'hals', 'pg', 'mu', 'als'}
    H0, W0 : ndarray, optional
        Initial factors (shared between solvers in a comparison); drawn by :func:`nmf_init` otherwise.
    init : {'random', 'nndsvd'}
    tol : float
        Stop when the projected-gradient norm is below ``tol`` times the initial one.
    max_iter : int
        Outer iterations.
    time_limit : float
        Seconds.
    l1, l2 : float
        Penalties ``l1 * (sum H + sum W) + l2/2 * (||H||^2 + ||W||^2)``.
    random_state : int, Generator or None
        Seeds the random initialisation.
    inner_sweeps : int
        HALS: at most this many coordinate sweeps per factor update.
    """
    if solver not in SOLVERS:
        raise ParameterError(f"NMF solver must be one of {', '.join(SOLVERS)}; got {solver!r}")
    A = np.asarray(A, dtype=np.float64)
    t0 = time.perf_counter()
    if H0 is None or W0 is None:
        H0, W0 = nmf_init(A, K, init, np.random.default_rng(random_state))  # type: ignore[arg-type]
    H = np.array(H0, dtype=np.float64)
    W = np.array(W0, dtype=np.float64)
    Ht = np.ascontiguousarray(H.T)
    At = np.ascontiguousarray(A.T)
    a2 = float(np.einsum("ij,ij->", A, A))
    eye = l2 * np.eye(K)

    def w_side(Ht: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        raw = Ht @ A  # H^T A
        return Ht @ Ht.T + eye, raw - l1, raw

    def h_side(W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return W @ W.T + eye, W @ At - l1  # W W^T, W A^T

    def objective(Gh: np.ndarray, raw: np.ndarray, W: np.ndarray) -> float:
        G0 = Gh - eye
        return float(np.sqrt(max(a2 - 2.0 * float(np.sum(W * raw)) + float(np.sum(G0 * (W @ W.T))), 0.0)))

    Gh, Rh, raw = w_side(Ht)
    Gw, Rw = h_side(W)
    initial_objective = objective(Gh, raw, W)
    grad_sq = projgrad_sq(Gh @ W - Rh, W) + projgrad_sq(Gw @ Ht - Rw, Ht)
    init_grad_full = float(np.sqrt(np.sum((Gh @ W - Rh) ** 2) + np.sum((Gw @ Ht - Rw) ** 2)))
    init_grad = init_grad_full if init_grad_full > 0 else 1.0
    tol_h = tol_w = max(0.001, tol) * init_grad
    n_iter = 0
    pg = float(np.sqrt(grad_sq))
    prev_obj = initial_objective
    for n_iter in range(1, max_iter + 1):
        if pg < tol * init_grad or time.perf_counter() - t0 > time_limit:
            n_iter -= 1
            break
        # H step (Lin's order: the record factors first), then the W step
        # the cheap solvers test the stop rule every few iterations (the gradients cost as much as a step)
        check = solver == "pg" or n_iter % _CHECK_EVERY == 0
        pg_h = projgrad_sq(Gw @ Ht - Rw, Ht) if check else 0.0
        Ht, tol_h = subproblem(solver, Ht, Gw, Rw, tol_h, inner_sweeps)
        Gh, Rh, raw = w_side(Ht)
        pg_w = projgrad_sq(Gh @ W - Rh, W) if check else 0.0
        W, tol_w = subproblem(solver, W, Gh, Rh, tol_w, inner_sweeps)
        if solver == "mu":
            s = W.sum(axis=1)
            s[s == 0] = 1.0
            W /= s[:, None]  # rows of W sum to 1; H absorbs the scale, HW unchanged
            Ht *= s[:, None]
            Gh, Rh, raw = w_side(Ht)
        elif solver == "als":
            norms = np.linalg.norm(W, axis=1)
            norms[norms == 0] = 1.0
            W = np.maximum(W / norms[:, None], _ALS_EPS)
        Gw, Rw = h_side(W)
        if solver == "pg":
            # Lin's stop uses the exact gradients at the current iterate
            pg = float(np.sqrt(projgrad_sq(Gh @ W - Rh, W) + projgrad_sq(Gw @ Ht - Rw, Ht)))
        elif check:
            pg = float(np.sqrt(pg_h + pg_w))
            if solver in ("hals", "als"):
                # also stop when the objective stalls: less than tol relative decrease over the check period
                obj = objective(Gh, raw, W)
                if prev_obj - obj <= tol * prev_obj:
                    break
                prev_obj = obj
    final_obj = objective(Gh, raw, W)
    H = np.ascontiguousarray(Ht.T)
    return NMFResult(H, W, n_iter, final_obj, initial_objective, init_grad_full, pg,
                     time.perf_counter() - t0, solver)


def nnls_rows(Z: np.ndarray, W: np.ndarray, *, n_sweeps: int = 200, H0: np.ndarray | None = None) -> np.ndarray:
    """Nonnegative factor vectors ``H`` (rows) minimising ``||Z - H W||`` for a fixed basis ``W``."""
    G = W @ W.T
    R = W @ np.asarray(Z, dtype=np.float64).T
    if H0 is None:
        Ht = np.maximum(np.linalg.lstsq(G + 1e-12 * np.eye(len(G)), R, rcond=None)[0], 0.0)
    else:
        Ht = np.ascontiguousarray(np.asarray(H0, dtype=np.float64).T)
    for _ in range(n_sweeps):
        before = Ht.copy()
        Ht = _hals_step(Ht, G, R, 1)
        if np.abs(Ht - before).max() <= 1e-12 * max(1.0, float(np.abs(Ht).max())):
            break
    return np.ascontiguousarray(Ht.T)
