"""Reading tables from CSV/TSV/Parquet/DataFrame/ndarray, and writing outputs atomically.

Outputs are written to a temporary file in the destination directory and renamed into place, so a
crash never leaves a half-written file; an output is never an input and is never overwritten unless
``force`` is given (:mod:`ppdm.data.outputs`, :mod:`ppdm.data.publish`).
"""

from __future__ import annotations

import csv
import glob
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.data.outputs import (
    atomic_write,
    check_output_path,
    check_outputs,
    current_umask,
    dir_mode,
    file_mode,
    is_stream,
    output_lock,
    output_set,
    publish_together,
)
from ppdm.exceptions import InputError, OutputError

__all__ = ["read_table", "write_table", "atomic_write", "check_output_path", "check_outputs", "table_format",
           "output_format", "check_table_output",
           "expand_inputs", "text_columns", "output_lock", "output_set", "file_mode", "dir_mode", "current_umask",
           "is_stream", "publish_together", "parquet_data_columns", "read_parquet_rows"]

_TEXT_FORMATS = {".csv": ",", ".tsv": "\t", ".tab": "\t", ".txt": None}
_PARQUET = {".parquet", ".pq"}


def table_format(path: str | os.PathLike[str]) -> str:
    """Return ``'csv'`` or ``'parquet'`` for an output path, from its suffix."""
    return "parquet" if Path(path).suffix.lower() in _PARQUET else "csv"


#: what a table output is written as, by its suffix (a name without one, or a stream such as /dev/stdout: CSV)
_WRITE_FORMATS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".parquet": "parquet", ".pq": "parquet"}


def output_format(path: str | os.PathLike[str]) -> str:
    """``'csv'``, ``'tsv'`` (tab-separated) or ``'parquet'``: how :func:`write_table` writes ``path``."""
    return _WRITE_FORMATS.get(Path(path).suffix.lower(), "csv")


def check_table_output(path: str | os.PathLike[str] | None, what: str = "-o") -> None:
    """Refuse, before any work, a table output whose suffix names a format ppdm does not write.

    Parameters
    ----------
    path : path-like or None
        The output (None: no output, nothing to check).
    what : str, default '-o'
        The option that names it, for the message.

    Raises
    ------
    OutputError
        For a suffix other than .csv, .tsv, .tab, .parquet or .pq: such a file (release.xlsx, .json) would
        hold CSV text under a name that promises another format. A name without a suffix, or a stream
        (/dev/stdout), is written as CSV.
    """
    if path is None or is_stream(path):
        return
    suffix = Path(path).suffix
    if suffix and suffix.lower() not in _WRITE_FORMATS:
        raise OutputError(f"{what} '{Path(path).name}' ends in {suffix}, a format ppdm does not write; name "
                          "it .csv, .tsv or .parquet")


def expand_inputs(source: str | os.PathLike[str]) -> list[Path]:
    """Expand a path, a directory of Parquet files or a glob into the list of files it names (a path that
    exists is itself, whatever characters its name holds)."""
    s = str(source)
    # a file whose own name holds glob characters ("survey[2024].csv") is read as itself
    if any(ch in s for ch in "*?[") and not Path(s).exists():
        files = sorted(Path(f) for f in glob.glob(s))
        if not files:
            raise InputError(f"no file matches the pattern '{s}'; check the path and the quotes around it")
        return files
    p = Path(s)
    try:
        p.resolve(strict=False)
    except (RuntimeError, OSError):
        raise InputError(f"input '{s}' is a symbolic link loop (or cannot be resolved); check the path") from None
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.suffix.lower() in _PARQUET)
        if not files:
            raise InputError(f"directory '{p.name}' holds no .parquet files; pass a CSV/Parquet file or a glob")
        return files
    if not p.exists():
        raise InputError(f"input file '{s}' does not exist; check the path")
    return [p]


