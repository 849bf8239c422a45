"""Evaluation on the Dask backend: value metrics by partition, Lloyd's k-means, and a record-linkage sample."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd

from ppdm.backends.dask_cluster import FROM_MEMORY_ROWS, compute, connect
from ppdm.backends.dask_table import open_table
from ppdm.exceptions import InputError, ParameterError

__all__ = ["LINKAGE_SAMPLE", "as_array", "evaluate", "kmeans_accuracy", "linkage_sample", "lloyd_kmeans",
           "value_metrics"]


def as_array(X: Any, chunk_rows: int = FROM_MEMORY_ROWS) -> da.Array:
    """A float64 dask array chunked by rows only (all columns in each block)."""
    if isinstance(X, dd.DataFrame):
        X = X.to_dask_array(lengths=True)
    if not isinstance(X, da.Array):
        X = da.from_array(np.asarray(X, dtype=np.float64), chunks=(chunk_rows, -1))
    if X.ndim != 2:
        raise InputError(f"expected a 2-D table, got {X.ndim}-D; reshape it to (n_rows, n_columns)")
    return X.astype(np.float64).rechunk({1: -1})


def _col_rank_stats(a: np.ndarray, b: np.ndarray, rank_mode: str) -> tuple[float, float]:
    """Sum of |rank change| and count of kept ranks of one column (the in-memory RP/RK functions)."""
    from ppdm.metrics.value import rank_maintenance, rank_position

    n = len(a)
    return rank_position(a[:, None], b[:, None], rank_mode) * n, rank_maintenance(a[:, None], b[:, None], rank_mode) * n


def value_metrics(A: Any, B: Any, rank_mode: str = "sort_index", *, budget: float | None = None,
                  client: Any = None) -> dict[str, float]:
    """RE, RP, RK, CP and CK of a release ``B`` of ``A`` (numpy or dask arrays, or dask DataFrames).

    RE and the column means are one reduction. RP and RK need a stable sort of every column: each column
    of ``A`` and ``B`` is gathered on one worker and argsorted there, which holds about ``48 n`` bytes
    (two columns, their sort orders and ranks) per column task. Columns are processed in groups of at
    most ``budget / (48 n)`` (default budget: :data:`ppdm.utils.validation.MEMORY_BUDGET`), re-reading the
    inputs once per group when they are not persisted.
    """
    from ppdm.metrics.value import RANK_MODES, attribute_rank_change, attribute_rank_maintenance
    from ppdm.utils.validation import MEMORY_BUDGET, check_choice, check_memory

    check_choice(rank_mode, "rank_mode", RANK_MODES)
    A, B = as_array(A), as_array(B)
    if A.shape != B.shape:
        raise InputError(f"original {A.shape} and release {B.shape} differ in shape; compare matching tables")
    B = B.rechunk(A.chunks)
    n, m = A.shape
    ssa, ssd, ma, mb = dask.compute((A * A).sum(), ((A - B) ** 2).sum(), A.mean(axis=0), B.mean(axis=0))
    budget = MEMORY_BUDGET if budget is None else budget
    per_col = 48.0 * n
    check_memory(per_col, f"ranking one column of {n} rows", "evaluate a sample of the rows, or raise the budget",
                 budget)
    group = max(1, int(budget // per_col))
    sum_abs = sum_eq = 0.0
    for g in range(0, m, group):
        tasks = [dask.delayed(_col_rank_stats, pure=False)(A[:, j], B[:, j], rank_mode)
                 for j in range(g, min(m, g + group))]
        for s_abs, s_eq in compute(tasks, "column ranks", client):
            sum_abs += s_abs
            sum_eq += s_eq
    ma, mb = np.asarray(ma)[None, :], np.asarray(mb)[None, :]
    return {
        "re": float(np.sqrt(ssd / ssa)) if ssa > 0 else float("nan"),
        "rp": sum_abs / (n * m),
        "rk": sum_eq / (n * m),
        "cp": attribute_rank_change(ma, mb, rank_mode),
        "ck": attribute_rank_maintenance(ma, mb, rank_mode),
    }


def _lloyd_step(X: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Labels of one block (the in-memory distance formula) and its per-cluster sums and counts."""
    K = len(C)
    d = np.einsum("ij,ij->i", X, X)[:, None] - 2.0 * X @ C.T + np.einsum("ij,ij->i", C, C)[None, :]
    lab = np.argmin(d, axis=1)
    sums = np.zeros_like(C)
    for j in range(K):
        sums[j] = X[lab == j].sum(axis=0)
    return lab.astype(np.int32 if K < 2**31 else np.int64), sums, np.bincount(lab, minlength=K)


