"""Random projections (Wang 2008 Sec. 4.7) and random rotation.

* ``arp``: ``A R`` with ``R`` (m x m) i.i.d. N(0, sigma^2), no 1/sqrt(k) scaling;
* ``arpo``: ``A Q`` with ``Q`` the orthonormalised (QR) draw: pairwise distances are kept exactly;
* ``rpa``: ``R A`` with ``R`` (n x n);
* ``rpoa``: ``Q A`` with ``Q`` orthonormal (n x n): ``A^T A`` is kept exactly.

Left projections mix records, so they release only the table they were fitted on, and they need an
n x n matrix (refused above the memory budget).
"""

from __future__ import annotations

import numpy as np

from ppdm.exceptions import ParameterError
from ppdm.mechanisms.base import Mechanism, seed_from
from ppdm.utils.validation import check_choice, check_memory, check_real

__all__ = ["RandomProjection", "RandomRotation", "haar_orthogonal", "PROJECTIONS"]

PROJECTIONS = ("arp", "arpo", "rpa", "rpoa")


def haar_orthogonal(d: int, rng: np.random.Generator) -> np.ndarray:
    """A Haar-distributed random orthogonal ``d x d`` matrix (QR of a Gaussian draw, signs fixed)."""
    Q, R = np.linalg.qr(rng.normal(size=(d, d)))
    return Q * np.sign(np.where(np.diag(R) == 0, 1.0, np.diag(R)))[None, :]


def _orthonormalise(R: np.ndarray) -> np.ndarray:
    Q, T = np.linalg.qr(R)
    return Q * np.sign(np.where(np.diag(T) == 0, 1.0, np.diag(T)))[None, :]


class RandomProjection(Mechanism):
    """Random projection release (Arp, Arpo, rpA, rpoA).

    Parameters
    ----------
    kind : {'arp', 'arpo', 'rpa', 'rpoa'}, default='arp'
    sigma : float, default=1.0
        Standard deviation of the Gaussian entries (irrelevant after orthonormalisation).
    random_state : int, Generator or None

    Attributes
    ----------
    projection_ : ndarray of shape (m, m) or (n, n)
        The projection matrix (key material: with it, ``arpo``/``rpoa`` releases invert exactly).
    """

    _secret = ("projection_",)
    _stochastic = True
    #: every released column mixes all of them: none says how often its own categories are held
    _block_reading = "original"

    def __init__(self, kind: str = "arp", *, sigma: float = 1.0, random_state: object = None) -> None:
        self.kind = kind
        self.sigma = sigma
        self.random_state = random_state

    @property
    def _left(self) -> bool:
        return self.kind in ("rpa", "rpoa")

    def fit(self, X: object, y: object = None) -> RandomProjection:
        A = self._check_X(X, reset=True)
        check_choice(self.kind, "kind", PROJECTIONS)
        sigma = check_real(self.sigma, "sigma", low=0.0, low_open=True)
        d = A.shape[0] if self._left else A.shape[1]
        if self._left:
            check_memory(8.0 * d * d * 2, f"a left projection of {d} rows (an {d} x {d} matrix)",
                         "use a column projection: --kind arp or arpo (kind='arp' in Python)")
        rng = np.random.default_rng(seed_from(self.random_state))
        R = rng.normal(0.0, sigma, size=(d, d))
        if self.kind in ("arpo", "rpoa"):
            R = _orthonormalise(R)
        self.projection_ = R
        self.n_rows_ = A.shape[0]
        return self

    def transform(self, X: object) -> np.ndarray:
        self._check_fitted()
        A = self._check_X(X, reset=False)
        if self._left:
            if A.shape[0] != self.n_rows_:
                raise ParameterError(
                    f"'{self.kind}' mixes records and releases only the table it was fitted on ({self.n_rows_} rows)"
                )
            return self.projection_ @ A
        return A @ self.projection_

    @property
    def _table_level(self) -> bool:  # type: ignore[override]
        return self._left


class RandomRotation(Mechanism):
    """Random rotation ``A Q`` with ``Q`` Haar-distributed orthogonal: distances are kept exactly.

    Parameters
    ----------
    random_state : int, Generator or None

    Attributes
    ----------
    rotation_ : ndarray of shape (m, m)
        The rotation (key material: ``release @ rotation_.T`` returns the input).
    """

    _secret = ("rotation_",)
    _stochastic = True
    #: every released column mixes all of them: none says how often its own categories are held
    _block_reading = "original"

    def __init__(self, *, random_state: object = None) -> None:
        self.random_state = random_state

    def fit(self, X: object, y: object = None) -> RandomRotation:
        A = self._check_X(X, reset=True)
        self.rotation_ = haar_orthogonal(A.shape[1], np.random.default_rng(seed_from(self.random_state)))
        return self

    def transform(self, X: object) -> np.ndarray:
        self._check_fitted()
        return self._check_X(X, reset=False) @ self.rotation_

    def linear_operator(self) -> np.ndarray:
        self._check_fitted()
        return self.rotation_
