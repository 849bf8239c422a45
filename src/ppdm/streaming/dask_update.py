"""``ppdm stream update --backend dask``: absorb a partitioned batch of new rows into a stream state and
release them as a directory of Parquet files.

The in-memory update (:func:`ppdm.mechanisms.svd_updates.row_update`) takes the SVD of a
``(K + q) x (K + r)`` core built from the whole batch. Its right factors are those of the stacked matrix
``M = [diag(s) V^T; T]`` (``T``: the preprocessed batch), whose Gram matrix
``M^T M = V diag(s^2) V^T + T^T T`` is ``m x m`` and mergeable: one pass of column statistics over the
batch gives ``T^T T``, the eigenvectors of ``M^T M`` give the new basis, and a second pass releases each
partition as the in-memory update releases the new rows, ``T V_new V_new^T`` (mapped back to original
units). The release matches the in-memory one to rounding; the state holds the same subspace and
singular values (the signs of the basis vectors may differ, which no release depends on).

Not here: a residual sketch (``--residual-rank``) and ``--refresh-all`` (the whole table in memory).
"""

from __future__ import annotations

import copy
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dask
import numpy as np

from ppdm.backends._blockwise import ColumnStats, PartitionRelease, scaled_gram
from ppdm.backends.dask_cluster import compute, connect
from ppdm.backends.dask_table import check_dask_output, column_stats, open_table, part_write, publish
from ppdm.exceptions import InputError, ParameterError, StateError

__all__ = ["stream_update"]


@dataclass
class _NewRows:
    """Releases rows on the current basis with batch-wide thresholds on U (what travels to the workers)."""

    est: Any  # the estimator without left factors or Gram matrix
    u_thresholds: np.ndarray | None

    def __repr__(self) -> str:  # key material: keep it out of the logs of a failed task
        return "_NewRows(<key material>)"

    def factors(self, A: np.ndarray) -> np.ndarray:
        est = self.est
        s = est.singular_values_
        U = (est._scale(A) @ est.components_.T) / np.where(s > 0, s, 1.0)
        return U[:, : est._released_rank()]

    def transform(self, A: np.ndarray) -> np.ndarray:
        U = self.factors(A)
        if self.u_thresholds is not None:
            U = np.where(np.abs(U) < self.u_thresholds[None, :], 0.0, U)
        return self.est._release(U)  # eps_u is 0 in this copy: U is already thresholded


def _abs_u(df: Any, released: list[str], rel: _NewRows) -> np.ndarray:
    return np.abs(rel.factors(df[released].to_numpy(dtype=np.float64))).sum(axis=0)


def _left_rows(df: Any, released: list[str], est: Any) -> np.ndarray:
    A = df[released].to_numpy(dtype=np.float64)
    s = est.singular_values_
    return (est._scale(A) @ est.components_.T) / np.where(s > 0, s, 1.0)


def _absorb(est: Any, st: ColumnStats) -> None:
    """The row update of :meth:`IncrementalSVD._absorb` from the batch's statistics (Gram route)."""
    from ppdm.mechanisms.svd_updates import merge_stats
    from ppdm.utils.linalg import svd_flip_v

    batch = {"n": st.n, "mean": st.mean, "m2": np.diag(st.m2).copy(), "min": st.lo, "max": st.hi}
    if est.update_stats and est.preprocess != "none":
        est._restandardize(merge_stats(est._stats, batch))
    else:
        est._stats = merge_stats(est._stats, batch)
    m = len(st.mean)
    off, sc = (np.zeros(m), np.ones(m)) if est.preprocess == "none" else (est.offset_, est.scale_)
    TtT = scaled_gram(st, off, sc)
    t_sum = st.n * (st.mean - off) / sc
    V, s = est.components_.T, est.singular_values_
    k = est._tracked_rank()
    w, E = np.linalg.eigh((V * s**2) @ V.T + TtT)
    w, E = w[::-1][:k], E[:, ::-1][:, :k]
    _, Vt = svd_flip_v(E.T)
    V_new = Vt.T
    s_new = np.sqrt(np.clip(w, 0.0, None))
    inv = np.where(s_new > 0, 1.0 / np.where(s_new > 0, s_new, 1.0), 0.0)
    top = (s[:, None] * (V.T @ V_new)) * inv[None, :]  # the old rows' rotation, Uc[:K] of row_update
    if est.U_ is not None:
        est.U_ = est.U_ @ top  # the new rows are appended by the caller
    est.u_sum_ = top.T @ est.u_sum_ + (t_sum @ V_new) * inv
    est.components_, est.singular_values_ = V_new.T.copy(), s_new
    if est.gram_ is not None:
        est.gram_ += TtT
    est.sq_norm_ += float(np.trace(TtT))
    est.n_samples_seen_ += st.n
    est.n_updates_ += 1


