"""NMF-based release (Wang 2008 Ch. 4, Algorithms 6 and 7).

The table ``A >= 0`` is factorised as ``A ~ H W`` (H: n x K factor vectors, W: K x m basis) and the
release is the truncated product ``H[:, :r] W[:r, :]`` with ``r = keep <= K`` (``keep = K``: the full
product); components are sorted by energy ``||H_k|| ||W_k||`` so truncation drops the weakest.
Optionally the factors are sparsified first (s-/c-/e-NMF: the STS/CTS/ETS rules of the sparsified SVD
with H in the role of U_k and W^T in the role of V_k).

Negative input (Algorithm 6): with ``shift=True`` every column is shifted to minimum 0 and divided by
its range (constant column: divisor 1); the release is mapped back exactly with the inverse. With
``shift=False`` negative input is an error. Note that ``ppdm perturb`` z-scores by default; z-scored
data are negative, so the shift applies and NMF then factorises the range-normalised table (the
composition of z-score, shift and range scaling is exactly the column-wise min-max scaling). Use
``--preprocess none`` to factorise the raw table as the dissertation does.
"""

from __future__ import annotations

import numpy as np

from ppdm.exceptions import InputError, ParameterError
from ppdm.mechanisms.base import Mechanism, seed_from
from ppdm.mechanisms.nmf_solvers import INITS, SOLVERS, factorize, hoyer_sparseness, nmf_init, nnls_rows
from ppdm.mechanisms.sparsified import STRATEGIES, column_thresholds, sparsify
from ppdm.utils.validation import check_choice, check_int, check_real

__all__ = ["NMF", "check_components", "NonnegativeShift"]


def check_components(K: object, n: int, m: int, name: str = "components") -> int:
    """``1 <= K <= min(n, m)``."""
    k = check_int(K, name)
    top = min(n, m)
    if k < 1 or k > top:
        raise ParameterError(f"{name}={k} must satisfy 1 <= {name} <= min(n_rows, n_columns) = {top} "
                             f"(n_features={m}); choose a {'larger' if k < 1 else 'smaller'} {name}")
    return k


