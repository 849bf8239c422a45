"""Streaming releases: a state file that absorbs new rows and new columns (``ppdm stream``).

One state file holds the incremental SVD factors, the preprocessing statistics, the column schema and,
for refresh-capable states, the pass-through columns (ids, labels) of every absorbed row. An update is a
transaction: every output and the new state are first written to temporary files beside their targets,
then renamed into place, the state last. A process killed at any point leaves the previous state valid,
and the previous outputs untouched; a lock file (``<state>.lock``, an ``fcntl`` lock that the kernel
releases when its holder dies) keeps two updates from interleaving.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import glob
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.data.io import check_output_path, read_table, table_format
from ppdm.data.schema import Schema, resolve_schema
from ppdm.exceptions import InputError, OutputError, ParameterError, StateError
from ppdm.mechanisms.incremental import IncrementalSVD
from ppdm.state import load_state, save_state
from ppdm.utils.memory import check_dense

__all__ = ["StreamResult", "stream_init", "stream_update", "stream_add_columns", "stream_status", "state_lock",
           "METHODS"]

PathLike = str | os.PathLike[str]
KIND = "stream"
METHODS = ("svd", "ssvd", "nmds")
_NMDS_FIXED = ("NMDS streams place new rows against a fixed landmark configuration and are never refitted, so "
               "{what} is not available; start a new stream (ppdm stream init --method nmds) on the whole table")


@dataclass
class StreamResult:
    """What one streaming command did (counts and timings only: nothing secret)."""

    summary: dict[str, Any] = field(default_factory=dict)
    written: list[Path] = field(default_factory=list)


# ------------------------------------------------------------------------------------------- locking


@contextlib.contextmanager
def state_lock(state: PathLike, *, wait: float = 0.0) -> Iterator[None]:
    """Hold an exclusive lock on ``<state>.lock`` (waiting up to ``wait`` seconds), or fail cleanly."""
    p = Path(state)
    lock = p.with_name(p.name + ".lock")
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        raise StateError(f"cannot create the lock file beside '{p.name}'; check the directory permissions") from None
    try:
        deadline = time.monotonic() + max(wait, 0.0)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() >= deadline:
                    raise StateError(
                        f"state file '{p.name}' is being updated by another process; wait for it to finish "
                        "(or pass --wait SECONDS)"
                    ) from None
                time.sleep(0.05)
        _remove_stale_temporaries(p)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _remove_stale_temporaries(p: Path) -> None:
    """Temporary copies of the state left by a killed update hold key material: remove them (we hold the lock)."""
    for pattern in (f".{glob.escape(p.name)}.*.tmp", f"..{glob.escape(p.name)}.*.tmp"):
        for f in glob.glob(str(p.with_name(pattern))):
            with contextlib.suppress(OSError):
                os.unlink(f)


# --------------------------------------------------------------------------------------- transaction


class _Transaction:
    """Stage files beside their targets, then rename them all into place (in staging order)."""

    def __init__(self) -> None:
        self.staged: list[tuple[Path, Path]] = []

    def stage(self, target: Path, write: Callable[[Path], None], mode: int | None = None) -> None:
        from ppdm.data.io import file_mode

        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.fchmod(fd, file_mode() if mode is None else mode)  # the user's umask unless a secret's 0600
        os.close(fd)
        self.staged.append((Path(tmp), target))
        write(Path(tmp))

    def commit(self) -> None:
        for tmp, target in self.staged:
            os.replace(tmp, target)
        self.staged = []

    def abort(self) -> None:
        for tmp, _ in self.staged:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        self.staged = []


def _write_table_to(df: pd.DataFrame, fmt: str) -> Callable[[Path], None]:
    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            if fmt == "parquet":
                df.to_parquet(f, index=False)
            else:
                f.write(df.to_csv(index=False, lineterminator="\n").encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())

    return write


# ------------------------------------------------------------------------------ state (de)serialising


def _pack_columns(df: pd.DataFrame, cols: Sequence[str]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Pass-through columns as plain arrays (numbers natively, text as unicode plus a missing mask)."""
    meta: dict[str, Any] = {}
    arrays: dict[str, np.ndarray] = {}
    for i, c in enumerate(cols):
        s = df[c]
        if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
            meta[c] = {"key": f"pass_{i}", "text": False}
            arrays[f"pass_{i}"] = s.to_numpy()
        else:
            missing = s.isna().to_numpy()
            meta[c] = {"key": f"pass_{i}", "text": True}
            arrays[f"pass_{i}"] = np.where(missing, "", s.astype(str).to_numpy()).astype(str)
            arrays[f"pass_{i}_missing"] = missing
    return meta, arrays