def stream_update(state: str | os.PathLike[str], batch: str | os.PathLike[str], *, output: Any = None,
                  refresh_all: Any = None, force: bool = False, sep: str | None = None, wait: float = 0.0,
                  scheduler: str | None = None, keep_ids: bool | None = None) -> Any:
    """Absorb a (partitioned) batch into a stream state; release its rows to ``output`` (Parquet directory).

    The partitioned path writes the linkable layout only: a stream whose releases are pseudonymous is
    refused unless ``keep_ids`` asks for that layout.
    """
    from ppdm.streaming.store import Stream, StreamResult, Transaction, state_lock, summary

    t0 = time.perf_counter()
    if refresh_all is not None:
        raise ParameterError("--refresh-all re-releases the whole table in memory; drop it with --backend dask "
                             "(or use --backend numpy)")
    if output is None:
        raise ParameterError("give -o DIR: the new rows' release (a directory of Parquet files)")
    out = check_dask_output(output, batch, force)
    state_path = Path(state)
    if out.resolve() == state_path.resolve():
        raise ParameterError("the release and the state file must be different paths")
    with state_lock(state_path, wait=wait):
        stream = Stream.load(state_path)
        if stream.key is not None and not stream.keep_ids and not keep_ids:
            raise ParameterError("this stream publishes pseudonymous, shuffled releases, which the dask update does "
                                 "not write yet; update with --backend numpy, or pass --keep-ids for a linkable "
                                 "release")
        est, schema = stream.est, stream.schema
        if est.residual_rank is not None:
            raise ParameterError("a state with --residual-rank sketches each batch's residual in memory; update it "
                                 "with --backend numpy")
        with connect(scheduler) as conn:
            client = conn["client"]
            ddf, head = open_table(batch, sep=sep)
            schema.check_batch(head, "the new batch")
            released = list(schema.released)
            key = schema.id
            if key is not None and key in head.columns:
                _check_ids(ddf, key, stream.passthrough, client)
            res, total = column_stats(ddf[released].to_delayed(), released, None, (), client,
                                         where="the new batch")
            if total.n == 0:
                raise InputError("the new batch has no rows")
            from ppdm.flow.arrays import check_magnitude

            check_magnitude(np.vstack([total.lo, total.hi]))
            lengths = [r[0].n for r in res]
            starts = [int(s) for s in np.cumsum([0, *lengths[:-1]])]
            n_before = int(est.n_samples_seen_)
            _absorb(est, total)
            if est.U_ is not None:  # refresh-capable: the new rows' left factors and pass-through columns
                rows = compute([dask.delayed(_left_rows, pure=False)(p, released, _lite(est, None))
                                    for p in ddf[released].to_delayed()], "left factors", client)
                est.U_ = np.vstack([est.U_, *rows])
                stream.passthrough = _append_passthrough(stream.passthrough, ddf)
            est._maybe_reorthogonalize()
            rel = _NewRows(_lite(est, 0.0), None)
            if est.sparsify is not None and est.sparsify != "sts":
                from ppdm.mechanisms.sparsified import column_thresholds

                sums = compute([dask.delayed(_abs_u, pure=False)(p, released, rel)
                                    for p in ddf[released].to_delayed()], "column means of |U|", client)
                rel.u_thresholds = column_thresholds((np.sum(sums, axis=0) / total.n)[None, :], float(est.eps_u),
                                                     est.sparsify, est._alpha())
            elif est.sparsify is not None:
                rel.u_thresholds = np.full(est._released_rank(), float(est.eps_u))
            from ppdm.data.preprocess import Scaler

            part = PartitionRelease(schema, Scaler.from_stats("none", np.zeros(len(released)),
                                                              np.ones(len(released))), "preprocessed", mechanism=rel)
            tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
            tx = Transaction()
            try:
                from ppdm.data.io import dir_mode

                os.chmod(tmp, dir_mode())  # the user's umask, like any new directory
                tasks = [dask.delayed(part_write, pure=False)(p, n_before + s0, L, None, part, str(tmp), i)
                         for i, (p, s0, L) in enumerate(zip(ddf.to_delayed(), starts, lengths, strict=True))]
                ss = np.sum(compute(tasks, "release", client), axis=0)
                if ss[2] > 0:
                    raise InputError("the release has non-finite values (the input is too close to overflow); "
                                     "rescale it")
                tx.stage(state_path, lambda p: stream.save(p), mode=0o600)
                publish(tmp, out)  # outputs first, the state last (as the in-memory update)
                tx.commit()
            finally:
                tx.abort()
                if tmp.exists():
                    shutil.rmtree(tmp, ignore_errors=True)
        summary = summary(stream, t0, n_new=total.n) | {"backend": "dask", "cluster": conn["cluster"],
                                                         "cluster_seconds": conn["seconds"],
                                                         "n_partitions": len(lengths)}
    return StreamResult(summary, [out, state_path])


def _id_hashes(df: Any, key: str) -> tuple[np.ndarray, int]:
    """64-bit hashes of a partition's ids (as text), deduplicated, and its row count."""
    import pandas as pd

    return np.unique(pd.util.hash_pandas_object(df[key].astype(str), index=False).to_numpy()), len(df)


def _check_ids(ddf: Any, key: str, passthrough: Any, client: Any) -> None:
    """Refuse repeated ids, and ids of rows already absorbed, with 8 bytes per row on the client (no shuffle)."""
    res = compute([dask.delayed(_id_hashes, pure=False)(p, key) for p in ddf[[key]].to_delayed()],
                      "ids", client)
    h = np.concatenate([r[0] for r in res])
    if len(np.unique(h)) < sum(r[1] for r in res):
        raise InputError(f"the new batch repeats ids in column '{key}'; give each new record once")
    if passthrough is not None and key in passthrough.columns:
        if np.isin(h, _id_hashes(passthrough, key)[0]).any():
            raise InputError(f"the new batch holds ids (column '{key}') of rows already absorbed; "
                             "give only new records")


def _lite(est: Any, eps_u: float | None) -> Any:
    """A copy of the estimator for the workers: no left factors, no Gram matrix (and ``eps_u`` replaced)."""
    lite = copy.copy(est)
    lite.U_, lite.gram_ = None, None
    if eps_u is not None:
        lite.eps_u = eps_u
    return lite


def _append_passthrough(old: Any, ddf: Any) -> Any:
    from ppdm.streaming.store import concat_columns

    if old is None:
        raise StateError("a refresh-capable state without its pass-through columns; the state file is damaged")
    return concat_columns(old, ddf[list(old.columns)].compute().reset_index(drop=True))
