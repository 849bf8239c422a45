"""Mixed tables and the Gower nearest neighbours that the three tests of anonymisation search with.

The tests compare three tables (the release, the records it was made from, real records it did not contain)
on the same columns. :class:`MixedTable` holds one of them as numbers in their units (NaN: a gap) and
category codes shared by every table compared (-1: a gap), so that categories are always matched by integer
codes. :func:`encode_tables` and :func:`from_frames` build the shared codes.

The distance is the one auditors use for mixed records (anonymeter's Gower-type distance): on a chosen set
of columns, the sum of ``|a - b| / range`` over the numeric columns (the range taken over every table
compared, so each term is at most 1) and of ``a != b`` over the categorical ones. A gap in a numeric column
costs 1 whether the other value is a gap or not (anonymeter counts two gaps as 1 and leaves a gap against a
value undefined, which ranks that candidate last); in a categorical column a gap is a category of its own.
Distances are returned divided by the number of columns (each in [0, 1]).

Nearest neighbours are searched blockwise: a block of queries against the whole pool, one column's terms
at a time, never a queries x pool matrix for more than a block of rows. Ties are broken at random: the pool
is searched in a random order drawn from the caller's generator, and the first of equally near rows in that
order wins.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ppdm.exceptions import InputError, ParameterError

__all__ = ["MixedTable", "encode_tables", "from_frames", "column_ranges", "distinct_rows", "gower_nearest",
           "GowerTerms", "summed", "k_smallest", "check_same_columns", "sample_rows", "l1_embedding"]

#: bytes of one block of per-column terms (columns x rows x pool, float32)
BLOCK_BYTES = 16 * 1024**2
#: the widest embedding :func:`l1_embedding` makes (numeric columns plus every category's indicator)
MAX_EMBEDDING_WIDTH = 1024


@dataclass(frozen=True)
class MixedTable:
    """A table of numbers and category codes, compared with other tables on the same columns.

    Parameters
    ----------
    numbers : ndarray of shape (n, p)
        Numeric columns in their units (float64); NaN marks a gap.
    codes : ndarray of shape (n, q)
        Categorical columns as integer codes shared by every table compared (int32); -1 marks a gap.
    numeric_names, categorical_names : tuple of str
        Names of the columns of ``numbers`` and of ``codes``.
    columns : tuple of str, optional
        Every column in the table's own order (default: the numeric names, then the categorical ones).
    """

    numbers: np.ndarray
    codes: np.ndarray
    numeric_names: tuple[str, ...] = ()
    categorical_names: tuple[str, ...] = ()
    columns: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        numbers = np.asarray(self.numbers, dtype=np.float64)
        codes = np.asarray(self.codes, dtype=np.int32)
        if numbers.ndim != 2 or codes.ndim != 2 or numbers.shape[0] != codes.shape[0]:
            raise InputError("a mixed table needs numbers (n, p) and codes (n, q) with the same number of rows")
        if numbers.shape[1] != len(self.numeric_names) or codes.shape[1] != len(self.categorical_names):
            raise InputError("a mixed table needs one name per numeric and per categorical column")
        names = tuple(self.numeric_names) + tuple(self.categorical_names)
        columns = tuple(self.columns) or names
        if sorted(columns) != sorted(names) or len(set(names)) != len(names):
            raise InputError("a mixed table's column order must name each of its columns once")
        object.__setattr__(self, "numbers", numbers)
        object.__setattr__(self, "codes", codes)
        object.__setattr__(self, "columns", columns)

    @property
    def n_rows(self) -> int:
        """Number of records."""
        return int(self.numbers.shape[0])

    def take(self, rows: np.ndarray | slice) -> MixedTable:
        """The table restricted to ``rows`` (positions or a slice)."""
        return MixedTable(self.numbers[rows], self.codes[rows], self.numeric_names, self.categorical_names,
                          self.columns)

    @staticmethod
    def concat(tables: Sequence[MixedTable]) -> MixedTable:
        """The rows of ``tables`` (same columns, shared codes) one after the other."""
        first = tables[0]
        return MixedTable(np.vstack([t.numbers for t in tables]), np.vstack([t.codes for t in tables]),
                          first.numeric_names, first.categorical_names, first.columns)

    def unique_rows(self) -> np.ndarray:
        """Positions of the first occurrence of every distinct record (gaps equal to gaps), in order.

        Rows are told apart by a 64-bit hash of their cells, a column at a time (a million-row release is
        never copied whole), and the rows that share a hash are checked cell by cell against the first of
        them; only a true collision of hashes falls back to comparing whole rows."""
        codes, _ = pd.factorize(self.row_hashes())
        first = np.flatnonzero(np.r_[True, np.diff(np.maximum.accumulate(codes)) > 0]) if len(codes) else codes
        if len(first) == self.n_rows:
            return first
        rep = first[codes]  # the first row holding each row's hash
        if all(bool(np.array_equal(col, col[rep], equal_nan=True)) for col in self._cells()):
            return first
        frame = pd.DataFrame(np.hstack([self.numbers, self.codes.astype(np.float64)]))
        return np.flatnonzero(~frame.duplicated().to_numpy())

    def row_hashes(self) -> np.ndarray:
        """A 64-bit hash of each row's cells, built a column at a time (equal rows, gaps included, hash alike)."""
        h = np.zeros(self.n_rows, dtype=np.uint64)
        for col in self._cells():
            h *= np.uint64(0x100000001B3)
            h ^= pd.util.hash_array(col, categorize=False)
        return h

    def _cells(self) -> Iterator[np.ndarray]:
        """Every column as float64, one at a time: ``-0.0`` as ``0.0`` and every gap as the same NaN, so that
        equal cells have equal bits."""
        for j in range(self.numbers.shape[1]):
            col = self.numbers[:, j] + 0.0
            col[np.isnan(col)] = np.nan
            yield col
        for j in range(self.codes.shape[1]):
            yield self.codes[:, j].astype(np.float64)

    def locate(self, names: Sequence[str]) -> tuple[list[int], list[int]]:
        """Positions of ``names`` among the numeric columns and among the categorical ones."""
        unknown = [c for c in names if c not in self.columns]
        if unknown:
            raise ParameterError(f"column '{unknown[0]}' is not in the compared tables; use one of their columns")
        return ([self.numeric_names.index(c) for c in names if c in self.numeric_names],
                [self.categorical_names.index(c) for c in names if c in self.categorical_names])

    def values(self) -> np.ndarray:
        """Every column as float64, the numeric ones first, then the codes; gaps as ``+inf`` (Fortran order).

        A gap is then a value no number or code equals and no ``<=`` condition holds for, which is how
        predicates treat it (only ``isna`` finds it).
        """
        out = np.empty((self.n_rows, self.numbers.shape[1] + self.codes.shape[1]), order="F")
        p = self.numbers.shape[1]
        out[:, :p] = np.where(np.isnan(self.numbers), np.inf, self.numbers)
        out[:, p:] = np.where(self.codes < 0, np.inf, self.codes)
        return out


