"""The stream commands: start a stream, absorb new rows or new columns, show a state (``ppdm stream``)."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.data.columns import numbers_schema
from ppdm.data.io import check_outputs, check_table_output, output_format, read_table
from ppdm.data.outputs import check_disjoint
from ppdm.data.schema import Schema
from ppdm.exceptions import InputError, ParameterError, StateError
from ppdm.mechanisms.incremental import IncrementalSVD
from ppdm.streaming.store import (
    METHODS,
    NMDS_FIXED,
    Stream,
    StreamResult,
    Transaction,
    concat_columns,
    state_lock,
    summary,
    write_table_to,
)
from ppdm.utils.memory import check_dense
from ppdm.utils.validation import check_int

__all__ = ["stream_init", "stream_update", "stream_add_columns", "stream_status", "StreamResult", "state_lock",
           "METHODS"]

PathLike = str | os.PathLike[str]


# ------------------------------------------------------------------------------------------ helpers


def _matrix(df: pd.DataFrame, cols: Sequence[str], what: str) -> np.ndarray:
    """The released columns of a batch as float64 (one row is enough), with one-line errors."""
    from ppdm.data.schema import numeric_matrix

    X = numeric_matrix(df, cols, what=what, min_rows=1)
    from ppdm.flow.arrays import check_magnitude

    check_magnitude(X, cols)
    return X


def _outputs(
    paths: Sequence[tuple[PathLike | None, str]], inputs: Sequence[tuple[str, PathLike]], force: bool
) -> list[Path | None]:
    """The guard of every command (:func:`ppdm.data.io.check_outputs`): no output is an input (the state
    included, for an update), none is named twice, none is replaced without ``force``."""
    return check_outputs([(what, p) for p, what in paths], inputs, force=force)


def _estimator(method: str, rank: int, params: dict[str, Any]) -> Any:
    if method not in METHODS:
        raise ParameterError(f"method must be one of {', '.join(METHODS)}; got '{method}'")
    nmds_only = [k for k in ("dims", "landmarks", "dissimilarity") if params.get(k) is not None]
    if method == "nmds":
        from ppdm.streaming.nmds import NmdsStream

        if params.get("dims") is None:
            raise ParameterError("--method nmds needs --dims P (the released dimension)")
        return NmdsStream(params["dims"], params.get("landmarks") or 1000,
                          params.get("dissimilarity") or "euclidean", random_state=params.get("random_state", 0))
    if nmds_only:
        raise ParameterError(f"--{nmds_only[0]} applies to --method nmds only")
    params = {k: v for k, v in params.items() if k not in ("dims", "landmarks", "dissimilarity")}
    if method == "ssvd":
        params = {"sparsify": "sts"} | params
    elif params.get("sparsify") is not None:
        raise ParameterError("sparsification options need --method ssvd")
    return IncrementalSVD(rank, **params)


def _check_buffer_rank(rank: int, buffer_rank: object, n_columns: int) -> None:
    """Refuse a buffer that cannot fill: the factorisation of ``n_columns`` columns has at most that many
    components, so ``rank + buffer_rank`` beyond it tracks nothing more (and was accepted without a word).

    Parameters
    ----------
    rank : int
        The released rank (``--rank``; checked by the estimator itself).
    buffer_rank : object
        The extra components tracked (``--buffer-rank``).
    n_columns : int
        The released columns of the first table.

    Raises
    ------
    ParameterError
        When ``rank + buffer_rank`` exceeds ``n_columns``; the message names the largest buffer that fits.
    """
    b = check_int(buffer_rank, "--buffer-rank", low=0)
    if isinstance(rank, int) and 1 <= rank < n_columns and rank + b > n_columns:
        raise ParameterError(
            f"--buffer-rank {b} with --rank {rank} tracks {rank + b} components of a {n_columns}-column table, "
            f"which has at most {n_columns}; choose --buffer-rank {n_columns - rank} or less")


# ---------------------------------------------------------------------------------------- commands


def stream_init(
    source: PathLike | pd.DataFrame,
    *,
    state: PathLike,
    output: PathLike | None = None,
    method: str = "svd",
    rank: int = 5,
    params: dict[str, Any] | None = None,
    append_only: bool = False,
    id: str | None = None,
    label: str | None = None,
    columns: Sequence[str] | None = None,
    drop: Sequence[str] = (),
    drop_other: bool = False,
    force: bool = False,
    sep: str | None = None,
    seed: int | None = None,
    keep_ids: bool = False,
) -> StreamResult:
    """Start a stream: exact rank-K SVD of the first table, its release, and the state file.

    ``seed`` None draws the stream's key from OS entropy (kept in the state). Unless ``keep_ids``, every
    release of the stream has keyed pseudonyms for ids (the same id, the same pseudonym in every batch) and
    rows in a random order; the owner aligns them through the state (``align_with_state``).

    ``params`` go to :class:`~ppdm.mechanisms.incremental.IncrementalSVD` (``preprocess``,
    ``update_stats``, ``residual_rank``, ``eps_u``, ``eps_v``, ``sparsify`` ...). ``append_only`` keeps
    no left factors (update cost independent of the rows absorbed; no refresh, no new columns).
    """
    check_table_output(output)
    t0 = time.perf_counter()
    inputs = [("input table", source)] if isinstance(source, (str, os.PathLike)) else []
    check_disjoint([("output", output), ("state file", state)], inputs)
    with state_lock(state, outputs=[output]):
        out_path, state_path = _outputs([(output, "output"), (state, "state file")], inputs, force)
        assert state_path is not None
        return _init(source, out_path, state_path, t0=t0, method=method, rank=rank, params=params,
                     append_only=append_only, id=id, label=label, columns=columns, drop=drop, drop_other=drop_other,
                     sep=sep, seed=seed, keep_ids=keep_ids)


def _init(source: PathLike | pd.DataFrame, out_path: Path | None, state_path: Path, *, t0: float, method: str,
          rank: int, params: dict[str, Any] | None, append_only: bool, id: str | None, label: str | None,
          columns: Sequence[str] | None, drop: Sequence[str], drop_other: bool, sep: str | None,
          seed: int | None, keep_ids: bool) -> StreamResult:
    """:func:`stream_init` once its outputs are guarded and locked."""
    df = read_table(source, sep=sep)
    schema, say = numbers_schema(df, columns=columns, id=id, label=label, drop=drop, drop_other=drop_other,
                                 how="a stream releases numbers only")
    check_dense(len(df), len(schema.released), 5, f"starting a stream on {len(df)} x {len(schema.released)}",
                "init on the first part of the table and absorb the rest with ppdm stream update")
    X = _matrix(df, schema.released, "table")
    nmds = method == "nmds"
    if not nmds:
        _check_buffer_rank(rank, (params or {}).get("buffer_rank", 0), X.shape[1])
    from ppdm.keys import MECHANISM_STREAM, release_key, warn_known

    key = release_key(seed)
    warn_known(key)
    extra = {"random_state": key.seed(MECHANISM_STREAM)} | ({} if nmds else {"keep_u": not append_only})
    est = _estimator(method, rank, dict(params or {}) | extra)
    est.fit(X)
    stream = Stream(est, schema, method, None, key, keep_ids)
    if not append_only and not nmds:
        stream.passthrough = df[stream.kept_columns].reset_index(drop=True)
    tx = Transaction()
    try:
        if out_path is not None:
            if nmds:
                rel_df = _nmds_release(schema, df, est.release_)
            else:
                rel_df = schema.assemble(df, est.reconstruct() if not append_only else est.transform(X))
            tx.stage(out_path, write_table_to(stream.hide(rel_df, 1), output_format(out_path)))
        tx.stage(state_path, lambda p: stream.save(p), mode=0o600)
        tx.commit()
    finally:
        tx.abort()
    say()  # what was dropped or passed through, once the stream exists (a refusal stays one line)
    return StreamResult(summary(stream, t0, n_new=len(df)), [p for p in (out_path, state_path) if p is not None])


def stream_update(
    state: PathLike,
    batch: PathLike | pd.DataFrame,
    *,
    output: PathLike | None = None,
    refresh_all: PathLike | None = None,
    force: bool = False,
    sep: str | None = None,
    wait: float = 0.0,
    backend: str = "numpy",
    scheduler: str | None = None,
    keep_ids: bool | None = None,
) -> StreamResult:
    """Absorb new rows; write the append release (``output``), the refresh release (``refresh_all``), or both.

    The releases follow the layout chosen at init (pseudonymous and shuffled, or linkable); ``keep_ids=True``
    asks for the linkable layout for this update's releases.

    ``backend='dask'`` reads the batch partition by partition (Parquet files, a directory or a glob, or a
    large CSV) and writes the new rows' release as a directory of Parquet files; see
    :mod:`ppdm.backends._stream`.
    """
    if backend != "numpy" or scheduler is not None:
        from ppdm.backends import check_backend, load

        if check_backend(backend) == "numpy":
            raise ParameterError("--scheduler applies to the dask backend; add --backend dask")
        load(backend)  # a clear message when the extra is missing
        from ppdm.streaming.dask_update import stream_update as run

        return run(state, batch, output=output, refresh_all=refresh_all, force=force, sep=sep,  # type: ignore
                   wait=wait, scheduler=scheduler, keep_ids=keep_ids)
    check_table_output(output)
    check_table_output(refresh_all, "--refresh-all")
    t0 = time.perf_counter()
    inputs = [("state file", state)] + ([("new batch", batch)] if isinstance(batch, (str, os.PathLike)) else [])
    check_disjoint([("output", output), ("refresh output", refresh_all)], inputs)
    state_path = Path(state)
    with state_lock(state_path, wait=wait, outputs=[output, refresh_all]):
        out_path, all_path = _outputs([(output, "output"), (refresh_all, "refresh output")], inputs, force)
        stream = Stream.load(state_path)
        if all_path is not None and stream.method == "nmds":
            raise ParameterError(NMDS_FIXED.format(what="--refresh-all"))
        if all_path is not None and stream.passthrough is None:
            raise StateError("this state is append-only (made with --append-only), so the whole table cannot be "
                             "re-released; drop --refresh-all or start a new state without --append-only")
        df = read_table(batch, sep=sep)
        m = len(stream.schema.released)
        check_dense(len(df), m, 4, f"absorbing a batch of {len(df)} x {m}",
                    "split the batch into smaller files and absorb them one update at a time")
        if all_path is not None:
            n_all = stream.est.n_samples_seen_ + len(df)
            check_dense(n_all, m, 3, f"re-releasing all {n_all} rows (--refresh-all)",
                        "drop --refresh-all: -o releases only the new rows")
        stream.schema.check_batch(df, "the new batch")
        _check_new_ids(stream, df)
        X = _matrix(df, stream.schema.released, "the new batch")
        new_rel = stream.est.update(X)
        if stream.passthrough is not None:
            stream.passthrough = concat_columns(stream.passthrough, df.reset_index(drop=True))
        tx = Transaction()
        try:
            if out_path is not None:
                rel_df = (_nmds_release(stream.schema, df, new_rel) if stream.method == "nmds"
                          else stream.schema.assemble(df, new_rel))
                tx.stage(out_path, write_table_to(stream.hide(rel_df, 1, keep_ids), output_format(out_path)))
            if all_path is not None:
                _stage_refresh(tx, stream, all_path, keep_ids)
            tx.stage(state_path, lambda p: stream.save(p), mode=0o600)
            tx.commit()
        finally:
            tx.abort()
    return StreamResult(summary(stream, t0, n_new=len(df)),
                        [p for p in (out_path, all_path, state_path) if p is not None])


def _nmds_release(schema: Schema, df: pd.DataFrame, Y: np.ndarray) -> pd.DataFrame:
    return schema.assemble_new(df, Y, [f"d{k + 1}" for k in range(Y.shape[1])])


def _id_values(s: pd.Series) -> pd.Series:
    """Ids compared by value: numbers as numbers (3 and 3.0 are one id), anything else as text."""
    from ppdm.data.schema import parse_numbers

    num = s.astype(np.float64) if pd.api.types.is_numeric_dtype(s) else parse_numbers(s)
    if num.notna().all():
        return num.astype(np.float64)
    return s.astype(str)


def _check_new_ids(stream: Stream, df: pd.DataFrame) -> None:
    """Refuse a batch whose ids repeat within it or repeat rows already absorbed (when ids are tracked)."""
    key = stream.schema.id
    if key is None or key not in df.columns:
        return
    new = _id_values(df[key])
    if new.duplicated().any():
        raise InputError(f"the new batch repeats ids in column '{key}'; give each new record once")
    if stream.passthrough is not None and key in stream.passthrough.columns:
        old = _id_values(stream.passthrough[key])
        if new.dtype != old.dtype:  # numbers against text: compare as text
            new, old = new.astype(str), old.astype(str)
        if new.isin(set(old)).any():
            raise InputError(f"the new batch holds ids (column '{key}') of rows already absorbed; "
                             "give only new records")


def _stage_refresh(tx: Transaction, stream: Stream, path: Path, keep_ids: bool | None = None) -> None:
    assert stream.passthrough is not None
    rel = stream.est.reconstruct()
    # a table of released columns only keeps no pass-through column, and a frame of none keeps no row count
    base = stream.passthrough if stream.passthrough.shape[1] else pd.DataFrame(index=range(len(rel)))
    frame = stream.hide(stream.schema.assemble(base, rel), 2, keep_ids)
    tx.stage(path, write_table_to(frame, output_format(path)))


def stream_add_columns(
    state: PathLike,
    new_columns: PathLike | pd.DataFrame,
    *,
    refresh_all: PathLike | None = None,
    force: bool = False,
    sep: str | None = None,
    wait: float = 0.0,
) -> StreamResult:
    """Absorb new attributes of the rows already absorbed (one row each, same order; the id column, when
    the state has one, must be in the file and match).
    """
    check_table_output(refresh_all, "--refresh-all")
    t0 = time.perf_counter()
    inputs = [("state file", state)] + ([("new columns", new_columns)] if isinstance(new_columns, (str, os.PathLike))
                                         else [])
    check_disjoint([("refresh output", refresh_all)], inputs)
    state_path = Path(state)
    with state_lock(state_path, wait=wait, outputs=[refresh_all]):
        (all_path,) = _outputs([(refresh_all, "refresh output")], inputs, force)
        stream = Stream.load(state_path)
        if stream.method == "nmds":
            raise ParameterError(NMDS_FIXED.format(what="adding columns"))
        if stream.passthrough is None:
            raise StateError("this state is append-only (made with --append-only) and keeps no left factors, so "
                             "columns cannot be added; start a new state without --append-only")
        df = read_table(new_columns, sep=sep)
        sch = stream.schema
        new = [c for c in map(str, df.columns) if c != sch.id]
        if sch.id is not None and sch.id not in df.columns:
            # without the ids nothing shows that the new values are in the order the rows were absorbed
            raise InputError(f"the new columns' file has no id column '{sch.id}' (the stream was started with "
                             f"--id {sch.id}); add it, one row per absorbed record, so that the rows' order is checked")
        if sch.id is not None:
            got = df[sch.id].astype(str).to_numpy()
            want = stream.passthrough[sch.id].astype(str).to_numpy()
            if len(got) != len(want) or not np.array_equal(got, want):
                raise InputError(f"the ids in column '{sch.id}' do not match the absorbed rows; give one row per "
                                 "absorbed record, in the order they were absorbed")
        clash = [c for c in new if c in sch.columns]
        if clash:
            raise InputError(f"column '{clash[0]}' is already in the state; new attributes need new names")
        if not new:
            raise InputError("the file holds no new attribute column; give the new columns (plus the id column)")
        if all_path is not None:
            n_all, m_all = stream.est.n_samples_seen_, len(sch.released) + len(new)
            check_dense(n_all, m_all, 3, f"re-releasing all {n_all} rows (--refresh-all)",
                        "drop --refresh-all (the columns are absorbed all the same)")
        F = _matrix(df, new, "the new attributes")
        stream.est.add_columns(F)
        stream.schema = Schema(sch.columns + tuple(new), sch.released + tuple(new), sch.id, sch.label,
                               sch.passthrough, sch.dropped)
        tx = Transaction()
        try:
            if all_path is not None:
                _stage_refresh(tx, stream, all_path)
            tx.stage(state_path, lambda p: stream.save(p), mode=0o600)
            tx.commit()
        finally:
            tx.abort()
    return StreamResult(summary(stream, t0, n_new=0) | {"new_columns": len(new)},
                        [p for p in (all_path, state_path) if p is not None])


def stream_status(state: PathLike, *, check: bool = False) -> dict[str, Any]:
    """Counts, rank, mode and orthogonality drift; with ``check`` the drift against an exact recomputation."""
    stream = Stream.load(state)
    est = stream.est
    out = summary(stream, None, n_new=None)
    if stream.method == "nmds":
        if check:
            raise ParameterError("--check compares incremental SVD factors; NMDS streams have none")
        out["landmarks"] = int(est.est_.landmark_embedding_.shape[0])
        out["landmark_stress"] = float(est.est_.stress_)
        return out
    out["orthogonality"] = est.orthogonality_drift()
    out["reorthogonalizations"] = int(est.n_reorthogonalizations_)
    out["ortho_tol"] = float(est.ortho_tol)
    if check:
        out["check"] = est.drift()
    return out
