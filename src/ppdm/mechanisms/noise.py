"""Noise baselines: additive uniform or Gaussian noise, and multiplicative noise.

The noise is drawn in ``transform`` from the stored seed ``seed_`` (key material: it lets anyone
subtract the noise). The same fitted object therefore reproduces its own release bit for bit.
"""

from __future__ import annotations

import warnings

import numpy as np

from ppdm.exceptions import PrivacyWarning
from ppdm.mechanisms.base import Mechanism, seed_from
from ppdm.utils.validation import check_choice, check_real

__all__ = ["AdditiveNoise", "MultiplicativeNoise"]


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

    _secret = ("seed_",)
    _stochastic = True

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
        if check_real(self.scale, "scale", low=0.0) == 0.0:
            warnings.warn("noise scale 0: the release equals the input", PrivacyWarning, stacklevel=2)
        self.seed_ = seed_from(self.random_state)
        return self

    def noise(self, shape: tuple[int, int]) -> np.ndarray:
        rng = np.random.default_rng(self.seed_)
        a = float(self.scale)
        if self.distribution == "normal":
            return rng.normal(0.0, a, size=shape)
        return rng.uniform(-a if self.symmetric else 0.0, a, size=shape)

    def transform(self, X: object) -> np.ndarray:
        self._check_fitted()
        A = self._check_X(X, reset=False)
        return A + self.noise(A.shape)

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
