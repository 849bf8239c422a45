"""The Dask backend: partitioned, out-of-core and distributed releases. The only module importing dask.

A release reads the table partition by partition, at most three times:

1. one pass of mergeable column statistics per partition (count, mean, centred cross-products,
   min, max, non-finite cells, partition lengths) -> the preprocessing and, for the SVD family, the
   ``m x m`` Gram matrix of the preprocessed data (the tall-skinny route, the same algebra as the
   in-memory backend);
2. only for column/exponential-threshold sparsified SVD (column means of ``|U|``) or a row block of a
   structural partition: one more reduction;
3. one release pass: each partition is released by a small :class:`PartitionRelease` object and
   written as one Parquet file of a temporary directory, renamed to the output when every part is done.

Only small things cross the network: the statistics back to the client, and to each worker the fitted
release object (the ``m x m`` operator, or the fitted mechanism with its key, or the noise seed).
Tasks get random keys (``pure=False``), so no key material is hashed into a task name.
"""

from __future__ import annotations

import contextlib
import operator
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

try:
    import dask
    import dask.array as da
    import dask.dataframe as dd
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the dask backend needs dask and distributed; install them with: pip install 'ppdm[dask]'"
    ) from e

from ppdm.backends._blockwise import ColumnStats, Hidden, PartitionRelease, scaled_gram, scaler_from_stats
from ppdm.exceptions import InputError, OutputError, ParameterError, PPDMError

__all__ = ["connect", "open_table", "perturb", "evaluate", "value_metrics", "lloyd_kmeans", "kmeans_accuracy",
           "linkage_sample"]

_GRAM_SIDE = 4096  # as the in-memory backend: the Gram route while the small side stays below this
_CSV_BLOCKSIZE = "64MB"
_PARQUET_BLOCKSIZE = "256MB"  # larger Parquet files are split by row groups
CONNECT_TIMEOUT = "20s"  # how long to wait for a --scheduler address to answer
_FROM_MEMORY_ROWS = 262_144  # rows per partition when a DataFrame/array is handed to the dask backend


# ---------------------------------------------------------------------------------------- cluster


@contextlib.contextmanager
def connect(scheduler: str | None = None) -> Iterator[dict[str, Any]]:
    """Where the work runs; yields ``{"client": Client | None, "cluster": str, "seconds": float}``.

    ``None``: an already active ``distributed.Client`` of this process if there is one, else a
    LocalCluster on 127.0.0.1 sized to the machine (dashboard on an ephemeral port), closed on exit.
    ``'synchronous'`` / ``'threads'``: dask's local schedulers, no cluster. Anything else is a
    scheduler address such as ``tcp://host:8786``.
    """
    t0 = time.perf_counter()
    if scheduler in ("synchronous", "threads"):
        with dask.config.set(scheduler=scheduler):
            yield {"client": None, "cluster": scheduler, "seconds": 0.0}
        return
    from distributed import Client

    if scheduler is None:
        from distributed import LocalCluster, get_client

        try:
            active = get_client()
        except ValueError:
            active = None
        if active is not None:
            yield {"client": active, "cluster": "existing client", "seconds": 0.0}
            return
        # loopback only; ":0" puts the scheduler's HTTP/dashboard server on an ephemeral port
        with LocalCluster(host="127.0.0.1", dashboard_address=":0", processes=True) as cluster, \
                Client(cluster) as client:
            n = len(cluster.workers)
            yield {"client": client, "cluster": f"local ({n} workers)", "seconds": time.perf_counter() - t0}
        return
    try:
        client = Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as e:
        raise ParameterError(
            f"cannot reach the Dask scheduler at '{scheduler}' ({type(e).__name__}); check --scheduler "
            "(tcp://host:port) and that the scheduler is running"
        ) from None
    with client:
        yield {"client": client, "cluster": "scheduler", "seconds": time.perf_counter() - t0}


def _compute(tasks: Sequence[Any], what: str, client: Any) -> list[Any]:
    """Compute delayed tasks, with a transient progress bar on a terminal when a cluster runs them."""
    if client is None or not tasks:
        return list(dask.compute(*tasks))
    from distributed import as_completed
    from rich.console import Console
    from rich.progress import Progress

    futures = client.compute(list(tasks))
    console = Console(stderr=True)
    with Progress(console=console, transient=True, disable=not console.is_terminal) as bar:
        job = bar.add_task(what, total=len(futures))
        for _ in as_completed(futures):
            bar.advance(job)
    return list(client.gather(futures))


