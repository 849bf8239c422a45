"""Releases in a rank-k SVD subspace made private: noise in the subspace, or microaggregation there.

The truncated-SVD release ``A V_k V_k^T`` of Wang (2008) keeps the structure classifiers use but leaves
every record's own coordinates in the subspace untouched: a linkage attack in the subspace finds most
records again. Two compositions perturb those coordinates, each one mechanism (one candidate of the
release sweep):

* :class:`SVDNoise` (``svd-noise``): Gaussian noise added to the subspace coordinates, component ``j``'s
  noise scaled to that component's spread (``scale * s_j / sqrt(n)``, the root mean square of its
  scores). The release is ``(A V_k + E) V_k^T``: rank ``<= k``, the noise lies in the subspace, and the
  share of signal kept is the same on every component.
* :class:`SVDMicroaggregation` (``svd-mdav``): MDAV groups of ``k`` to ``2k - 1`` records formed on the
  subspace coordinates (within the label's classes), each record released as the reconstruction
  ``c_g V_k^T`` of its group's centroid: every released row is shared by at least ``k`` records.
"""

from __future__ import annotations

import warnings
from typing import ClassVar

import numpy as np

from ppdm.exceptions import PrivacyWarning
from ppdm.mechanisms.base import Mechanism, seed_from
from ppdm.mechanisms.microaggregation import MDAV, warn_small_centroids
from ppdm.utils.linalg import SVD_SOLVERS, thin_svd
from ppdm.utils.validation import check_choice, check_int, check_rank, check_real

__all__ = ["SVDNoise", "SVDMicroaggregation"]


def _subspace(X: np.ndarray, rank: object, solver: str, random_state: object) -> tuple[np.ndarray, np.ndarray]:
    """Top ``rank`` right singular vectors (rows) and singular values of ``X``."""
    k = check_rank(rank, *X.shape)
    check_choice(solver, "solver", SVD_SOLVERS)
    _, s, Vt, _ = thin_svd(X, k, solver=solver, rng=np.random.default_rng(seed_from(random_state)), compute_u=False)
    return Vt, s


class SVDNoise(Mechanism):
    """Rank-k truncated-SVD release with Gaussian noise on the subspace coordinates.

    Parameters
    ----------
    rank : int, default=5
        Dimension ``k`` of the subspace, ``1 <= rank < min(n_rows, n_columns)``.
    scale : float, default=0.5
        Noise standard deviation on component ``j`` as a multiple of that component's root mean square
        score ``s_j / sqrt(n)`` (``scale = 1``: as much noise as signal on every component).
    solver : {'auto', 'exact', 'gram', 'lanczos', 'randomized'}, default='auto'
    random_state : int, Generator or None
        Seeds the noise stream (and ARPACK's start vector or the randomized range finder).

    Attributes
    ----------
    components_ : ndarray of shape (rank, m)
        ``V_k^T`` (key material, as for :class:`~ppdm.mechanisms.svd.ThinSVD`).
    singular_values_ : ndarray of shape (rank,)
    noise_sd_ : ndarray of shape (rank,)
        Noise standard deviation of every component.
    seed_ : int
        Seed of the noise stream (key material: it lets anyone subtract the noise).
    """

    _secret = ("components_", "seed_")
    _stochastic = True

    def __init__(self, rank: int = 5, *, scale: float = 0.5, solver: str = "auto", random_state: object = None) -> None:
        self.rank = rank
        self.scale = scale
        self.solver = solver
        self.random_state = random_state

    def fit(self, X: object, y: object = None) -> SVDNoise:
        A = self._check_X(X, reset=True)
        a = check_real(self.scale, "scale", low=0.0)
        if a == 0.0:
            warnings.warn("noise scale 0: the release is the plain rank-k SVD release", PrivacyWarning, stacklevel=2)
        self.seed_ = seed_from(self.random_state)
        self.components_, self.singular_values_ = _subspace(A, self.rank, self.solver, self.seed_)
        self.noise_sd_ = a * self.singular_values_ / np.sqrt(len(A))
        return self

    def noise(self, n: int) -> np.ndarray:
        """Noise on the subspace coordinates of ``n`` rows (shape ``(n, rank)``), drawn from the key."""
        rng = np.random.default_rng([self.seed_, 1])
        return rng.standard_normal((n, len(self.noise_sd_))) * self.noise_sd_

    def transform(self, X: object) -> np.ndarray:
        self._check_fitted()
        A = self._check_X(X, reset=False)
        return (A @ self.components_.T + self.noise(len(A))) @ self.components_


