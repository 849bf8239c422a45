"""Where a Dask worker reads the design of a large table: the Parquet input itself, not a copy sent to it.

Confirming a candidate on every row needs the whole design. On a cluster, sending it from this machine would
make this machine's memory (and its network link) the limit; instead each worker reads the Parquet file(s)
the table came from (a path every worker sees: a shared file system or the same path on each machine),
makes the design exactly as this machine did (the same column schema, or the same fitted whole-table codec),
and checks its fingerprint before using it: a worker that sees a different file refuses with the reason.

A worker keeps the design it made for the next candidate of the same table (one table at a time).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["DesignSource", "design_fingerprint", "parquet_columns", "parquet_files", "parquet_rows", "parquet_source"]


def design_fingerprint(X: np.ndarray, columns: Sequence[str]) -> str:
    """SHA-256 of the design's column names, shape and values (read in place: no copy of the table)."""
    h = hashlib.sha256()
    h.update(json.dumps(list(columns)).encode())
    h.update(str(X.shape).encode())
    h.update(memoryview(np.ascontiguousarray(X)).cast("B"))
    return h.hexdigest()


@dataclass(frozen=True)
class DesignSource:
    """The Parquet file (or directory of them) of a table and how its design is made from it.

    ``schema``: the released columns (a numeric table); ``codec``: the fitted whole-table codec (a table of
    any column types), which then makes the design instead. ``fingerprint``: :func:`design_fingerprint` of
    the design this machine made.
    """

    path: str
    schema: Any
    codec: Any
    fingerprint: str
    rows: int

    def __len__(self) -> int:
        return self.rows

    def load_rows(self, y: Any, categories: Any, holdout: Any) -> tuple[np.ndarray, Any, Any, Any]:
        """What a confirmation measures: the design read here, with the label, the shown columns and the
        held-out rows sent with the task."""
        return self.load(), y, categories, holdout

    def load(self) -> np.ndarray:
        """The design, read from the files here (a worker), checked against the fingerprint; read-only."""
        from ppdm.exceptions import InputError

        with _LOCK:
            X = _LOADED.get(self.fingerprint)
            if X is not None:
                return X
            X = self._read()
            if design_fingerprint(X, self.schema.released) != self.fingerprint:
                raise InputError(
                    f"a Dask worker read a different table from '{Path(self.path).name}' than "
                    "this machine did; give the workers the same file (a shared path), or leave --backend dask out")
            X.flags.writeable = False  # candidates on this worker share it
            _LOADED.clear()  # one table at a time
            _LOADED[self.fingerprint] = X
            return X

    def _read(self) -> np.ndarray:
        from ppdm.data.io import read_table
        from ppdm.exceptions import InputError

        try:
            df = read_table(self.path)
        except InputError as e:
            raise InputError(f"a Dask worker cannot read the input: {e}") from None
        if self.codec is not None:
            return np.ascontiguousarray(self.codec.encode(df), dtype=np.float64)
        return self.schema.matrix(df, consume=True)


_LOCK = threading.Lock()
_LOADED: dict[str, np.ndarray] = {}


def parquet_files(source: object) -> list[Path] | None:
    """The Parquet files of a path a worker can read too (a file or a directory of them); None otherwise (a
    frame in memory, a glob, or CSV, which a worker would have to parse in full)."""
    import os

    from ppdm.data.io import expand_inputs, table_format

    if not isinstance(source, (str, os.PathLike)) or any(ch in str(source) for ch in "*?["):
        return None
    try:
        files = expand_inputs(source)
    except Exception:  # noqa: BLE001 (anything odd: the table is read here and sent instead)
        return None
    if not files or any(table_format(f) != "parquet" for f in files):
        return None
    return files


def parquet_rows(source: object) -> int | None:
    """The rows of a Parquet input (see :func:`parquet_files`), from the files' footers: no row is read."""
    files = parquet_files(source)
    if files is None:
        return None
    import pyarrow.parquet as pq

    try:
        return int(sum(pq.ParquetFile(f).metadata.num_rows for f in files))
    except Exception:  # noqa: BLE001 (pyarrow raises many types for damaged files; reading it says which)
        return None


def parquet_columns(source: object) -> list[str]:
    """The column names of a Parquet input (see :func:`parquet_files`), from its first file's schema."""
    import pyarrow.parquet as pq

    files = parquet_files(source)
    return [] if not files else [str(c) for c in pq.read_schema(files[0]).names]


def parquet_source(source: object, schema: Any, codec: Any, fingerprint: str, rows: int) -> DesignSource | None:
    """A :class:`DesignSource` for a table read from a Parquet file or a directory of them; None otherwise."""
    if parquet_files(source) is None:
        return None
    return DesignSource(str(Path(str(source)).resolve()), schema, codec, fingerprint, int(rows))
