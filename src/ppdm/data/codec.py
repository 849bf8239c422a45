"""A whole table as one numeric design matrix, and a released design matrix back as a table of the same types.

Every mechanism works on numbers. The codec turns the perturbed columns of a mixed table into a matrix in
which distances mean the same for every type: numbers (continuous, integer, dates as days) are z-scored
with the table's observed statistics, and each categorical column becomes one-hot indicators weighted
``1/sqrt(2)``, so that two different categories are as far apart as one standard deviation. A gap is a value
of its own that the mechanism releases like any other: a category of its column, or, for a number, one of two
indicators (a value, a gap) beside the numbers, with the number itself at the column's median. A person's
pattern of gaps is never copied into the release: it is part of what the mechanism distorts.

Decoding is post-processing of a released matrix: numbers are mapped back to their units, integers rounded,
every number kept within the column's original range, dates written as dates, and each categorical block (and
each number's gap block) read as one of the original's categories in the way that fits what the mechanism
released (:data:`READINGS`):

- ``nearest``: the category with the largest released indicator;
- ``shares``: drawn by the positive indicators (with a key). A microaggregated row holds its group's shares,
  so the group keeps its mix; rows released with the same indicators (a group) draw systematically: together
  they release each category as often as its share says, to within one row;
- ``calibrated``: for a column released as its own indicators perturbed (noise added, values swapped, a
  low-rank reconstruction). Each category is published as often as the release says: its indicator's mean
  over the rows, the release's own estimate of its frequency. A row released as one category (one positive
  indicator, the others zero) keeps it; the other rows take what is left, the rarest category first, each
  going to the rows whose released indicator for it most exceeds their largest other one. Drawn by such
  indicators, or read by the largest, every category drifts towards an equal share: a category or a gap
  one record of 200 holds was published in 10 to 194 rows. Nothing of the original's enters;
- ``original``: the same with the original's frequencies, for a release whose every column mixes all of
  them (a rotation, a projection): its columns say nothing of how often a category is held, so the
  original's frequencies are published as they are (a category one record holds, once: the release's
  measured risk covers it).

A block released empty (NaN: a cell suppressed by a categorical mechanism) is a missing cell, and so is a
released gap.
Attacks see the decoded, published table (re-encoded with :meth:`TableCodec.encode`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ppdm.data.columns import ColumnInfo, parse_dates, slash_format
from ppdm.exceptions import InputError

__all__ = ["Decoded", "TableCodec", "ONE_HOT_WEIGHT", "READINGS"]

#: the value of an indicator that is on, in the design (a category's, a number's gap's)
ONE_HOT_WEIGHT = 1.0 / np.sqrt(2.0)
# a column with more categories than this keeps an indicator for each of its most frequent ones and one
# shared indicator for the rest (decoded as one of them, drawn by frequency): the design stays narrow
_MAX_LEVELS = 60
_RARE = "\x00rare"
#: the category of a gap (a categorical column with gaps holds it as one of its categories)
_GAP = "\x00gap"
_DAY = np.timedelta64(1, "D")
#: how a released block becomes a category (see the module docstring): the largest indicator, a draw by the
#: indicators as a group's shares, or the release's own frequencies (or the original's) given to the rows
#: nearest each category
READINGS = ("nearest", "shares", "calibrated", "original")


@dataclass
class _Numeric:
    name: str
    kind: str  # continuous | integer | date
    mean: float
    sd: float
    lo: float
    hi: float
    fill: float
    date_format: str | None = None
    gaps: bool = False  # the column has gaps: a two-indicator block (a value, a gap) follows the categories
    gap_share: float = 0.0  # the share of its cells that are gaps


@dataclass
class _Categorical:
    name: str
    categories: list[str]  # one indicator each; beyond _MAX_LEVELS, the last indicator stands for the rest
    fill: str
    values: dict[str, object] = field(default_factory=dict)  # category text -> the original cell value
    rare: list[str] = field(default_factory=list)  # the categories sharing the last indicator
    rare_shares: list[float] = field(default_factory=list)
    shares: list[float] = field(default_factory=list)  # each indicator's share of the cells (the last: the rest's)


def _numbers(s: pd.Series, kind: str) -> np.ndarray:
    from ppdm.data.schema import parse_numbers

    if kind == "date":
        stamps = s if pd.api.types.is_datetime64_any_dtype(s) else parse_dates(s.where(s.notna(), None))
        days = (stamps - pd.Timestamp("1970-01-01")) / pd.Timedelta(days=1)
        return days.to_numpy(dtype=np.float64, na_value=np.nan)
    if pd.api.types.is_numeric_dtype(s):
        return s.to_numpy(dtype=np.float64, na_value=np.nan)
    return parse_numbers(s).to_numpy(dtype=np.float64)


def _date_format(s: pd.Series) -> str | None:
    text = s.dropna().astype(str).str.strip()
    if text.empty:
        return "%Y-%m-%d"
    if text.str.fullmatch(r"\d{4}-\d{2}-\d{2}").all():
        return "%Y-%m-%d"
    if text.str.fullmatch(r"\d{1,2}/\d{1,2}/\d{4}").all():
        return slash_format(text)
    return None  # timestamps with times: ISO 8601


class TableCodec:
    """Encode the perturbed columns of a table as a design matrix, and decode a released one.

    Parameters
    ----------
    infos : sequence of ColumnInfo
        The columns (:func:`ppdm.data.columns.infer_columns`); those treated as ``perturbed`` are encoded.
    """

    def __init__(self, infos: Sequence[ColumnInfo]) -> None:
        self.infos = [i for i in infos if i.treatment == "perturbed"]
        if not self.infos:
            raise InputError("no column to release; check --id/--label/--drop and the column roles")

    # -- fitting ---------------------------------------------------------------------------------

    def fit(self, df: pd.DataFrame) -> TableCodec:
        self.numeric_: list[_Numeric] = []
        self.categorical_: list[_Categorical] = []
        for info in self.infos:
            s = df[info.name]
            if info.type in ("continuous", "integer", "date"):
                v = _numbers(s, info.type)
                obs = v[np.isfinite(v)]
                if obs.size == 0:
                    raise InputError(f"column '{info.name}' has no value to release; drop it (--drop '{info.name}')")
                sd = float(obs.std(ddof=1)) if obs.size > 1 else 0.0
                self.numeric_.append(_Numeric(info.name, info.type, float(obs.mean()), sd if sd > 0 else 1.0,
                                              float(obs.min()), float(obs.max()), float(np.median(obs)),
                                              _date_format(s) if info.type == "date" else None,
                                              gaps=bool(obs.size < len(v)), gap_share=1.0 - obs.size / len(v)))
            else:
                obs = s.dropna()
                text = obs.astype(str)
                if text.empty:
                    raise InputError(f"column '{info.name}' has no value to release; drop it (--drop '{info.name}')")
                values = dict(zip(text, obs, strict=True))
                fill = str(text.value_counts().index[0])
                if len(obs) < len(s):  # a gap is a category of its own, released as a gap
                    text = pd.concat([text, pd.Series([_GAP] * (len(s) - len(obs)), dtype=object)])
                    values[_GAP] = None
                counts = text.value_counts()
                if len(counts) > _MAX_LEVELS:
                    top, rest = counts.iloc[: _MAX_LEVELS - 1], counts.iloc[_MAX_LEVELS - 1:]
                    shares = [*(top[sorted(top.index)] / len(text)).tolist(), rest.sum() / len(text)]
                    self.categorical_.append(_Categorical(
                        info.name, [*sorted(top.index), _RARE], fill, values,
                        list(rest.index), (rest / rest.sum()).tolist(), shares))
                else:
                    self.categorical_.append(_Categorical(info.name, sorted(counts.index), fill, values,
                                                          shares=(counts[sorted(counts.index)] / len(text)).tolist()))
        self.numeric_index_ = np.arange(len(self.numeric_))
        gapped = [len(c.categories) for c in self.categorical_] + [2 for n in self.numeric_ if n.gaps]
        offsets = np.cumsum([len(self.numeric_)] + gapped)
        blocks = [np.arange(a, b) for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
        #: every one-hot block (a variable to a mechanism): the categorical columns', then the numbers' gaps
        self.blocks_ = blocks
        #: the gap block of each numeric column with gaps (its position among the numbers -> its block)
        self.gap_blocks_ = dict(zip([j for j, n in enumerate(self.numeric_) if n.gaps],
                                    blocks[len(self.categorical_):], strict=True))
        self.width_ = int(offsets[-1])
        return self

    @property
    def names(self) -> list[str]:
        """The perturbed columns, numbers first, then categories (the design's column groups)."""
        return [n.name for n in self.numeric_] + [c.name for c in self.categorical_]

    @property
    def numeric_names(self) -> list[str]:
        return [n.name for n in self.numeric_]

    @property
    def categorical_names(self) -> list[str]:
        return [c.name for c in self.categorical_]

    def design_columns(self, names: Sequence[str]) -> np.ndarray:
        """The design matrix's columns that carry the given perturbed columns."""
        cols: list[int] = []
        for name in names:
            if name in self.numeric_names:
                cols.append(self.numeric_names.index(name))
            elif name in self.categorical_names:
                cols.extend(self.blocks_[self.categorical_names.index(name)].tolist())
        return np.asarray(cols, dtype=int)

    def role_names(self, role: str) -> list[str]:
        """The perturbed columns with a role (e.g. ``sensitive``, ``quasi-identifier``)."""
        return [i.name for i in self.infos if i.role == role]

    # -- encoding --------------------------------------------------------------------------------

    def missing(self, df: pd.DataFrame) -> dict[str, np.ndarray]:
        """Where each perturbed column has a gap (a boolean mask per column with any)."""
        out = {}
        for c in self.names:
            s = df[c]
            m = s.isna().to_numpy()
            if c in self.numeric_names:
                m |= ~np.isfinite(_numbers(s, self._num(c).kind))
            if m.any():
                out[c] = m
        return out

    def numbers(self, df: pd.DataFrame) -> np.ndarray:
        """The numeric columns in their units (dates as days), gaps filled with the column's median."""
        cols = []
        for n in self.numeric_:
            v = _numbers(df[n.name], n.kind)
            cols.append(np.where(np.isfinite(v), v, n.fill))
        return np.column_stack(cols) if cols else np.zeros((len(df), 0))

    def categories(self, df: pd.DataFrame) -> np.ndarray:
        """The categorical columns as text (a gap as the gap category of a column that has one, else as the most
        frequent category: a later table's gap where the codec saw none)."""
        cols = [df[c.name].astype(str).where(df[c.name].notna(), _GAP if _GAP in c.values else c.fill)
                .to_numpy(dtype=object) for c in self.categorical_]
        return np.column_stack(cols) if cols else np.zeros((len(df), 0), dtype=object)

    def number_gaps(self, df: pd.DataFrame) -> dict[int, np.ndarray]:
        """Where each numeric column with a gap block has a gap (position among the numbers -> mask)."""
        return {j: ~np.isfinite(_numbers(df[self.numeric_[j].name], self.numeric_[j].kind))
                for j in self.gap_blocks_}

    def encode(self, df: pd.DataFrame) -> np.ndarray:
        """The design matrix: z-scored numbers, then weighted one-hot blocks (categories, then numbers' gaps)."""
        return self._encode(self.numbers(df) if self.numeric_ else None, self.categories(df), self.number_gaps(df))

    def encode_decoded(self, d: Decoded) -> np.ndarray:
        """The design of a decoded release (:meth:`decode_parts`): the same as encoding its decoded table."""
        return self._encode(d.numbers if self.numeric_ else None, self.filled(d), d.gaps)

    def _encode(self, numbers: np.ndarray | None, cats: np.ndarray, gaps: dict[int, np.ndarray]) -> np.ndarray:
        X = np.zeros((len(cats), self.width_))
        if numbers is not None:
            mu = np.array([n.mean for n in self.numeric_])
            sd = np.array([n.sd for n in self.numeric_])
            X[:, self.numeric_index_] = (numbers - mu) / sd
        for j, block in self.gap_blocks_.items():
            mask = gaps.get(j, np.zeros(len(cats), dtype=bool))
            X[:, block[0]] = np.where(mask, 0.0, ONE_HOT_WEIGHT)
            X[:, block[1]] = np.where(mask, ONE_HOT_WEIGHT, 0.0)
        for j, (c, block) in enumerate(zip(self.categorical_, self.blocks_[:len(self.categorical_)], strict=True)):
            pos = pd.Index(c.categories).get_indexer(cats[:, j])
            if c.rare:
                pos[np.isin(cats[:, j], c.rare)] = len(c.categories) - 1
            # a category the codec did not see (a later table) matches none of the indicators
            rows = np.flatnonzero(pos >= 0)
            X[rows, block[pos[rows]]] = ONE_HOT_WEIGHT
        return X

    # -- decoding --------------------------------------------------------------------------------

    def decode(self, B: np.ndarray, rng: np.random.Generator | None = None, *,
               reading: str = "nearest") -> pd.DataFrame:
        """A released design matrix as the perturbed columns, in their types, units and ranges.

        Parameters
        ----------
        B : ndarray of shape (n, width)
            The released design.
        rng : Generator, optional
            The release key's categorical draws: a group's shares (``reading='shares'``), and which of the
            categories sharing one indicator a row takes. Without it, a row takes the largest share and the
            most frequent of those categories.
        reading : {'nearest', 'shares', 'calibrated', 'original'}, default='nearest'
            How each categorical block (and each number's gap block) becomes one category: the largest
            indicator; a draw by the indicators as a microaggregated group's shares (the group keeps its mix
            of categories instead of its most frequent one); or, for indicators perturbed one column at a
            time, each category as often as the release says, in the rows nearest it; or, for a release
            that mixes every column, as often as the original holds it (see the module docstring). A
            mechanism says which fits its release (:func:`ppdm.flow.whole.block_reading`).

        Returns
        -------
        DataFrame
            The perturbed columns, in the order of the codec's columns.
        """
        return self.table(self.decode_parts(B, rng, reading=reading))

    def table(self, d: Decoded) -> pd.DataFrame:
        """The table of a decoded release (:meth:`decode_parts`): what :meth:`decode` returns."""
        out: dict[str, object] = {}
        for j, n in enumerate(self.numeric_):
            v = d.numbers[:, j]
            if n.kind == "integer":
                col: object = v.astype(np.int64)
            elif n.kind == "date":
                stamps = pd.Series(np.datetime64("1970-01-01") + v.astype(np.int64) * _DAY)
                col = stamps.dt.strftime(n.date_format) if n.date_format else stamps.dt.strftime("%Y-%m-%d")
            else:
                col = v
            gaps = d.gaps.get(j)
            if gaps is not None and gaps.any():  # a released gap: an empty cell (integers as objects beside it)
                col = pd.Series(col, dtype=object if n.kind != "continuous" else np.float64).to_numpy()
                col[gaps] = np.nan
            out[n.name] = col
        for c in self.categorical_:
            out[c.name] = self.values_of(d, c.name)
        return pd.DataFrame(out, index=range(d.rows))[[i.name for i in self.infos]]

    def decode_parts(self, B: np.ndarray, rng: np.random.Generator | None = None, *,
                     reading: str = "nearest") -> Decoded:
        """What :meth:`decode` publishes, without building the table: the numbers in their units (integers and
        dates, as days, whole) and the categories as text. The same ``rng`` and ``reading`` as :meth:`decode`
        give the same categories."""
        B = np.asarray(B, dtype=np.float64)
        if B.ndim != 2 or B.shape[1] != self.width_:
            raise InputError(f"a released design has {self.width_} columns; got {B.shape}")
        if reading not in READINGS:
            raise ValueError(f"reading must be one of {', '.join(READINGS)}; got {reading!r}")
        n = B.shape[0]
        numbers = np.empty((n, len(self.numeric_)))
        for j, num in enumerate(self.numeric_):
            v = np.clip(B[:, j] * num.sd + num.mean, num.lo, num.hi)
            if num.kind in ("integer", "date"):
                # + 0.0: a whole number rounded from below zero is 0, not -0 (as its integer is)
                v = np.clip(np.round(v), np.ceil(num.lo), np.floor(num.hi)) + 0.0
            numbers[:, j] = v
        text = np.empty((n, len(self.categorical_)), dtype=object)
        for k, (c, block) in enumerate(zip(self.categorical_, self.blocks_[:len(self.categorical_)], strict=True)):
            text[:, k] = _decode_block(B, block, c, rng, reading)
        gaps = {}
        for j, block in self.gap_blocks_.items():
            # the gap indicator read as a category (the same way), the number at the column's median
            share = self.numeric_[j].gap_share
            gaps[j] = _pick(B, block, [1.0 - share, share], rng, reading, systematic=False) == 1
            numbers[gaps[j], j] = self.numeric_[j].fill
        return Decoded(numbers, text, gaps)

    def filled(self, d: Decoded) -> np.ndarray:
        """The categories of a decoded release as :meth:`categories` reads them from its table (a block released
        empty is a gap: the gap category of a column that has one, else the column's most frequent category)."""
        out = d.text.copy()
        for k, c in enumerate(self.categorical_):
            blank = d.text[:, k] == None  # noqa: E711 (elementwise on an object array)
            out[blank, k] = _GAP if _GAP in c.values else c.fill
        return out

    def filled_numbers(self, d: Decoded) -> np.ndarray:
        """The numbers of a decoded release as :meth:`numbers` reads them from its table (a released gap as the
        column's median, which :meth:`decode_parts` already put there)."""
        return d.numbers

    def values_of(self, d: Decoded, name: str) -> np.ndarray:
        """One column of a decoded release as :meth:`decode` publishes it: a number column in its units (dates
        as days), a categorical column as the original's cell values (a released gap: NaN)."""
        if name in self.numeric_names:
            j = self.numeric_names.index(name)
            gaps = d.gaps.get(j)
            return d.numbers[:, j] if gaps is None else np.where(gaps, np.nan, d.numbers[:, j])
        k = self.categorical_names.index(name)
        return pd.Series(d.text[:, k], dtype=object).map(self.categorical_[k].values).to_numpy(dtype=object)

    def _num(self, name: str) -> _Numeric:
        return next(n for n in self.numeric_ if n.name == name)


@dataclass
class Decoded:
    """A released design decoded without its table (:meth:`TableCodec.decode_parts`): ``numbers`` (rows x
    number columns, in their units) and ``text`` (rows x categorical columns: the category's text, None for a
    block released empty)."""

    numbers: np.ndarray
    text: np.ndarray
    gaps: dict[int, np.ndarray] = field(default_factory=dict)  # numeric column position -> released gaps

    @property
    def rows(self) -> int:
        return int(self.numbers.shape[0])

    def take(self, rows: np.ndarray) -> Decoded:
        return Decoded(self.numbers[rows], self.text[rows], {j: m[rows] for j, m in self.gaps.items()})


# rows of a categorical block decoded at a time: its temporaries (a few copies of the block) stay small
_ROW_BLOCK = 65536


def _decode_block(B: np.ndarray, block: np.ndarray, c: _Categorical, rng: np.random.Generator | None,
                  reading: str) -> np.ndarray:
    """One categorical column of a released design as text (None where its block is empty: NaN)."""
    blank = _blank(B, block)
    text = np.asarray(c.categories, dtype=object)[_pick(B, block, c.shares, rng, reading, blank)]
    rare = (text == _RARE) & ~blank
    if rare.any():
        # the shared indicator becomes one of the rare categories, by their frequency in the original
        draw = (rng.choice(len(c.rare), int(rare.sum()), p=c.rare_shares) if rng is not None
                else np.zeros(int(rare.sum()), dtype=int))
        text[rare] = np.asarray(c.rare, dtype=object)[draw]
    text[blank] = None
    return text


def _blank(B: np.ndarray, block: np.ndarray) -> np.ndarray:
    """The rows whose block is released empty (every indicator NaN)."""
    n = B.shape[0]
    blank = np.empty(n, dtype=bool)
    for a in range(0, n, _ROW_BLOCK):
        blank[a:a + _ROW_BLOCK] = np.isnan(B[a:a + _ROW_BLOCK, block]).all(axis=1)
    return blank


def _pick(B: np.ndarray, block: np.ndarray, shares: Sequence[float], rng: np.random.Generator | None,
          reading: str, blank: np.ndarray | None = None, *, systematic: bool = True) -> np.ndarray:
    """Index of the category of each row of a block, read as ``reading`` says (see the module docstring);
    ``shares``: each indicator's share of the original's cells; ``blank``: rows released empty (any index);
    ``systematic``: a group's draws of shares are systematic (a number's gap block draws each row alone)."""
    n = B.shape[0]
    if reading in ("calibrated", "original"):  # the original's frequencies, or (None) the release's
        return _calibrated(B, block, np.asarray(shares, dtype=np.float64) if reading == "original" else None,
                           np.zeros(n, dtype=bool) if blank is None else blank)
    # one draw for every row, as a single draw would be (the same stream), read a block of rows at a time
    u = None if rng is None or reading == "nearest" else rng.random((n, 1))
    if u is not None and systematic:
        u = _systematic(B, block, u)
    pick = np.empty(n, dtype=np.intp)
    for a in range(0, n, _ROW_BLOCK):
        part = np.nan_to_num(B[a:a + _ROW_BLOCK, block], nan=0.0)
        pick[a:a + len(part)] = _choose(part, None if u is None else u[a:a + len(part)])
        del part
    return pick


def _apportion(p: np.ndarray, n: int) -> np.ndarray:
    """``n`` rows shared in the proportions ``p`` (largest remainders; ties to the first)."""
    p = p / p.sum()
    q = np.floor(p * n).astype(np.int64)
    q[np.argsort(q - p * n, kind="stable")[:n - int(q.sum())]] += 1
    return q


def _calibrated(B: np.ndarray, block: np.ndarray, shares: np.ndarray | None, blank: np.ndarray) -> np.ndarray:
    """Index of the category of each row of a block released as perturbed indicators: each category as
    often as ``shares`` says (None: as the release says, by its indicators' means over the rows), in the
    rows nearest it.

    A row released as one category (one positive indicator, the others zero: the original's, a swap's, a
    categorical mechanism's) keeps it. The other rows share what the frequencies leave (scaled to them); each
    category, the rarest first, goes to those of them whose indicator for it most exceeds their largest other
    one; the most frequent takes the rest. Such indicators are one category's plus noise: clipped and
    normalised as a group's shares, or read by the largest, they publish every category towards an equal
    share of the rows, a category or a gap one record holds in dozens. Their means keep the frequencies
    (noise of mean zero, swaps, reconstructions of the column), up to the noise of a mean.
    """
    n, k = B.shape[0], len(block)
    if k == 1:
        return np.zeros(n, dtype=np.intp)
    best = np.empty(n, dtype=np.intp)
    top, second = np.empty(n), np.empty(n)
    exact = np.empty(n, dtype=bool)
    total = np.zeros(k)
    for a in range(0, n, _ROW_BLOCK):
        part = np.nan_to_num(B[a:a + _ROW_BLOCK, block], nan=0.0)
        rows = slice(a, a + len(part))
        total += part.sum(axis=0)
        best[rows] = np.argmax(part, axis=1)
        exact[rows] = (np.count_nonzero(part, axis=1) == 1) & (part.max(axis=1) > 0)
        part.partition(k - 2, axis=1)  # in place: the two largest indicators are the last two
        top[rows], second[rows] = part[:, -1], part[:, -2]
        del part
    exact &= ~blank
    pick = best.copy()
    free = np.flatnonzero(~exact & ~blank)
    if not len(free):
        return pick
    # what the frequencies leave to the free rows once the rows released as one category are counted
    valid = n - int(blank.sum())
    if shares is None:
        shares = np.clip(total, 0.0, None)  # a mean below zero (noise) is a category the release does not hold
        if not shares.sum() > 0:  # the release holds no category: each row its nearest
            return pick
    left = np.maximum(_apportion(shares, valid) - np.bincount(best[exact], minlength=k), 0)
    quota = _apportion(left.astype(np.float64) if left.sum() > 0 else shares, len(free))
    pending = np.ones(len(free), dtype=bool)
    order = np.argsort(quota, kind="stable")
    for j in order[:-1]:
        if quota[j] == 0:
            continue
        cand = free[pending]
        margin = B[cand, block[j]] - np.where(best[cand] == j, second[cand], top[cand])
        taken = np.flatnonzero(pending)[np.argpartition(-np.nan_to_num(margin, nan=0.0), quota[j] - 1)[:quota[j]]]
        pick[free[taken]] = j
        pending[taken] = False
    pick[free[pending]] = order[-1]
    return pick


def _systematic(B: np.ndarray, block: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The uniform draws ``u`` (one per row) made systematic within each set of rows released with the same
    indicators (a microaggregated group's shares): the ``m`` rows of a set take ``(r + o) / m`` for their ranks
    ``r`` in the order of their draws and an offset ``o``, the set's draws summed modulo 1 (uniform, and
    independent of their order). The set then releases each category as often as its share says, to within one
    row, on rows in a random order; independent draws add multinomial noise to those counts. A row released
    alone keeps its own draw."""
    n = B.shape[0]
    weights = np.random.default_rng(0).random(len(block))  # a fixed projection: equal rows, equal keys
    key = np.empty(n)
    for a in range(0, n, _ROW_BLOCK):
        key[a:a + _ROW_BLOCK] = np.nan_to_num(B[a:a + _ROW_BLOCK, block], nan=-1.0) @ weights
    _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    if counts.max() == 1:
        return u
    order = np.lexsort((u[:, 0], inverse))  # by set, then by draw
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - np.repeat(np.cumsum(counts) - counts, counts)
    offset = np.bincount(inverse, weights=u[:, 0]) % 1.0
    m = counts[inverse]
    return np.where(m > 1, (rank + offset[inverse]) / m, u[:, 0])[:, None]


def _choose(block: np.ndarray, u: np.ndarray | None) -> np.ndarray:
    """Index of the category of each row: the largest indicator, or a draw (uniform ``u``, one per row)
    weighted by the positive ones."""
    if u is None:
        return np.argmax(block, axis=1)
    # one block-sized array, its weights and then their running sums in place (a block of 65,536 rows of a
    # 60-category column is 31 MB: each further temporary of that size is one more on the release's peak)
    w = np.clip(block, 0.0, None)
    total = w.sum(axis=1, keepdims=True)
    w /= np.where(total > 0, total, 1.0)
    none = np.flatnonzero(total[:, 0] <= 0)
    if len(none):  # a row with no positive indicator falls back to its largest one
        w[none] = 0.0
        w[none, np.argmax(block[none], axis=1)] = 1.0
    np.cumsum(w, axis=1, out=w)
    return np.minimum((w < u).sum(axis=1), block.shape[1] - 1)
