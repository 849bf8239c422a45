"""Noise baselines: additive uniform or Gaussian noise, multiplicative noise, and correlated noise.

The noise is drawn in ``transform`` from the stored seed ``seed_`` (key material: it lets anyone
subtract the noise). The same fitted object therefore reproduces its own release bit for bit.
"""

from __future__ import annotations

import warnings
from typing import ClassVar

import numpy as np

from ppdm.exceptions import PrivacyWarning
from ppdm.mechanisms.base import Mechanism, given_up, seed_from
from ppdm.utils.validation import check_bool, check_choice, check_real

__all__ = ["AdditiveNoise", "CorrelatedNoise", "MultiplicativeNoise"]


#: rows of noise drawn at a time when it is added in place
_NOISE_BLOCK = 32_768


class AdditiveNoise(Mechanism):
    """Additive noise ``A + E`` with i.i.d. entries.

    Parameters
    ----------
    scale : float, default=1.0
        ``a`` of U[0, a] (or U[-a, a] when ``symmetric``) or ``sigma`` of N(0, sigma^2).
    distribution : {'uniform', 'normal'}, default='normal'
    symmetric : bool, default=False
        Uniform noise on [-a, a] instead of the dissertation's [0, a].
    random_state : int, Generator or None

    Attributes
    ----------
    seed_ : int
        Seed of the noise stream (key material).
    """

    _mixes_columns: ClassVar[bool] = False
    _secret = ("seed_",)
    _stochastic = True
    _releases_into_input: ClassVar[bool] = True

    def __init__(
        self,
        scale: float = 1.0,
        *,
        distribution: str = "normal",
        symmetric: bool = False,
        random_state: object = None,
    ) -> None:
        self.scale = scale
        self.distribution = distribution
        self.symmetric = symmetric
        self.random_state = random_state

    def fit(self, X: object, y: object = None) -> AdditiveNoise:
        self._check_X(X, reset=True)
        check_choice(self.distribution, "distribution", ("uniform", "normal"))
        check_bool(self.symmetric, "symmetric")  # the text "False" would count as true and widen the noise
        if check_real(self.scale, "scale", low=0.0) == 0.0:
            warnings.warn("noise scale 0: the release equals the input", PrivacyWarning, stacklevel=2)
        self.seed_ = seed_from(self.random_state)
        return self

    def noise(self, shape: tuple[int, int]) -> np.ndarray:
        return self._draw(np.random.default_rng(self.seed_), shape)

    def _draw(self, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
        a = float(self.scale)
        if self.distribution == "normal":
            return rng.normal(0.0, a, size=shape)
        return rng.uniform(-a if self.symmetric else 0.0, a, size=shape)

    def transform(self, X: object) -> np.ndarray:
        self._check_fitted()
        A = self._check_X(X, reset=False)
        return A + self.noise(A.shape)

    def fit_transform(self, X: object, y: object = None, *, overwrite_input: bool = False,
                      **fit_params: object) -> np.ndarray:
        """``fit(X).transform(X)``; ``overwrite_input``: the noise is added to ``X`` where it is (a float64
        array the caller gives up), drawn a block of rows at a time: the same stream, row after row, as one
        draw of the whole table, with no table-sized noise array."""
        self.fit(X, y)
        if not given_up(X, overwrite_input):
            return self.transform(X)
        rng = np.random.default_rng(self.seed_)
        for s in range(0, len(X), _NOISE_BLOCK):
            block = X[s:s + _NOISE_BLOCK]
            block += self._draw(rng, block.shape)
        return X

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags


class MultiplicativeNoise(Mechanism):
    """Multiplicative noise ``A * E`` with i.i.d. ``E ~ N(1, sigma^2)``.

    Parameters
    ----------
    sigma : float, default=0.1
    random_state : int, Generator or None

    Attributes
    ----------
    seed_ : int
        Seed of the noise stream (key material).
    """

    _mixes_columns: ClassVar[bool] = False
    _secret = ("seed_",)
    _stochastic = True

    def __init__(self, sigma: float = 0.1, *, random_state: object = None) -> None:
        self.sigma = sigma
        self.random_state = random_state

    def fit(self, X: object, y: object = None) -> MultiplicativeNoise:
        self._check_X(X, reset=True)
        if check_real(self.sigma, "sigma", low=0.0) == 0.0:
            warnings.warn("noise sigma 0: the release equals the input", PrivacyWarning, stacklevel=2)
        self.seed_ = seed_from(self.random_state)
        return self

    def transform(self, X: object) -> np.ndarray:
        self._check_fitted()
        A = self._check_X(X, reset=False)
        return A * np.random.default_rng(self.seed_).normal(1.0, float(self.sigma), size=A.shape)


class CorrelatedNoise(Mechanism):
    """Correlated noise with Kim's (1986) linear correction: means and covariances kept in expectation.

    Noise ``e ~ N(0, d S)`` with the covariance ``S`` of the fitted table is added to every row and the sum
    is shrunk back towards the column means ``mu``: the release is ``Z = c (X + e) + (1 - c) mu`` with
    ``c = 1 / sqrt(1 + d)``. Then ``E[Z] = mu`` and ``Cov(Z) = c^2 (1 + d) S = S``: the release has the
    table's means and covariance matrix up to sampling error (per entry ``(j, l)`` of the covariance, a
    standard deviation of about ``c^2 sqrt((d^2 + 2 d)(S_jj S_ll + S_jl^2) / (n - 1))``), while every value
    moves by noise whose correlation with the column is ``sqrt(d / (1 + d))``. It is the correlated-noise
    method of statistical disclosure control (Kim 1986; the ``correlated`` / ``correlated2`` methods of
    sdcMicro's ``addNoise``), written from the formulas above.

    Parameters
    ----------
    scale : float, default=0.5
        ``d``: the noise covariance is ``d`` times the data's (``d = 1``: as much noise as signal before the
        correction).
    random_state : int, Generator or None

    Attributes
    ----------
    seed_ : int
        Seed of the noise stream (key material).
    mean_ : ndarray of shape (m,)
        Column means of the fitted table.
    noise_factor_ : ndarray of shape (m, m)
        ``L`` with ``L L^T = d S``: the noise of a row is ``L`` times a standard normal vector.
    shrink_ : float
        ``c = 1 / sqrt(1 + d)``.
    """

    _mixes_columns: ClassVar[bool] = False
    _secret = ("seed_",)
    _stochastic = True

    def __init__(self, scale: float = 0.5, *, random_state: object = None) -> None:
        self.scale = scale
        self.random_state = random_state

    def fit(self, X: object, y: object = None) -> CorrelatedNoise:
        A = self._check_X(X, reset=True)
        d = check_real(self.scale, "scale", low=0.0)
        if d == 0.0:
            warnings.warn("noise scale 0: the release equals the input", PrivacyWarning, stacklevel=2)
        self.mean_ = A.mean(axis=0)
        S = np.atleast_2d(np.cov(A, rowvar=False))
        w, V = np.linalg.eigh(S)  # a symmetric square root also serves singular (rank-deficient) covariances
        self.noise_factor_ = V * np.sqrt(d * np.clip(w, 0.0, None))
        self.shrink_ = 1.0 / np.sqrt(1.0 + d)
        self.seed_ = seed_from(self.random_state)
        return self

    def noise(self, n: int) -> np.ndarray:
        """The noise ``e`` of ``n`` rows (covariance ``d S``), drawn from the key."""
        rng = np.random.default_rng(self.seed_)
        return rng.standard_normal((n, self.noise_factor_.shape[1])) @ self.noise_factor_.T

    def transform(self, X: object) -> np.ndarray:
        self._check_fitted()
        A = self._check_X(X, reset=False)
        c = float(self.shrink_)
        return c * (A + self.noise(len(A))) + (1.0 - c) * self.mean_
