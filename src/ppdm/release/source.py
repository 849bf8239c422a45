"""What the machine that asks for a release knows of a Parquet input without reading its rows (its files,
rows and column names), and the fingerprint by which the Dask workers that read it check they made the same
design (see :mod:`ppdm.release.cluster`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

__all__ = ["design_fingerprint", "parquet_columns", "parquet_files", "parquet_rows"]


def design_fingerprint(X: np.ndarray, columns: Sequence[str]) -> str:
    """SHA-256 of the design's column names, shape and values (read in place: no copy of the table)."""
    h = hashlib.sha256()
    h.update(json.dumps(list(columns)).encode())
    h.update(str(X.shape).encode())
    h.update(memoryview(np.ascontiguousarray(X)).cast("B"))
    return h.hexdigest()


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