def _as_text(values: np.ndarray) -> np.ndarray:
    """Category values as text (gaps as None): ``1``, ``1.0`` and ``'1'`` are the same category."""
    from pandas.api.types import infer_dtype

    s = pd.Series(np.asarray(values, dtype=object))
    gap = s.isna().to_numpy()
    if infer_dtype(s, skipna=True) in ("string", "empty"):
        out = s.to_numpy(dtype=object)
    else:
        def text(v: object) -> str:
            if isinstance(v, (float, np.floating)) and float(v).is_integer():
                return str(int(v))
            return str(v)

        out = np.array([None if g else text(v) for v, g in zip(s.to_numpy(dtype=object), gap, strict=True)],
                       dtype=object)
    out[gap] = None
    return out


def encode_tables(
    numbers_list: Sequence[np.ndarray],
    texts_list: Sequence[np.ndarray],
    numeric_names: Sequence[str],
    categorical_names: Sequence[str],
    *,
    columns: Sequence[str] | None = None,
) -> list[MixedTable]:
    """Several tables on the same columns, with category codes shared by all of them.

    Parameters
    ----------
    numbers_list : sequence of ndarray of shape (n_t, p)
        Each table's numeric columns (NaN: a gap).
    texts_list : sequence of object ndarray of shape (n_t, q)
        Each table's categorical columns as category text (None or NaN: a gap).
    numeric_names, categorical_names : sequence of str
    columns : sequence of str, optional
        Every column in the tables' order (default: numeric, then categorical).

    Returns
    -------
    list of MixedTable
        One per table, in the order given; a category has the same code in every one of them.
    """
    if len(numbers_list) != len(texts_list) or not numbers_list:
        raise InputError("give one numeric and one categorical block per table")
    sizes = [len(t) for t in texts_list]
    q = len(categorical_names)
    codes = [np.empty((n, q), dtype=np.int32) for n in sizes]
    for j in range(q):
        stacked = np.concatenate([_as_text(np.asarray(t, dtype=object).reshape(len(t), q)[:, j])
                                  for t in texts_list])
        shared, _ = pd.factorize(stacked, use_na_sentinel=True)
        for c, part in zip(codes, np.split(shared, np.cumsum(sizes)[:-1]), strict=True):
            c[:, j] = part
    out = []
    for nums, c in zip(numbers_list, codes, strict=True):
        arr = np.asarray(nums, dtype=np.float64).reshape(len(c), len(numeric_names))
        if np.isinf(arr).any():
            raise InputError("a numeric column holds infinite values; replace them before attacking")
        out.append(MixedTable(arr, c, tuple(numeric_names), tuple(categorical_names),
                              tuple(columns) if columns is not None else ()))
    return out