def read_table(
    source: str | os.PathLike[str] | pd.DataFrame | np.ndarray,
    *,
    sep: str | None = None,
) -> pd.DataFrame:
    """Read a table into a DataFrame.

    Parameters
    ----------
    source : path, glob, DataFrame or ndarray
        CSV/TSV/Parquet file, a directory or glob of Parquet files, a DataFrame (copied) or a 2-D array
        (columns named ``x1..xm``).
    sep : str, optional
        Field separator for text files; by default ``,`` (``\\t`` for ``.tsv``).

    Returns
    -------
    pandas.DataFrame
    """
    if isinstance(source, pd.DataFrame):
        check_columns(list(map(str, source.columns)), "DataFrame")
        df = source.copy()
        df.columns = [str(c) for c in df.columns]
        return _check_rows(df, "DataFrame")
    if isinstance(source, np.ndarray):
        if source.ndim != 2:
            raise InputError(f"array input must be 2-D, got {source.ndim}-D; reshape it to (n_rows, n_columns)")
        return _check_rows(pd.DataFrame(source, columns=[f"x{j + 1}" for j in range(source.shape[1])]), "array")
    files = expand_inputs(source)
    _check_input_size(files)
    if all(f.suffix.lower() in _PARQUET for f in files):
        return _read_parquet(files)
    if len(files) > 1:
        raise InputError("several text files matched; merge them first or use Parquet files")
    return _read_text(files[0], sep)


#: bytes a text table needs at the least while it is read, per byte on disk (its raw bytes; parsing needs more,
#: which the guards after reading check against the table's real shape)
_TEXT_READ_FACTOR = 1.0
#: bytes held while Parquet is read, per value (the Arrow table and the frame)
_PARQUET_VALUE_BYTES = 16.0


def _check_input_size(files: Sequence[Path]) -> None:
    """Refuse, before reading a byte, an input that cannot be read within the memory budget."""
    from ppdm.utils.memory import check_memory, format_bytes

    total = 0.0
    for f in files:
        try:
            st = f.stat()
        except OSError as e:
            raise InputError(f"cannot read '{f.name}' ({e.strerror}); check the path") from None
        import stat as _stat

        if not _stat.S_ISREG(st.st_mode):
            raise InputError(f"'{f.name}' is not a regular file (a device, FIFO or socket); give a CSV, TSV or "
                             "Parquet file")
        if f.suffix.lower() in _PARQUET:
            try:
                import pyarrow.parquet as pq

                meta = pq.ParquetFile(f).metadata
                total += _PARQUET_VALUE_BYTES * meta.num_rows * max(meta.num_columns, 1)
            except Exception:  # noqa: BLE001 (a damaged file is reported by the reader with its own message)
                total += _TEXT_READ_FACTOR * st.st_size
        elif _is_gzip(f):
            total += _TEXT_READ_FACTOR * _gzip_size(f, st.st_size)  # read decompressed
        else:
            total += _TEXT_READ_FACTOR * st.st_size
    size = sum(f.stat().st_size for f in files)
    check_memory(total, f"reading the input ({format_bytes(size)} on disk)",
                 "read a sample of the rows first, or use --backend dask (reads partition by partition)")


def read_parquet_rows(files: Sequence[Path], rows: np.ndarray, n_rows: int) -> pd.DataFrame:
    """The frame :func:`read_table` reads from Parquet ``files``, of ``rows`` only (0-based and increasing over
    the files in order), read a column and a batch at a time: one part of a table no one holds whole.
    ``n_rows``: the rows the files held when they were counted (a file changed since is refused)."""
    return _read_parquet(files, rows, n_rows)


def _read_parquet(files: Sequence[Path], rows: np.ndarray | None = None, n_rows: int | None = None) -> pd.DataFrame:
    """A column at a time: the frame's columns are its own buffers (no consolidated copy), and Arrow's
    decoded column is handed back before the next is read, so reading holds about one table, not three
    (with ``rows``, see :func:`read_parquet_rows`: the rows kept and one batch)."""
    import pyarrow.parquet as pq

    from ppdm.utils.memory import give_back

    try:
        sources = [pq.ParquetFile(f) for f in files]
        names = [parquet_data_columns(pf) for pf in sources]
        counts = [pf.metadata.num_rows for pf in sources]
    except Exception as e:  # pyarrow raises many types for damaged files
        raise InputError(f"cannot read Parquet input ({type(e).__name__}); check that the files are Parquet") from None
    for f, cols in zip(files, names, strict=True):
        if cols != names[0]:
            raise InputError(f"Parquet file '{f.name}' has other columns than '{files[0].name}'; use one schema")
    kept: list[np.ndarray | None] = [None] * len(files)
    if rows is not None:
        if n_rows is not None and sum(counts) != n_rows:
            raise InputError("the Parquet input changed while it was released (its rows differ from what its "
                             "footers said); release a copy that stays put")
        starts = np.cumsum([0, *counts[:-1]])
        kept = [rows[(rows >= s) & (rows < s + k)] - s for s, k in zip(starts, counts, strict=True)]
    columns: dict[str, pd.Series] = {}
    try:
        for c in names[0]:
            parts = [_column_of(pf.read(columns=[c], use_pandas_metadata=False) if mine is None
                                else _rows_of(pf, c, mine), c) for pf, mine in zip(sources, kept, strict=True)]
            columns[str(c)] = (pd.concat(parts, ignore_index=True) if len(parts) > 1
                               else parts[0].reset_index(drop=True))
            del parts
            # Arrow's allocator keeps the decoded buffers after pandas has copied them
            give_back()
    except Exception as e:  # noqa: BLE001 (a damaged column or page)
        raise InputError(f"cannot read Parquet input ({type(e).__name__}); check that the files are Parquet") from None
    df = pd.DataFrame(columns, copy=False)
    return _check_rows(df, files[0].name)


