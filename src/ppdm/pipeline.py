"""Library entry points: every CLI command is a thin shell over one function here.

``perturb`` reads a table, resolves the column roles, fits the preprocessing and the mechanism,
releases the table in original units and writes it (and, on request, the secret state) atomically.
``evaluate`` compares an original and a release. The pieces both share with the other execution paths
(Dask, streams, the release sweep) live in :mod:`ppdm.flow`; they are re-exported here.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm import registry
from ppdm.data.io import check_output_path, output_lock, read_table, write_table
from ppdm.data.preprocess import Scaler
from ppdm.data.schema import resolve_schema
from ppdm.exceptions import InputError, ParameterError
from ppdm.flow.arrays import EVALUATE_COPIES, PERTURB_COPIES, check_magnitude, perturb_array
from ppdm.flow.artifacts import (
    PerturbResult,
    align_with_state,
    identity_summary,
    load_release_state,
    save_release_state,
    wrap_partition,
)
from ppdm.flow.tables import align_tables, column_re, sample_rows
from ppdm.metrics.value import relative_error
from ppdm.utils.validation import check_choice

__all__ = ["PerturbResult", "perturb", "perturb_array", "evaluate", "align_tables", "sample_rows",
           "save_release_state", "load_release_state", "align_with_state", "check_magnitude", "dims_sweep"]

PathLike = str | os.PathLike[str]


def perturb(
    source: PathLike | pd.DataFrame | np.ndarray,
    *,
    method: str = "svd",
    params: dict[str, Any] | None = None,
    id: str | None = None,
    label: str | None = None,
    columns: Sequence[str] | None = None,
    drop: Sequence[str] = (),
    drop_other: bool = False,
    preprocess: str = "zscore",
    release_units: str = "original",
    partition_rows: str | None = None,
    partition_columns: str | None = None,
    output: PathLike | None = None,
    state: PathLike | None = None,
    force: bool = False,
    seed: int | None = None,
    sep: str | None = None,
    backend: str = "numpy",
    scheduler: str | None = None,
    keep_ids: bool = False,
    escape_formulas: bool = False,
) -> PerturbResult:
    """Release a table with one mechanism.

    Parameters
    ----------
    source : path, DataFrame or ndarray
    method : str
        A registered mechanism name (``ppdm.registry.names()``).
    params : dict
        Constructor parameters of the mechanism, e.g. ``{"rank": 4}``.
    id, label, columns, drop, drop_other
        Column roles, see :func:`ppdm.data.resolve_schema`.
    preprocess : {'none', 'zscore', 'range', 'minshift', 'nonneg'}, default='zscore'
    release_units : {'original', 'preprocessed'}, default='original'
    partition_rows, partition_columns : str, optional
        Distort only a block: a leading count, or comma-separated record ids / column names. Wraps the
        mechanism in a structural partition (P1 rows, P2 columns, P3 both).
    output, state : path, optional
        Where to write the release and the secret state (owner-only); nothing is written otherwise.
    force : bool
        Overwrite existing outputs.
    seed : int or None
        None (default): the random draws come from fresh operating-system entropy, stored only in the
        state file (the release's key). An integer makes the run repeatable, and the release undoable by
        anyone who knows or guesses it (the summary says so).
    backend : {'numpy', 'dask'}, default='numpy'
        ``'dask'`` releases partition by partition (see :mod:`ppdm.backends`); ``output`` is then a
        directory of Parquet files.
    scheduler : str, optional
        Dask scheduler address (``tcp://host:8786``); default a local cluster on 127.0.0.1.
    escape_formulas : bool, default=False
        Prefix passed-through text cells that a spreadsheet would run as formulas (``=``, ``+``, ``-``, ``@``)
        with a single quote; without it they are counted in the summary.
    keep_ids : bool, default=False
        Publish the original ids in the original row order (a linkable layout for releases that stay
        inside the organisation). By default ids are replaced by random pseudonyms and rows are shuffled;
        the mapping is kept in the state file only.
    """
    from ppdm.keys import MECHANISM_STREAM, hide_identity, release_key, warn_known

    params = dict(params or {})
    if "random_state" in params:
        # a random_state given as a parameter is a seed like any other: known, and never echoed
        seed = params.pop("random_state")
    key = release_key(seed)
    warn_known(key)
    if backend != "numpy" or scheduler is not None:
        from ppdm.backends import check_backend, load

        if check_backend(backend) == "numpy":
            raise ParameterError("--scheduler applies to the dask backend; add --backend dask")
        if getattr(registry.get(method).load(), "_releases_table", False):
            raise ParameterError(f"method '{method}' synthesises the whole table from its marginals in memory; "
                                 "leave out --backend dask")
        return load(backend).perturb(  # type: ignore[no-any-return]
            source, method=method, params=params, id=id, label=label, columns=columns, drop=drop,
            drop_other=drop_other, preprocess=preprocess, release_units=release_units,
            partition_rows=partition_rows, partition_columns=partition_columns, output=output, state=state,
            force=force, seed=key.seed(MECHANISM_STREAM), sep=sep, scheduler=scheduler, key=key, keep_ids=keep_ids)
    inputs = [source] if isinstance(source, (str, os.PathLike)) else []
    out_path = check_output_path(output, inputs=inputs, force=force) if output is not None else None
    state_path = check_output_path(state, inputs=inputs, force=force, what="state file") if state else None
    if out_path is not None and state_path is not None and out_path.resolve() == state_path.resolve():
        raise ParameterError("the release and the state file must be different paths")
    # one writer at a time per output set (locks on the resolved real paths)
    with output_lock(out_path, state_path):
        t0 = time.perf_counter()
        df = read_table(source, sep=sep)
        entry = registry.get(method)
        schema = resolve_schema(df, columns=columns, id=id, label=label, drop=drop, drop_other=drop_other,
                                allow_categorical=entry.categorical)
        mech = registry.build(method, params, random_state=key.seed(MECHANISM_STREAM))
        from ppdm.utils.memory import check_dense

        # the numeric block, its scaled copy, the release, its original-units copy and the output frame
        check_dense(len(df), len(schema.released), PERTURB_COPIES, f"releasing {len(df)} x {len(schema.released)} "
                    "in memory", "use --backend dask (releases partition by partition; backend='dask' in Python)")
        from ppdm.flow.synthesis import release_whole_table, releases_table

        out_df = None
        if releases_table(mech):
            # a synthesiser of the whole record releases every column, the label included, in its type (see
            # ppdm.flow.synthesis); the id is replaced by pseudonyms below
            if partition_rows is not None or partition_columns is not None:
                raise ParameterError(f"method '{method}' synthesises whole records; it cannot be partitioned")
            out_df, schema = release_whole_table(df, mech, id=id, label=label, columns=columns, drop=drop)
            X = released = re = None
            n_out, m_out = len(out_df), len(schema.released) + (schema.label is not None)
            scaler = Scaler("none").fit(np.zeros((2, 1)))
        elif entry.categorical and not all(pd.api.types.is_numeric_dtype(df[c]) for c in schema.released):
            # categorical/mixed input: the mechanism works on the frame (its dissimilarity scales the columns)
            if partition_rows is not None or partition_columns is not None:
                raise ParameterError(f"method '{method}' cannot be partitioned when categorical columns are released")
            X = None
            released = np.asarray(mech.fit_transform(df[list(schema.released)].reset_index(drop=True)))
            scaler = Scaler("none").fit(np.zeros((2, 1)))
        else:
            X = schema.matrix(df)
            if partition_rows is not None or partition_columns is not None:
                mech = wrap_partition(mech, df, schema, partition_rows, partition_columns)
            y = df[schema.label].to_numpy() if schema.label is not None else None
            released, scaler = perturb_array(X, mech, preprocess=preprocess, release_units=release_units, y=y)
        if out_df is None:
            if not np.isfinite(released).all():
                raise InputError("the release has non-finite values (the input is too close to overflow); rescale it")
            same_shape = X is not None and released.shape == X.shape
            n_out, m_out = released.shape
            re = relative_error(X, released) if same_shape else None
            if same_shape:
                out_df = schema.assemble(df, released)
            else:
                # dimension-changing mechanisms (NMDS, projections to p columns) release new columns
                names = list(mech.get_feature_names_out()) if hasattr(mech, "get_feature_names_out") else []
                if len(names) != released.shape[1] or any(n in schema.released for n in names):
                    names = [f"d{k + 1}" for k in range(released.shape[1])]
                out_df = schema.assemble_new(df, released, [str(n) for n in names])
        del X, released  # the frame holds the release now: a large table is shuffled with one copy alive
        out_df, identity = hide_identity(out_df, schema.id, key, keep_ids=keep_ids)
        from ppdm.data import formulas

        risky = formulas.formula_cells(out_df, [c for c in out_df.columns if c not in schema.released])
        if risky and escape_formulas:
            out_df = formulas.escape_formulas(out_df, list(risky))
        summary = {
            "method": method,
            "key": key.describe(),
            "identity": identity_summary(identity, schema.id),
            "n_rows": int(n_out),
            "n_released_columns": int(m_out),
            "preprocess": preprocess,
            "seconds": time.perf_counter() - t0,
        }
        if risky:
            summary["formula_cells"] = {"columns": risky, "escaped": bool(escape_formulas)}
        if re is not None:
            summary["re"] = 0.0 if np.isnan(re) else re  # an all-zero table: nothing to distort
        for attr in ("stress_", "linear_leak_"):
            if hasattr(mech, attr):
                summary[attr.rstrip("_")] = getattr(mech, attr)
        if releases_table(mech):
            summary["guarantee"] = mech.guarantee()
        # both written in full before either replaces its predecessor, the state (the key) last: a run that
        # fails leaves the earlier release and its state as they were
        from ppdm.data.io import publish_together, table_format

        writes: list[tuple[Path, Any]] = []
        if out_path is not None:
            writes.append((out_path, lambda p: write_table(out_df, p, fmt=table_format(out_path))))
        if state_path is not None:
            writes.append((state_path, lambda p: save_release_state(p, mech, scaler, schema, method=method, key=key,
                                                                     identity=identity)))
        publish_together(writes)
        return PerturbResult(out_df, mech, scaler, schema, summary, out_path, state_path)


# --------------------------------------------------------------------------------------- evaluate


def evaluate(
    original: PathLike | pd.DataFrame,
    release: PathLike | pd.DataFrame,
    *,
    id: str | None = None,
    label: str | None = None,
    columns: Sequence[str] | None = None,
    rank_mode: str = "sort_index",
    normalize: str | None = None,
    utility: Sequence[str] = ("kmeans", "svm"),
    max_pairs: int = 2_000_000,
    seed: int = 0,
    sep: str | None = None,
    tests: bool = False,
    sample: int | None = None,
    state: PathLike | None = None,
) -> dict[str, Any]:
    """Distortion and utility of a release against its original.

    ``state`` (the release's state file) aligns a pseudonymous, shuffled release with its original.

    Returns a JSON-able dict: ``value`` (RE, RP, RK, CP, CK), ``pattern`` (DistVal, DistMaintain,
    CorrVal, CorrMaintain; sampled above ``max_pairs`` pairs, and it says so) and ``utility``
    (original vs release for each requested measure, when a label is given).

    ``utility`` may name ``suite`` (or ``all`` = kmeans, svm and suite): the full utility suite of
    :func:`ppdm.metrics.utility_suite.utility_suite` (k-NN, four SVM kernels, five clusterings with VI,
    ARI, NMI, F-measure and silhouette, neighbourhood preservation, class compactness); its pairs are added
    to ``utility`` and its details to ``utility_suite``. ``tests`` (which implies ``suite``) adds ``tests``:
    paired t-tests of the repeated trials (original vs release).

    ``sample`` evaluates a seeded sample of that many released rows (matched in the original by id,
    else by position); the result says so under ``sample``.
    """
    from ppdm.metrics import kmeans_accuracy, pattern_metrics, svm_accuracy, value_metrics
    from ppdm.utils.memory import check_dense, rows_that_fit

    orig_df = read_table(original, sep=sep)
    rel_df = align_with_state(orig_df, read_table(release, sep=sep), state, id)
    n_all = len(rel_df)
    orig_df, rel_df = sample_rows(orig_df, rel_df, sample, by_id=id is not None, seed=seed)
    n_cols = len(columns) if columns is not None else rel_df.shape[1]
    check_dense(len(rel_df), n_cols, EVALUATE_COPIES, f"evaluating {len(rel_df)} x {n_cols} in memory",
                f"evaluate a sample of the rows: --sample {rows_that_fit(n_cols, EVALUATE_COPIES)}")
    A, B, y, cols = align_tables(orig_df, rel_df, id=id, label=label, columns=columns)
    same_cols = [c for c in orig_df.columns if c in rel_df.columns and c not in cols and c not in (id, label)]
    result: dict[str, Any] = {
        "n_rows": int(A.shape[0]),
        "columns": cols,
        "passed_through": same_cols,
        "rank_mode": rank_mode,
        "value": value_metrics(A, B, rank_mode),
        "pattern": pattern_metrics(A, B, normalize=normalize, max_pairs=max_pairs, random_state=seed),
        "per_column_re": {c: column_re(A[:, j], B[:, j]) for j, c in enumerate(cols)},
    }
    if len(rel_df) < n_all:
        result["sample"] = f"seeded sample of {len(rel_df)} of {n_all} rows"
    names = [u for n in utility for u in (("kmeans", "svm", "suite") if n == "all" else (n,))]
    if tests and "suite" not in names:
        names.append("suite")  # the paired tests run on the suite's repeated trials
    if y is not None:
        util: dict[str, Any] = {}
        for name in names:
            check_choice(name, "utility", ("kmeans", "svm", "suite"))
            if name == "suite":
                from ppdm.metrics.utility_suite import evaluation_entries

                pairs, details, sig = evaluation_entries(A, B, y, random_state=seed, tests=tests)
                util.update(pairs)
                result["utility_suite"] = details
                if sig is not None:
                    result["tests"] = sig
                continue
            fn = kmeans_accuracy if name == "kmeans" else svm_accuracy
            kw = {} if name == "kmeans" else {"random_state": seed}
            util[f"{name}_pct"] = {"original": fn(A, y, **kw), "release": fn(B, y, **kw)}
        result["utility"] = util
    return result


# ------------------------------------------------------------------------------------ NMDS dimension


def dims_sweep(source: str | os.PathLike[str] | pd.DataFrame, *, dissimilarity: str = "euclidean",
               max_dims: int | None = None, max_rows: int = 600, plot: str | os.PathLike[str] | None = None,
               id: str | None = None, label: str | None = None, drop: Sequence[str] = (), seed: int = 0,
               force: bool = False, sep: str | None = None) -> dict[str, Any]:
    """Stress-vs-p sweep of a table (z-scored numeric columns, or the frame for gower/huang) + PNG."""
    import numpy as np

    from ppdm.data.preprocess import Scaler
    from ppdm.distances.pairwise import MIXED
    from ppdm.mds.dims import plot_sweep, stress_sweep
    from ppdm.mechanisms.nmds import NonMetricMDS

    png = None
    if isinstance(source, (str, os.PathLike)):
        png = Path(plot) if plot is not None else Path(str(source) + ".mds-dims.png")
        png = check_output_path(png, inputs=[source], force=force, what="plot")
    elif plot is not None:
        png = check_output_path(Path(plot), force=force, what="plot")
    if max_dims is not None and int(max_dims) < 1:
        raise ParameterError(f"max_dims={max_dims} must be at least 1; give --max-dims 1 or more")
    df = read_table(source, sep=sep)
    schema = resolve_schema(df, id=id, label=label, drop=drop, allow_categorical=dissimilarity in MIXED)
    m = len(schema.released)
    top = max(1, m - 1) if max_dims is None else max(1, int(max_dims))
    dims = list(range(1, top + 1))
    rows = min(len(df), int(max_rows))
    from ppdm.utils.memory import check_memory

    # one NMDS of the sample: ~20 bytes a pair, plus an n x n double-centred matrix for mixed dissimilarities
    check_memory(20.0 * rows * (rows - 1) / 2 + (16.0 * rows * rows if dissimilarity != "euclidean" else 0.0),
                 f"the stress sweep on {rows} rows", "sample fewer rows: --max-rows 600 (max_rows=600 in Python)")
    frame = df[list(schema.released)].reset_index(drop=True)
    check_magnitude(frame.select_dtypes("number").to_numpy(dtype=np.float64))
    if dissimilarity in MIXED:
        res = stress_sweep(None, dims, estimator=NonMetricMDS, dissimilarity=dissimilarity, data=frame,
                           max_rows=max_rows,
                           random_state=seed)
    else:
        X = schema.matrix(df)
        Z = Scaler("zscore").fit_transform(X)
        res = stress_sweep(np.asarray(Z), dims, estimator=NonMetricMDS, dissimilarity=dissimilarity,
                           max_rows=max_rows,
                           random_state=seed)
    res["default"] = max(1, m - 1)
    res["plot"] = str(plot_sweep(res, png)) if png is not None else None
    return res
