"""A differentially private Gaussian copula: noisy marginals and correlations measured through OpenDP.

The formally private reference point of a release sweep. Everything the synthetic records are drawn from is
measured with OpenDP's mechanisms under one (epsilon, delta) budget, composed and converted by OpenDP's
accountant; ppdm never calibrates noise itself. Needs the ``dp`` extra (``pip install 'ppdm[dp]'``).

The measurements, in order (one adaptive composition, zero-concentrated DP, converted to (epsilon, delta)):

1. the column bounds, unless given: a low and a high quantile of every column, OpenDP's private quantile
   (exponential mechanism) over a public grid of candidates;
2. per class, every column's histogram on ``n_bins`` equal-width bins between the bounds (Gaussian noise);
3. per class, the sums of products of the columns' normal scores, each record's score vector clipped to a
   norm of ``sqrt(m)`` (Gaussian noise). The scores come from the noisy histograms of step 2, so this query is
   chosen after step 2's answer (adaptive composition).

Both Gaussian measurements are made on integers, with OpenDP's discrete Gaussian: the histograms are counts,
and the sums of products are answered in fixed point (multiplied by a unit, ``units_[1]``, and rounded), the
rounding's own change added to the stated sensitivity. Its share of the noise is at most ``FIXED_POINT_SLACK`` (0.1 %);
OpenDP samples a discrete Gaussian about six times faster than its exact Gaussian on floats (10 against 65
microseconds a value), and a wide table's sums of products are tens of thousands of values a fit.

The noisy correlations are projected to the nearest correlation matrix (Higham's alternating projections),
each class's is shrunk towards the pooled one, and the records are drawn from the copula as in
:class:`ppdm.mechanisms.synthetic.GaussianCopula`. All of that is post-processing of the noisy measurements.

The privacy unit: two tables are neighbours when one record's numeric values differ (OpenDP's change-one
distance 1). The number of records and the label of each record are published unchanged by ``ppdm release``
(the synthetic rows are drawn per class, as many as the class has), so they are public here and not
measured; the guarantee covers the numeric values of every record.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
from scipy.special import ndtr, ndtri

from ppdm.exceptions import MissingDependencyError, ParameterError
from ppdm.mechanisms.base import Mechanism, seed_from, strata_of
from ppdm.utils.validation import check_real

__all__ = ["DPGaussianCopula", "nearest_correlation", "opendp_prelude"]

#: shares of the zero-concentrated budget rho: bounds (when measured), histograms, correlations
BUDGET_SHARES = {"bounds": 0.1, "marginals": 0.5, "correlation": 0.4}
#: the bound quantiles measured when no bounds are given
BOUND_QUANTILES = (0.01, 0.99)
#: normal scores are clipped to [-Z_CLIP, Z_CLIP] before the record's score vector is clipped to norm sqrt(m)
Z_CLIP = 3.0
#: the most the fixed point's rounding adds to the sums of products' sensitivity, as a share of it
FIXED_POINT_SLACK = 1e-3
#: OpenDP's calibrations made in this process, by everything they depend on: the query's kind, its stability
#: and the budget asked (public parameters, never the data). A sweep fits a candidate on every fold with the
#: same parameters, and one binary search over OpenDP's privacy map costs about 0.08 s (three a fit)
_CALIBRATED: dict[tuple[Any, ...], Any] = {}
_CALIBRATED_MAX = 256


def _searched(key: tuple[Any, ...], make: Callable[[Any], Any], d_out: Any) -> Any:
    """OpenDP's ``binary_search_param(make, d_in=1, d_out=d_out)``, searched once per ``key`` in a process;
    ``key`` must name everything ``make``'s privacy map depends on besides the parameter searched."""
    if key not in _CALIBRATED:
        if len(_CALIBRATED) >= _CALIBRATED_MAX:
            _CALIBRATED.clear()
        _CALIBRATED[key] = opendp_prelude().binary_search_param(make, d_in=1, d_out=d_out)
    return _CALIBRATED[key]