def _column_of(table: Any, column: str) -> pd.Series:
    """One column of an Arrow table as pandas reads it, booleans beside gaps as pandas' booleans."""
    import pyarrow as pa

    s = table.to_pandas()[column]
    # Arrow's booleans with gaps come out as Python objects (True, None) when no pandas type is recorded (a
    # release by parts, another writer): as text they were no booleans, and evaluate refused its own release
    if s.dtype == object and pa.types.is_boolean(table.schema.field(column).type):
        s = s.astype("boolean")
    return s


#: rows of one column read from a Parquet file at a time when only some are kept
_PARQUET_BATCH = 65_536


def _rows_of(pf: Any, column: str, rows: np.ndarray) -> Any:
    """The Arrow table of ``column``'s ``rows`` (increasing) in one Parquet file, a batch at a time."""
    import pyarrow as pa

    chunks, at = [], 0
    for batch in pf.iter_batches(batch_size=_PARQUET_BATCH, columns=[column], use_pandas_metadata=False):
        lo, hi = np.searchsorted(rows, [at, at + batch.num_rows])
        if hi > lo:
            chunks.append(batch.take(pa.array(rows[lo:hi] - at)))
        at += batch.num_rows
    return pa.Table.from_batches(chunks) if chunks else pf.schema_arrow.empty_table().select([column])


def parquet_data_columns(pf: Any) -> list[str]:
    """The table's columns, without the index a DataFrame stored beside them (pandas' metadata)."""
    import json

    names = list(pf.schema_arrow.names)
    meta = pf.schema_arrow.metadata or {}
    if b"pandas" in meta:
        index = {c for c in json.loads(meta[b"pandas"]).get("index_columns", []) if isinstance(c, str)}
        names = [c for c in names if c not in index]
    return names


#: the bytes of a text table checked before it is parsed (binary content, UTF-8, the header line)
_HEAD_BYTES = 65536
_GZIP = b"\x1f\x8b"


