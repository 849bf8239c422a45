"""Sparsified SVD release (Wang 2008 Sec. 3.4; Gao & Zhang 2005).

``Abar_k = Ubar_k S_k Vbar_k^T`` where small entries of ``U_k`` and ``V_k`` are set to zero:

* ``sts`` (single threshold, "s-SVD"): zero ``|u_ij| < eps``;
* ``cts`` (column threshold, "c-SVD"): zero ``|u_ij| < eps * mean_i |u_ij|`` per column j;
* ``ets`` (exponential threshold, "e-SVD"): the CTS threshold times ``exp((alpha j)^2)``, j = 1..k.

``eps_u`` applies to ``U_k``, ``eps_v`` to ``V_k``; STS thresholds are absolute.
"""

from __future__ import annotations

import numpy as np

from ppdm.mechanisms.base import Mechanism, seed_from
from ppdm.utils.linalg import SVD_SOLVERS, thin_svd
from ppdm.utils.validation import check_choice, check_rank, check_real

__all__ = ["SparsifiedSVD", "sparsify", "column_thresholds", "STRATEGIES"]

STRATEGIES = ("sts", "cts", "ets")


def column_thresholds(M: np.ndarray, eps: float, strategy: str, alpha: float) -> np.ndarray:
    """Per-column thresholds of ``M`` (n x k) for one strategy."""
    k = M.shape[1]
    if strategy == "sts":
        return np.full(k, eps)
    base = eps * np.abs(M).mean(axis=0)
    if strategy == "cts":
        return base
    j = np.arange(1, k + 1)
    return base * np.exp((alpha * j) ** 2)


def sparsify(M: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """Copy of ``M`` with entries below their column's threshold (in magnitude) set to zero."""
    return np.where(np.abs(M) < thresholds[None, :], 0.0, M)


class SparsifiedSVD(Mechanism):
    """Sparsified truncated-SVD release (s-SVD, c-SVD, e-SVD).

    Parameters
    ----------
    rank : int, default=5
    strategy : {'sts', 'cts', 'ets'}, default='sts'
    eps_u, eps_v : float in [0, 1), default=0.02
        Thresholds for the left and right singular vectors.
    alpha : float, optional
        ETS growth rate; default ``1 / rank``.
    solver : str, default='auto'
        See :class:`~ppdm.mechanisms.ThinSVD`.
    random_state : int, Generator or None

    Attributes
    ----------
    components_ : ndarray of shape (rank, n_features)
        ``V_k^T`` before sparsification (key material).
    sparse_components_ : ndarray of shape (rank, n_features)
        ``Vbar_k^T`` (key material).
    singular_values_ : ndarray of shape (rank,)
    u_thresholds_ : ndarray of shape (rank,)
        Thresholds applied to the columns of ``U_k`` (also used for new rows).
    v_thresholds_ : ndarray of shape (rank,)
    """

    _secret = ("components_", "sparse_components_")

    def __init__(
        self,
        rank: int = 5,
        *,
        strategy: str = "sts",
        eps_u: float = 0.02,
        eps_v: float = 0.02,
        alpha: float | None = None,
        solver: str = "auto",
        random_state: object = None,
    ) -> None:
        self.rank = rank
        self.strategy = strategy
        self.eps_u = eps_u
        self.eps_v = eps_v
        self.alpha = alpha
        self.solver = solver
        self.random_state = random_state

    def _fit(self, X: np.ndarray) -> np.ndarray:
        n, m = X.shape
        k = check_rank(self.rank, n, m)
        check_choice(self.strategy, "strategy", STRATEGIES)
        check_choice(self.solver, "solver", SVD_SOLVERS)
        eps_u = check_real(self.eps_u, "eps_u", low=0.0, high=1.0, high_open=True)
        eps_v = check_real(self.eps_v, "eps_v", low=0.0, high=1.0, high_open=True)
        alpha = 1.0 / k if self.alpha is None else check_real(self.alpha, "alpha", low=0.0, low_open=True)
        U, s, Vt, used = thin_svd(X, k, solver=self.solver, rng=np.random.default_rng(seed_from(self.random_state)))
        assert U is not None
        self.components_, self.singular_values_, self.solver_ = Vt, s, used
        self.u_thresholds_ = column_thresholds(U, eps_u, self.strategy, alpha)
        self.v_thresholds_ = column_thresholds(Vt.T, eps_v, self.strategy, alpha)
        self.sparse_components_ = sparsify(Vt.T, self.v_thresholds_).T
        return U

    def fit(self, X: object, y: object = None) -> SparsifiedSVD:
        self._fit(self._check_X(X, reset=True))
        return self

    def fit_transform(self, X: object, y: object = None, **fit_params: object) -> np.ndarray:
        U = self._fit(self._check_X(X, reset=True))
        return (sparsify(U, self.u_thresholds_) * self.singular_values_) @ self.sparse_components_

    def transform(self, X: object) -> np.ndarray:
        self._check_fitted()
        A = self._check_X(X, reset=False)
        s = self.singular_values_
        U = (A @ self.components_.T) / np.where(s > 0, s, 1.0)
        return (sparsify(U, self.u_thresholds_) * s) @ self.sparse_components_
