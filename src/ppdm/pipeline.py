"""Library entry points: every CLI command is a thin shell over one function here.

``perturb`` reads a table, resolves the column roles, fits the preprocessing and the mechanism,
releases the table in original units and writes it (and, on request, the secret state) atomically.
``evaluate`` compares an original and a release.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm import registry
from ppdm.data.io import check_output_path, output_lock, read_table, write_table
from ppdm.data.preprocess import PREPROCESSING, Scaler
from ppdm.data.schema import Schema, resolve_schema
from ppdm.exceptions import InputError, ParameterError
from ppdm.utils.validation import check_choice

__all__ = ["PerturbResult", "perturb", "perturb_array", "evaluate", "align_tables", "sample_rows",
           "save_release_state", "load_release_state"]

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class PerturbResult:
    """What ``perturb`` produced: the release and the fitted pieces (which hold key material)."""

    release: pd.DataFrame
    mechanism: Any
    scaler: Scaler
    schema: Schema
    summary: dict[str, Any] = field(default_factory=dict)
    output: Path | None = None
    state: Path | None = None


def perturb_array(
    X: np.ndarray,
    mechanism: Any,
    *,
    preprocess: str = "zscore",
    release_units: str = "original",
    y: np.ndarray | None = None,
) -> tuple[np.ndarray, Scaler]:
    """Release a numeric array: preprocess, fit the mechanism, map back to original units.

    ``y`` (the label) goes to mechanisms that use it (``_uses_label``: microaggregation within classes).

    Mechanisms whose release is linear in the preprocessed data (thin SVD, rotation) take a fused
    path: the scaling is folded into one ``m x m`` matrix, so the data are read twice (Gram matrix,
    then one matrix product) and never copied in full.
    """
    check_choice(preprocess, "preprocess", PREPROCESSING)
    check_choice(release_units, "release_units", ("original", "preprocessed"))
    X = np.asarray(X, dtype=np.float64)
    check_magnitude(X)
    from ppdm.mechanisms.svd import ThinSVD

    n, m = X.shape
    if (
        isinstance(mechanism, ThinSVD)
        and ThinSVD.resolved_solver(n, m, int(mechanism.rank), mechanism.solver) == "gram"
        and n >= m
    ):
        from ppdm.utils.validation import check_rank

        check_rank(mechanism.rank, n, m)
        G, scaler = _scaled_gram(X, preprocess)
        mechanism.fit_from_gram(G, n)
        return _affine_release(X, mechanism.linear_operator(), scaler, release_units), scaler
    scaler = Scaler(preprocess).fit(X)
    Z = scaler.transform(X)
    out = mechanism.fit_transform(Z, y) if getattr(mechanism, "_uses_label", False) else mechanism.fit_transform(Z)
    if release_units == "original" and out.shape[1] == m:
        out = scaler.inverse_transform(out, copy=False)
        block = getattr(mechanism, "distorted_block", None)
        if block is not None:
            # cells outside the distorted block are released exactly as given (no scaling round trip)
            rows, cols = block()
            exact = X.copy()
            exact[np.ix_(rows, cols)] = out[np.ix_(rows, cols)]
            out = exact
    return out, scaler


#: dense n x m float64 working arrays a release holds at its peak (see the guard in ``perturb``)
_PERTURB_COPIES = 5
#: dense n x m working arrays of ``evaluate``: both tables, their rank arrays, normalised copies
_EVALUATE_COPIES = 8

# squares of values must stay finite (Gram matrices, norms): 1e150^2 = 1e300 < 1.8e308
_MAX_MAGNITUDE = 1e150


def check_magnitude(X: np.ndarray) -> None:
    """Refuse values so large that squaring them (norms, Gram matrices) would overflow."""
    if X.size and max(float(X.max()), -float(X.min())) > _MAX_MAGNITUDE:
        raise InputError(
            "values beyond 1e150 would overflow the computation; rescale those columns (other units) first"
        )


def _scaled_gram(X: np.ndarray, preprocess: str) -> tuple[np.ndarray, Scaler]:
    """Gram matrix of the preprocessed data without materialising it; z-score statistics come free.

    For z-scoring, the sample variances are the diagonal of the centred Gram matrix divided by n - 1,
    which saves a full pass (and a full temporary) over the data.
    """
    from ppdm.utils.linalg import gram

    n = X.shape[0]
    if preprocess == "zscore":
        mu = X.mean(axis=0)
        G = gram(X, offset=mu)
        sd = np.sqrt(np.diag(G) / max(n - 1, 1))
        sd = np.where((sd == 0) | ~np.isfinite(sd), 1.0, sd)
        G /= np.outer(sd, sd)
        return G, Scaler.from_stats("zscore", mu, sd)
    scaler = Scaler(preprocess).fit(X)
    off = scaler.offset_ if np.any(scaler.offset_ != 0) else None
    return gram(X, offset=off, scale=scaler.scale_), scaler


def _affine_release(X: np.ndarray, P: np.ndarray, scaler: Scaler, units: str) -> np.ndarray:
    """``((X - off) / sc) @ P`` mapped back with ``* sc + off``, as one product ``X @ M + b``."""
    off, sc = scaler.offset_, scaler.scale_
    if units == "original":
        M = (P / sc[:, None]) * sc[None, :]
        b = off - off @ M
    else:
        M = P / sc[:, None]
        b = -(off / sc) @ P
    out = X @ M
    out += b
    return out


def _positions(spec: str | None, labels: Sequence[object], what: str) -> int | list[int] | None:
    """A block given as a count ('467') or as comma-separated names/ids -> count or positions."""
    if spec is None:
        return None
    spec = spec.strip()
    if spec.isdigit() and spec not in {str(x) for x in labels}:
        return int(spec)
    index = {str(v): i for i, v in enumerate(labels)}
    pos = []
    for token in (t.strip() for t in spec.split(",") if t.strip()):
        if token not in index:
            raise InputError(f"{what} '{token}' is not in the table; check the names (or give a count)")
        pos.append(index[token])
    return pos


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
        check_dense(len(df), len(schema.released), _PERTURB_COPIES, f"releasing {len(df)} x {len(schema.released)} "
                    "in memory", "use --backend dask (releases partition by partition; backend='dask' in Python)")
        if entry.categorical and not all(pd.api.types.is_numeric_dtype(df[c]) for c in schema.released):
            # categorical/mixed input: the mechanism works on the frame (its dissimilarity scales the columns)
            if partition_rows is not None or partition_columns is not None:
                raise ParameterError(f"method '{method}' cannot be partitioned when categorical columns are released")
            X = None
            released = np.asarray(mech.fit_transform(df[list(schema.released)].reset_index(drop=True)))
            scaler = Scaler("none").fit(np.zeros((2, 1)))
        else:
            X = schema.matrix(df)
            if partition_rows is not None or partition_columns is not None:
                mech = _wrap_partition(mech, df, schema, partition_rows, partition_columns)
            y = df[schema.label].to_numpy() if schema.label is not None else None
            released, scaler = perturb_array(X, mech, preprocess=preprocess, release_units=release_units, y=y)
        if not np.isfinite(released).all():
            raise InputError("the release has non-finite values (the input is too close to overflow); rescale it")
        same_shape = X is not None and released.shape == X.shape
        if same_shape:
            out_df = schema.assemble(df, released)
        else:
            # dimension-changing mechanisms (NMDS, projections to p columns) release new columns
            names = list(mech.get_feature_names_out()) if hasattr(mech, "get_feature_names_out") else []
            if len(names) != released.shape[1] or any(n in schema.released for n in names):
                names = [f"d{k + 1}" for k in range(released.shape[1])]
            out_df = schema.assemble_new(df, released, [str(n) for n in names])
        out_df, identity = hide_identity(out_df, schema.id, key, keep_ids=keep_ids)
        from ppdm.data import formulas

        risky = formulas.formula_cells(out_df, [c for c in out_df.columns if c not in schema.released])
        if risky and escape_formulas:
            out_df = formulas.escape_formulas(out_df, list(risky))
        summary = {
            "method": method,
            "key": key.describe(),
            "identity": _identity_summary(identity, schema.id),
            "n_rows": int(released.shape[0]),
            "n_released_columns": int(released.shape[1]),
            "preprocess": preprocess,
            "seconds": time.perf_counter() - t0,
        }
        if risky:
            summary["formula_cells"] = {"columns": risky, "escaped": bool(escape_formulas)}
        if same_shape:
            summary["re"] = float(np.linalg.norm(X - released) / np.linalg.norm(X)) if np.linalg.norm(X) > 0 else 0.0
        for attr in ("stress_", "linear_leak_"):
            if hasattr(mech, attr):
                summary[attr.rstrip("_")] = getattr(mech, attr)
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


def _identity_summary(identity: Any, id_column: str | None) -> dict[str, Any]:
    if identity.kept:
        return {"layout": "linkable: original ids in the original row order (--keep-ids); every row is linkable "
                          "to its record"}
    return {"layout": "rows shuffled" + (f", ids in '{id_column}' replaced by keyed pseudonyms"
                                         if id_column is not None else "")
            + "; the mapping is in the state file only"}


def _wrap_partition(mech: Any, df: pd.DataFrame, schema: Schema, rows: str | None, cols: str | None) -> Any:
    from ppdm.mechanisms.partition import StructuralPartition

    ids = df[schema.id].tolist() if schema.id else [str(i + 1) for i in range(len(df))]
    r = _positions(rows, ids, "record")
    c = _positions(cols, list(schema.released), "column")
    scheme = "both" if r is not None and c is not None else ("rows" if r is not None else "columns")
    return StructuralPartition(mech, scheme=scheme, rows=r, columns=c)


def save_release_state(path: PathLike, mech: Any, scaler: Scaler, schema: Schema, *, method: str,
                       key: Any, identity: Any = None) -> Path:
    """Write the mechanism, preprocessing, schema, key and identity mapping to an owner-only state file."""
    from ppdm import __version__
    from ppdm.state import save_state

    mh, ma = mech.to_state()
    sh, sa = scaler.to_state()
    # the key's entropy is a 128-bit integer: JSON keeps it exactly as a string
    header = {"method": method, "key": {"entropy": str(key.entropy), "known": bool(key.known)},
              "ppdm_version": __version__, "schema": schema.to_dict(), "mechanism": mh, "preprocess": sh,
              "identity": {"kept": bool(identity.kept) if identity is not None else False}}
    arrays = {f"mechanism.{k}": v for k, v in ma.items()} | {f"preprocess.{k}": v for k, v in sa.items()}
    if identity is not None:
        arrays |= identity.to_arrays()
    return save_state(path, "release", header, arrays)


def load_release_state(path: PathLike) -> tuple[Any, Scaler, Schema, dict[str, Any]]:
    from ppdm.state import load_state

    header, arrays = load_state(path, "release")
    cls = registry.class_by_name(header["mechanism"]["class"])
    mech = cls.from_state(header["mechanism"], {k[10:]: v for k, v in arrays.items() if k.startswith("mechanism.")})
    scaler = Scaler.from_state(header["preprocess"], {k[11:]: v for k, v in arrays.items()
                                                      if k.startswith("preprocess.")})
    return mech, scaler, Schema.from_dict(header["schema"]), header


def align_with_state(original: pd.DataFrame, release: pd.DataFrame, state: PathLike | None,
                     id: str | None) -> pd.DataFrame:
    """The release in the original's row order, with the original ids, from its state (key and mapping).

    Without a state the release is returned as it is (a linkable layout, or another tool's release).
    """
    if state is None:
        return release
    from ppdm.keys import Identity, ReleaseKey, restore_order
    from ppdm.state import load_state

    header, arrays = load_state(state)
    info = header.get("key")
    kept = bool(header.get("identity", {}).get("kept", True))
    if header.get("kind") == "stream":
        # a stream's releases are aligned through their pseudonyms (one row order per batch)
        st = header.get("stream", {})
        info, kept = st.get("key"), bool(st.get("keep_ids", True))
        arrays = {}
    if not isinstance(info, dict) or "entropy" not in info:
        return release  # a state written before releases were pseudonymous: the layout is linkable
    if kept:
        return release
    key = ReleaseKey(int(info["entropy"]), bool(info.get("known", False)))
    identity = Identity.from_arrays(arrays, kept=False)
    ids = original[id] if id is not None and id in original.columns else None
    return restore_order(release, identity, key, original_ids=ids, id_column=id)


# --------------------------------------------------------------------------------------- evaluate


def align_tables(
    original: pd.DataFrame,
    release: pd.DataFrame,
    *,
    id: str | None = None,
    label: str | None = None,
    columns: Sequence[str] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, list[str]]:
    """Match the rows (by id, else by position) and the released columns of two tables.

    Returns the original block, the released block, the labels (or None) and the column names.
    """
    for name, df in (("original", original), ("release", release)):
        for flag, c in (("--id", id), ("--label", label)):
            if c is not None and c not in df.columns:
                raise InputError(f"{flag} column '{c}' is missing from the {name} table")
    if id is not None:
        if original[id].duplicated().any():
            raise InputError(f"id column '{id}' has duplicate values in the original; ids must be unique")
        pos = pd.Index(original[id]).get_indexer(release[id])
        if (pos < 0).any():
            raise InputError(f"{int((pos < 0).sum())} release row(s) have ids not in the original; check --id")
        original = original.iloc[pos].reset_index(drop=True)
    elif len(original) != len(release):
        raise InputError(
            f"original has {len(original)} rows and release {len(release)}; pass --id to match rows by id"
        )
    skip = {c for c in (id, label) if c is not None}
    if columns is None:
        columns = [c for c in release.columns if c in original.columns and c not in skip
                   and pd.api.types.is_numeric_dtype(release[c]) and pd.api.types.is_numeric_dtype(original[c])]
    if not columns:
        raise InputError("the tables share no numeric column to compare; check the files or --columns")
    from ppdm.data.schema import numeric_matrix

    A = numeric_matrix(original, columns)
    B = numeric_matrix(release, columns)
    y = original[label].to_numpy() if label is not None else None
    return A, B, y, list(columns)


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
    check_dense(len(rel_df), n_cols, _EVALUATE_COPIES, f"evaluating {len(rel_df)} x {n_cols} in memory",
                f"evaluate a sample of the rows: --sample {rows_that_fit(n_cols, _EVALUATE_COPIES)}")
    A, B, y, cols = align_tables(orig_df, rel_df, id=id, label=label, columns=columns)
    same_cols = [c for c in orig_df.columns if c in rel_df.columns and c not in cols and c not in (id, label)]
    result: dict[str, Any] = {
        "n_rows": int(A.shape[0]),
        "columns": cols,
        "passed_through": same_cols,
        "rank_mode": rank_mode,
        "value": value_metrics(A, B, rank_mode),
        "pattern": pattern_metrics(A, B, normalize=normalize, max_pairs=max_pairs, random_state=seed),
        "per_column_re": {c: _col_re(A[:, j], B[:, j]) for j, c in enumerate(cols)},
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


def sample_rows(original: pd.DataFrame, release: pd.DataFrame, size: int | None, *, by_id: bool,
                seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A seeded sample of ``size`` released rows and, when rows match by position, the same original rows."""
    if size is None:
        return original, release
    from ppdm.utils.validation import check_int

    size = check_int(size, "sample", low=2)
    if size >= len(release) or (not by_id and len(original) != len(release)):
        return original, release  # nothing to sample, or rows that cannot be matched (align_tables says so)
    idx = np.sort(np.random.default_rng(seed).choice(len(release), size, replace=False))
    release = release.iloc[idx].reset_index(drop=True)
    if not by_id:
        original = original.iloc[idx].reset_index(drop=True)
    return original, release


def _col_re(a: np.ndarray, b: np.ndarray) -> float:
    den = float(np.linalg.norm(a))
    return float(np.linalg.norm(a - b) / den) if den > 0 else float(np.linalg.norm(a - b))
