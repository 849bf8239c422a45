"""Non-metric MDS perturbation (Alotaibi 2015): release a p-dimensional configuration whose pairwise
distances keep the rank order of the original dissimilarities.

The release has new columns (``d1..dp``); only distances are meaningful in it. Numeric, binary,
categorical and mixed tables are accepted through the dissimilarity (``gower``, ``huang``).
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ppdm.exceptions import InputError, ParameterError, PrivacyWarning
from ppdm.mechanisms.base import Mechanism
from ppdm.utils.validation import check_choice, check_supported_input

__all__ = ["NonMetricMDS"]

_MAX_FULL = 25_000  # above this many rows the landmark mode is used unless landmarks is given
_CONDENSED_MAX_N = 4000  # up to here the condensed pair layout (~120 bytes a pair), above it the sorted one
_SORTED_MAX_SMALL_P = 3  # ... except for p <= 3, where the sorted layout is faster at any n
_COLLAPSE_RATIO = 0.05  # median / RMS pair distance below this: the fit has collapsed
_COLLAPSE_ROWS = 2000  # rows sampled to measure it


def median_rms_ratio(Y: np.ndarray, rng: np.random.Generator) -> float:
    """Median over RMS of the pair distances of ``Y`` (of at most 2,000 sampled rows).

    Around 0.7-1 for ordinary configurations; near 0 for the degenerate non-metric solution, where a
    few records carry almost all of the distance and the rest sit on (nearly) one point.
    """
    from scipy.spatial.distance import pdist

    rows = rng.choice(Y.shape[0], _COLLAPSE_ROWS, replace=False) if Y.shape[0] > _COLLAPSE_ROWS else slice(None)
    d = pdist(Y[rows])
    rms = float(np.sqrt(np.mean(d * d))) if d.size else 0.0
    return float(np.median(d)) / rms if rms > 0 else 0.0


class NonMetricMDS(Mechanism):
    """Kruskal non-metric MDS by steepest descent on stress-1 with PAV disparities.

    Parameters
    ----------
    n_components : int, 'auto' or None
        Released dimension p. None: n_features - 1 (the thesis default). 'auto': the elbow of a
        stress-vs-p sweep on at most 600 sampled rows.
    dissimilarity : str
        One of :data:`ppdm.distances.DISSIMILARITIES` (default Euclidean).
    minkowski_r, huang_weight : float
        Minkowski exponent; weight of a categorical mismatch in ``huang``.
    ties : {'primary', 'secondary'}
        Kruskal's tie approach for equal dissimilarities.
    init : {'classical', 'random'}
        Start configuration. From a classical start that the optimiser cannot improve, a random
        start is used instead (a classical-MDS output is linearly invertible).
    fallback : bool
        Apply that fallback (default True; False keeps the classical solution, e.g. for benchmarks).
    n_init : int
        Number of starts (the first classical when init='classical', the others N(0, 1)); the lowest
        stress is kept.
    max_iter, tol_stress, tol_improve, tol_step : stopping rules (see :func:`ppdm.mds.optimize.descend`).
    step : {'adaptive', 'thesis'}
        Step-size control: grow on success and shrink and retry on failure, or the thesis's fixed step
        with stop at the first increase.
    step_size : float
        Initial relative step (Kruskal's 0.2).
    scale : {'delta', 'lsq', 'none'}
        Output scale: ``c = sqrt(sum delta^2 / sum d^2)`` (default), the least-squares ``c = sum delta d /
        sum d^2``, or unit RMS radius.
    landmarks : int or None
        Fit NMDS on this many sampled landmark records and place every other record against them
        (out-of-sample placement). None: full NMDS up to 25,000 rows, 2,000 landmarks above.
    leak_check : bool
        Measure the linear leak after fitting (R^2 of a linear reconstruction, both directions).
    leak_threshold : float
        R^2 at or above which the release counts as near-linear in the input.
    strict : bool
        Refuse to release (raise) instead of warning when the release is near-linear.
    max_memory_gb : float
        Memory budget for the pair arrays.
    pair_layout : {'auto', 'condensed', 'sorted'}
        How the pairs are held: condensed (dense row blocks, fastest, ~120 bytes a pair) or sorted by
        dissimilarity (12 bytes a pair, chunked; at most 65,535 rows). 'auto': condensed up to 4,000 rows
        when p > 3, sorted otherwise.
    max_stored_landmarks : int
        Landmarks kept (a sample of the fitted ones) to place other and later records against.
    random_state : int, Generator or None
    """

    _secret: ClassVar[tuple[str, ...]] = ("landmark_data_", "landmark_num_", "landmark_cat_")
    _stochastic: ClassVar[bool] = True

    def __init__(self, n_components: int | str | None = None, *, dissimilarity: str = "euclidean",
                 minkowski_r: float = 2.0, huang_weight: float = 1.0, ties: str = "primary",
                 init: str = "classical", fallback: bool = True, n_init: int = 1, max_iter: int = 200,
                 tol_stress: float = 1e-6,
                 tol_improve: float = 1e-4, tol_step: float = 1e-4, step: str = "adaptive",
                 step_size: float = 0.2, scale: str = "delta", landmarks: int | None = None,
                 leak_check: bool = True, leak_threshold: float = 0.99, strict: bool = False,
                 max_memory_gb: float = 20.0, pair_layout: str = "auto",
                 max_stored_landmarks: int = 400, random_state: object = None) -> None:
        self.n_components = n_components
        self.dissimilarity = dissimilarity
        self.minkowski_r = minkowski_r
        self.huang_weight = huang_weight
        self.ties = ties
        self.init = init
        self.fallback = fallback
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol_stress = tol_stress
        self.tol_improve = tol_improve
        self.tol_step = tol_step
        self.step = step
        self.step_size = step_size
        self.scale = scale
        self.landmarks = landmarks
        self.leak_check = leak_check
        self.leak_threshold = leak_threshold
        self.strict = strict
        self.max_memory_gb = max_memory_gb
        self.pair_layout = pair_layout
        self.max_stored_landmarks = max_stored_landmarks
        self.random_state = random_state

    # -- input -------------------------------------------------------------------------------------

    def _prepare(self, X: Any, *, reset: bool) -> Any:
        """Numeric ndarray, or a MixedTable for categorical/mixed frames (numbers z-scored for huang)."""
        from ppdm.distances.mixed import MixedTable
        from ppdm.distances.pairwise import MIXED

        check_supported_input(X)  # before the gower path, which converts the input itself
        if isinstance(X, pd.DataFrame):
            numeric = all(pd.api.types.is_numeric_dtype(X[c]) and not pd.api.types.is_bool_dtype(X[c])
                          for c in X.columns)
            if not numeric or self.dissimilarity in MIXED:
                if self.dissimilarity not in MIXED:
                    raise InputError(f"the table has categorical columns but dissimilarity "
                                     f"'{self.dissimilarity}' is numeric; use --dissimilarity gower or huang")
                if not reset and hasattr(self, "feature_names_in_"):
                    # records placed by column position: reordered or renamed columns would be compared with
                    # the wrong ones without a word
                    from ppdm.data.schema import quoted_names

                    got, fitted = list(map(str, X.columns)), list(self.feature_names_in_)
                    if got != fitted:
                        raise InputError(f"the table's columns ({quoted_names(got)}) are not the ones NMDS was fitted "
                                         f"on ({quoted_names(fitted)}); give the same columns in the same order")
                t = MixedTable.from_frame(X)
                if reset:
                    self.n_features_in_ = X.shape[1]
                    self.feature_names_in_ = np.asarray(list(map(str, X.columns)), dtype=object)
                return t
            # a numeric frame goes to validate_data as a frame: it records (fit) or checks (transform) the names
        A = self._check_X(X, reset=reset) if self.dissimilarity not in ("gower",) else np.asarray(X, float)
        if reset and self.dissimilarity == "gower":
            self.n_features_in_ = A.shape[1]
        return A

    def _resolve_p(self, data: Any, n: int) -> int:
        m = int(self.n_features_in_)
        p = self.n_components
        if p is None:
            return max(1, m - 1)
        if isinstance(p, str):
            if p != "auto":
                if p.isdigit():
                    return self._resolve_p_int(int(p), n)
                raise ParameterError(f"n_components must be an integer, 'auto' or None (got '{p}')")
            from ppdm.mds.dims import stress_sweep

            dims = list(range(1, max(2, m)))
            sweep = stress_sweep(data if isinstance(data, np.ndarray) else None, dims, estimator=NonMetricMDS,
                                 dissimilarity=self.dissimilarity, data=None if isinstance(data, np.ndarray)
                                 else self._frame_for_sweep, random_state=self._seed, max_iter=100)
            self.dims_sweep_ = sweep
            return int(sweep["elbow"])
        return self._resolve_p_int(int(p), n)

    @staticmethod
    def _resolve_p_int(p: int, n: int) -> int:
        if p < 1 or p >= n:
            raise ParameterError(f"n_components={p} must satisfy 1 <= p < n_rows={n}; choose a smaller --dims")
        return p

    # -- fit -----------------------------------------------------------------------------------------

    def fit(self, X: Any, y: object = None) -> NonMetricMDS:
        self.fit_transform(X)
        return self

    def fit_transform(self, X: Any, y: object = None) -> np.ndarray:
        check_choice(self.ties, "ties", ("primary", "secondary"))
        check_choice(self.init, "init", ("classical", "random"))
        check_choice(self.step, "step", ("adaptive", "thesis"))
        check_choice(self.scale, "scale", ("delta", "lsq", "none"))
        self._frame_for_sweep = X if isinstance(X, pd.DataFrame) else None
        data = self._prepare(X, reset=True)
        n = data.n_rows if not isinstance(data, np.ndarray) else data.shape[0]
        if n < 3:
            raise InputError(f"NMDS needs at least 3 rows (got {n})")
        self._seed = int(np.random.default_rng(self.random_state).integers(2**63 - 1))  # type: ignore[arg-type]
        p = self._resolve_p(data, n)
        L = self.landmarks
        if L is None and n > _MAX_FULL:
            L = 2000
        if L is not None and int(L) < n:
            Y = self._fit_landmarks(data, n, p, int(L))
        else:
            Y = self._fit_full(data, n, p)
            self._store_landmarks(data, np.arange(n), Y)
        self.n_components_ = p
        self.embedding_ = Y
        if self.leak_check:
            self._check_leak(data, Y)
        del self._frame_for_sweep
        return Y

    def _layout(self, n: int, p: int) -> str:
        check_choice(self.pair_layout, "pair_layout", ("auto", "condensed", "sorted"))
        if self.pair_layout != "auto":
            return str(self.pair_layout)
        # the sorted layout's gradient costs p gathers a pair, the condensed one a BLAS product (two
        # threads): measured at n = 2000, the sorted layout is faster up to p = 3
        return "condensed" if n <= _CONDENSED_MAX_N and p > _SORTED_MAX_SMALL_P else "sorted"

    def _check_full_memory(self, n: int, layout: str, classical_nn: bool) -> None:
        from ppdm.mds.pairs import CONDENSED_BYTES_PER_PAIR, MAX_SORTED_N, SORTED_BYTES_PER_PAIR
        from ppdm.utils.memory import check_memory

        fix = "use the landmark mode: --landmarks 2000 (landmarks=2000 in Python)"
        if layout == "sorted" and n > MAX_SORTED_N:
            raise ParameterError(f"full NMDS holds at most {MAX_SORTED_N} rows (got {n}); {fix}")
        M = n * (n - 1) // 2
        per_pair = SORTED_BYTES_PER_PAIR if layout == "sorted" else CONDENSED_BYTES_PER_PAIR
        # the pairs, plus the n x n double-centred matrix of a classical start from dissimilarities
        check_memory(M * per_pair + (16.0 * n * n if classical_nn else 0.0),
                     f"NMDS on {n} rows ({M} pairs)", fix, budget=self.max_memory_gb * 1024**3)

    def _fit_full(self, data: Any, n: int, p: int) -> np.ndarray:
        from ppdm.distances.pairwise import pairwise, prepare
        from ppdm.mds.classical import classical_from_data, classical_from_square
        from ppdm.mds.optimize import descend
        from ppdm.mds.pairs import CondensedPairs, SortedPairs

        budget = self.max_memory_gb * 1024**3
        layout = self._layout(n, p)
        classical_nn = self.init == "classical" and not (self.dissimilarity == "euclidean"
                                                         and isinstance(data, np.ndarray))
        self._check_full_memory(n, layout, classical_nn)
        P = prepare(data, self.dissimilarity, r=self.minkowski_r, weight=self.huang_weight)
        if layout == "sorted":
            pairs: Any = SortedPairs(P, n, self.ties)
        else:
            pairs = CondensedPairs(pairwise(P, max_bytes=budget), n, self.ties)
        rng = np.random.default_rng(self._seed)
        starts: list[tuple[str, np.ndarray]] = []
        if self.init == "classical":
            if self.dissimilarity == "euclidean" and isinstance(data, np.ndarray):
                Y0, gof = classical_from_data(data, p)
            else:
                Y0, gof = classical_from_square(pairs.square(), n, p)
            self.classical_fit_ = gof
            starts.append(("classical", Y0))
        while len(starts) < max(1, int(self.n_init)):
            starts.append(("random", rng.standard_normal((n, p))))
        best = None
        self.fallback_ = False
        self.collapsed_ = False
        kw = {"max_iter": self.max_iter, "tol_stress": self.tol_stress, "tol_improve": self.tol_improve,
              "tol_step": self.tol_step, "step": self.step, "step_size": self.step_size}

        def from_random(Y0: np.ndarray, tick: Any) -> Any:
            # ratio-MDS warm-up: keeps the non-metric descent off the equal-distances degenerate solution
            warm = descend(pairs, Y0, ratio=True, **(kw | {"max_iter": min(50, self.max_iter), "tol_improve": 1e-3}))
            return descend(pairs, warm.Y, callback=tick, **kw)  # type: ignore[arg-type]

        with _progress(f"NMDS n={n} p={p}") as tick:
            for kind, Y0 in starts:
                if kind == "classical":
                    sol = descend(pairs, Y0, callback=tick, **kw)  # type: ignore[arg-type]
                    if self.fallback and sol.stress >= sol.trace[0] * (1 - 1e-3):
                        # the classical start cannot be improved: releasing it would leak a linear map
                        self.fallback_ = True
                        sol = from_random(rng.standard_normal((n, p)), tick)
                else:
                    sol = from_random(Y0, tick)
                if median_rms_ratio(sol.Y, np.random.default_rng(self._seed + 2)) < _COLLAPSE_RATIO:
                    # the degenerate ordinal fit: records dissimilar to all others (outliers) are put far
                    # away and the rest collapse to a point, stress ~0 but no distances left; the ratio
                    # (metric) solution from the same start keeps them
                    self.collapsed_ = True
                    metric = descend(pairs, Y0 if kind == "classical" else sol.Y, ratio=True, callback=tick, **kw)
                    S = pairs.evaluate(metric.Y)[0]  # its non-metric stress-1
                    sol = replace(metric, stress=S, trace=[S], converged=f"collapsed; ratio MDS {metric.converged}")
                if best is None or sol.stress < best.stress:
                    best = sol
        assert best is not None
        if self.collapsed_:
            warnings.warn("the non-metric fit collapsed most records onto one point (a few records are "
                          "dissimilar to all others); released the ratio-MDS solution instead. Consider "
                          "removing outliers or --dims larger", PrivacyWarning, stacklevel=2)
        self.stress_ = float(best.stress)
        self.stress_trace_ = np.asarray(best.trace)
        self.n_iter_ = int(best.n_iter)
        self.converged_ = best.converged
        self.pair_layout_ = layout
        Y = best.Y
        # scale sums, the monotone map at knots, and Shepard data (at most 200,000 sampled pairs)
        fin = pairs.final(Y, rng)
        c = self._scale_factor(fin)
        self.transfer_delta_ = fin["knot_delta"]
        self.transfer_dhat_ = np.maximum.accumulate(fin["knot_fit"] * c)
        self.scale_factor_ = c
        delta, d, dhat = fin["shepard"]
        self._shepard = (delta, d * c, dhat * c)
        return Y * c

    def _scale_factor(self, fin: dict[str, Any]) -> float:
        dd = fin["dd"]
        if self.scale == "none" or dd == 0:
            return 1.0
        if self.scale == "delta":
            return float(np.sqrt(fin["xx"] / dd))
        return float(fin["xd"] / dd)

    def _store_landmarks(self, data: Any, idx: np.ndarray, Y: np.ndarray) -> None:
        max_keep = int(self.max_stored_landmarks)
        rng = np.random.default_rng(self._seed + 1)
        keep = np.sort(rng.choice(idx.size, max_keep, replace=False)) if idx.size > max_keep else np.arange(idx.size)
        if isinstance(data, np.ndarray):
            self.landmark_data_ = data[idx[keep]]
        else:
            self.landmark_num_ = data.num[idx[keep]]
            self.landmark_cat_ = data.cat[idx[keep]]
        self.landmark_embedding_ = Y[keep]

    def _fit_landmarks(self, data: Any, n: int, p: int, L: int) -> np.ndarray:
        if L <= p + 1:
            raise ParameterError(f"landmarks={L} must exceed p + 1 = {p + 1}")
        rng = np.random.default_rng(self._seed)
        idx = np.sort(rng.choice(n, L, replace=False))
        sub = data[idx] if isinstance(data, np.ndarray) else data.rows(0, 0).__class__(
            data.num[idx], data.cat[idx], data.num_names, data.cat_names)
        YL = self._fit_full(sub, L, p)
        self._store_landmarks(sub, np.arange(L), YL)
        Y = self._place(data, n)
        Y[idx] = YL
        return Y

    # -- out-of-sample ---------------------------------------------------------------------------

    def _landmark_table(self) -> Any:
        from ppdm.distances.mixed import MixedTable

        if hasattr(self, "landmark_data_"):
            return self.landmark_data_
        return MixedTable(self.landmark_num_, self.landmark_cat_)

    def _place(self, data: Any, n: int, chunk: int = 20_000) -> np.ndarray:
        from ppdm.distances.pairwise import cross, prepare
        from ppdm.mds.landmark import MonotoneTable, place

        P = prepare(self._landmark_table(), self.dissimilarity, r=self.minkowski_r, weight=self.huang_weight)
        YL = self.landmark_embedding_
        transfer = MonotoneTable(self.transfer_delta_, self.transfer_dhat_)
        out = np.empty((n, YL.shape[1]))
        with _progress(f"placing {n} records", total=n) as tick:
            for a in range(0, n, chunk):
                b = min(n, a + chunk)
                rows = data[a:b] if isinstance(data, np.ndarray) else data.rows(a, b)
                T = transfer(cross(P, rows)).astype(np.float32)
                out[a:b] = place(YL.astype(np.float32), T, n_iter=10)
                tick(b, 0.0)
        return out

    def transform(self, X: Any) -> np.ndarray:
        """Place new records against the fitted configuration (consistent with earlier releases)."""
        self._check_fitted()
        data = self._prepare(X, reset=False)
        n = data.n_rows if not isinstance(data, np.ndarray) else data.shape[0]
        return self._place(data, n)

    # -- guard, diagnostics ------------------------------------------------------------------------

    def _check_leak(self, data: Any, Y: np.ndarray) -> None:
        from ppdm.mds.leak import linear_leak

        if isinstance(data, np.ndarray):
            X = data
        else:
            onehot = [(data.cat[:, k][:, None] == np.unique(data.cat[:, k])[None, :]).astype(float)
                      for k in range(data.cat.shape[1])]
            num = np.nan_to_num(data.num) if data.num.size else np.empty((Y.shape[0], 0))
            X = np.column_stack([num, *onehot]) if onehot else num
        leak = linear_leak(X, Y, random_state=self._seed)
        self.linear_leak_ = leak
        worst = max(leak["r2_input_from_release"], leak["r2_release_from_input"])
        if worst >= self.leak_threshold:
            msg = (f"the release is near-linear in the input (R2 of a linear reconstruction = {worst:.4f} >= "
                   f"{self.leak_threshold}); an attacker with a few known records can invert it. Lower p, "
                   "or use another start")
            if self.strict:
                raise ParameterError(msg + "; refused under --strict")
            warnings.warn(msg, PrivacyWarning, stacklevel=2)

    def shepard(self) -> dict[str, np.ndarray]:
        """Shepard-plot data of the last full fit (at most 200,000 sampled pairs): dissimilarities, released
        distances, disparities."""
        self._check_fitted()
        if not hasattr(self, "_shepard"):
            raise ParameterError("Shepard data are kept only by the fit in this session (not in state files)")
        delta, d, dhat = self._shepard
        return {"delta": delta, "distance": d, "disparity": dhat}

    def get_feature_names_out(self, input_features: object = None) -> np.ndarray:
        return np.asarray([f"d{k + 1}" for k in range(self.n_components_)], dtype=object)


class _progress:
    """Transient rich progress (stress per iteration), silent when stderr is not a terminal."""

    def __init__(self, what: str, total: int | None = None) -> None:
        self.what, self.total = what, total

    def __enter__(self):  # type: ignore[no-untyped-def]
        import sys

        if not sys.stderr.isatty():
            return lambda i, s: None
        from rich.progress import Progress

        self.p = Progress(transient=True)
        self.p.start()
        self.task = self.p.add_task(self.what, total=self.total)

        def tick(i: int, s: float) -> None:
            if self.total is None:
                self.p.update(self.task, description=f"{self.what} iter {i} stress {s:.4f}")
            else:
                self.p.update(self.task, completed=i)

        return tick

    def __exit__(self, *exc: object) -> None:
        if hasattr(self, "p"):
            self.p.stop()
