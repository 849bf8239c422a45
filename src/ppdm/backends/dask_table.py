"""Tables on Dask: opening CSV/Parquet/frames as partitions, per-partition statistics and releases, and the
directory of Parquet files a release is published as (temporary directory, then one rename)."""

from __future__ import annotations

import operator
import os
import shutil
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from ppdm.backends._blockwise import ColumnStats, Hidden, PartitionRelease
from ppdm.backends.dask_cluster import FROM_MEMORY_ROWS, compute
from ppdm.exceptions import InputError, OutputError, ParameterError, PPDMError

__all__ = ["Runner", "check_dask_output", "column_stats", "open_table", "part_abs_u", "part_block_matrix",
           "part_block_stats", "part_release", "part_write", "publish"]


_CSV_BLOCKSIZE = "64MB"


_PARQUET_BLOCKSIZE = "256MB"  # larger Parquet files are split by row groups


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
    from ppdm.data.io import check_columns, expand_inputs, read_table

    if isinstance(source, (pd.DataFrame, np.ndarray)):
        df = read_table(source)
        parts = npartitions or max(1, -(-len(df) // FROM_MEMORY_ROWS))
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
        check_columns([str(c) for c in names[0]], files[0].name)
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
    check_columns(cols, f.name)
    ddf.columns = cols
    return ddf, ddf.head(1000, npartitions=1)


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
        res = compute([dask.delayed(_part_stats, pure=False)(p, released, id_col, tokens) for p in parts],
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


def part_block_stats(df: pd.DataFrame, released: list[str], rows: np.ndarray, cols: np.ndarray) -> ColumnStats:
    X = df[released].to_numpy(dtype=np.float64)
    return ColumnStats.of(X[np.ix_(rows, cols)])


def part_abs_u(df: pd.DataFrame, released: list[str], rows: np.ndarray | None, cols: np.ndarray,
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


def part_block_matrix(df: pd.DataFrame, released: list[str], rows: np.ndarray | None, cols: np.ndarray,
                       offset: np.ndarray, scale: np.ndarray) -> np.ndarray:
    X = df[released].to_numpy(dtype=np.float64)
    if rows is not None:
        X = X[rows]
    return (X[:, cols] - offset) / scale


def _check_length(df: pd.DataFrame, expected: int) -> None:
    if len(df) != expected:
        raise InputError("a partition changed size between two passes over the input (was it modified while "
                         "ppdm read it?); rerun on a stable copy")


def part_write(df: pd.DataFrame, start: int, n: int, rows: np.ndarray | None, rel: PartitionRelease, folder: str,
                i: int, factors: np.ndarray | None = None) -> np.ndarray:
    _check_length(df, n)
    out, stats = rel(df, start, rows, factors)
    out.to_parquet(Path(folder) / f"part.{i:05d}.parquet", index=False)
    return stats


def part_release(df: pd.DataFrame, start: int, n: int, rows: np.ndarray | None,
                  rel: PartitionRelease, factors: np.ndarray | None = None) -> pd.DataFrame:
    _check_length(df, n)
    return rel(df, start, rows, factors)[0]


class Runner:
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


def check_dask_output(output: str | os.PathLike[str], source: object, force: bool) -> Path:
    from ppdm.data.io import check_output_path, expand_inputs

    out = Path(output)
    if out.suffix.lower() in (".csv", ".tsv", ".txt"):
        raise ParameterError("the dask backend writes a directory of Parquet files; give an output path without "
                             "a .csv suffix (e.g. release_parquet/)")
    inputs = [source] if isinstance(source, (str, os.PathLike)) else []
    out = check_output_path(out, inputs=inputs, force=force, directory=True)
    if inputs:
        for f in expand_inputs(source):  # type: ignore[arg-type]
            if out.resolve() in f.resolve().parents:
                raise OutputError(f"output '{out.name}' holds the input files; choose another output path")
    return out


def publish(tmp: Path, out: Path) -> None:
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