class SVDMicroaggregation(Mechanism):
    """MDAV on the rank-k SVD coordinates; every record released as its group centroid's reconstruction.

    The groups of ``k`` or more are those of :meth:`fit_transform`; :meth:`transform` maps rows to their
    nearest centroid and does not keep ``k`` (see there).

    Parameters
    ----------
    rank : int, default=5
        Dimension of the subspace, ``1 <= rank < min(n_rows, n_columns)``.
    k : int, default=10
        Minimum group size (groups hold ``k`` to ``2k - 1`` records).
    within_strata : bool, default=True
        Group within the strata given to ``fit(X, y)`` (the class label in ``ppdm release``).
    max_exact_rows : int, default=5000
        Block size of MDAV on large strata (see :class:`~ppdm.mechanisms.microaggregation.MDAV`).
    solver : {'auto', 'exact', 'gram', 'lanczos', 'randomized'}, default='auto'
    random_state : int, Generator or None
        Seeds ARPACK's start vector or the randomized range finder (MDAV itself is deterministic).

    Attributes
    ----------
    components_ : ndarray of shape (rank, m)
        ``V_k^T`` (key material, as for :class:`~ppdm.mechanisms.svd.ThinSVD`).
    singular_values_ : ndarray of shape (rank,)
    groups_ : ndarray of shape (n,)
        Group of every record (key material: it says which records were merged).
    centroids_ : ndarray of shape (n_groups, rank)
        Group centroids in the subspace coordinates; the released rows are ``centroids_ @ components_``.
    n_groups_ : int
    """

    _secret = ("groups_", "components_")
    _table_level: ClassVar[bool] = True
    _uses_label: ClassVar[bool] = True
    _keeps_no_row: ClassVar[bool] = True

    def __init__(self, rank: int = 5, k: int = 10, *, within_strata: bool = True, max_exact_rows: int = 5000,
                 solver: str = "auto", random_state: object = None) -> None:
        self.rank = rank
        self.k = k
        self.within_strata = within_strata
        self.max_exact_rows = max_exact_rows
        self.solver = solver
        self.random_state = random_state

    def fit(self, X: object, y: object = None) -> SVDMicroaggregation:
        A = self._check_X(X, reset=True)
        check_int(self.k, "k", low=1)
        self.components_, self.singular_values_ = _subspace(A, self.rank, self.solver, self.random_state)
        inner = MDAV(self.k, within_strata=self.within_strata, max_exact_rows=self.max_exact_rows)
        inner.fit(A @ self.components_.T, y)
        self.groups_, self.centroids_, self.n_groups_ = inner.groups_, inner.centroids_, inner.n_groups_
        return self

    def transform(self, X: object) -> np.ndarray:
        """The reconstruction of the NEAREST group centroid (in the subspace) of each row.

        .. warning::
           ``transform`` does not keep ``k``, as :meth:`MDAV.transform <ppdm.mechanisms.MDAV.transform>` says:
           release a table with :meth:`fit_transform`; a :class:`~ppdm.exceptions.PrivacyWarning` is emitted
           when a centroid returned here goes to fewer than ``k`` rows.

        Parameters
        ----------
        X : array-like of shape (n, m)
            Rows in the units the mechanism was fitted in.

        Returns
        -------
        ndarray of shape (n, m)
            The reconstruction of each row's nearest centroid.
        """
        from ppdm.utils.neighbors import nearest_neighbors

        self._check_fitted()
        A = self._check_X(X, reset=False)
        nearest = nearest_neighbors(A @ self.components_.T, self.centroids_, 1)[:, 0]
        warn_small_centroids(nearest, len(self.centroids_), int(self.k), "SVDMicroaggregation")
        return self.centroids_[nearest] @ self.components_

    def fit_transform(self, X: object, y: object = None, **fit_params: object) -> np.ndarray:
        return self.fit(X, y).centroids_[self.groups_] @ self.components_