def opendp_prelude() -> Any:
    """``opendp.prelude`` with the features this mechanism needs, or a one-line error naming the extra.

    ``contrib``: OpenDP's measurements and combinators that are not yet formally vetted (the Gaussian
    mechanism on vectors, private quantile, adaptive composition, the zCDP to (epsilon, delta) conversion).
    ``honest-but-curious``: the queries are ppdm functions (histograms, sums of products) wrapped as OpenDP
    transformations with a stated sensitivity; OpenDP trusts that statement, so the sensitivities are written
    out and tested in ppdm. No ``floating-point`` feature is enabled: OpenDP's Gaussian mechanism on floats
    does not need it.
    """
    try:
        import opendp.prelude as dp
    except ImportError:
        raise MissingDependencyError(
            "the formally private mechanisms (dp-copula, dp-mst, dp-aim) need OpenDP; install it with: "
            "pip install 'ppdm[dp]'"
        ) from None
    dp.enable_features("contrib", "honest-but-curious")
    return dp


def nearest_correlation(C: np.ndarray, *, max_iter: int = 100, tol: float = 1e-8) -> np.ndarray:
    """The correlation matrix nearest to symmetric ``C`` in the Frobenius norm (Higham 2002).

    Alternating projections with Dykstra's correction between the positive semidefinite cone and the
    matrices with unit diagonal.
    """
    Y = (np.asarray(C, dtype=np.float64) + np.asarray(C, dtype=np.float64).T) / 2
    dS = np.zeros_like(Y)
    X = Y.copy()
    for _ in range(max_iter):
        R = Y - dS
        w, V = np.linalg.eigh(R)
        X = (V * np.clip(w, 0.0, None)) @ V.T
        dS = X - R
        Y_new = X.copy()
        np.fill_diagonal(Y_new, 1.0)
        done = np.linalg.norm(Y_new - Y) <= tol * max(np.linalg.norm(Y), 1.0)
        Y = Y_new
        if done:
            break
    w, V = np.linalg.eigh((Y + Y.T) / 2)
    Y = (V * np.clip(w, 1e-10, None)) @ V.T
    d = np.sqrt(np.diag(Y))
    return Y / np.outer(d, d)


