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
from ppdm.data.columns import (
    announce_columns,
    check_cells,
    dropped_columns,
    infer_columns,
    is_whole_table,
    parse_roles,
)
from ppdm.data.io import check_output_path, check_table_output, output_set, read_table
from ppdm.data.preprocess import PREPROCESSING, Scaler
from ppdm.data.schema import resolve_schema, warn_passthrough
from ppdm.exceptions import InputError, ParameterError
from ppdm.flow.arrays import EVALUATE_COPIES, PERTURB_COPIES, check_magnitude, perturb_array
from ppdm.flow.artifacts import (
    PerturbResult,
    align_with_state,
    identity_summary,
    load_release_state,
    publish_release,
    save_release_state,
    wrap_partition,
)
from ppdm.flow.tables import align_tables, column_re, sample_rows
from ppdm.mechanisms.base import keep_key_secret
from ppdm.metrics.value import relative_error
from ppdm.utils.validation import check_choice

__all__ = ["PerturbResult", "perturb", "perturb_array", "evaluate", "align_tables", "sample_rows",
           "save_release_state", "load_release_state", "align_with_state", "check_magnitude", "dims_sweep",
           "publish_release"]

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
    roles: str | dict[str, str] | None = None,
) -> PerturbResult:
    """Release a table with one mechanism.

    Its columns are treated as ``ppdm release`` treats them (:func:`ppdm.data.columns.infer_columns`): free
    text and columns that name each row are dropped (stderr says which), unless ``roles`` keeps them. A table
    of more than continuous numbers (categories, integers, dates, gaps) is released whole through the codec's
    design (:mod:`ppdm.flow.whole`), unless ``columns``, a partition or a mechanism of mixed data (NMDS with a
    mixed dissimilarity) names what it perturbs.

    Parameters
    ----------
    source : path, DataFrame or ndarray
    method : str
        A registered mechanism name (``ppdm.registry.names()``).
    params : dict
        Constructor parameters of the mechanism, e.g. ``{"rank": 4}``.
    id, label, columns, drop, drop_other, roles
        Column roles, see :func:`ppdm.data.resolve_schema` and :func:`ppdm.data.columns.infer_columns`
        (``roles``: ``"notes=other,age=quasi-identifier"``).
    preprocess : {'none', 'zscore', 'range', 'minshift', 'nonneg'}, default='zscore'
        Of the numbers; a table released whole is scaled by its design (a ``minshift`` or ``nonneg`` shift is
        applied on top).
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
    check_table_output(output)
    inputs = [("input table", source)] if isinstance(source, (str, os.PathLike)) else []
    # guarded (no output is an input), locked (one writer at a time) and recovered (what a killed run left)
    with output_set([("output", output), ("state file", state or None)], inputs, force=force) as (out_path,
                                                                                                   state_path):
        t0 = time.perf_counter()
        df = read_table(source, sep=sep)
        from ppdm.data.fingerprint import table_fingerprint

        read_as = table_fingerprint(df) if state_path is not None else None
        entry = registry.get(method)
        mech = keep_key_secret(registry.build(method, params, random_state=key.seed(MECHANISM_STREAM)))
        check_choice(preprocess, "preprocess", PREPROCESSING)
        check_choice(release_units, "release_units", ("original", "preprocessed"))
        # every command takes its columns' treatment from the schema: free text and identifiers are dropped
        # (stderr says which and why), and a table of more than continuous numbers is released whole
        infos = infer_columns(df, id=id, label=label, drop=drop, roles=parse_roles(roles))
        check_cells(df, infos)
        partitioned = partition_rows is not None or partition_columns is not None
        frame_mechanism = entry.categorical and any(
            i.treatment == "perturbed" and i.type not in ("continuous", "integer") for i in infos)
        from ppdm.flow.synthesis import release_whole_table, releases_table

        if releases_table(mech):
            # a synthesiser of the whole record releases every column, the label included, in its type (see
            # ppdm.flow.synthesis); the id is replaced by pseudonyms below
            if partitioned:
                raise ParameterError(f"method '{method}' synthesises whole records; it cannot be partitioned")
            out_df, schema = release_whole_table(df, mech, id=id, label=label, columns=columns,
                                                 drop=dropped_columns(infos, drop))
            re = None
            numeric_out = [c for c in schema.released if pd.api.types.is_numeric_dtype(out_df[c])]
            n_out, m_out = len(out_df), len(schema.released) + (schema.label is not None)
            scaler = Scaler("none").fit(np.zeros((2, 1)))
        elif columns is None and not partitioned and not frame_mechanism and is_whole_table(df, infos):
            if release_units != "original":
                raise ParameterError("--release-units preprocessed applies to tables of continuous numbers; this "
                                     "table is released whole (categories, integers, dates or gaps): drop the option")
            if drop_other:
                raise ParameterError("--drop-other applies with --columns; a table released whole keeps no other "
                                     "column")
            out_df, schema, scaler, re, numeric_out = _perturb_whole(df, infos, mech, key, id=id, label=label,
                                                                     preprocess=preprocess)
            n_out, m_out = out_df.shape[0], len(schema.released)
        else:
            out_df, schema, scaler, re, numeric_out, mech = _perturb_numbers(
                df, mech, dropped_columns(infos, drop), method=method, frame_mechanism=frame_mechanism,
                integers=[i.name for i in infos if i.type == "integer"],
                columns=columns, id=id, label=label, drop_other=drop_other, preprocess=preprocess,
                release_units=release_units, partition_rows=partition_rows, partition_columns=partition_columns)
            n_out, m_out = out_df.shape[0], len(numeric_out)
        announce_columns(infos, len(df))  # once the table is accepted: a refusal stays one line
        out_df, identity = hide_identity(out_df, schema.id, key, keep_ids=keep_ids)
        from ppdm.data import formulas

        risky = formulas.formula_cells(out_df, [c for c in out_df.columns if c not in numeric_out])
        if risky and escape_formulas:
            out_df = formulas.escape_formulas(out_df, list(risky))
        summary = {
            "method": method,
            "key": key.describe(kept=state_path is not None),
            "identity": identity_summary(identity, schema.id, kept=state_path is not None),
            "n_rows": int(n_out),
            "n_released_columns": int(m_out),
            "preprocess": preprocess if schema.passthrough or not is_whole_table(df, infos) or columns is not None
            else f"the whole-table design (numbers z-scored, categories one-hot){_shift(preprocess)}",
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
        publish_release(out_df, out_path, state_path, lambda p, fps: save_release_state(
            p, mech, scaler, schema, method=method, key=key, identity=identity, fingerprints=fps), read_as)
        return PerturbResult(out_df, mech, scaler, schema, summary, out_path, state_path)


def _shift(preprocess: str) -> str:
    from ppdm.flow.whole import design_preprocess

    return f", then {preprocess}" if design_preprocess(preprocess) != "none" else ""


def _perturb_whole(df: pd.DataFrame, infos: Any, mech: Any, key: Any, *, id: str | None, label: str | None,
                   preprocess: str) -> tuple[pd.DataFrame, Any, Scaler, float | None, list[str]]:
    """A table of categories, integers, dates or gaps, released whole through the codec's design as ``release``
    releases it (:mod:`ppdm.flow.whole`): the release frame, its schema, scaler, RE and numeric columns."""
    from ppdm.data.codec import TableCodec
    from ppdm.data.schema import check_unique_ids
    from ppdm.flow.whole import release_whole, whole_schema
    from ppdm.keys import MECHANISM_STREAM
    from ppdm.utils.memory import check_dense

    if len(df) < 2:
        raise InputError(f"the table has {len(df)} data row; a release needs at least two rows")
    check_unique_ids(df, id)
    with np.errstate(over="ignore", invalid="ignore"):  # huge values: refused by name just below
        codec = TableCodec(infos).fit(df)
    check_magnitude(codec.numbers(df), codec.numeric_names)
    schema = whole_schema(df, codec, id, label)
    # the design, its release, the decoded columns and the output frame
    check_dense(len(df), codec.width_, PERTURB_COPIES, f"releasing {len(df)} x {codec.width_} (the whole-table "
                "design) in memory", "use ppdm release --backend dask for a table this large")
    y = df[label].to_numpy() if label is not None else None
    done = release_whole(df, schema, codec, mech, preprocess=preprocess, key_seed=key.seed(MECHANISM_STREAM), y=y)
    return done.frame, schema, done.scaler, done.re, done.numeric


def _perturb_numbers(df: pd.DataFrame, mech: Any, dropped: Sequence[str], *, method: str, frame_mechanism: bool,
                     integers: Sequence[str], columns: Sequence[str] | None, id: str | None, label: str | None,
                     drop_other: bool,
                     preprocess: str, release_units: str, partition_rows: str | None, partition_columns: str | None,
                     ) -> tuple[pd.DataFrame, Any, Scaler, float | None, list[str], Any]:
    """The numeric columns released (the named ones, a partition of them, or a frame for a mechanism of mixed
    data), the other kept columns passed through as they are: the release frame, its schema, scaler, RE,
    released columns and the mechanism (wrapped in its partition, if any). Released ``integers`` come back as
    integers within their original range, as the codec decodes them."""
    from ppdm.utils.memory import check_dense

    named = [c for c in columns or () if c in dropped]
    if named:  # a column the schema drops (no values, free text) named to be perturbed
        raise InputError(f"--columns names column '{named[0]}', which cannot be released as it is (no values, or "
                         f"free text: see `ppdm schema`); leave it out of --columns")
    schema = resolve_schema(df, columns=columns, id=id, label=label, drop=dropped, drop_other=drop_other,
                            allow_categorical=frame_mechanism)
    # the numeric block, its scaled copy, the release, its original-units copy and the output frame
    check_dense(len(df), len(schema.released), PERTURB_COPIES, f"releasing {len(df)} x {len(schema.released)} "
                "in memory", "use --backend dask (releases partition by partition; backend='dask' in Python)")
    if frame_mechanism:
        # categorical/mixed input: the mechanism works on the frame (its dissimilarity scales the columns)
        if partition_rows is not None or partition_columns is not None:
            raise ParameterError(f"method '{method}' cannot be partitioned when categorical columns are released")
        X = None
        released = np.asarray(mech.fit_transform(df[list(schema.released)].reset_index(drop=True)))
        scaler = Scaler("none").fit(np.zeros((2, 1)))
    else:
        X = schema.matrix(df)
        check_magnitude(X, schema.released)
        if partition_rows is not None or partition_columns is not None:
            mech = wrap_partition(mech, df, schema, partition_rows, partition_columns)
        y = df[schema.label].to_numpy() if schema.label is not None else None
        released, scaler = perturb_array(X, mech, preprocess=preprocess, release_units=release_units, y=y)
    if not np.isfinite(released).all():
        raise InputError("the release has non-finite values (the input is too close to overflow); rescale it")
    # once the release is made (a refusal stays one line)
    warn_passthrough(schema, "--columns names the columns perturbed" if columns is not None else
                     "a partition perturbs numbers only" if partition_rows or partition_columns else
                     f"{method} perturbs the columns it can read")
    same_shape = X is not None and released.shape == X.shape
    if same_shape and release_units == "original":
        for j, c in enumerate(schema.released):
            if c in integers:  # post-processing, as in the codec: rounded, within the original's range
                lo, hi = np.ceil(X[:, j].min()), np.floor(X[:, j].max())
                released[:, j] = np.clip(np.round(released[:, j]), lo, hi) + 0.0
    re = relative_error(X, released) if same_shape else None
    if same_shape:
        out = schema.assemble(df, released)
        if release_units == "original":
            for c in set(integers) & set(schema.released):
                out[c] = out[c].astype(np.int64)  # written as integers (7, not 7.0)
        return out, schema, scaler, re, list(schema.released), mech
    # dimension-changing mechanisms (NMDS, projections to p columns) release new columns
    names = list(mech.get_feature_names_out()) if hasattr(mech, "get_feature_names_out") else []
    if len(names) != released.shape[1] or any(n in schema.released for n in names):
        names = [f"d{k + 1}" for k in range(released.shape[1])]
    names = [str(n) for n in names]
    return schema.assemble_new(df, released, names), schema, scaler, re, names, mech


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

    Rows are matched through ``state``, else by ``id``, else by position (``rows_matched_by`` says which: a
    release ppdm shuffled needs its ``state``). Columns are matched by name; without ``columns``, the numeric
    columns of one table missing from the other are listed under ``columns_left_out`` (``original`` and
    ``release``): every measure, the original's baselines included, is computed on the common columns.
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
    A, B, y, cols = align_tables(orig_df, rel_df, id=id, label=label, columns=columns, gaps=True)
    A, B, y, left_out = _complete_rows(A, B, y)
    same_cols = [c for c in orig_df.columns if c in rel_df.columns and c not in cols and c not in (id, label)]
    result: dict[str, Any] = {
        "n_rows": int(A.shape[0]),
        "columns": cols,
        "passed_through": same_cols,
        # how the rows were paired: by position, a shuffled release is compared with other people's records
        "rows_matched_by": "state" if state is not None else "id" if id is not None else "position",
        "rank_mode": rank_mode,
        "value": value_metrics(A, B, rank_mode),
        "pattern": pattern_metrics(A, B, normalize=normalize, max_pairs=max_pairs, random_state=seed),
        "per_column_re": {c: column_re(A[:, j], B[:, j]) for j, c in enumerate(cols)},
    }
    if columns is None:
        # columns are matched by name: a dropped or renamed column leaves both tables' measures (the original's
        # baselines included) on the common columns only, which the caller is told by name
        skip = {c for c in (id, label) if c is not None}
        numeric = {name: [c for c in df.columns if c not in skip and pd.api.types.is_numeric_dtype(df[c])]
                   for name, df in (("original", orig_df), ("release", rel_df))}
        other = {"original": rel_df, "release": orig_df}
        gone = {name: [str(c) for c in cs if c not in other[name].columns] for name, cs in numeric.items()}
        if gone["original"] or gone["release"]:
            result["columns_left_out"] = gone
    if len(rel_df) < n_all:
        result["sample"] = f"seeded sample of {len(rel_df)} of {n_all} rows"
    result |= {"left_out": left_out} if left_out else {}
    names = [u for n in utility for u in (("kmeans", "svm", "suite") if n == "all" else (n,))]
    if tests and "suite" not in names:
        names.append("suite")  # the paired tests run on the suite's repeated trials
    if y is not None:
        labelled = pd.notna(y)
        if not labelled.all():
            # a row without a class cannot be scored by a classifier: left out of the class-based utility only
            A, B, y = A[labelled], B[labelled], y[labelled]
            result["left_out"] = left_out | {"without_label": int((~labelled).sum())}
        if len(np.unique(y.astype(str))) < 2:
            raise InputError(f"the label '{label}' has fewer than two classes among the labelled rows; leave "
                             "--label out (the value and pattern measures need none)")
        y = y.astype(str) if y.dtype == object else y
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


def _complete_rows(A: np.ndarray, B: np.ndarray, y: np.ndarray | None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, dict[str, int]]:
    """The rows with no gap in either table's compared columns (a gap has no distance to measure); how many
    were left out, and why."""
    complete = ~(np.isnan(A).any(axis=1) | np.isnan(B).any(axis=1))
    if complete.all():
        return A, B, y, {}
    if complete.sum() < 2:
        raise InputError("fewer than two rows have a value in every compared column of both tables; choose the "
                         "columns to compare with --columns")
    return A[complete], B[complete], None if y is None else y[complete], {"with_gaps": int((~complete).sum())}


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
