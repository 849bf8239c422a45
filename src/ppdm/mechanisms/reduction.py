"""Dimension-reducing baselines of the NMDS thesis (Alotaibi 2015, Sec. 2 of the spec), all releasing
``n x p`` tables with columns ``d1..dp`` (SVD can also release its rank-p reconstruction):

* ``LiuRandomProjection``: ``Y = X R / (sqrt(p) sigma)``, ``R`` i.i.d. N(0, sigma^2) (Liu et al.), or
  ``Y = X Q`` with ``Q`` the orthonormalised draw;
* ``PCAProjection``: ``Y = X U_p``, principal axes from a random sample of the rows (``sample_fraction``);
* ``ThresholdSVD``: top-p SVD with the entries of ``U_p`` and ``V_p`` below ``tau`` set to zero;
* ``DCTReduction``: orthonormal DCT-II of each record, the p highest-energy coefficients (optionally
  in a secret random order);
* ``ClassicalMDS``: Torgerson scaling (= centred PCA scores for Euclidean distances).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ppdm.exceptions import ParameterError
from ppdm.mechanisms.base import Mechanism
from ppdm.utils.validation import check_choice

__all__ = ["LiuRandomProjection", "PCAProjection", "ThresholdSVD", "DCTReduction", "ClassicalMDS"]


class _Reducer(Mechanism):
    """p-column release: ``n_components`` None means n_features - 1 (the thesis default)."""

    def _p(self, m: int) -> int:
        p = max(1, m - 1) if self.n_components is None else int(self.n_components)  # type: ignore[attr-defined]
        if not 1 <= p <= m:
            raise ParameterError(f"n_components={p} must be between 1 and the number of columns ({m})")
        return p

    def get_feature_names_out(self, input_features: object = None) -> np.ndarray:
        self._check_fitted()
        return np.asarray([f"d{k + 1}" for k in range(self.n_components_)], dtype=object)

    def fit_transform(self, X: object, y: object = None) -> np.ndarray:
        return self.fit(X).transform(X)


class LiuRandomProjection(_Reducer):
    """Random projection to p dimensions; ``orthonormal`` keeps distances exactly when p = m.

    Parameters
    ----------
    n_components : int or None
    sigma : float
        SD of the Gaussian entries; the release is scaled by ``1 / (sqrt(p) sigma)`` so that
        ``E[||y_i - y_j||^2] = ||x_i - x_j||^2``.
    orthonormal : bool
        Use the QR-orthonormalised draw (no scaling) instead.
    """

    _secret: ClassVar[tuple[str, ...]] = ("projection_",)
    _stochastic: ClassVar[bool] = True

    def __init__(self, n_components: int | None = None, *, sigma: float = 1.0, orthonormal: bool = False,
                 random_state: object = None) -> None:
        self.n_components = n_components
        self.sigma = sigma
        self.orthonormal = orthonormal
        self.random_state = random_state

    def fit(self, X: object, y: object = None) -> LiuRandomProjection:
        A = self._check_X(X, reset=True)
        m = A.shape[1]
        p = self._p(m)
        if not self.sigma > 0:
            raise ParameterError(f"sigma must be positive (got {self.sigma})")
        R = np.random.default_rng(self.random_state).normal(0.0, self.sigma, size=(m, p))  # type: ignore[arg-type]
        if self.orthonormal:
            R = np.linalg.qr(R)[0]
        else:
            R = R / (np.sqrt(p) * self.sigma)
        self.projection_ = R
        self.n_components_ = p
        return self

    def transform(self, X: object) -> np.ndarray:
        self._check_fitted()
        return self._check_X(X, reset=False) @ self.projection_


class PCAProjection(_Reducer):
    """``Y = X U_p`` with the top-p eigenvectors of the covariance of a random row sample."""

    _secret: ClassVar[tuple[str, ...]] = ("components_",)
    _stochastic: ClassVar[bool] = True

    def __init__(self, n_components: int | None = None, *, sample_fraction: float = 1.0,
                 random_state: object = None) -> None:
        self.n_components = n_components
        self.sample_fraction = sample_fraction
        self.random_state = random_state

    def fit(self, X: object, y: object = None) -> PCAProjection:
        A = self._check_X(X, reset=True)
        if not 0 < self.sample_fraction <= 1:
            raise ParameterError(f"sample_fraction must be in (0, 1] (got {self.sample_fraction})")
        n = A.shape[0]
        k = max(2, int(round(self.sample_fraction * n)))
        if k < n:
            idx = np.random.default_rng(self.random_state).choice(n, k, replace=False)  # type: ignore[arg-type]
            A = A[idx]
        lam, V = np.linalg.eigh(np.cov(A, rowvar=False).reshape(A.shape[1], A.shape[1]))
        p = self._p(A.shape[1])
        self.components_ = V[:, ::-1][:, :p]
        self.explained_variance_ = lam[::-1][:p]
        self.n_components_ = p
        return self

    def transform(self, X: object) -> np.ndarray:
        self._check_fitted()
        return self._check_X(X, reset=False) @ self.components_


class ThresholdSVD(_Reducer):
    """Top-p SVD ``X = U S V^T`` with ``|U_p|, |V_p| < tau`` set to 0 (Xu et al. style distortion).

    ``output='reduced'`` releases ``U~_p S_p`` (n x p); ``'reconstruction'`` releases ``U~_p S_p V~_p^T``.
    """

    _secret: ClassVar[tuple[str, ...]] = ("V_", "raw_components_")

    def __init__(self, n_components: int | None = None, *, tau: float = 0.01, output: str = "reduced") -> None:
        self.n_components = n_components
        self.tau = tau
        self.output = output

    def fit(self, X: object, y: object = None) -> ThresholdSVD:
        self.fit_transform(X)
        return self

    def fit_transform(self, X: object, y: object = None) -> np.ndarray:
        check_choice(self.output, "output", ("reduced", "reconstruction"))
        A = self._check_X(X, reset=True)
        if self.tau < 0:
            raise ParameterError(f"tau must be non-negative (got {self.tau})")
        p = self._p(min(A.shape))
        U, s, Vt = np.linalg.svd(A, full_matrices=False)
        U, s, V = U[:, :p], s[:p], Vt[:p].T
        U = np.where(np.abs(U) < self.tau, 0.0, U)
        V = np.where(np.abs(V) < self.tau, 0.0, V)
        self.V_ = V
        # new rows get U = X V_raw / s, thresholded like the fitted U, so transform(X) == fit_transform(X)
        self.raw_components_ = Vt[:p]
        self.singular_values_ = s
        self.n_components_ = p if self.output == "reduced" else A.shape[1]
        Y = U * s
        return Y if self.output == "reduced" else Y @ V.T

    def transform(self, X: object) -> np.ndarray:
        self._check_fitted()
        A = self._check_X(X, reset=False)
        s = self.singular_values_
        U = (A @ self.raw_components_.T) / np.where(s > 0, s, 1.0)
        Y = np.where(np.abs(U) < self.tau, 0.0, U) * s
        return Y if self.output == "reduced" else Y @ self.V_.T

    def get_feature_names_out(self, input_features: object = None) -> np.ndarray:
        if self.output == "reconstruction":
            return np.asarray(getattr(self, "feature_names_in_", [f"x{k}" for k in range(self.n_features_in_)]),
                              dtype=object)
        return super().get_feature_names_out()


class DCTReduction(_Reducer):
    """Orthonormal DCT-II of every record; keep the p coefficients of highest mean energy.

    ``permute=True`` releases the kept coefficients in a secret random order (Mukherjee et al.).
    """

    _secret: ClassVar[tuple[str, ...]] = ("order_",)
    _stochastic: ClassVar[bool] = True

    def __init__(self, n_components: int | None = None, *, permute: bool = False,
                 random_state: object = None) -> None:
        self.n_components = n_components
        self.permute = permute
        self.random_state = random_state

    def fit(self, X: object, y: object = None) -> DCTReduction:
        from scipy.fft import dct

        A = self._check_X(X, reset=True)
        F = dct(A, type=2, norm="ortho", axis=1)
        energy = (F * F).mean(axis=0)
        p = self._p(A.shape[1])
        keep = np.argsort(-energy, kind="stable")[:p]
        if self.permute:
            keep = np.random.default_rng(self.random_state).permutation(keep)  # type: ignore[arg-type]
        self.order_ = keep
        self.energy_ = energy
        self.n_components_ = p
        return self

    def transform(self, X: object) -> np.ndarray:
        from scipy.fft import dct

        self._check_fitted()
        return dct(self._check_X(X, reset=False), type=2, norm="ortho", axis=1)[:, self.order_]


class ClassicalMDS(_Reducer):
    """Classical (Torgerson) MDS of Euclidean distances: the centred top-p principal scores."""

    _secret: ClassVar[tuple[str, ...]] = ("components_", "mean_")

    def __init__(self, n_components: int | None = None) -> None:
        self.n_components = n_components

    def fit(self, X: object, y: object = None) -> ClassicalMDS:
        A = self._check_X(X, reset=True)
        p = self._p(A.shape[1])
        self.mean_ = A.mean(axis=0)
        _, s, Vt = np.linalg.svd(A - self.mean_, full_matrices=False)
        self.components_ = Vt[:p].T
        lam = s**2
        self.goodness_of_fit_ = float(lam[:p].sum() / lam.sum()) if lam.sum() > 0 else 1.0
        self.n_components_ = p
        return self

    def transform(self, X: object) -> np.ndarray:
        self._check_fitted()
        return (self._check_X(X, reset=False) - self.mean_) @ self.components_