def from_frames(frames: Sequence[pd.DataFrame], numeric: Sequence[str] | None = None,
                categorical: Sequence[str] | None = None, *,
                names: Sequence[str] | None = None) -> list[MixedTable]:
    """:func:`encode_tables` for DataFrames (the first frame's column order is the tables' order).

    Without ``numeric`` and ``categorical``, the first frame's columns of a numeric dtype (booleans
    excepted) are numeric and every other column categorical, as anonymeter decides. ``names`` name the
    tables in error messages (default "table 1", "table 2", ...).
    """
    if not frames:
        raise InputError("give at least one table")
    label = list(names) if names is not None else [f"table {k + 1}" for k in range(len(frames))]
    first = frames[0]
    if numeric is None and categorical is None:
        numeric = [str(c) for c in first.columns if pd.api.types.is_numeric_dtype(first[c])
                   and not pd.api.types.is_bool_dtype(first[c])]
        categorical = [str(c) for c in first.columns if str(c) not in numeric]
    numeric, categorical = list(numeric or []), list(categorical or [])
    order = [str(c) for c in first.columns if str(c) in set(numeric) | set(categorical)]
    order += [c for c in numeric + categorical if c not in order]
    for k, df in enumerate(frames):
        missing = [c for c in order if c not in df.columns]
        if missing:
            raise InputError(f"the {label[k]} has no column '{missing[0]}'; give tables with the same columns")
    numbers_list, texts_list = [], []
    for k, df in enumerate(frames):
        block = np.empty((len(df), len(numeric)))
        for j, c in enumerate(numeric):
            col = pd.to_numeric(df[c], errors="coerce")
            if (col.isna() & df[c].notna()).any():
                raise InputError(f"column '{c}' of the {label[k]} holds text where numbers are expected; "
                                 "fix the cells or treat the column as categorical")
            block[:, j] = col.to_numpy(dtype=np.float64, na_value=np.nan)
        numbers_list.append(block)
        texts_list.append(df[categorical].to_numpy(dtype=object) if categorical else np.empty((len(df), 0), object))
    return encode_tables(numbers_list, texts_list, numeric, categorical, columns=order)