def _cdf_knots(counts: np.ndarray, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Bin edges and the CDF at them from a noisy histogram (negatives set to 0; strictly increasing)."""
    nb = len(counts)
    p = np.clip(np.asarray(counts, dtype=np.float64), 0.0, None)
    p = p / p.sum() if p.sum() > 0 else np.full(nb, 1.0 / nb)
    p = (p + 1e-9) / (1.0 + nb * 1e-9)
    F = np.concatenate([[0.0], np.cumsum(p)])
    F[-1] = 1.0
    return np.linspace(lo, hi, nb + 1), F


class DPGaussianCopula(Mechanism):
    """Differentially private synthetic records: a Gaussian copula of noisy marginals and correlations.

    Parameters
    ----------
    epsilon, delta : float, default=1.0, 1e-6
        The (epsilon, delta)-DP guarantee of the whole release for one record's numeric values. OpenDP's
        accountant converts it to a zero-concentrated budget, which is split over the measurements
        (``BUDGET_SHARES``); OpenDP calibrates each measurement's noise to its share.
    bounds : None, 'data', float or sequence of (low, high), default=None
        Public bounds every column is clipped to. ``None`` measures them (a tenth of the budget: OpenDP's private
        quantile at 1 % and 99 % of each column over a grid of ``search_range``). A float ``c`` means
        ``[-c, c]`` for every column (standardised input). ``'data'`` takes each column's minimum and maximum
        from the data: that discloses the extremes exactly and is *not* covered by the guarantee (the
        record says so).
    search_range : (float, float), default=(-10.0, 10.0)
        The public range of the quantile candidates when ``bounds`` is None; ``ppdm release`` standardises
        the columns first, so +-10 standard deviations.
    n_bins : int, default=16
        Bins of each column's noisy histogram.
    shrinkage : float, default=0.5
        Weight of the pooled noisy correlation in a class's correlation.
    per_class : bool, default=True
        One model per class of ``fit(X, y)`` (the label); the labels are public (released unchanged).
    random_state : int, Generator or None
        Seeds the synthetic draws from the measurements. OpenDP draws its noise from its own
        cryptographically secure generator, which no seed repeats: refitting gives new measurements.

    Attributes
    ----------
    bounds_ : ndarray of shape (m, 2)
        The clipping bounds (measured, given or taken from the data, see ``bounds_source_``).
    bounds_source_ : str
    hist_ : ndarray of shape (n_classes, m, n_bins)
        The noisy histograms (as measured, before post-processing).
    corr_ : ndarray of shape (n_classes, m, m)
        The correlation matrices the records are drawn from (post-processed).
    strata_ : ndarray of shape (n,)
        Each record's class (public).
    query_names_, sensitivities_, scales_, rho_ : list and arrays
        Each OpenDP measurement: its name, its L2 sensitivity under one changed record (NaN for the quantile,
        whose sensitivity OpenDP derives), the noise scale OpenDP calibrated, its zCDP budget. The two
        Gaussian measurements' sensitivities and scales are in the integers they are made on (see ``units_``).
    units_ : ndarray of shape (2,)
        What one integer of the histograms (a count: 1) and of the sums of products (their fixed point's unit)
        is worth: the sums' noise is ``scales_[-1] / units_[-1]`` in their own terms.
    rho_total_ : float
        The zCDP budget OpenDP's conversion allows for (epsilon, delta).
    epsilon_spent_, delta_spent_ : float
        The privacy loss of the composed measurements, from OpenDP's map (at most epsilon, delta).
    seed_ : int
        Seed of the synthetic draws (key material).
    """

    _mixes_columns: ClassVar[bool] = False
    _secret = ("seed_",)
    _stochastic = True
    _seed_reproducible: ClassVar[bool] = False
    _table_level: ClassVar[bool] = True
    _keeps_no_row: ClassVar[bool] = True
    _draws_from_model: ClassVar[bool] = True
    _uses_label: ClassVar[bool] = True
    #: its indicator columns are drawn from noisy marginals, one at a time: their means are no estimate of the
    #: categories' frequencies (on adult, read by them the categories strayed further from the original's than
    #: read by the largest indicator), so each row takes its largest
    _block_reading: ClassVar[str] = "nearest"

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        bounds: object = None,
        search_range: Sequence[float] = (-10.0, 10.0),
        n_bins: int = 16,
        shrinkage: float = 0.5,
        per_class: bool = True,
        random_state: object = None,
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.search_range = search_range
        self.n_bins = n_bins
        self.shrinkage = shrinkage
        self.per_class = per_class
        self.random_state = random_state

    # -- the guarantee ------------------------------------------------------------------------------

    def guarantee(self) -> dict[str, Any]:
        """The stated and spent privacy loss, the privacy unit and what the guarantee does not cover."""
        self._check_fitted()
        not_covered = ["the number of records and each record's label (published unchanged)"]
        if self.bounds_source_.startswith("data"):
            not_covered.append("the column bounds, taken from the data's minima and maxima")
        return {
            "definition": "(epsilon, delta)-differential privacy, via zero-concentrated DP (OpenDP accountant)",
            "epsilon": float(self.epsilon),
            "delta": float(self.delta),
            "epsilon_spent": float(self.epsilon_spent_),
            "delta_spent": float(self.delta_spent_),
            "rho": float(self.rho_total_),
            "unit": "one record's numeric values (change-one neighbours)",
            "bounds": self.bounds_source_,
            "not_covered": not_covered,
            "noise": "OpenDP's cryptographically secure generator (no seed repeats it)",
        }

    @classmethod
    def stated_guarantee(cls, params: dict[str, Any]) -> str:
        """The guarantee of a release with these parameters, in words a data steward can quote."""
        eps, delta = params.get("epsilon", 1.0), params.get("delta", 1e-6)
        return (f"({eps:g}, {delta:g})-differential privacy for one record's numeric values changed (OpenDP's "
                "accountant). Public: the number of records and each record's label (published unchanged); in a "
                "release sweep the standardisation's means and deviations, and for a whole table each column's "
                "observed range, its categories and where its gaps are.")

    # -- fitting ------------------------------------------------------------------------------------

    def _check_params(self, m: int) -> None:
        check_real(self.epsilon, "epsilon", low=0.0, low_open=True)
        check_real(self.delta, "delta", low=0.0, high=1.0, low_open=True, high_open=True)
        if not isinstance(self.n_bins, int | np.integer) or self.n_bins < 2:
            raise ParameterError(f"n_bins must be an integer >= 2; got {self.n_bins!r}")
        check_real(self.shrinkage, "shrinkage", low=0.0, high=1.0)
        lo, hi = (float(v) for v in self.search_range)
        if not lo < hi:
            raise ParameterError(f"search_range must be (low, high) with low < high; got {self.search_range!r}")

    def _given_bounds(self, A: np.ndarray) -> tuple[np.ndarray | None, str]:
        m = A.shape[1]
        b = self.bounds
        if b is None:
            return None, "measured (OpenDP private quantiles)"
        if isinstance(b, str):
            if b != "data":
                raise ParameterError(f"bounds must be None, 'data', a number or (low, high) pairs; got {b!r}")
            extremes = np.column_stack([A.min(axis=0), A.max(axis=0)])
            return extremes, "data: each column's minimum and maximum (disclosed)"
        if isinstance(b, int | float | np.integer | np.floating):
            c = float(b)
            if not c > 0:
                raise ParameterError(f"bounds as a number must be > 0; got {b!r}")
            return np.tile([-c, c], (m, 1)), f"given: [-{c:g}, {c:g}] in the units the mechanism receives"
        B = np.asarray(b, dtype=np.float64)
        if B.shape != (m, 2) or not np.all(B[:, 0] < B[:, 1]):
            raise ParameterError(f"bounds must be {m} (low, high) pairs with low < high")
        return B, "given: one (low, high) pair per column"

    def fit(self, X: object, y: object = None) -> DPGaussianCopula:
        A = self._check_X(X, reset=True)
        n, m = A.shape
        self._check_params(m)
        dp = opendp_prelude()
        strata = strata_of(y, n, self.per_class).astype(np.int64)  # OpenDP's measurements take 64-bit codes
        K = int(strata.max()) + 1
        given, self.bounds_source_ = self._given_bounds(A)
        nb = int(self.n_bins)

        # the data as OpenDP sees it: one opaque table; neighbours differ in one record's numbers
        table = dp.user_domain("ppdm.dp_copula.table", lambda x: isinstance(x, tuple) and len(x) == 2)
        metric = dp.change_one_distance()
        floats = dp.vector_domain(dp.atom_domain(T=float, nan=False))
        ints = dp.vector_domain(dp.atom_domain(T=dp.i64))
        l2 = dp.l2_distance(T=float)

        def gaussian_query(fn: Callable[[tuple], np.ndarray], sens: float) -> Callable[[float], Any]:
            # integers in, the L2 sensitivity a float: OpenDP's discrete Gaussian, whose privacy map is its
            # Gaussian's on floats at the same scale and sensitivity
            t = dp.t.make_user_transformation(
                table, metric, ints, l2, function=fn, stability_map=lambda d_in: float(d_in) * sens
            )
            return lambda scale: t >> dp.m.then_gaussian(scale)

        def quantile_query(j: int, alpha: float) -> Callable[[float], Any]:
            # a changed record is one removal and one insertion in the column: symmetric distance 2
            col = dp.t.make_user_transformation(
                table, metric, floats, dp.symmetric_distance(),
                function=lambda d: [float(v) for v in d[0][:, j]], stability_map=lambda d_in: 2 * int(d_in),
            )
            cand = [float(c) for c in np.linspace(*map(float, self.search_range), 201)]
            return lambda scale: col >> dp.m.then_private_quantile(
                dp.zero_concentrated_divergence(), candidates=cand, alpha=alpha, scale=scale
            )

        hist_sens = math.sqrt(2 * m)  # a changed record leaves one bin and enters another in each column
        radius2 = float(m)  # the record's score vector is clipped to norm sqrt(m)
        corr_sens = math.sqrt(2) * radius2  # ||off-diagonal of z z^T||_2 <= |z|^2 / sqrt(2), twice for a change
        # the sums of products in fixed point: a changed record moves the P = m(m-1)/2 sums of its class (the
        # labels are public, so no other class's), each rounded sum by at most its real change times the unit,
        # plus one (two roundings of at most a half). The unit makes that extra at most FIXED_POINT_SLACK
        pairs = m * (m - 1) // 2
        # (at least 1: a one-column table has no pair, and its empty query still needs a scale)
        unit = float(max(1, math.ceil(math.sqrt(pairs) / (FIXED_POINT_SLACK * corr_sens))))
        fixed_sens = unit * corr_sens + math.sqrt(pairs)

        # the budget: the largest rho whose composition OpenDP converts to within (epsilon, delta)
        n_bound_q = 0 if given is not None else 2 * m
        shares = [BUDGET_SHARES["bounds"] / n_bound_q] * n_bound_q if n_bound_q else []
        shares += [BUDGET_SHARES["marginals"], BUDGET_SHARES["correlation"]]
        shares = [s / sum(shares) for s in shares]

        def composition(rho: float) -> Any:
            return dp.c.make_adaptive_composition(
                table, metric, dp.zero_concentrated_divergence(), d_in=1, d_mids=[s * rho for s in shares]
            )

        def approx(rho: float) -> Any:
            return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(composition(rho)), float(self.delta))

        rho_total = _searched(("budget", float(self.epsilon), float(self.delta), tuple(shares)), approx,
                              (float(self.epsilon), float(self.delta)))
        rho = [s * rho_total for s in shares]
        comp = composition(rho_total)
        self.epsilon_spent_, self.delta_spent_ = (float(v) for v in approx(rho_total).map(1))
        self.rho_total_ = float(rho_total)

        names: list[str] = []
        sens_list: list[float] = []
        scales: list[float] = []

        def calibrate(
            name: str, make: Callable[[float], Any], budget: float, sens: float, scale: float | None = None
        ) -> Any:
            if scale is None:  # a Gaussian query: its privacy map depends on its stability and the scale alone
                scale = _searched(("discrete gaussian", sens, float(budget)), make, budget)
            names.append(name)
            sens_list.append(sens)
            scales.append(float(scale))
            return make(scale)

        queryable = comp((A, strata))
        if given is None:
            B = np.empty((m, 2))
            # every column's quantile query has the same budget and candidates: OpenDP calibrates it once
            grid = tuple(float(v) for v in self.search_range)
            q_scale = {a: _searched(("quantile", a, grid, float(rho[0])), quantile_query(0, a), rho[0])
                       for a in BOUND_QUANTILES}
            for j in range(m):
                for k, alpha in enumerate(BOUND_QUANTILES):
                    meas = calibrate(f"bound q{alpha:g} column {j}", quantile_query(j, alpha), rho[len(names)],
                                     float("nan"), q_scale[alpha])
                    B[j, k] = queryable(meas)
            same = B[:, 1] <= B[:, 0]  # a degenerate column: widen by one grid step
            step = (float(self.search_range[1]) - float(self.search_range[0])) / 200
            B[same, 1] = B[same, 0] + step
        else:
            B = given
        lo, hi = B[:, 0], B[:, 1]

        def hist_fn(data: tuple) -> np.ndarray:
            Z, s = data
            idx = np.clip(((np.clip(Z, lo, hi) - lo) / (hi - lo) * nb).astype(np.int64), 0, nb - 1)
            H = np.zeros((K, m, nb), dtype=np.int64)
            for j in range(m):
                np.add.at(H[:, j, :], (s, idx[:, j]), 1)
            return np.ascontiguousarray(H.ravel())

        meas = calibrate("histograms", gaussian_query(hist_fn, hist_sens), rho[len(names)], hist_sens)
        hist = np.asarray(queryable(meas), dtype=np.float64).reshape(K, m, nb)
        knots = [[_cdf_knots(hist[c, j], lo[j], hi[j]) for j in range(m)] for c in range(K)]
        iu = np.triu_indices(m, 1)

        def corr_fn(data: tuple) -> np.ndarray:
            Z, s = data
            out = np.zeros((K, len(iu[0])))
            for c in range(K):
                rows = Z[s == c]
                S = np.empty_like(rows)
                for j in range(m):
                    edges, F = knots[c][j]
                    S[:, j] = ndtri(np.clip(np.interp(np.clip(rows[:, j], lo[j], hi[j]), edges, F), 1e-6, 1 - 1e-6))
                S = np.clip(S, -Z_CLIP, Z_CLIP)
                norm2 = (S**2).sum(axis=1)
                S *= np.sqrt(np.minimum(1.0, radius2 / np.maximum(norm2, 1e-300)))[:, None]
                out[c] = (S.T @ S)[iu]
            return np.ascontiguousarray(np.rint(out.ravel() * unit).astype(np.int64))

        meas = calibrate("correlation sums", gaussian_query(corr_fn, fixed_sens), rho[len(names)], fixed_sens)
        sums = np.asarray(queryable(meas), dtype=np.float64).reshape(K, -1) / unit

        counts = np.bincount(strata, minlength=K).astype(np.float64)  # public (the labels are released)
        pooled = np.eye(m)
        pooled[iu] = sums.sum(axis=0) / n
        pooled = nearest_correlation(pooled + np.triu(pooled, 1).T)
        corr = np.empty((K, m, m))
        lam = float(self.shrinkage)
        for c in range(K):
            C = np.eye(m)
            C[iu] = sums[c] / max(counts[c], 1.0)
            C = C + np.triu(C, 1).T
            corr[c] = nearest_correlation((1 - lam) * nearest_correlation(C) + lam * pooled) if K > 1 else pooled

        self.bounds_ = B
        self.hist_ = hist
        self.corr_ = corr
        self.strata_ = strata
        self.query_names_ = names
        self.sensitivities_ = np.asarray(sens_list)
        self.scales_ = np.asarray(scales)
        self.units_ = np.array([1.0, unit])
        self.rho_ = np.asarray(rho)
        self.seed_ = seed_from(self.random_state)
        return self

    # -- drawing ------------------------------------------------------------------------------------

    def sample(self) -> np.ndarray:
        """Draw the synthetic table from the fitted measurements (repeatable from ``seed_``)."""
        self._check_fitted()
        strata, B = np.asarray(self.strata_), np.asarray(self.bounds_)
        hist, corr = np.asarray(self.hist_), np.asarray(self.corr_)
        K, m, _ = hist.shape
        rng = np.random.default_rng(self.seed_)
        out = np.empty((len(strata), m))
        for c in range(K):
            rows = np.flatnonzero(strata == c)
            if len(rows) == 0:
                continue
            w, V = np.linalg.eigh(corr[c])
            U = ndtr(rng.standard_normal((len(rows), m)) @ (V * np.sqrt(np.clip(w, 0.0, None))).T)
            for j in range(m):
                edges, F = _cdf_knots(hist[c, j], B[j, 0], B[j, 1])
                out[rows, j] = np.interp(U[:, j], F, edges)
        return out

    def fit_transform(self, X: object, y: object = None, **fit_params: object) -> np.ndarray:
        return self.fit(X, y).sample()

    def transform(self, X: object) -> np.ndarray:
        """Synthetic records cannot be made for new rows one by one: the release is the fitted table's."""
        raise ParameterError("synthetic records are drawn for a whole table; use fit_transform (ppdm perturb)")
