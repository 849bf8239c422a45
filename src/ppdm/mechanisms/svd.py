"""Thin (truncated) SVD release, Wang (2008) Algorithm 2.

The release is the rank-k approximation ``A_k = U_k S_k V_k^T``, i.e. every row projected onto the
span of the top-k right singular vectors: ``A_k = A V_k V_k^T``. New rows are released with the same
projection, so an appended batch is consistent with the earlier release.
"""

from __future__ import annotations

import warnings

import numpy as np

from ppdm.exceptions import PrivacyWarning
from ppdm.mechanisms.base import Mechanism, seed_from
from ppdm.utils.linalg import SVD_SOLVERS, choose_solver, svd_flip_v, thin_svd
from ppdm.utils.validation import check_choice, check_rank

__all__ = ["ThinSVD", "svd_reconstruct"]


def svd_reconstruct(X: np.ndarray, rank: int, *, solver: str = "auto", random_state: object = 0) -> np.ndarray:
    """The rank-``rank`` approximation of ``X`` (no rank checks; ``rank = min(n, m)`` returns ``X``)."""
    _, _, Vt, _ = thin_svd(X, rank, solver=solver, rng=np.random.default_rng(random_state), compute_u=False)
    return (X @ Vt.T) @ Vt


def _warn_identity(total_energy: float, s: np.ndarray, k: int) -> None:
    """Warn when the kept singular values carry (numerically) all of the data: the release is the input."""
    if total_energy > 0 and total_energy - float(np.sum(s**2)) <= 1e-12 * total_energy:
        warnings.warn(
            f"rank={k} reaches the numerical rank of the data: the release equals the input",
            PrivacyWarning,
            stacklevel=4,
        )


class ThinSVD(Mechanism):
    """Rank-k truncated-SVD release.

    Parameters
    ----------
    rank : int, default=5
        Number of singular triplets kept, ``1 <= rank < min(n_rows, n_columns)``.
    solver : {'auto', 'exact', 'gram', 'lanczos', 'randomized'}, default='auto'
        ``auto`` picks LAPACK for small data, the Gram-matrix eigensolver for tall-skinny (or wide)
        data, and ARPACK when both sides are large.
    random_state : int, Generator or None, default=None
        Seeds the start vector of ARPACK or the randomized range finder.

    Attributes
    ----------
    components_ : ndarray of shape (rank, n_features)
        Top right singular vectors ``V_k^T``. Key material: with them and the release an attacker knows
        the subspace the release lives in.
    singular_values_ : ndarray of shape (rank,)
    solver_ : str
        The solver used.

    Examples
    --------
    >>> import numpy as np
    >>> from ppdm.mechanisms import ThinSVD
    >>> X = np.random.default_rng(0).normal(size=(20, 4))
    >>> ThinSVD(rank=2).fit_transform(X).shape
    (20, 4)
    """

    _secret = ("components_",)

    def __init__(self, rank: int = 5, *, solver: str = "auto", random_state: object = None) -> None:
        self.rank = rank
        self.solver = solver
        self.random_state = random_state

    def _fit_svd(self, X: np.ndarray) -> np.ndarray | None:
        n, m = X.shape
        k = check_rank(self.rank, n, m)
        check_choice(self.solver, "solver", SVD_SOLVERS)
        rng = np.random.default_rng(seed_from(self.random_state))
        U, s, Vt, used = thin_svd(X, k, solver=self.solver, rng=rng)
        self.components_, self.singular_values_, self.solver_ = Vt, s, used
        _warn_identity(float(np.einsum("ij,ij->", X, X)), s, k)
        return U

    def fit(self, X: object, y: object = None) -> ThinSVD:
        A = self._check_X(X, reset=True)
        self._fit_svd(A)
        return self

    def fit_from_gram(self, G: np.ndarray, n_samples: int) -> ThinSVD:
        """Fit from the Gram matrix ``Z^T Z`` of the (preprocessed) data; the fast tall-skinny route."""
        m = G.shape[0]
        k = check_rank(self.rank, n_samples, m)
        w, V = np.linalg.eigh(G)
        w, V = w[::-1][:k], V[:, ::-1][:, :k]
        _, Vt = svd_flip_v(V.T)
        self.n_features_in_ = m
        self.components_, self.singular_values_ = Vt, np.sqrt(np.clip(w, 0, None))
        self.solver_ = "gram"
        _warn_identity(float(np.trace(G)), self.singular_values_, k)
        return self

    def transform(self, X: object) -> np.ndarray:
        self._check_fitted()
        A = self._check_X(X, reset=False)
        return (A @ self.components_.T) @ self.components_

    def fit_transform(self, X: object, y: object = None, **fit_params: object) -> np.ndarray:
        A = self._check_X(X, reset=True)
        U = self._fit_svd(A)
        if U is None:
            return (A @ self.components_.T) @ self.components_
        return (U * self.singular_values_) @ self.components_

    def linear_operator(self) -> np.ndarray:
        """The ``m x m`` matrix ``P`` with ``release = Z @ P`` (``P = V_k V_k^T``)."""
        self._check_fitted()
        return self.components_.T @ self.components_

    @staticmethod
    def resolved_solver(n: int, m: int, k: int, solver: str) -> str:
        return choose_solver(n, m, k) if solver == "auto" else solver
