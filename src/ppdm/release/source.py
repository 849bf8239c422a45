"""What the machine that asks for a release knows of an input without reading its rows (a Parquet input's
files, rows and column names; a text table's header and an estimate of its rows), and the fingerprint by
which the Dask workers that read it check they made the same design (see :mod:`ppdm.release.cluster`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

__all__ = ["design_fingerprint", "estimated_text_rows", "input_kind", "parquet_columns", "parquet_files",
           "parquet_rows", "text_table"]


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
    from ppdm.data.io import expand_inputs, table_format

    if _one_path(source) is None:
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


def text_table(source: object) -> Path | None:
    """The one CSV/TSV file ``source`` names (a worker can read it too); None otherwise (a frame, a glob,
    Parquet)."""
    from ppdm.data.io import table_format

    path = _one_path(source)
    return path if path is not None and path.is_file() and table_format(path) == "csv" else None


def _one_path(source: object) -> Path | None:
    """``source`` as a path a worker can open as it is (not a frame, not a glob to expand)."""
    import os

    if not isinstance(source, (str, os.PathLike)) or any(ch in str(source) for ch in "*?["):
        return None
    return Path(source)


#: the bytes of a text table whose lines estimate its rows
_SAMPLE_BYTES = 1 << 20


def estimated_text_rows(path: Path) -> int:
    """The data rows of a text table, estimated from its size and its first lines (a file that fits in the
    sample is counted exactly); only to decide who reads it, never reported."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(_SAMPLE_BYTES)
    lines = head.count(b"\n")
    if len(head) >= size:
        return max(0, lines - 1 + (not head.endswith(b"\n")))
    return int(size / (len(head) / max(lines, 1))) - 1


def input_kind(source: object) -> str:
    """What the record calls an input a worker reads: ``Parquet``, ``CSV`` or ``TSV``."""
    if parquet_files(source) is not None:
        return "Parquet"
    return "TSV" if Path(str(source)).suffix.lower() in (".tsv", ".tab") else "CSV"