def _unpack_columns(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> pd.DataFrame:
    out = {}
    for c, info in meta.items():
        a = arrays[info["key"]]
        if info["text"]:
            a = np.where(arrays[info["key"] + "_missing"], None, a.astype(object))
        out[c] = a
    return pd.DataFrame(out)


def _concat_columns(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    return pd.concat([old, new[list(old.columns)]], ignore_index=True)


@dataclass
class _Stream:
    est: Any  # IncrementalSVD, or NmdsStream for method 'nmds'
    schema: Schema
    method: str
    passthrough: pd.DataFrame | None  # None for append-only states
    #: the release key (pseudonyms and row orders of every batch come from it); None in older states
    key: Any = None
    #: the linkable layout (original ids and order), chosen at init
    keep_ids: bool = True
    #: releases written so far (each batch's row order is its own sub-stream of the key)
    batches: int = 0

    def hide(self, frame: pd.DataFrame, kind: int, keep_ids: bool | None = None) -> pd.DataFrame:
        """Pseudonymous ids and a shuffled order for one released table (unless the layout is linkable)."""
        kept = self.keep_ids if keep_ids is None else keep_ids
        if self.key is None:
            return frame
        from ppdm.keys import hide_identity

        self.batches += 1
        return hide_identity(frame, self.schema.id, self.key, keep_ids=kept, stream=(kind, self.batches))[0]

    @property
    def kept_columns(self) -> list[str]:
        return [c for c in self.schema.columns if c not in self.schema.released and c not in self.schema.dropped]

    def save(self, path: Path) -> None:
        header, arrays = self.est.to_state()
        stream: dict[str, Any] = {"method": self.method, "schema": self.schema.to_dict(),
                                  "append_only": self.passthrough is None,
                                  "rank": int(self.est.rank),
                                  "n_rows": int(self.est.n_samples_seen_),
                                  "n_columns": int(self.est.n_features_in_),
                                  "preprocess": self.est.preprocess, "update_stats": bool(self.est.update_stats),
                                  "keep_ids": bool(self.keep_ids), "batches": int(self.batches)}
        if self.key is not None:
            stream["key"] = {"entropy": str(self.key.entropy), "known": bool(self.key.known)}
        if self.passthrough is not None:
            meta, extra = _pack_columns(self.passthrough, list(self.passthrough.columns))
            stream["passthrough"] = meta
            arrays = arrays | extra
        save_state(path, KIND, {"estimator": header, "stream": stream}, arrays)

    @classmethod
    def load(cls, path: PathLike) -> _Stream:
        header, arrays = load_state(path, KIND)
        try:
            st = header["stream"]
            schema = Schema.from_dict(st["schema"])
            passthrough = None if st["append_only"] else _unpack_columns(st.get("passthrough", {}), arrays)
            method = st["method"]
        except (KeyError, TypeError, ValueError):
            raise StateError(f"state file '{Path(path).name}' lacks the stream description; it was made by "
                             "another version") from None
        if method == "nmds":
            from ppdm.streaming_nmds import NmdsStream

            est: Any = NmdsStream.from_state(header["estimator"], arrays)
        else:
            est = IncrementalSVD.from_state(header["estimator"], arrays)
        if len(schema.released) != est.n_features_in_:
            raise StateError(f"state file '{Path(path).name}' is inconsistent (schema and factors disagree)")
        key = None
        if isinstance(st.get("key"), dict):
            from ppdm.keys import ReleaseKey

            key = ReleaseKey(int(st["key"]["entropy"]), bool(st["key"].get("known", False)))
        return cls(est, schema, method, passthrough, key, bool(st.get("keep_ids", key is None)),
                   int(st.get("batches", 0)))


# ------------------------------------------------------------------------------------------ helpers


def _matrix(df: pd.DataFrame, cols: Sequence[str], what: str) -> np.ndarray:
    """The released columns of a batch as float64 (one row is enough), with one-line errors."""
    from ppdm.data.schema import numeric_matrix

    X = numeric_matrix(df, cols, what=what, min_rows=1)
    from ppdm.pipeline import check_magnitude

    check_magnitude(X)
    return X


def _outputs(
    paths: Sequence[tuple[PathLike | None, str]], inputs: Sequence[PathLike], force: bool
) -> list[Path | None]:
    out: list[Path | None] = []
    seen: set[Path] = set()
    for p, what in paths:
        if p is None:
            out.append(None)
            continue
        q = check_output_path(p, inputs=inputs, force=force, what=what)
        if q.resolve() in seen:
            raise OutputError(f"{what} '{q.name}' is named twice; give each output its own path")
        seen.add(q.resolve())
        out.append(q)
    return out


def _estimator(method: str, rank: int, params: dict[str, Any]) -> Any:
    if method not in METHODS:
        raise ParameterError(f"method must be one of {', '.join(METHODS)}; got '{method}'")
    nmds_only = [k for k in ("dims", "landmarks", "dissimilarity") if params.get(k) is not None]
    if method == "nmds":
        from ppdm.streaming_nmds import NmdsStream

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
    t0 = time.perf_counter()
    inputs = [source] if isinstance(source, (str, os.PathLike)) else []
    out_path, state_path = _outputs([(output, "output"), (state, "state file")], inputs, force)
    assert state_path is not None
    df = read_table(source, sep=sep)
    schema = resolve_schema(df, columns=columns, id=id, label=label, drop=drop, drop_other=drop_other)
    check_dense(len(df), len(schema.released), 5, f"starting a stream on {len(df)} x {len(schema.released)}",
                "init on the first part of the table and absorb the rest with ppdm stream update")
    X = _matrix(df, schema.released, "table")
    nmds = method == "nmds"
    from ppdm.keys import MECHANISM_STREAM, release_key, warn_known

    key = release_key(seed)
    warn_known(key)
    extra = {"random_state": key.seed(MECHANISM_STREAM)} | ({} if nmds else {"keep_u": not append_only})
    est = _estimator(method, rank, dict(params or {}) | extra)
    est.fit(X)
    stream = _Stream(est, schema, method, None, key, keep_ids)
    if not append_only and not nmds:
        stream.passthrough = df[stream.kept_columns].reset_index(drop=True)
    tx = _Transaction()
    try:
        if out_path is not None:
            if nmds:
                rel_df = _nmds_release(schema, df, est.release_)
            else:
                rel_df = schema.assemble(df, est.reconstruct() if not append_only else est.transform(X))
            tx.stage(out_path, _write_table_to(stream.hide(rel_df, 1), table_format(out_path)))
        with state_lock(state_path):
            tx.stage(state_path, lambda p: stream.save(p), mode=0o600)
            tx.commit()
    finally:
        tx.abort()
    return StreamResult(_summary(stream, t0, n_new=len(df)), [p for p in (out_path, state_path) if p is not None])


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
        from ppdm.backends._stream import stream_update as run

        return run(state, batch, output=output, refresh_all=refresh_all, force=force, sep=sep,  # type: ignore
                   wait=wait, scheduler=scheduler, keep_ids=keep_ids)
    t0 = time.perf_counter()
    inputs = [state] + ([batch] if isinstance(batch, (str, os.PathLike)) else [])
    out_path, all_path = _outputs([(output, "output"), (refresh_all, "refresh output")], inputs, force)
    state_path = Path(state)
    with state_lock(state_path, wait=wait):
        stream = _Stream.load(state_path)
        if all_path is not None and stream.method == "nmds":
            raise ParameterError(_NMDS_FIXED.format(what="--refresh-all"))
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
            stream.passthrough = _concat_columns(stream.passthrough, df.reset_index(drop=True))
        tx = _Transaction()
        try:
            if out_path is not None:
                rel_df = (_nmds_release(stream.schema, df, new_rel) if stream.method == "nmds"
                          else stream.schema.assemble(df, new_rel))
                tx.stage(out_path, _write_table_to(stream.hide(rel_df, 1, keep_ids), table_format(out_path)))
            if all_path is not None:
                _stage_refresh(tx, stream, all_path, keep_ids)
            tx.stage(state_path, lambda p: stream.save(p), mode=0o600)
            tx.commit()
        finally:
            tx.abort()
    return StreamResult(_summary(stream, t0, n_new=len(df)),
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


def _check_new_ids(stream: _Stream, df: pd.DataFrame) -> None:
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


def _stage_refresh(tx: _Transaction, stream: _Stream, path: Path, keep_ids: bool | None = None) -> None:
    assert stream.passthrough is not None
    rel = stream.est.reconstruct()
    frame = stream.hide(stream.schema.assemble(stream.passthrough, rel), 2, keep_ids)
    tx.stage(path, _write_table_to(frame, table_format(path)))


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
    the state has one, must match).
    """
    t0 = time.perf_counter()
    inputs = [state] + ([new_columns] if isinstance(new_columns, (str, os.PathLike)) else [])
    (all_path,) = _outputs([(refresh_all, "refresh output")], inputs, force)
    state_path = Path(state)
    with state_lock(state_path, wait=wait):
        stream = _Stream.load(state_path)
        if stream.method == "nmds":
            raise ParameterError(_NMDS_FIXED.format(what="adding columns"))
        if stream.passthrough is None:
            raise StateError("this state is append-only (made with --append-only) and keeps no left factors, so "
                             "columns cannot be added; start a new state without --append-only")
        df = read_table(new_columns, sep=sep)
        sch = stream.schema
        new = [c for c in map(str, df.columns) if c != sch.id]
        if sch.id is not None and sch.id in df.columns:
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
        tx = _Transaction()
        try:
            if all_path is not None:
                _stage_refresh(tx, stream, all_path)
            tx.stage(state_path, lambda p: stream.save(p), mode=0o600)
            tx.commit()
        finally:
            tx.abort()
    return StreamResult(_summary(stream, t0, n_new=0) | {"new_columns": len(new)},
                        [p for p in (all_path, state_path) if p is not None])


def stream_status(state: PathLike, *, check: bool = False) -> dict[str, Any]:
    """Counts, rank, mode and orthogonality drift; with ``check`` the drift against an exact recomputation."""
    stream = _Stream.load(state)
    est = stream.est
    out = _summary(stream, None, n_new=None)
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


def _summary(stream: _Stream, t0: float | None, n_new: int | None) -> dict[str, Any]:
    est = stream.est
    s: dict[str, Any] = {
        "method": stream.method,
        "mode": ("landmark placement" if stream.method == "nmds"
                 else "append-only" if stream.passthrough is None else "refresh-capable"),
        "rank": int(est.rank),
        "n_rows": int(est.n_samples_seen_),
        "n_released_columns": int(est.n_features_in_),
        "n_updates": int(est.n_updates_),
        "preprocess": est.preprocess,
        "update_stats": bool(est.update_stats),
    }
    if n_new is not None:
        s["n_new_rows"] = n_new
    if t0 is not None:
        s["seconds"] = time.perf_counter() - t0
    return s