def distinct_rows(release: MixedTable) -> tuple[np.ndarray, np.ndarray]:
    """The first of each set of identical rows and how many rows the set holds (as floats, the weights of
    :class:`GowerTerms`), by a 64-bit hash of the rows' cells (a collision, about 2^-64 a pair, would merge two
    sets). Without repeated rows: every row, each once."""
    codes, _ = pd.factorize(release.row_hashes())
    first = np.unique(codes, return_index=True)[1]  # per set, in the order of the sets' numbers
    return first, np.bincount(codes).astype(np.float64)


def column_ranges(*tables: MixedTable) -> np.ndarray:
    """Range of each numeric column over all ``tables`` (1 where it is 0 or undefined, as anonymeter does)."""
    p = tables[0].numbers.shape[1]
    if p == 0:
        return np.ones(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-gap column has no range: 1 below
        hi = np.nanmax(np.vstack([np.nanmax(t.numbers, axis=0) for t in tables if t.n_rows]), axis=0)
        lo = np.nanmin(np.vstack([np.nanmin(t.numbers, axis=0) for t in tables if t.n_rows]), axis=0)
    span = hi - lo
    return np.where(np.isfinite(span) & (span > 0), span, 1.0)


def l1_embedding(tables: Sequence[MixedTable], ranges: np.ndarray) -> list[np.ndarray] | None:
    """The tables as float64 rows whose Manhattan distance is the Gower-type sum over every column, or None.

    Numbers are divided by their ``ranges``; each category becomes an indicator column worth 1/2 (two records
    of different categories differ by 1/2 in two indicators: 1, as ``!=`` counts; a categorical gap is a
    category of its own, as in the terms). A gap in a numeric column costs 1 even against another gap, which
    no distance between embedded points gives: with any numeric gap, or wider than
    :data:`MAX_EMBEDDING_WIDTH`, there is no embedding (None) and the blockwise terms are the way. With one,
    scikit-learn's compiled, chunked nearest-neighbour reductions search it, about twice as fast as the terms
    summed block by block in NumPy on one thread, for the searches that need distances only (ties do not
    matter). The linkability's searches, which need the terms' order of ties and reuse one block's terms for
    every split of the columns, were measured slower that way (1.06 s against 0.81 s on 2,500 satimage rows).
    """
    if any(np.isnan(t.numbers).any() for t in tables):
        return None
    scale = np.asarray(ranges, dtype=np.float64)
    levels = [np.unique(np.concatenate([t.codes[:, j] for t in tables])) for j in range(tables[0].codes.shape[1])]
    if tables[0].numbers.shape[1] + sum(len(v) for v in levels) > MAX_EMBEDDING_WIDTH:
        return None
    out = []
    for t in tables:
        parts = [t.numbers / scale]
        for j, values in enumerate(levels):
            hot = np.zeros((t.n_rows, len(values)))
            hot[np.arange(t.n_rows), np.searchsorted(values, t.codes[:, j])] = 0.5
            parts.append(hot)
        out.append(np.hstack(parts))
    return out


class GowerTerms:
    """Queries and a pool prepared for blockwise per-column Gower terms, the pool in a random order.

    Parameters
    ----------
    queries, pool : MixedTable
        Tables on the same columns with shared codes.
    numeric_cols, categorical_cols : sequence of int
        Positions of the columns used among ``numbers`` and ``codes``; the terms come in this order,
        numeric columns first.
    ranges : ndarray
        Range of every numeric column of the tables (:func:`column_ranges`).
    rng : numpy.random.Generator
        Draws the order in which the pool is searched (ties go to the first row in that order).
    weights : ndarray or None, default=None
        How many rows each pool row stands for (a released row's identical copies): a row is then first among
        rows tied with it with probability its weight over theirs (an exponential race), as if each copy had
        its own place in a uniformly random order. None: every row once.

    Attributes
    ----------
    order : ndarray of int
        Pool row of each searched position; indices returned by the searches are pool rows.
    """

    def __init__(self, queries: MixedTable, pool: MixedTable, numeric_cols: Sequence[int],
                 categorical_cols: Sequence[int], *, ranges: np.ndarray, rng: np.random.Generator,
                 weights: np.ndarray | None = None) -> None:
        nc, cc = list(numeric_cols), list(categorical_cols)
        if not nc and not cc:
            raise ParameterError("a distance needs at least one column")
        if pool.n_rows == 0:
            raise InputError("there are no rows to search: the release is empty")
        if weights is None:
            self.order = rng.permutation(pool.n_rows)
        else:
            self.order = np.argsort(rng.exponential(size=pool.n_rows) / np.asarray(weights, dtype=np.float64),
                                    kind="stable")
        scale = np.asarray(ranges, dtype=np.float64)[nc] if nc else np.ones(0)
        qn = queries.numbers[:, nc] / scale
        self._q_gap = np.isnan(qn)
        self._qn = np.nan_to_num(qn).astype(np.float32)
        self._p_gap, self._pn = _scaled_columns(pool.numbers, self.order, nc, scale)
        self._qc = queries.codes[:, cc]
        self._pc = pool.codes[np.ix_(self.order, cc)]
        self.n_columns = len(nc) + len(cc)
        self.n_queries, self.n_pool = queries.n_rows, pool.n_rows

    def block_rows(self, budget: int | None = None) -> int:
        """Query rows per block so that one block of terms stays within ``budget`` bytes (default
        :data:`BLOCK_BYTES`)."""
        cap = BLOCK_BYTES if budget is None else budget
        return int(max(1, min(self.n_queries, cap // (4 * self.n_columns * max(self.n_pool, 1)))))

    def blocks(self, rows: int | None = None) -> Iterator[tuple[slice, np.ndarray]]:
        """``(query rows, terms)`` per block; ``terms[j]`` is column j's term for every (query, pool) pair."""
        step = rows or self.block_rows()
        p = self._qn.shape[1]
        buf = np.empty((self.n_columns, step, self.n_pool), dtype=np.float32)
        for s in range(0, self.n_queries, step):
            e = min(s + step, self.n_queries)
            t = buf[:, : e - s]
            for j in range(p):
                np.subtract(self._qn[s:e, j, None], self._pn[None, :, j], out=t[j])
                np.abs(t[j], out=t[j])
                if self._q_gap[s:e, j].any():
                    t[j][self._q_gap[s:e, j]] = 1.0
                if self._p_gap[:, j].any():
                    t[j][:, self._p_gap[:, j]] = 1.0
            for j in range(self._qc.shape[1]):
                np.not_equal(self._qc[s:e, j, None], self._pc[None, :, j], out=t[p + j], casting="unsafe")
            yield slice(s, e), t


def _scaled_columns(numbers: np.ndarray, order: np.ndarray, cols: Sequence[int],
                    scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The gaps and the float32 values (gaps as 0) of ``numbers[order][:, cols] / scale``, made a column at a
    time: a million-row pool costs its float32 copy, not three float64 ones on the way."""
    gap = np.empty((len(order), len(cols)), dtype=bool)
    out = np.empty((len(order), len(cols)), dtype=np.float32)
    for i, j in enumerate(cols):
        col = numbers[order, j]
        col /= scale[i]
        gap[:, i] = np.isnan(col)
        out[:, i] = np.nan_to_num(col, copy=False)
    return gap, out


def summed(terms: np.ndarray, cols: Sequence[int]) -> np.ndarray:
    """Sum of the terms of ``cols`` (in that order, so equal records get bit-equal sums)."""
    acc = terms[cols[0]].copy()
    for j in cols[1:]:
        acc += terms[j]
    return acc


def k_smallest(D: np.ndarray, k: int) -> np.ndarray:
    """Columns of the ``k`` smallest values of every row, nearest first (ties: the lower column first).

    ``k`` passes of ``argmin`` (vectorised, a fraction of a nanosecond a value), each found value masked
    before the next pass: far cheaper than a partition of every row for the few neighbours asked.
    """
    b, P = D.shape
    if k <= 1:
        return D.argmin(axis=1)[:, None]
    work = D.copy()
    out = np.empty((b, k), dtype=np.int64)
    rows = np.arange(b)
    for i in range(min(k, P)):
        out[:, i] = work.argmin(axis=1)
        work[rows, out[:, i]] = np.inf
    return out


def gower_nearest(
    queries: MixedTable,
    pool: MixedTable,
    numeric_cols: Sequence[int] | None = None,
    categorical_cols: Sequence[int] | None = None,
    *,
    ranges: np.ndarray,
    rng: np.random.Generator,
    k: int = 1,
    exclude_self: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest pool rows of every query on a subset of columns (Gower-type distance).

    Parameters
    ----------
    queries, pool : MixedTable
        Tables on the same columns, with shared category codes.
    numeric_cols, categorical_cols : sequence of int, optional
        Positions among the numeric and among the categorical columns (default: all of them).
    ranges : ndarray of shape (p,)
        Range of every numeric column over the tables compared (:func:`column_ranges`).
    rng : numpy.random.Generator
        Breaks ties at random (the pool is searched in an order drawn from it).
    k : int, default=1
        Neighbours per query.
    exclude_self : bool, default=False
        The queries are the pool itself (same rows, same order): a row is not its own neighbour.

    Returns
    -------
    index : ndarray of shape (n_queries, k)
        Pool rows, nearest first.
    distance : ndarray of shape (n_queries, k)
        Their distances divided by the number of columns used (each in [0, 1]).
    """
    nc = list(range(queries.numbers.shape[1])) if numeric_cols is None else list(numeric_cols)
    cc = list(range(queries.codes.shape[1])) if categorical_cols is None else list(categorical_cols)
    limit = pool.n_rows - (1 if exclude_self else 0)
    if not 1 <= k <= limit:
        raise ParameterError(f"k={k} neighbours asked of a pool of {limit} rows; ask for 1 to {limit}")
    if exclude_self and queries.n_rows != pool.n_rows:
        raise ParameterError("exclude_self needs the queries to be the pool itself")
    terms = GowerTerms(queries, pool, nc, cc, ranges=ranges, rng=rng)
    position = np.empty(pool.n_rows, dtype=np.int64)
    position[terms.order] = np.arange(pool.n_rows)
    index = np.empty((queries.n_rows, k), dtype=np.int64)
    distance = np.empty((queries.n_rows, k))
    every = list(range(terms.n_columns))
    for rows, t in terms.blocks():
        D = summed(t, every)
        if exclude_self:
            own = np.arange(rows.start, rows.stop)
            D[np.arange(len(own)), position[own]] = np.inf
        near = k_smallest(D, k)
        index[rows] = terms.order[near]
        distance[rows] = np.take_along_axis(D, near, axis=1) / terms.n_columns
    return index, distance


def check_same_columns(*tables: MixedTable) -> None:
    """Refuse tables that were not encoded together on the same columns."""
    first = tables[0]
    for t in tables[1:]:
        if t.numeric_names != first.numeric_names or t.categorical_names != first.categorical_names:
            raise InputError("the release, the members and the control must have the same columns; "
                             "encode them together (ppdm.attacks.mixed.encode_tables)")


def sample_rows(table: MixedTable, n: int | None, rng: np.random.Generator) -> np.ndarray:
    """Positions of a seeded sample of at most ``n`` rows, in table order (all rows when ``n`` is None)."""
    if n is None or table.n_rows <= n:
        return np.arange(table.n_rows)
    return np.sort(rng.choice(table.n_rows, int(n), replace=False))
