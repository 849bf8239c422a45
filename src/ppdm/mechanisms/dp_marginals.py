"""Differentially private synthetic tables from noisy marginals: the MST / AIM family (the shared part).

A whole table (numbers, categories, the label, gaps as values of their own) is coded on small domains
(:mod:`ppdm.mechanisms.dp_columns`); low-order marginals of the codes are measured with OpenDP under one budget
(:mod:`ppdm.mechanisms.dp_accounting`); Private-PGM (``mbi``) estimates a graphical model consistent with the
noisy marginals and draws the synthetic records from it; the records are decoded to the table's values.
Which marginals are measured is the recipe's own (:mod:`ppdm.mechanisms.dp_select`: MST's spanning tree,
AIM's adaptive selection). Needs the ``dp`` extra (``pip install 'ppdm[dp]'``: OpenDP, mbi and JAX).

The guarantee: (epsilon, delta)-differential privacy for one record added or removed, covering every value of
every record, the label included. Public (not measured, part of the guarantee's statement): the columns and
their kinds, each categorical column's list of categories and the label's classes, which columns have gaps,
and the number of records (the synthetic table has as many rows as the original).
"""

from __future__ import annotations

import functools
import threading
import warnings
from typing import Any, ClassVar

import numpy as np

from ppdm.exceptions import InputError, MissingDependencyError, ParameterError
from ppdm.mechanisms.base import Mechanism, seed_from
from ppdm.mechanisms.dp_columns import (
    KINDS,
    RANGE_EDGES,
    ColumnCode,
    bounds_from_counts,
    category_code,
    decode_column,
    encode_column,
    number_code,
    range_cells,
)
from ppdm.utils.validation import check_int, check_real

__all__ = ["MarginalSynthesis", "load_mbi", "choose_xla", "RANGE_SHARE"]

#: the share of the budget that measures the bounds of the number columns without public bounds
RANGE_SHARE = 0.1
#: mirror-descent iterations of Private-PGM's estimation (after JAX compiles a model, iterations are cheap)
ESTIMATION_ITERS = 1000

_GLOBAL_DRAWS = threading.Lock()