class NonnegativeShift:
    """Column-wise shift to minimum 0 plus range scaling, applied only when some value is negative."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled

    def fit(self, X: np.ndarray) -> NonnegativeShift:
        m = X.shape[1]
        self.offset_, self.scale_ = np.zeros(m), np.ones(m)
        self.active_ = bool((X < 0).any())
        if self.active_:
            if not self.enabled:
                raise InputError("the table has negative values and NMF needs nonnegative data; "
                                 "enable the shift (shift=True) or shift the columns first")
            lo = X.min(axis=0)
            span = X.max(axis=0) - lo
            self.offset_, self.scale_ = lo, np.where(span == 0, 1.0, span)
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        return (X - self.offset_) / self.scale_ if self.active_ else np.array(X, dtype=np.float64)

    def inverse_transform(self, Z: np.ndarray) -> np.ndarray:
        return Z * self.scale_ + self.offset_ if self.active_ else Z


class NMF(Mechanism):
    """NMF release ``H[:, :keep] W[:keep, :]`` (Wang 2008 Ch. 4).

    Parameters
    ----------
    components : int, default=2
        Inner dimension K, ``1 <= K <= min(n, m)``.
    keep : int, optional
        Final dimension r (``1 <= r <= K``); default K.
    solver : {'hals', 'pg', 'mu', 'als'}, default='hals'
        See :mod:`ppdm.mechanisms.nmf_solvers`. ``pg`` is the dissertation's reference (Lin 2007).
    init : {'random', 'nndsvd'}, default='random'
        Uniform [0, 1] entries (seeded; the papers' choice) or NNDSVD.
    tol : float, default=1e-4
        Relative projected-gradient tolerance.
    max_iter : int, default=500
    time_limit : float, default=4000
        Seconds.
    sparsify : {None, 'sts', 'cts', 'ets'}, default=None
        Sparsified NMF (s-, c-, e-NMF).
    eps_h, eps_w : float, default=0.0
        Thresholds on H and on W^T.
    alpha : float, optional
        ETS growth rate; default ``1 / K``.
    l1, l2 : float, default=0.0
        Penalties on both factors.
    shift : bool, default=True
        Shift (and range-normalise) negative input with an exact inverse; False makes it an error.
    random_state : int, Generator or None

    Attributes
    ----------
    factors_ : ndarray of shape (n_samples, components)
        H, after sparsification (key material).
    components_ : ndarray of shape (components, n_features)
        W, after sparsification (key material).
    offset_, scale_ : ndarray of shape (n_features,)
        The nonnegativity shift (zeros and ones when none was needed).
    shifted_ : bool
    objective_ : float
        ``||Z - H W||_F`` of the unsparsified factors on the factorised data Z.
    initial_objective_ : float
    n_iter_ : int
    sparseness_h_, sparseness_w_ : float
        Hoyer sparseness of H and W.
    """

    _secret = ("factors_", "components_")
    _stochastic = True

    def __init__(
        self,
        components: int = 2,
        *,
        keep: int | None = None,
        solver: str = "hals",
        init: str = "random",
        tol: float = 1e-4,
        max_iter: int = 500,
        time_limit: float = 4000.0,
        sparsify: str | None = None,
        eps_h: float = 0.0,
        eps_w: float = 0.0,
        alpha: float | None = None,
        l1: float = 0.0,
        l2: float = 0.0,
        shift: bool = True,
        random_state: object = None,
    ) -> None:
        self.components = components
        self.keep = keep
        self.solver = solver
        self.init = init
        self.tol = tol
        self.max_iter = max_iter
        self.time_limit = time_limit
        self.sparsify = sparsify
        self.eps_h = eps_h
        self.eps_w = eps_w
        self.alpha = alpha
        self.l1 = l1
        self.l2 = l2
        self.shift = shift
        self.random_state = random_state

    def _validate(self, n: int, m: int) -> tuple[int, int]:
        K = check_components(self.components, n, m)
        r = K if self.keep is None else check_int(self.keep, "keep")
        if not 1 <= r <= K:
            raise ParameterError(f"keep={r} must satisfy 1 <= keep <= components = {K}")
        check_choice(self.solver, "solver", SOLVERS)
        check_choice(self.init, "init", INITS)
        if self.sparsify is not None:
            check_choice(self.sparsify, "sparsify", STRATEGIES)
        check_real(self.tol, "tol", low=0.0)
        check_int(self.max_iter, "max_iter", low=1)
        check_real(self.time_limit, "time_limit", low=0.0, low_open=True)
        for name in ("eps_h", "eps_w", "l1", "l2"):
            check_real(getattr(self, name), name, low=0.0)
        return K, r

    def _fit(self, X: np.ndarray) -> np.ndarray:
        n, m = X.shape
        K, r = self._validate(n, m)
        zero = np.flatnonzero(~X.any(axis=1))
        if len(zero):
            raise InputError(f"{len(zero)} row(s) are all zeros (first: row {zero[0] + 1}); NMF gives them no "
                             "factor vector; drop those rows first")
        sh = NonnegativeShift(bool(self.shift)).fit(X)
        Z = sh.transform(X)
        rng = np.random.default_rng(seed_from(self.random_state))
        H0, W0 = nmf_init(Z, K, self.init, rng)
        res = factorize(Z, K, solver=self.solver, H0=H0, W0=W0, tol=float(self.tol), max_iter=int(self.max_iter),
                        time_limit=float(self.time_limit), l1=float(self.l1), l2=float(self.l2))
        # NMF components come in no particular order; sort them by energy ||H_k|| ||W_k|| so that `keep`
        # drops the weakest ones
        order = np.argsort(-(np.linalg.norm(res.H, axis=0) * np.linalg.norm(res.W, axis=1)), kind="stable")
        H, W = res.H[:, order], res.W[order]
        if self.sparsify is not None:
            alpha = 1.0 / K if self.alpha is None else check_real(self.alpha, "alpha", low=0.0, low_open=True)
            self.h_thresholds_ = column_thresholds(H, float(self.eps_h), self.sparsify, alpha)
            self.w_thresholds_ = column_thresholds(W.T, float(self.eps_w), self.sparsify, alpha)
            H, W = sparsify(H, self.h_thresholds_), sparsify(W.T, self.w_thresholds_).T
        self.factors_, self.components_ = H, W
        self.offset_, self.scale_, self.shifted_ = sh.offset_, sh.scale_, sh.active_
        self.objective_, self.initial_objective_, self.n_iter_ = res.objective, res.initial_objective, res.n_iter
        self.keep_ = r
        self.solver_ = self.solver
        self.sparseness_h_, self.sparseness_w_ = hoyer_sparseness(H), hoyer_sparseness(W)
        return self._release(H)

    def _release(self, H: np.ndarray) -> np.ndarray:
        r = self.keep_
        Z = H[:, :r] @ self.components_[:r]
        return Z * self.scale_ + self.offset_ if self.shifted_ else Z

    def fit(self, X: object, y: object = None) -> NMF:
        self._fit(self._check_X(X, reset=True))
        return self

    def fit_transform(self, X: object, y: object = None, **fit_params: object) -> np.ndarray:
        return self._fit(self._check_X(X, reset=True))

    def transform(self, X: object) -> np.ndarray:
        """Release new rows: their nonnegative factor vectors against the fitted basis W."""
        self._check_fitted()
        A = self._check_X(X, reset=False)
        Z = np.maximum((A - self.offset_) / self.scale_, 0.0) if self.shifted_ else A
        if (Z < 0).any():
            raise InputError("new rows have negative values and the fitted NMF did not shift; shift them first")
        H = nnls_rows(Z, self.components_)
        if self.sparsify is not None:
            H = sparsify(H, self.h_thresholds_)
        return self._release(H)