def _is_gzip(path: Path) -> bool:
    """A gzip-compressed file (its first two bytes), whatever its name."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == _GZIP
    except OSError:
        return False


def _gzip_size(path: Path, size: int) -> int:
    """The bytes a gzip file holds once decompressed, from its trailer (modulo 4 GiB: at least its own size)."""
    try:
        with open(path, "rb") as f:
            f.seek(-4, os.SEEK_END)
            return max(int.from_bytes(f.read(4), "little"), size)
    except OSError:
        return size


def _read_text(path: Path, sep: str | None) -> pd.DataFrame:
    """A CSV/TSV table (or one compressed with gzip), parsed from the file as it is read (no copy of its text is
    held: a 130 MB CSV of 1,000,000 rows decoded and wrapped whole took 1.2 GB before pandas parsed it). Its
    first bytes are checked first: empty, binary, not UTF-8, the header line."""
    name = path.name
    sep = _text_sep(path, sep)
    _text_header(path, sep)
    try:
        df = pd.read_csv(path, sep=sep, skipinitialspace=True, float_precision="round_trip", encoding="utf-8-sig",
                         compression="gzip" if _is_gzip(path) else None)
    except UnicodeDecodeError:  # beyond the bytes checked first
        raise InputError(f"'{name}' is not UTF-8 text; re-save it as UTF-8 CSV") from None
    except (pd.errors.ParserError, csv.Error) as e:
        msg = str(e).strip().splitlines()[-1]
        raise InputError(f"'{name}' is not a well-formed table ({msg}); fix the row or pass --sep") from None
    except (pd.errors.EmptyDataError, ValueError) as e:
        raise InputError(f"'{name}' cannot be parsed as a table ({type(e).__name__}); check its format") from None
    df.columns = [str(c).strip() for c in df.columns]
    from ppdm.data.cells import separated_numbers

    return _check_rows(separated_numbers(df, sep, name), name)


def text_columns(path: str | os.PathLike[str], sep: str | None = None) -> list[str]:
    """The column names of a CSV/TSV table, from its header line (checked as a read checks it)."""
    path = Path(path)
    return [h.strip() for h in _text_header(path, _text_sep(path, sep))]


def _text_sep(path: Path, sep: str | None) -> str:
    """The separator of a text table: ``sep``, or the one its suffix implies."""
    if sep is None:
        suffix = Path(path.stem).suffix if path.suffix.lower() == ".gz" else path.suffix  # t.tsv.gz: a TSV
        sep = _TEXT_FORMATS.get(suffix.lower()) or ","
    return "\t" if sep == "\\t" else sep  # a shell-quoted '\t' means a tab


def _text_header(path: Path, sep: str) -> list[str]:
    """The header line of a text table, split; its first bytes checked (empty, binary, UTF-8, separator,
    column names)."""
    import gzip

    name = path.name
    opener = gzip.open if _is_gzip(path) else open
    try:
        with opener(path, "rb") as f:
            head = f.read(_HEAD_BYTES)
            whole = len(head) < _HEAD_BYTES or not f.read(1)
    except (OSError, EOFError) as e:  # a damaged gzip stream
        raise InputError(f"'{name}' is gzip-compressed but cannot be decompressed ({type(e).__name__}); check the "
                         "file") from None
    text = _head_text(head, name, whole)
    if text is None:  # a large file whose first bytes do not settle the checks: read whole, as a small one
        with opener(path, "rb") as f:
            raw = f.read()
        text = _head_text(raw, name, True)
        assert text is not None
    if len(sep) != 1:
        raise InputError(f"--sep must be one character (got {sep!r}); e.g. --sep ';' or --sep '\\t'")
    header_line = text.splitlines()[0]
    try:
        header = next(csv.reader([header_line], delimiter=sep))
    except csv.Error as e:
        raise InputError(f"'{name}' has a header that cannot be parsed ({e}); shorten or fix the column names"
                         ) from None
    if len(header) == 1:
        for other in (";", "\t", "|", ","):
            if other != sep and other in header_line:
                kind = "tab" if other == "\t" else "comma" if other == "," else f"'{other}'"
                given = "comma" if sep == "," else "tab" if sep == "\t" else f"'{sep}'"
                flag = "\\t" if other == "\t" else other
                raise InputError(f"'{name}' looks {kind}-separated, not {given}-separated; pass --sep '{flag}'")
    check_columns([h.strip() for h in header], name)
    return header


def _head_text(head: bytes, name: str, whole: bool) -> str | None:
    """The checks on a text table's first bytes (``whole``: they are the whole file); its text so far, or
    None when they do not settle the checks (blank, cut within its first line)."""
    if not whole and (not head.strip() or not any(c in head for c in (b"\n", b"\r"))):
        return None
    if not head.strip():
        raise InputError(f"'{name}' is empty; give a table with a header row and at least two data rows")
    if head[:2] in (b"\xff\xfe", b"\xfe\xff") or _utf16_without_mark(head):
        raise InputError(f"'{name}' is UTF-16 text; re-save it as UTF-8 (e.g. iconv -f UTF-16 -t UTF-8 "
                         f"'{name}' > utf8.csv)")
    if head[:2] == _GZIP:  # compressed twice, or a compressed file read raw
        raise InputError(f"'{name}' is gzip-compressed data inside gzip; decompress it (gunzip) and give the table")
    if head[:4] == b"PK\x03\x04" or head[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1":
        # a workbook's first bytes (ZIP for .xlsx and .ods, OLE for .xls) may hold no zero byte
        raise InputError(f"'{name}' is a ZIP or Office file (an Excel workbook?), not a text table; save the sheet "
                         "as CSV (UTF-8), or unzip it and give the table")
    if b"\x00" in head[:_HEAD_BYTES]:
        raise InputError(f"'{name}' is not a text table (binary content); give a CSV, TSV or Parquet file (a "
                         "gzip-compressed CSV is read as it is)")
    try:
        text = head.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        if whole or e.start < len(head) - 3:  # not a character cut at the end of the bytes read
            raise InputError(f"'{name}' is not UTF-8 text; re-save it as UTF-8 CSV") from None
        text = head[:e.start].decode("utf-8-sig")
    if not text.strip():
        if not whole:
            return None
        raise InputError(f"'{name}' holds no text (only a byte-order mark or blanks); give a table with a header row")
    return text


def _utf16_without_mark(head: bytes) -> bool:
    """Text of ASCII characters in UTF-16 without a byte-order mark: every other byte is zero."""
    sample = head[:4096]
    if len(sample) < 8 or b"\x00" not in sample:
        return False
    return any(sample[k::2].count(0) > 0.9 * len(sample[k::2]) and not sample[1 - k::2].count(0)
               for k in (0, 1))


def check_columns(cols: list[str], name: str) -> None:
    seen: set[str] = set()
    for c in cols:
        if c == "" or c.lower().startswith("unnamed:"):
            raise InputError(f"'{name}' has an unnamed column; give every column a header name")
        if c in seen:
            raise InputError(f"'{name}' has the column name '{c}' twice; rename one of them")
        seen.add(c)


def _check_rows(df: pd.DataFrame, name: str) -> pd.DataFrame:
    if df.shape[1] == 0:
        raise InputError(f"'{name}' has no columns; give a table with a header row")
    if len(df) == 0:
        raise InputError(f"'{name}' has a header but no data rows; give at least two rows")
    from ppdm.data.cells import marks_as_gaps, numbers_as_floats, text_of_bytes, times_in_utc

    return numbers_as_floats(marks_as_gaps(text_of_bytes(times_in_utc(df), name)))


# ----------------------------------------------------------------------------------------- outputs


def write_table(df: pd.DataFrame, path: str | os.PathLike[str], *, fmt: str | None = None) -> Path:
    """Write ``df`` atomically as CSV, TSV or Parquet (by suffix, :func:`output_format`, unless ``fmt`` is
    given)."""
    p = Path(path)
    fmt = fmt or output_format(p)
    with atomic_write(p) as f:
        if fmt == "parquet":
            _write_parquet(df, f)
        else:
            # written as it is formatted (pandas works in blocks of rows): never the whole text in memory; a
            # .tsv with tabs, as read_table reads it back
            df.to_csv(f, index=False, lineterminator="\n", encoding="utf-8", sep="\t" if fmt == "tsv" else ",")
    return p


#: rows converted to Arrow and written at a time (one row group each): a million-row release's write needs
#: about 40 MB beside it (125 MB at 131,072 rows)
_PARQUET_ROWS = 32_768


def _write_parquet(df: pd.DataFrame, f: Any) -> None:
    """``df.to_parquet(f, index=False)``, a row group at a time: Arrow never holds a copy of the whole table."""
    df = _typed(df)
    if len(df) <= _PARQUET_ROWS:
        df.to_parquet(f, index=False)
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.Schema.from_pandas(df, preserve_index=False)  # the whole table's types, whatever a block holds
    # perturbed decimals are all distinct: a dictionary of them is built per row group and thrown away (the
    # write takes 3x as long); every other column keeps Parquet's dictionary encoding
    coded = [field.name for field in schema if not pa.types.is_floating(field.type)]
    with pq.ParquetWriter(f, schema, use_dictionary=coded) as writer:
        for s in range(0, len(df), _PARQUET_ROWS):
            writer.write_table(pa.Table.from_pandas(df.iloc[s:s + _PARQUET_ROWS], schema=schema,
                                                    preserve_index=False))
            # Arrow's allocator keeps a written row group's buffers for reuse: handed back to the system
            pa.default_memory_pool().release_unused()


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its columns of Python values (a release's booleans and integers beside gaps, its categories)
    in the types a Parquet reader reads back: pandas writes such a column as ``object``, and read back it was
    text (``True``), not the original's booleans or integers."""
    given = {c: df[c] for c in df.columns}
    typed = {c: _typed_column(s) if s.dtype == object else s for c, s in given.items()}
    if all(typed[c] is given[c] for c in given):
        return df
    return pd.DataFrame(typed, index=df.index, copy=False)  # the caller's frame is left as it is


def _typed_column(s: pd.Series) -> pd.Series:
    """One column of Python values in its own type: booleans as ``boolean``, whole numbers as ``Int64``,
    numbers as floats and plain values of several kinds (categories) as text; others as they are."""
    kind = pd.api.types.infer_dtype(s, skipna=True)
    try:
        if kind == "boolean":
            return s.astype("boolean")
        if kind == "integer":
            return s.astype("Int64")
        if kind in ("floating", "mixed-integer-float"):
            return s.astype(np.float64)
    except (TypeError, ValueError, OverflowError):  # beyond 64 bits: as they are (Arrow's own type)
        return s
    if kind in ("mixed", "mixed-integer") and not any(pd.api.types.is_list_like(v) for v in s.dropna()):
        return s.where(s.isna(), s.astype(str))
    return s