def lloyd_kmeans(X: Any, init: np.ndarray, *, max_iter: int = 1000, persist: bool = True,
                 client: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Lloyd's K-means on a partitioned matrix, the same iteration as :func:`ppdm.metrics.lloyd_kmeans`.

    Each iteration is one pass: every block returns its labels (int32, gathered on the client: 4 bytes
    per row) and its per-cluster sums and counts; the client updates the centroids and stops when the
    labels stop changing. An empty cluster keeps its centroid. With ``persist`` the matrix is kept in
    the workers' memory (it must fit there); otherwise it is re-read every iteration.
    """
    X = as_array(X)
    if persist and client is not None:
        X = X.persist()
    blocks = list(X.to_delayed().ravel())
    C = np.array(init, dtype=np.float64)
    labels: np.ndarray | None = None
    for _ in range(max_iter):
        res = compute([dask.delayed(_lloyd_step, pure=False)(b, C) for b in blocks], "k-means", client)
        new = np.concatenate([r[0] for r in res])
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        sums = np.sum([r[1] for r in res], axis=0)
        counts = np.sum([r[2] for r in res], axis=0)
        keep = counts > 0
        C[keep] = sums[keep] / counts[keep, None]
    assert labels is not None
    return labels.astype(np.int64), C


def kmeans_accuracy(X: Any, y: Any, *, n_clusters: int | None = None, normalize: str | None = "range",
                    client: Any = None) -> float:
    """K-means accuracy (%) under the papers' protocol (range-normalise, first K rows, best matching)."""
    from ppdm.metrics.utility import matched_accuracy

    X = as_array(X)
    y = np.asarray(y.compute() if hasattr(y, "compute") else y)
    K = n_clusters or len(np.unique(y))
    if K > X.shape[0]:
        raise ParameterError(f"n_clusters={K} exceeds the {X.shape[0]} rows; use fewer clusters")
    if normalize == "range":
        lo, hi = dask.compute(X.min(axis=0), X.max(axis=0))
        span = hi - lo
        X = (X - lo) / np.where(span == 0, 1.0, span)
    # the first K rows block by block: slicing the array graph (X[:K]) intermittently lost a block's key on
    # a distributed scheduler
    first: list[np.ndarray] = []
    for block in X.to_delayed().ravel():
        first.append(np.asarray(compute([block], "k-means start", client)[0]))
        if sum(len(f) for f in first) >= K:
            break
    labels, _ = lloyd_kmeans(X, np.concatenate(first)[:K], client=client)
    return 100.0 * matched_accuracy(labels, y)


def _float_block(df: pd.DataFrame) -> np.ndarray:
    return df.to_numpy(dtype=np.float64)


def _frame_array(ddf: dd.DataFrame, client: Any) -> da.Array:
    """A float64 array of a frame's partitions, as they are (``to_dask_array(lengths=True)`` may count the
    partitions of an optimised Parquet read, which can merge small files, and then disagree with them)."""
    parts = ddf.to_delayed()
    lengths = compute([dask.delayed(len, pure=False)(p) for p in parts], "partition lengths", client)
    m = len(ddf.columns)
    return da.concatenate([da.from_delayed(dask.delayed(_float_block, pure=False)(p), shape=(L, m), dtype=np.float64)
                           for p, L in zip(parts, lengths, strict=True)], axis=0)


def _id_hash(df: pd.DataFrame, col: str) -> np.ndarray:
    return pd.util.hash_pandas_object(df[col].astype(str), index=False).to_numpy()


LINKAGE_SAMPLE = 2000  #: rows in the record-linkage sample of :func:`evaluate` (about; see there)


def _sample_block(A: np.ndarray, B: np.ndarray, start: int, seed: int, frac: float) -> tuple[np.ndarray, np.ndarray]:
    """The rows of a block kept by the position-keyed draw (``u < frac``, ``u`` from the chunked stream)."""
    from ppdm.backends._blockwise import noise_rows

    u = noise_rows(seed, start, start + len(A), 1, lambda rng, shape: rng.random(shape))[:, 0]
    keep = u < frac
    return A[keep], B[keep]


def linkage_sample(A: da.Array, B: da.Array, size: int, seed: int, client: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """A seeded sample of matching rows of ``A`` and ``B``, gathered on the client.

    Row ``i`` is kept when its uniform draw is below ``size / n``; the draws come from the chunked stream
    of :func:`ppdm.backends._blockwise.noise_rows` (chunk ``c`` from ``SeedSequence(seed,
    spawn_key=(c,))``), so the sample depends on the seed and the row positions only, not on how the
    tables are partitioned. Its size is about ``size`` (binomial); the caller reports the actual size.
    """
    n = A.shape[0]
    frac = min(1.0, size / n) if n else 0.0
    starts = np.cumsum([0, *A.chunks[0][:-1]])
    tasks = [dask.delayed(_sample_block, pure=False)(a, b, int(s0), seed, frac)
             for a, b, s0 in zip(A.to_delayed(optimize_graph=False).ravel(),
                                 B.to_delayed(optimize_graph=False).ravel(), starts, strict=True)]
    parts = compute(tasks, "linkage sample", client)
    return np.vstack([p[0] for p in parts]), np.vstack([p[1] for p in parts])


def evaluate(original: Any, release: Any, *, label: str | None = None, id: str | None = None,
             columns: Sequence[str] | None = None, rank_mode: str = "sort_index",
             utility: Sequence[str] = ("kmeans",), linkage: int | None = LINKAGE_SAMPLE, seed: int = 0,
             scheduler: str | None = None, sep: str | None = None) -> dict[str, Any]:
    """Value distortion (RE, RP, RK, CP, CK), K-means utility and record linkage of a release, partitioned.

    Rows are matched by position (a dask release keeps the row order of its input); with ``id`` the two
    id columns must agree row by row. Columns default to the numeric columns both tables share, except
    ``id`` and ``label``. Record linkage (:func:`ppdm.attacks.linkage_rates`, the population attacker) runs
    in memory on a seeded sample of about ``linkage`` rows (:func:`linkage_sample`; ``None`` or 0: skip):
    each sampled released row is linked to its nearest sampled original, so chance is one over the sample
    size, stated in the result. Pairwise pattern metrics and SVM accuracy are not computed here; run
    :func:`ppdm.pipeline.evaluate` with ``sample=`` for them.
    """
    from ppdm.utils.validation import check_choice

    for name in utility:
        check_choice(name, "utility", ("kmeans",))
    if linkage is not None and linkage < 0:
        raise ParameterError(f"the linkage sample size must be positive; got {linkage}")
    with connect(scheduler) as conn:
        a, ha = open_table(original, sep=sep)
        b, hb = open_table(release, sep=sep)
        for name, head in (("original", ha), ("release", hb)):
            for flag, col in (("--label", label), ("--id", id)):
                if col is not None and col not in head.columns:
                    raise InputError(f"{flag} column '{col}' is missing from the {name} table")
        if columns is None:
            columns = [c for c in hb.columns if c in ha.columns and c not in (label, id)
                       and pd.api.types.is_numeric_dtype(ha[c]) and pd.api.types.is_numeric_dtype(hb[c])]
        else:
            from ppdm.data.schema import check_named

            # a named column either table lacks: said as the in-memory evaluate says it
            check_named(list(ha.columns), columns=columns, table="the original table")
            check_named(list(hb.columns), columns=columns, table="the release")
        if not columns:
            raise InputError("the tables share no numeric column to compare; check the files or --columns")
        A = _frame_array(a[list(columns)], conn["client"])
        B = _frame_array(b[list(columns)], conn["client"])
        if A.shape[0] != B.shape[0]:
            raise InputError(f"original has {A.shape[0]} rows and release {B.shape[0]}; compare matching tables")
        if id is not None:  # row-by-row agreement, 8 bytes per row on the client
            ia, ib = (np.concatenate(compute([dask.delayed(_id_hash, pure=False)(p, id) for p in t[[id]].to_delayed()],
                                              "ids", conn["client"])) for t in (a, b))
            if not np.array_equal(ia, ib):
                raise InputError(f"the id columns ('{id}') differ row by row; the dask backend matches rows by "
                                 "position: sort both tables alike")
        client = conn["client"]
        result: dict[str, Any] = {"n_rows": int(A.shape[0]), "columns": list(columns), "rank_mode": rank_mode,
                                  "backend": "dask", "value": value_metrics(A, B, rank_mode, client=client)}
        if label is not None and utility:
            y = a[label].compute().to_numpy()
            result["utility"] = {"kmeans_pct": {"original": kmeans_accuracy(A, y, client=client),
                                                "release": kmeans_accuracy(B, y, client=client)}}
        if linkage:
            from ppdm.attacks import linkage_rates

            A2 = as_array(A)
            As, Bs = linkage_sample(A2, as_array(B).rechunk(A2.chunks), int(linkage), seed, client)
            n = int(A.shape[0])
            if len(As) < 2:
                raise InputError(f"the linkage sample has {len(As)} row(s); raise --sample (the table has {n} rows)")
            result["linkage"] = linkage_rates(As, Bs) | {
                "sample": f"seeded sample of {len(As)} of {n} rows (each row kept with probability "
                          f"{min(1.0, linkage / n):.3g} by its position, seed {seed})",
                "n_sample": len(As)}
    return result