# ------------------------------------------------------------------------------------------ input


def open_table(
    source: str | os.PathLike[str] | pd.DataFrame | np.ndarray,
    *,
    sep: str | None = None,
    npartitions: int | None = None,
) -> tuple[dd.DataFrame, pd.DataFrame]:
    """A lazy partitioned table and a small head of it (for column roles).

    Parquet files (one file, a directory or a glob) keep their files/row groups as partitions; a CSV
    file is split into blocks of 64 MB; a DataFrame or array is split into ``npartitions`` pieces.
    """
    from ppdm.data.io import _check_columns, expand_inputs, read_table

    if isinstance(source, (pd.DataFrame, np.ndarray)):
        df = read_table(source)
        parts = npartitions or max(1, -(-len(df) // _FROM_MEMORY_ROWS))
        return dd.from_pandas(df, npartitions=parts, sort=False), df.head(1000)
    files = expand_inputs(source)
    if all(f.suffix.lower() in (".parquet", ".pq") for f in files):
        import pyarrow.parquet as pq

        try:
            names = [pq.read_schema(f).names for f in files]
        except Exception as e:  # pyarrow raises many types for damaged files
            raise InputError(f"cannot read Parquet input ({type(e).__name__}); check that the files are Parquet") \
                from None
        for f, cols in zip(files, names, strict=True):
            if cols != names[0]:
                raise InputError(f"Parquet file '{f.name}' has other columns than '{files[0].name}'; use one schema")
        _check_columns([str(c) for c in names[0]], files[0].name)
        ddf = dd.read_parquet([str(f) for f in files], blocksize=_PARQUET_BLOCKSIZE)
        if npartitions:
            ddf = ddf.repartition(npartitions=npartitions)
        return ddf, ddf.partitions[0].head(1000, compute=True)
    if len(files) > 1:
        raise InputError("several text files matched; merge them first or use Parquet files")
    f = files[0]
    if sep is None:
        sep = "\t" if f.suffix.lower() in (".tsv", ".tab") else ","
    try:
        ddf = dd.read_csv(str(f), sep=sep, blocksize=_CSV_BLOCKSIZE, skipinitialspace=True,
                          float_precision="round_trip")
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise InputError(f"'{f.name}' cannot be parsed as a table ({type(e).__name__}); check its format and --sep") \
            from None
    cols = [str(c).strip() for c in ddf.columns]
    _check_columns(cols, f.name)
    ddf.columns = cols
    return ddf, ddf.head(1000, npartitions=1)


# ---------------------------------------------------------------------------------- partition work


def _part_stats(df: pd.DataFrame, released: list[str], id_col: str | None, tokens: tuple[str, ...]) -> tuple:
    """Pass 1 on one partition: column statistics, and (for record blocks) where the tokens sit."""
    X = df[released].to_numpy(dtype=np.float64)
    where: dict[str, int] = {}
    if id_col is not None and tokens:
        ids = df[id_col].astype(str).to_numpy()
        for t in tokens:
            hits = np.flatnonzero(ids == t)
            if hits.size:
                where[t] = int(hits[-1])
    return ColumnStats.of(X), where


def column_stats(parts: Sequence[Any], released: list[str], id_col: str | None, tokens: tuple[str, ...],
                 client: Any, *, where: str = "", hint: str = "") -> tuple[list[tuple], ColumnStats]:
    """One pass of per-partition column statistics (:func:`_part_stats`) and their merge.

    Refuses partitions that are not numbers and missing or infinite values with one line; ``where``
    names the table in those messages (e.g. ``"the new batch"``), ``hint`` extends the first one.
    """
    of, in_ = (f" of {where}", f" in {where}") if where else ("", "")
    try:
        res = _compute([dask.delayed(_part_stats, pure=False)(p, released, id_col, tokens) for p in parts],
                       f"{where or 'column'} statistics", client)
    except PPDMError:
        raise
    except (ValueError, TypeError) as e:
        raise InputError(f"a partition{of} could not be read as numbers ({type(e).__name__}); check that the "
                         f"released columns hold numbers only{hint}") from None
    total = res[0][0]
    for r in res[1:]:
        total = total.merge(r[0])
    if total.bad.any():
        j = int(np.flatnonzero(total.bad)[0])
        raise InputError(f"{int(total.bad.sum())} missing or infinite value(s){in_}, first in column "
                         f"'{released[j]}'; fill or drop those rows first")
    return res, total


def _part_block_stats(df: pd.DataFrame, released: list[str], rows: np.ndarray, cols: np.ndarray) -> ColumnStats:
    X = df[released].to_numpy(dtype=np.float64)
    return ColumnStats.of(X[np.ix_(rows, cols)])


def _part_abs_u(df: pd.DataFrame, released: list[str], rows: np.ndarray | None, cols: np.ndarray,
                offset: np.ndarray, scale: np.ndarray, key: Hidden) -> np.ndarray:
    """Column sums of ``|U|`` with ``U = Z V S^-1`` over the partition's block rows."""
    Vt, s = key.value
    X = df[released].to_numpy(dtype=np.float64)
    if rows is not None:
        X = X[rows]
    Z = (X[:, cols] - offset) / scale
    U = (Z @ Vt.T) / np.where(s > 0, s, 1.0)
    U[:, s <= 0] = 0.0
    return np.abs(U).sum(axis=0)


def _part_block_matrix(df: pd.DataFrame, released: list[str], rows: np.ndarray | None, cols: np.ndarray,
                       offset: np.ndarray, scale: np.ndarray) -> np.ndarray:
    X = df[released].to_numpy(dtype=np.float64)
    if rows is not None:
        X = X[rows]
    return (X[:, cols] - offset) / scale


def _check_length(df: pd.DataFrame, expected: int) -> None:
    if len(df) != expected:
        raise InputError("a partition changed size between two passes over the input (was it modified while "
                         "ppdm read it?); rerun on a stable copy")


def _part_write(df: pd.DataFrame, start: int, n: int, rows: np.ndarray | None, rel: PartitionRelease, folder: str,
                i: int, factors: np.ndarray | None = None) -> np.ndarray:
    _check_length(df, n)
    out, stats = rel(df, start, rows, factors)
    out.to_parquet(Path(folder) / f"part.{i:05d}.parquet", index=False)
    return stats


def _part_release(df: pd.DataFrame, start: int, n: int, rows: np.ndarray | None,
                  rel: PartitionRelease, factors: np.ndarray | None = None) -> pd.DataFrame:
    _check_length(df, n)
    return rel(df, start, rows, factors)[0]


class _Runner:
    """Per-partition values kept where they were computed: futures on a cluster, arrays without one."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def persist(self, tasks: Sequence[Any]) -> list[Any]:
        if self.client is None:
            return list(dask.compute(*tasks))
        return list(self.client.compute(list(tasks)))

    def map(self, fn: Any, *lists: Any, **kwargs: Any) -> list[Any]:
        if self.client is None:
            return [fn(*args, **kwargs) for args in zip(*lists, strict=True)]
        return list(self.client.map(fn, *lists, pure=False, **kwargs))

    def split(self, pairs: list[Any]) -> tuple[list[Any], list[Any]]:
        """The first and second items of per-partition pairs, left where they are."""
        return self.map(operator.itemgetter(0), pairs), self.map(operator.itemgetter(1), pairs)

    def gather(self, items: list[Any]) -> list[Any]:
        return list(items) if self.client is None else list(self.client.gather(items))


# ---------------------------------------------------------------------------------------- fitting


def _svd_factors(G: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    from ppdm.utils.linalg import svd_flip_v

    w, V = np.linalg.eigh(G)
    w, V = w[::-1][:k], V[:, ::-1][:, :k]
    _, Vt = svd_flip_v(V.T)
    return np.sqrt(np.clip(w, 0.0, None)), Vt


def _dask_svd(Z: da.Array, k: int, solver: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """TSQR (``exact``) or compressed randomized SVD of a lazy matrix; signs as the in-memory backend."""
    from ppdm.utils.linalg import svd_flip_v

    if solver == "exact":
        _, s, Vt = da.linalg.svd(Z.rechunk({1: -1}))
    else:
        _, s, Vt = da.linalg.svd_compressed(Z, k, n_power_iter=4, seed=seed % 2**32)
    s, Vt = dask.compute(s[:k], Vt[:k])
    _, Vt = svd_flip_v(np.asarray(Vt))
    return np.asarray(s), Vt


class _Fitter:
    """Fits a mechanism from the statistics of its block (and, when needed, extra passes)."""

    def __init__(self, parts: list[Any], released: list[str], starts: list[int], local_rows: list[Any],
                 client: Any) -> None:
        self.parts, self.released, self.starts, self.local_rows, self.client = parts, released, starts, \
            local_rows, client
        self.factors: list[Any] | None = None  # NMF: per-partition handles of the released factor rows

    def block_array(self, cols: np.ndarray, offset: np.ndarray, scale: np.ndarray, lengths: list[int]) -> da.Array:
        m = len(cols)
        blocks = [da.from_delayed(dask.delayed(_part_block_matrix, pure=False)(p, self.released, r, cols, offset,
                                                                            scale), shape=(n, m), dtype=float)
                  for p, r, n in zip(self.parts, self.local_rows, lengths, strict=True) if n > 0]
        return da.concatenate(blocks, axis=0)

    def svd(self, mech: Any, st: ColumnStats, cols: np.ndarray, offset: np.ndarray, scale: np.ndarray,
            lengths: list[int]) -> tuple[np.ndarray, np.ndarray, str, np.ndarray]:
        from ppdm.mechanisms.base import seed_from
        from ppdm.utils.linalg import SVD_SOLVERS
        from ppdm.utils.validation import check_choice, check_rank

        n, m = st.n, len(cols)
        k = check_rank(mech.rank, n, m)
        solver = check_choice(mech.solver, "solver", SVD_SOLVERS)
        G = scaled_gram(st, offset, scale)
        if solver == "auto":
            solver = "gram" if m <= _GRAM_SIDE and n >= m else "randomized"
        if solver == "gram":
            s, Vt = _svd_factors(G, k)
            return s, Vt, "gram", G
        Z = self.block_array(cols, offset, scale, lengths)
        used = "exact" if solver == "exact" else "randomized"
        s, Vt = _dask_svd(Z, k, used, seed_from(mech.random_state))
        return s, Vt, f"dask-{'tsqr' if used == 'exact' else 'compressed'}", G

    def fit(self, mech: Any, st: ColumnStats, cols: np.ndarray, offset: np.ndarray, scale: np.ndarray,
            lengths: list[int]) -> Any:
        from ppdm.mechanisms.nmf import NMF
        from ppdm.mechanisms.noise import AdditiveNoise, MultiplicativeNoise
        from ppdm.mechanisms.projection import RandomProjection, RandomRotation
        from ppdm.mechanisms.sparsified import SparsifiedSVD
        from ppdm.mechanisms.svd import ThinSVD

        m = len(cols)
        if isinstance(mech, ThinSVD):
            s, Vt, used, G = self.svd(mech, st, cols, offset, scale, lengths)
            if used == "gram":
                return mech.fit_from_gram(G, st.n)
            mech.n_features_in_, mech.components_, mech.singular_values_, mech.solver_ = m, Vt, s, used
            return mech
        if isinstance(mech, SparsifiedSVD):
            return self._fit_sparsified(mech, st, cols, offset, scale, lengths)
        if isinstance(mech, NMF):
            return self._fit_nmf(mech, st, cols, offset, scale, lengths)
        if isinstance(mech, RandomProjection) and mech.kind in ("rpa", "rpoa"):
            raise ParameterError(f"projection kind '{mech.kind}' mixes records (an n x n matrix) and has no "
                                 "partitioned form; use kind='arp' or 'arpo', or --backend numpy")
        if isinstance(mech, (RandomProjection, RandomRotation, AdditiveNoise, MultiplicativeNoise)):
            # these draw their key from the seed and the column count only
            mech.fit(np.zeros((2, m)))
            if isinstance(mech, RandomProjection):
                mech.n_rows_ = st.n
            return mech
        raise ParameterError(f"{type(mech).__name__} has no Dask implementation yet; use --backend numpy")

    def _fit_nmf(self, mech: Any, st: ColumnStats, cols: np.ndarray, offset: np.ndarray, scale: np.ndarray,
                 lengths: list[int]) -> Any:
        from ppdm.backends._nmf import fit_nmf
        from ppdm.mechanisms.base import seed_from

        run = _Runner(self.client)
        # the preprocessed block stays in the workers' memory for the iterations
        Z = run.persist([dask.delayed(_part_block_matrix, pure=False)(p, self.released, r, cols, offset, scale)
                         for p, r in zip(self.parts, self.local_rows, strict=True)])
        starts = [int(s) for s in np.cumsum([0, *lengths[:-1]])]
        self.factors = fit_nmf(mech, run, Z, starts, st.n, len(cols), seed_from(mech.random_state))
        return mech

    def _fit_sparsified(self, mech: Any, st: ColumnStats, cols: np.ndarray, offset: np.ndarray,
                        scale: np.ndarray, lengths: list[int]) -> Any:
        from ppdm.mechanisms.sparsified import STRATEGIES, column_thresholds, sparsify
        from ppdm.utils.validation import check_choice, check_real

        check_choice(mech.strategy, "strategy", STRATEGIES)
        eps_u = check_real(mech.eps_u, "eps_u", low=0.0, high=1.0, high_open=True)
        eps_v = check_real(mech.eps_v, "eps_v", low=0.0, high=1.0, high_open=True)
        s, Vt, used, _ = self.svd(mech, st, cols, offset, scale, lengths)
        k = len(s)
        alpha = 1.0 / k if mech.alpha is None else check_real(mech.alpha, "alpha", low=0.0, low_open=True)
        mean_abs_u = np.zeros(k)
        if mech.strategy != "sts":
            tasks = [dask.delayed(_part_abs_u, pure=False)(p, self.released, r, cols, offset, scale,
                                                                   Hidden((Vt, s)))
                     for p, r in zip(self.parts, self.local_rows, strict=True)]
            mean_abs_u = np.sum(_compute(tasks, "column means of |U|", self.client), axis=0) / st.n
        mech.n_features_in_ = len(cols)
        mech.components_, mech.singular_values_, mech.solver_ = Vt, s, used
        # thresholds of a matrix whose column means of |.| are mean_abs_u: the in-memory formula, reused
        mech.u_thresholds_ = column_thresholds(mean_abs_u[None, :], eps_u, mech.strategy, alpha)
        mech.v_thresholds_ = column_thresholds(Vt.T, eps_v, mech.strategy, alpha)
        mech.sparse_components_ = sparsify(Vt.T, mech.v_thresholds_).T
        return mech


def _gather_factors(handles: list[Any], client: Any, n: int, k: int) -> np.ndarray:
    """Every row's NMF factors on the client (for the state file or a lazy release): ``8 n k`` bytes."""
    from ppdm.utils.validation import check_memory

    check_memory(8.0 * n * k, f"the NMF factors of {n} rows", "write the release with -o and no --state")
    return np.vstack(_Runner(client).gather(handles))


def _fused_operator(P: np.ndarray, offset: np.ndarray, scale: np.ndarray, units: str) -> tuple[np.ndarray, np.ndarray]:
    """``((X - off) / sc) @ P`` (mapped back with ``* sc + off``) as ``X @ M + b``; as ppdm.pipeline."""
    if units == "original":
        M = (P / scale[:, None]) * scale[None, :]
        return M, offset - offset @ M
    M = P / scale[:, None]
    return M, -(offset / scale) @ P


def _linear_key(mech: Any) -> np.ndarray | None:
    from ppdm.mechanisms.projection import RandomProjection

    if isinstance(mech, RandomProjection):
        return mech.projection_
    op = getattr(mech, "linear_operator", None)
    return op() if op is not None else None


# -------------------------------------------------------------------------------------- partitions


def _record_block(spec: str | None, id_col: str | None, found: dict[str, int], n: int) -> int | list[int] | None:
    """Record block of a structural partition, resolved as the in-memory backend does (ids or 1..n)."""
    if spec is None:
        return None
    spec = spec.strip()
    if id_col is None:  # records are named 1..n, as in the in-memory backend
        pos_of = {t: int(t) - 1 for t in (x.strip() for x in spec.split(","))
                  if t.isdigit() and 1 <= int(t) <= n and str(int(t)) == t}
    else:
        pos_of = found

    def known(t: str) -> bool:
        return t in pos_of
    if spec.isdigit() and not known(spec):
        return int(spec)
    pos = []
    for token in (t.strip() for t in spec.split(",") if t.strip()):
        if not known(token):
            raise InputError(f"record '{token}' is not in the table; check the names (or give a count)")
        pos.append(pos_of[token])
    return pos


def _tokens(spec: str | None) -> tuple[str, ...]:
    return tuple(t.strip() for t in spec.split(",") if t.strip()) if spec else ()


# ----------------------------------------------------------------------------------------- output


def _check_dask_output(output: str | os.PathLike[str], source: object, force: bool) -> Path:
    from ppdm.data.io import check_output_path, expand_inputs

    out = Path(output)
    if out.suffix.lower() in (".csv", ".tsv", ".txt"):
        raise ParameterError("the dask backend writes a directory of Parquet files; give an output path without "
                             "a .csv suffix (e.g. release_parquet/)")
    inputs = [source] if isinstance(source, (str, os.PathLike)) else []
    out = check_output_path(out, inputs=inputs, force=force)
    if inputs:
        for f in expand_inputs(source):  # type: ignore[arg-type]
            if out.resolve() in f.resolve().parents:
                raise OutputError(f"output '{out.name}' holds the input files; choose another output path")
    return out


def _publish(tmp: Path, out: Path) -> None:
    """Move the finished temporary directory into place (an existing output is replaced only after)."""
    old = None
    if out.exists() or out.is_symlink():
        old = out.with_name(f".{out.name}.old-{uuid.uuid4().hex[:8]}")
        os.replace(out, old)
    os.replace(tmp, out)
    if old is not None:
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old)
        else:
            old.unlink()


# ---------------------------------------------------------------------------------------- perturb


def perturb(
    source: str | os.PathLike[str] | pd.DataFrame | np.ndarray,
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
    output: str | os.PathLike[str] | None = None,
    state: str | os.PathLike[str] | None = None,
    force: bool = False,
    seed: int | None = 0,
    sep: str | None = None,
    scheduler: str | None = None,
    npartitions: int | None = None,
    key: Any = None,
    keep_ids: bool = True,
) -> Any:
    """Release a table on Dask; the arguments are those of :func:`ppdm.pipeline.perturb`.

    ``key`` (a :class:`ppdm.keys.ReleaseKey`) goes to the state; unless ``keep_ids``, the rows of every
    partition are shuffled and the ids replaced by keyed pseudonyms (partitions stay in order).

    The release goes to ``output`` as a directory of Parquet files (one per input partition, in row
    order). Without ``output`` the returned ``release`` is a lazy dask DataFrame.
    """
    from ppdm import registry
    from ppdm.data.io import check_output_path
    from ppdm.data.preprocess import PREPROCESSING
    from ppdm.data.schema import resolve_schema
    from ppdm.mechanisms.noise import AdditiveNoise, MultiplicativeNoise
    from ppdm.pipeline import PerturbResult, _positions, check_magnitude, save_release_state
    from ppdm.utils.validation import check_choice

    check_choice(preprocess, "preprocess", PREPROCESSING)
    check_choice(release_units, "release_units", ("original", "preprocessed"))
    out_path = _check_dask_output(output, source, force) if output is not None else None
    inputs = [source] if isinstance(source, (str, os.PathLike)) else []
    state_path = check_output_path(state, inputs=inputs, force=force, what="state file") if state else None
    if out_path is not None and state_path is not None and out_path.resolve() == state_path.resolve():
        raise ParameterError("the release and the state file must be different paths")
    with connect(scheduler) as conn:
        t0 = time.perf_counter()
        client = conn["client"]
        ddf, head = open_table(source, sep=sep, npartitions=npartitions)
        schema = resolve_schema(head, columns=columns, id=id, label=label, drop=drop, drop_other=drop_other)
        released = list(schema.released)
        mech = registry.build(method, params, random_state=seed)
        tokens = _tokens(partition_rows) if schema.id is not None else ()
        need = released + ([schema.id] if tokens and schema.id not in released else [])
        res, total = column_stats(ddf[need].to_delayed(), released, schema.id, tokens, client,
                                  hint=", or leave them out with --drop")
        lengths = [r[0].n for r in res]
        n, m = total.n, len(released)
        if n < 2:
            raise InputError(f"the table has {n} data row; a release needs at least two rows")
        check_magnitude(np.vstack([total.lo, total.hi]))
        starts = list(np.cumsum([0, *lengths[:-1]]).astype(int))
        scaler = scaler_from_stats(preprocess, total)

        from ppdm.mechanisms.partition import StructuralPartition

        top = mech
        rows_all: np.ndarray | None = None
        cols = np.arange(m)
        wrap = partition_rows is not None or partition_columns is not None
        if wrap and isinstance(mech, StructuralPartition):
            raise ParameterError("method 'partition' already names its block; drop --partition-rows/--partition-"
                                 "columns or choose the inner method with --method")
        if wrap or isinstance(mech, StructuralPartition):
            if wrap:
                found: dict[str, int] = {}
                for (_, where), s0 in zip(res, starts, strict=True):
                    found.update({t: s0 + i for t, i in where.items()})
                r = _record_block(partition_rows, schema.id, found, n)
                c = _positions(partition_columns, released, "column")
                scheme = "both" if r is not None and c is not None else ("rows" if r is not None else "columns")
                top = StructuralPartition(mech, scheme=scheme, rows=r, columns=c)
            top._resolve(n, m)
            scheme = top.scheme
            top.n_rows_, top.n_features_in_ = n, m
            cols = top.columns_
            if scheme != "columns":
                rows_all = top.rows_
            mech = top._inner()
        local_rows: list[np.ndarray | None] = [None] * len(lengths)
        if rows_all is None:
            block, block_lengths = total.subset(cols), lengths
        else:
            local_rows = [rows_all[np.searchsorted(rows_all, s0):np.searchsorted(rows_all, s0 + L)] - s0
                          for s0, L in zip(starts, lengths, strict=True)]
            tasks = [dask.delayed(_part_block_stats, pure=False)(p, released, lr, cols)
                     for p, lr in zip(ddf[released].to_delayed(), local_rows, strict=True)]
            stats = _compute(tasks, "block statistics", client)
            block = stats[0]
            for s_ in stats[1:]:
                block = block.merge(s_)
            block_lengths = [len(lr) for lr in local_rows]  # type: ignore[arg-type]
        fitter = _Fitter(ddf[released].to_delayed(), released, starts, local_rows, client)
        mech = fitter.fit(mech, block, cols, scaler.offset_[cols], scaler.scale_[cols], block_lengths)
        if top is not mech:
            top.mechanism_ = mech

        from ppdm.keys import release_key

        key = key if key is not None else release_key(seed)
        rel = PartitionRelease(schema, scaler, release_units, mechanism=mech,
                               columns=None if top is mech else cols, identity_key=None if keep_ids else key)
        if isinstance(mech, (AdditiveNoise, MultiplicativeNoise)):
            rel.noise_seed = int(mech.seed_)
        elif top is mech and (P := _linear_key(mech)) is not None:
            rel.operator = _fused_operator(P, scaler.offset_, scaler.scale_, release_units)
            rel.mechanism = None
        facs: list[Any] = [None] * len(lengths)
        if fitter.factors is not None:  # NMF releases its own factor rows, which stay per partition
            from ppdm.backends._nmf import without_factors

            rel.mechanism = without_factors(mech)
            if out_path is None or state_path is not None:
                mech.factors_ = _gather_factors(fitter.factors, client, block.n, mech.components_.shape[0])
                # a lazy release must outlive a local cluster: its tasks get the rows' factors themselves
                if out_path is None:
                    facs = np.split(mech.factors_, np.cumsum(block_lengths)[:-1])
            if out_path is not None:
                facs = fitter.factors
        parts = ddf.to_delayed()
        if len(parts) != len(lengths):
            raise InputError("the input's partitions changed between two passes (was it modified while ppdm read "
                             "it?); rerun on a stable copy")
        from ppdm.keys import Identity

        # the within-partition permutations are regenerated from the key; ids align through the pseudonyms
        identity = Identity(np.zeros(0, dtype=np.int64), kept=True) if keep_ids else None
        summary: dict[str, Any] = {"method": method, "backend": "dask", "cluster": conn["cluster"],
                                   "cluster_seconds": conn["seconds"], "n_rows": n, "n_released_columns": m,
                                   "n_partitions": len(parts), "preprocess": preprocess, "re": None,
                                   "key": key.describe(),
                                   "identity": {"layout": "linkable: original ids in the original row order "
                                                          "(--keep-ids)" if keep_ids else
                                                "rows shuffled within each partition"
                                                + (f", ids in '{schema.id}' replaced by keyed pseudonyms"
                                                   if schema.id else "") + "; the mapping is in the state file only"}}
        release: Any
        if out_path is None:
            meta = schema.assemble(head.iloc[:2].reset_index(drop=True), np.zeros((min(2, len(head)), m)))
            release = dd.from_delayed([dask.delayed(_part_release, pure=False)(p, s0, L, lr, rel, f)
                                       for p, s0, L, lr, f in zip(parts, starts, lengths, local_rows, facs,
                                                                  strict=True)],
                                      meta=meta.iloc[:0])
        else:
            tmp = Path(tempfile.mkdtemp(prefix=f".{out_path.name}.", suffix=".tmp", dir=out_path.parent))
            try:
                from ppdm.data.io import dir_mode

                os.chmod(tmp, dir_mode())  # the user's umask, like any new directory
                tasks = [dask.delayed(_part_write, pure=False)(p, s0, L, lr, rel, str(tmp), i, f)
                         for i, (p, s0, L, lr, f) in enumerate(zip(parts, starts, lengths, local_rows, facs,
                                                                   strict=True))]
                ss = np.sum(_compute(tasks, "release", client), axis=0)
                if ss[2] > 0:
                    raise InputError("the release has non-finite values (the input is too close to overflow); "
                                     "rescale it")
                if state_path is not None:
                    save_release_state(state_path, top, scaler, schema, method=method, key=key, identity=identity)
                _publish(tmp, out_path)
            finally:
                if tmp.exists():
                    shutil.rmtree(tmp, ignore_errors=True)
            summary["re"] = float(np.sqrt(ss[0] / ss[1])) if ss[1] > 0 else 0.0
            release = dd.read_parquet(str(out_path))  # lazy: nothing is read until used
        if out_path is None and state_path is not None:
            save_release_state(state_path, top, scaler, schema, method=method, key=key, identity=identity)
        summary["seconds"] = time.perf_counter() - t0
    return PerturbResult(release, top, scaler, schema, summary, out_path, state_path)


# ------------------------------------------------------------------------------ metrics and K-means


def as_array(X: Any, chunk_rows: int = _FROM_MEMORY_ROWS) -> da.Array:
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
        for s_abs, s_eq in _compute(tasks, "column ranks", client):
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
        res = _compute([dask.delayed(_lloyd_step, pure=False)(b, C) for b in blocks], "k-means", client)
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
        first.append(np.asarray(_compute([block], "k-means start", client)[0]))
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
    lengths = _compute([dask.delayed(len, pure=False)(p) for p in parts], "partition lengths", client)
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
    parts = _compute(tasks, "linkage sample", client)
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
        missing = [c for c in columns if c not in ha.columns or c not in hb.columns]
        if not columns or missing:
            raise InputError("the tables share no numeric column to compare (or a named column is missing); "
                             "check the files or --columns")
        A = _frame_array(a[list(columns)], conn["client"])
        B = _frame_array(b[list(columns)], conn["client"])
        if A.shape[0] != B.shape[0]:
            raise InputError(f"original has {A.shape[0]} rows and release {B.shape[0]}; compare matching tables")
        if id is not None:  # row-by-row agreement, 8 bytes per row on the client
            ia, ib = (np.concatenate(_compute([dask.delayed(_id_hash, pure=False)(p, id) for p in t[[id]].to_delayed()],
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