def load_mbi() -> Any:
    """``mbi`` (Private-PGM) with JAX in double precision, or a one-line error naming the extra.

    JAX's double precision is a process-wide setting: Private-PGM's estimation stalls in single precision on
    large tables (its own warning), and ppdm is JAX's only user in its processes. XLA's optimisation is set
    before the process's first computation, by the size of the first model estimated (:func:`choose_xla`).
    """
    try:
        import jax
    except ImportError:
        raise MissingDependencyError("the marginal-based mechanisms (dp-aim, dp-mst) need Private-PGM and JAX; "
                                     "install them with: pip install 'ppdm[dp]'") from None
    jax.config.update("jax_enable_x64", True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import mbi
    except ImportError:
        raise MissingDependencyError("the marginal-based mechanisms (dp-aim, dp-mst) need Private-PGM (mbi); "
                                     "install it with: pip install 'ppdm[dp]'") from None
    return mbi


#: XLA's flags for models whose programs cost more to compile than to run (most tables' models): no backend
#: optimisation and the older CPU emitters (they make the same programs)
FAST_COMPILE = ("--xla_backend_optimization_level=0", "--xla_cpu_use_fusion_emitters=false")
#: XLA's flags for models whose iterations cost more than their compile: its defaults
OPTIMISED = ("--xla_backend_optimization_level=3", "--xla_cpu_use_fusion_emitters=true")
#: a junction tree of at least this many megabytes is estimated with :data:`OPTIMISED` programs
OPTIMISE_FROM_MB = 1.0


def choose_xla(model_mb: float | None) -> None:
    """XLA's optimisation for this process, chosen by the first model it estimates (``model_mb``: its junction
    tree's size, :func:`~ppdm.mechanisms.dp_model_size.model_size_mb`; None: no estimation, draws only).

    Compiling a model's programs takes most of a fit's time on most tables, and unoptimised programs compile
    faster: a dp-aim fit at epsilon 4 (on one core, the earlier release's measurements) took 8.6 s instead of
    14.0 s on a 4,000-record adult extract, 8.2 s instead of 12.1 s on 1,000 German credit records. The
    mirror-descent iterations then run slower, by the model's size: one ``ppdm perturb --method dp-aim`` at
    epsilon 4 of 5,000 letter records (16 columns, a label of 26 classes, a junction tree of 1.85 MB) took
    29.3 s unoptimised against 16.7 s with XLA's defaults, while optdigits (64 columns, 0.29 MB) took 29.4 s
    against 34.9 s, spambase (0.06 MB) 26.1 s against 29.8 s, satimage (0.16 MB) 16.0 s against 24.1 s, and
    3,000 adult and 1,000 German credit records 9.8 s against 14.8 s and 9.7 s against 15.2 s (each command
    once, about 2 s of it the command's own). XLA reads its flags when JAX's
    backend starts, once a process: the first model estimated decides (a sweep's workers fit one table's
    models), and flags the environment already names are left as they are.
    """
    import os

    try:
        from jax._src import xla_bridge  # the dp extra pins JAX's versions: this one is known

        started = bool(xla_bridge.backends_are_initialized())
    except (ImportError, AttributeError):
        started = False
    if started:
        return
    flags = OPTIMISED if model_mb is not None and model_mb >= OPTIMISE_FROM_MB else FAST_COMPILE
    given = os.environ.get("XLA_FLAGS", "")
    for flag in flags:
        if flag.split("=")[0] not in given:
            given = (given + " " + flag).strip()
    os.environ["XLA_FLAGS"] = given


@functools.cache  # one class a process: JAX keeps its compiled programs by the estimator's class
def lean_mirror_descent() -> Any:
    """Private-PGM's mirror descent (the same iterations) that returns the fitted potentials only.

    Private-PGM's estimator computes the model's marginals twice outside its iterations: those of the uniform
    start and those of the fitted potentials. Each is a pass of message passing over the junction tree that JAX
    compiles as a program of its own, and a fit that keeps only the potentials (the draws compute the marginals
    they need from them) uses neither. Here the start's marginals are written down (zero potentials are the
    uniform distribution: each clique's cells share the total evenly; the state carries them, and each step
    computes its own) and the potentials are returned as they are: a dp-aim fit compiles one message-passing
    program fewer. A first pass of dp-aim on sonar (208 x 60) took 19 s instead of 23 s at epsilon 4 and 22 s
    instead of 27 s at epsilon 2; on a 5,000 x 40 numeric table the compile saved is 0.5 to 2 s. A test checks
    the potentials against Private-PGM's own estimator's.
    """
    import dataclasses

    import jax.numpy as jnp

    mbi = load_mbi()
    from mbi.estimation import MirrorDescent, MirrorDescentState

    @dataclasses.dataclass(frozen=True)
    class PotentialsMirrorDescent(MirrorDescent):
        def _init(self, domain: Any, loss_fn: Any, known_total: float, *, warm_start: Any = None,
                  constraints: Any = ()) -> Any:
            if warm_start is not None or constraints:
                return super()._init(domain, loss_fn, known_total, warm_start=warm_start, constraints=constraints)
            tables = {}
            for cl in loss_fn.cliques:
                sub = domain.project(cl)
                tables[cl] = mbi.Factor(sub, jnp.full(sub.shape, known_total / sub.size(), dtype=jnp.float64))
            mu = mbi.CliqueVector(domain, list(loss_fn.cliques), tables)
            alpha = 2.0 / (loss_fn.lipschitz * known_total) if self.stepsize is None else self.stepsize
            return MirrorDescentState(mu, mbi.CliqueVector.zeros(domain, loss_fn.cliques), alpha, loss_fn(mu))

        def _finalize(self, state: Any, known_total: float, constraints: Any = ()) -> Any:
            return state.potentials

    return PotentialsMirrorDescent


def flat_cells(codes: np.ndarray, clique: tuple[int, ...], sizes: np.ndarray) -> np.ndarray:
    """Each record's cell of the marginal on ``clique`` (row-major over the clique's domains)."""
    return np.ravel_multi_index(tuple(codes[:, j] for j in clique), tuple(int(sizes[j]) for j in clique))


class MarginalSynthesis(Mechanism):
    """Shared base of :class:`~ppdm.mechanisms.dp_select.DPMST` and :class:`~ppdm.mechanisms.dp_select.DPAIM`.

    Input: a table of numbers in their units, categorical columns as codes ``0..levels-1``, gaps as NaN (the
    layout :mod:`ppdm.flow.synthesis` makes of a whole table); the label as ``y``. Output (``fit_transform``):
    a synthetic table of the same layout, and the synthetic label in ``released_label_``.
    """

    _mixes_columns: ClassVar[bool] = False
    _secret = ("seed_",)
    _stochastic = True
    _seed_reproducible: ClassVar[bool] = False
    _table_level: ClassVar[bool] = True
    _uses_label: ClassVar[bool] = True
    #: numbers are measured in their units: the release gets no preprocessed copy
    _scale_free: ClassVar[bool] = True
    #: the synthetic label replaces the label (read by :func:`ppdm.flow.synthesis.released_label`)
    _releases_label: ClassVar[bool] = True
    #: the whole record, label included, is under the guarantee; the published table is the synthetic one
    _releases_table: ClassVar[bool] = True
    _draws_from_model: ClassVar[bool] = True

    def _base_params(self) -> None:  # documented by the subclasses
        check_real(self.epsilon, "epsilon", low=0.0, low_open=True)
        check_real(self.delta, "delta", low=0.0, high=1.0, low_open=True, high_open=True)
        check_int(self.n_bins, "n_bins", low=3, high=64)

    # -- the layout ---------------------------------------------------------------------------------------

    def _layout(self, m: int) -> tuple[list[str], list[int]]:
        kinds = ["continuous"] * m if self.kinds is None else [str(k) for k in self.kinds]
        levels = [0] * m if self.levels is None else [int(v) for v in self.levels]
        if len(kinds) != m or len(levels) != m:
            raise ParameterError(f"kinds and levels must name each of the {m} columns; got {len(kinds)} and "
                                 f"{len(levels)}")
        bad = sorted({k for k in kinds if k not in KINDS})
        if bad:
            raise ParameterError(f"kinds must be among {', '.join(KINDS)}; got {bad[0]!r}")
        if any(k == "categorical" and v < 1 for k, v in zip(kinds, levels, strict=True)):
            raise ParameterError("a categorical column needs its number of categories (levels >= 1)")
        return kinds, levels

    def _given_bounds(self, m: int) -> list[tuple[float, float] | None]:
        if self.bounds is None:
            return [None] * m
        given = list(self.bounds)
        if len(given) != m:
            raise ParameterError(f"bounds must hold one (low, high) pair or None per column ({m}); got {len(given)}")
        out: list[tuple[float, float] | None] = []
        for b in given:
            if b is None:
                out.append(None)
                continue
            lo, hi = (float(v) for v in b)
            if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
                raise ParameterError(f"bounds must be finite (low, high) pairs with low < high; got {b!r}")
            out.append((lo, hi))
        return out

    def _check_table(self, X: object) -> np.ndarray:
        # gaps are a table's own values here (a synthesiser releases them as gaps)
        return self._validated(X, reset=True, ensure_all_finite="allow-nan", ensure_min_samples=2)

    # -- fitting ------------------------------------------------------------------------------------------

    def fit(self, X: object, y: object = None) -> MarginalSynthesis:
        from ppdm.mechanisms.dp_accounting import Budget, approx_dp, rho_for

        A = self._check_table(X)
        n, m = A.shape
        self._base_params()
        self._check_recipe()
        kinds, levels = self._layout(m)
        given = self._given_bounds(m)
        load_mbi()  # before any budget is spent: a missing dependency fails here
        if y is not None:
            labels = np.asarray(y).astype(str).ravel()
            if len(labels) != n:
                raise ParameterError(f"y has {len(labels)} values for {n} records")
            self.classes_, ycodes = np.unique(labels, return_inverse=True)
            table = np.column_stack([A, ycodes.astype(np.float64)])
        else:
            self.classes_ = np.array([], dtype=str)
            table = A
        self.n_records_ = int(n)  # public: the synthetic table has as many rows
        rho = rho_for(float(self.epsilon), float(self.delta))
        budget = Budget(table, rho)
        codes = self._code_columns(budget, table, kinds, levels, given)
        sizes = np.array([c.size for c in codes], dtype=np.int64)
        self._store_codes(codes)
        measurements, merge = self._measure(budget, codes, sizes)
        self._store_merge(merge, sizes)
        self._estimate(measurements, n)
        self.rho_total_ = float(rho)
        self.rho_spent_ = budget.spent
        self.epsilon_spent_ = approx_dp(self.rho_spent_, float(self.delta))
        self.delta_spent_ = float(self.delta)
        self.query_names_ = [q.name for q in budget.log]
        self.query_kinds_ = [q.kind for q in budget.log]
        self.sensitivities_ = np.array([q.sensitivity for q in budget.log])
        self.scales_ = np.array([q.scale for q in budget.log])
        self.rho_ = np.array([q.rho for q in budget.log])
        self.bounds_source_ = ["categorical" if k == "categorical" else "given" if g is not None else "measured"
                               for k, g in zip(kinds, given, strict=True)]
        self.seed_ = seed_from(self.random_state)
        return self

    def _code_columns(self, budget: Any, table: np.ndarray, kinds: list[str], levels: list[int],
                      given: list[tuple[float, float] | None]) -> list[ColumnCode]:
        """Each column's coding; the bounds of numbers without public ones measured first (RANGE_SHARE)."""
        m = len(kinds)
        nullable = [bool(np.isnan(table[:, j]).any()) for j in range(m)]
        to_measure = [j for j in range(m) if kinds[j] != "categorical" and given[j] is None]
        codes: list[ColumnCode] = []
        for j in range(m):
            if kinds[j] == "categorical":
                codes.append(category_code(levels[j], nullable[j]))
                continue
            if given[j] is None:
                share = RANGE_SHARE * budget.rho / len(to_measure)
                noisy = budget.counts(f"range of column {j}", lambda t, j=j: range_cells(t[:, j]),
                                      len(RANGE_EDGES) + 2, share)
                bounds = bounds_from_counts(noisy, budget.log[-1].scale)
                if bounds is None:
                    raise InputError(self._unmeasured(j, table.shape[0]))
                lo, hi = bounds
            else:
                lo, hi = given[j]
            codes.append(number_code(kinds[j], lo, hi, int(self.n_bins), nullable[j]))
        if table.shape[1] > m:  # the label: its classes are public
            codes.append(category_code(len(self.classes_), False))
        return codes

    def _unmeasured(self, j: int, n: int) -> str:
        """Why the range of number column ``j`` could not be measured, and what to do."""
        names = getattr(self, "feature_names_in_", None)
        name = f"column '{names[j]}'" if names is not None else f"number column {j + 1}"
        return (f"the range of {name} cannot be measured at epsilon {float(self.epsilon):g} on {n} records: no "
                "cell of its noisy range histogram clears the noise; give its public bounds (bounds), a larger "
                "epsilon or more records, or use another mechanism")

    def _store_codes(self, codes: list[ColumnCode]) -> None:
        self.column_kinds_ = [c.kind for c in codes]
        self.domain_ = np.array([c.size for c in codes], dtype=np.int64)
        self.gap_code_ = np.array([c.gap for c in codes], dtype=np.int64)
        self.lo_ = np.array([c.lo for c in codes])
        self.hi_ = np.array([c.hi for c in codes])

    def _codes(self) -> list[ColumnCode]:
        return [ColumnCode(str(k), int(s), int(g), float(lo), float(hi)) for k, s, g, lo, hi in zip(
            self.column_kinds_, self.domain_, self.gap_code_, self.lo_, self.hi_, strict=True)]

    @staticmethod
    def encoded(table: np.ndarray, codes: list[ColumnCode]) -> np.ndarray:
        """The codes of every record (a function of each record alone)."""
        return np.column_stack([encode_column(table[:, j], c) for j, c in enumerate(codes)])

    def _measure(self, budget: Any, codes: list[ColumnCode],
                 sizes: np.ndarray) -> tuple[list[Any], list[np.ndarray] | None]:
        """The recipe: measure marginals within the budget; Private-PGM's measurements on the model's domain,
        and each column's map from its codes to the model's (None: the same codes)."""
        raise NotImplementedError

    def _check_recipe(self) -> None:
        raise NotImplementedError

    def measure_clique(self, budget: Any, codes: list[ColumnCode], sizes: np.ndarray, clique: tuple[int, ...],
                       rho: float, merge: list[np.ndarray] | None = None) -> Any:
        """One marginal of the codes (mapped by ``merge``), measured by OpenDP with discrete Gaussian noise
        spending ``rho``: a Private-PGM measurement."""
        mbi = load_mbi()
        model_sizes = sizes if merge is None else np.array([int(m.max()) + 1 for m in merge])

        def cells(t: np.ndarray) -> np.ndarray:
            coded = self.encoded(t, codes)
            if merge is not None:
                coded = np.column_stack([merge[j][coded[:, j]] for j in range(coded.shape[1])])
            return flat_cells(coded, clique, model_sizes)

        size = int(np.prod([model_sizes[j] for j in clique]))
        noisy = budget.counts(f"marginal {clique}", cells, size, rho)
        return mbi.LinearMeasurement(noisy, tuple(f"c{j}" for j in clique), budget.log[-1].scale)

    # -- Private-PGM: estimation and draws ----------------------------------------------------------------

    def _store_merge(self, merge: list[np.ndarray] | None, sizes: np.ndarray) -> None:
        merge = merge if merge is not None else [np.arange(int(s)) for s in sizes]
        self.merge_ = np.concatenate(merge).astype(np.int64)
        self.model_domain_ = np.array([int(m.max()) + 1 for m in merge], dtype=np.int64)

    def _estimate(self, measurements: list[Any], n: int) -> None:
        """The graphical model Private-PGM fits to the noisy marginals, kept as its potentials (arrays)."""
        potentials = self.estimate_potentials(measurements, self.model_domain_, n)
        cliques = [tuple(int(a[1:]) for a in cl) for cl in potentials.cliques]
        self.model_cliques_ = [list(cl) for cl in cliques]
        self.model_potentials_ = np.concatenate(
            [np.asarray(potentials[tuple(f"c{j}" for j in cl)].values, dtype=np.float64).ravel()
             for cl in cliques])

    @staticmethod
    def model_domain(sizes: np.ndarray) -> Any:
        mbi = load_mbi()
        return mbi.Domain([f"c{j}" for j in range(len(sizes))], [int(s) for s in sizes])

    def estimate_model(self, measurements: list[Any], sizes: np.ndarray, n: int, *, iters: int = ESTIMATION_ITERS,
                       warm: Any = None) -> Any:
        """Private-PGM's mirror descent on the noisy marginals; the number of records is public."""
        mbi = load_mbi()
        choose_xla(self._model_mb(measurements, sizes))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return mbi.estimation.MirrorDescent().estimate(self.model_domain(sizes), list(measurements),
                                                           known_total=float(n), iters=int(iters), warm_start=warm)

    @staticmethod
    def _model_mb(measurements: list[Any], sizes: np.ndarray) -> float:
        """The junction tree's megabytes for the measurements' cliques (``c{j}``: column ``j``)."""
        from ppdm.mechanisms.dp_model_size import model_size_mb

        return model_size_mb([int(v) for v in sizes], [[int(a[1:]) for a in m.clique] for m in measurements])

    def estimate_potentials(self, measurements: list[Any], sizes: np.ndarray, n: int) -> Any:
        """The potentials of the model :meth:`estimate_model` fits (:func:`lean_mirror_descent`: the same
        iterations, without the marginals nothing here reads)."""
        choose_xla(self._model_mb(measurements, sizes))
        estimator = lean_mirror_descent()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = estimator().estimate(self.model_domain(sizes), list(measurements), known_total=float(n),
                                          iters=ESTIMATION_ITERS)
        # a model without cliques comes back as Private-PGM's model (nothing was iterated)
        return getattr(fitted, "potentials", fitted)

    def _model(self) -> Any:
        import jax.numpy as jnp

        mbi = load_mbi()
        choose_xla(None)  # draws alone (a fitted model read back): small programs, compiled fast
        domain = self.model_domain(self.model_domain_)
        tables, at = {}, 0
        for cl in self.model_cliques_:
            names = tuple(f"c{j}" for j in cl)
            sub = domain.project(names)
            size = int(np.prod(sub.shape))
            tables[names] = mbi.Factor(sub, jnp.asarray(np.asarray(self.model_potentials_[at:at + size]).reshape(
                sub.shape)))
            at += size
        potentials = mbi.CliqueVector(domain, list(tables), tables)
        # the draws read the potentials only (the model's marginals are recomputed from them)
        return mbi.MarkovRandomField(potentials=potentials, marginals=potentials, total=float(self.n_records_))

    def sample(self) -> np.ndarray:
        """Draw the synthetic table from the fitted model (repeatable from ``seed_``); the synthetic label goes
        to ``released_label_``."""
        self._check_fitted()
        model = self._model()
        seeds = np.random.SeedSequence(int(self.seed_)).spawn(2)
        with _GLOBAL_DRAWS:
            # Private-PGM draws from NumPy's global generator: seeded from the key for the draw, then restored
            saved = np.random.get_state()
            try:
                np.random.seed(seeds[0].generate_state(1)[0])
                data = model.synthetic_data(rows=int(self.n_records_)).to_dict()
            finally:
                np.random.set_state(saved)
        rng = np.random.default_rng(seeds[1])
        codes = self._unmerge(np.column_stack([np.asarray(data[f"c{j}"], dtype=np.int64)
                                               for j in range(len(self.domain_))]), rng)
        out = np.column_stack([decode_column(codes[:, j], c, rng) for j, c in enumerate(self._codes())])
        if len(self.classes_):
            self.released_label_ = np.asarray(self.classes_)[codes[:, -1]]
            out = out[:, :-1]
        return out

    def _unmerge(self, model_codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The columns' own codes of the model's codes: a code that stands for several (merged because their
        noisy counts were small) becomes one of them, drawn uniformly."""
        out = np.empty_like(model_codes)
        at = 0
        for j, size in enumerate(self.domain_):
            mapping = np.asarray(self.merge_[at:at + int(size)])
            at += int(size)
            col = model_codes[:, j]
            if len(np.unique(mapping)) == len(mapping):
                out[:, j] = np.argsort(mapping)[col]
                continue
            for k in np.unique(col):
                rows = np.flatnonzero(col == k)
                out[rows, j] = rng.choice(np.flatnonzero(mapping == k), size=len(rows))
        return out

    def fit_transform(self, X: object, y: object = None, **fit_params: object) -> np.ndarray:
        return self.fit(X, y).sample()

    def transform(self, X: object) -> np.ndarray:
        """Synthetic records cannot be made for new rows one by one: the release is the fitted table's."""
        raise ParameterError("synthetic records are drawn for a whole table; use fit_transform (ppdm perturb)")

    def fitted_attributes(self) -> dict[str, Any]:
        # the synthetic label is part of the release, not of the state
        return {k: v for k, v in super().fitted_attributes().items() if k != "released_label_"}

    # -- the guarantee ------------------------------------------------------------------------------------

    #: what is public in every release of these mechanisms (the guarantee's statement)
    PUBLIC: ClassVar[tuple[str, ...]] = (
        "the columns and their kinds", "each categorical column's list of categories and the label's classes (a "
        "category held by a single record is disclosed by being listed)", "which columns have gaps",
        "the number of records (the synthetic table has as many rows)")

    @classmethod
    def stated_guarantee(cls, params: dict[str, Any]) -> str:
        """The guarantee of a release with these parameters, in words a data steward can quote."""
        import inspect

        defaults = {k: p.default for k, p in inspect.signature(cls.__init__).parameters.items()}
        eps, delta = params.get("epsilon", defaults["epsilon"]), params.get("delta", defaults["delta"])
        return (f"({eps:g}, {delta:g})-differential privacy for one record added or removed: every value of it, "
                f"its label included (OpenDP's accountant). Public: {'; '.join(cls.PUBLIC)}.")

    def guarantee(self) -> dict[str, Any]:
        """The stated and spent privacy loss, the unit, and what is public (not measured)."""
        self._check_fitted()
        measured = [j for j, s in enumerate(self.bounds_source_) if s == "measured"]
        given = [j for j, s in enumerate(self.bounds_source_) if s == "given"]
        bounds = ("measured (a noisy histogram of each number column on a fixed grid)" if measured and not given
                  else "given by the user (public)" if given and not measured
                  else "measured, or given by the user (public) where stated" if given else "no number columns")
        return {
            "definition": "(epsilon, delta)-differential privacy, via zero-concentrated DP (OpenDP accountant)",
            "epsilon": float(self.epsilon),
            "delta": float(self.delta),
            "epsilon_spent": float(self.epsilon_spent_),
            "delta_spent": float(self.delta_spent_),
            "rho": float(self.rho_total_),
            "unit": "one record, every value of it and its label (added or removed)",
            "bounds": bounds,
            "public": [*self.PUBLIC[:-1], f"the number of records ({self.n_records_}: the synthetic table has as "
                       "many rows)"],
            "not_covered": [],
            "noise": "OpenDP's cryptographically secure generator (no seed repeats it)",
        }
