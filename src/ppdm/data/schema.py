"""Column roles: which columns are released (perturbed), passed through unchanged, or dropped."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InputError

__all__ = ["Schema", "check_named", "check_roles", "check_unique_ids", "quoted_names", "resolve_schema",
           "warn_passthrough"]


@dataclass(frozen=True)
class Schema:
    """Roles of the columns of one table.

    Attributes
    ----------
    columns : tuple of str
        Every input column, in input order.
    released : tuple of str
        Numeric columns that the mechanism perturbs, in input order.
    id, label : str or None
        Identifier and class columns, passed through unchanged.
    passthrough : tuple of str
        Other columns copied unchanged into the release.
    dropped : tuple of str
        Columns left out of the release.
    """

    columns: tuple[str, ...]
    released: tuple[str, ...]
    id: str | None = None
    label: str | None = None
    passthrough: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()

    # -- data ------------------------------------------------------------------------------------

    def matrix(self, df: pd.DataFrame, *, consume: bool = False) -> np.ndarray:
        """The released columns of ``df`` as a float64 array, checked for text, NaN and infinity.

        ``consume``: each column is deleted from ``df`` once copied (a frame the caller owns), so that a
        table read column by column is held once, not twice, while its design is built.
        """
        return numeric_matrix(df, self.released, consume=consume)

    def assemble(self, df: pd.DataFrame, released: np.ndarray, *, order: np.ndarray | None = None,
                 copy: bool = True) -> pd.DataFrame:
        """Put ``released`` values back into the table: input column order, dropped columns removed.

        ``order``: ``released`` is in this order of ``df``'s rows (shuffled), so the other columns are taken
        in it too. ``copy=False``: the released columns are views of ``released`` (no second copy of it).
        """
        out = {}
        block = dict(zip(self.released, np.asarray(released).T, strict=True))
        for c in self.columns:
            if c in self.dropped:
                continue
            if c in block:
                out[c] = block[c]
            else:
                out[c] = df[c].to_numpy() if order is None else df[c].array.take(order)
        return pd.DataFrame(out, index=range(len(df)), copy=copy)

    def assemble_new(self, df: pd.DataFrame, released: np.ndarray, names: Sequence[str]) -> pd.DataFrame:
        """A release with *new* columns (e.g. ``d1..dp``) in place of the released ones.

        The id, label and passthrough columns keep their input order; the new block sits where the
        first released column was.
        """
        released = np.asarray(released)
        if released.shape[1] != len(names):
            raise InputError(f"{released.shape[1]} released columns but {len(names)} names; this is a bug")
        clash = [c for c in names if c in self.columns and c not in self.released and c not in self.dropped]
        if clash:
            raise InputError(f"the new column name(s) {quoted_names(clash)} already exist in the table; rename them")
        out = {}
        placed = False
        for c in self.columns:
            if c in self.dropped:
                continue
            if c in self.released:
                if not placed:
                    out.update({n: released[:, k] for k, n in enumerate(names)})
                    placed = True
                continue
            out[c] = df[c].to_numpy()
        return pd.DataFrame(out, index=range(len(df)))

    def check_batch(self, df: pd.DataFrame, what: str = "batch") -> None:
        """Check that a later batch has exactly this schema's columns, in the same order."""
        cols = tuple(map(str, df.columns))
        if cols == self.columns:
            return
        missing = [c for c in self.columns if c not in cols]
        extra = [c for c in cols if c not in self.columns]
        if missing:
            raise InputError(f"{what} lacks column(s) {quoted_names(missing)}; send the same columns as the first "
                             "table")
        if extra:
            raise InputError(f"{what} has unexpected column(s) {quoted_names(extra)}; drop them or start a new state")
        raise InputError(f"{what} has the right columns in another order; reorder them as in the first table")

    # -- serialisation ---------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Schema:
        return cls(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items()})


def check_named(cols: Sequence[str], *, id: str | None = None, label: str | None = None,
                columns: Sequence[str] | None = None, drop: Sequence[str] = (), table: str = "the table") -> None:
    """Refuse, in one line, an option that names a column the table (its column names ``cols``) lacks.

    ``table`` names the table in the message, where a command reads more than one (an original and a release).
    """
    named = [("--id", id), ("--label", label)] + [("--columns", c) for c in (columns or ())]
    named += [("--drop", c) for c in drop]
    for flag, c in named:
        if c is not None and c not in cols:
            raise InputError(f"{flag} names column '{c}', which {table} does not have; columns are "
                             f"{quoted_names(cols)}")


def check_roles(cols: Sequence[str], *, id: str | None = None, label: str | None = None, drop: Sequence[str] = (),
                roles: dict[str, str] | None = None, columns: Sequence[str] | None = None) -> None:
    """Refuse options that give one column two treatments (one line, naming the column and both options)."""
    roles = dict(roles or {})
    unknown = [c for c in roles if c not in cols]
    if unknown:
        raise InputError(f"--roles names column '{unknown[0]}', which the table does not have; check the name")
    for flag, c in (("--id", id), ("--label", label)):
        if c is None:
            continue
        if c in drop:
            raise InputError(f"column '{c}' is both {flag} and in --drop; give it one treatment (leave it out of "
                             f"--drop to keep it as {flag}, or leave {flag} out to drop it)")
        if roles.get(c) == "drop":
            raise InputError(f"column '{c}' is both {flag} and --roles {c}=drop; give it one treatment (leave "
                             f"{flag} out to drop it, or drop '{c}=drop' from --roles)")
    both = [c for c in columns or () if c in drop or roles.get(c) == "drop"]
    if both:
        raise InputError(f"column '{both[0]}' is both in --columns and dropped; give it one treatment")


def warn_passthrough(schema: Schema, how: str) -> None:
    """Say on stderr (a warning) which columns reach the release unperturbed besides the id and the label."""
    if schema.passthrough:
        import warnings

        from ppdm.exceptions import PrivacyWarning

        warnings.warn(f"column(s) {quoted_names(list(schema.passthrough))} reach the release unperturbed ({how}); "
                      "--drop them if they describe people", PrivacyWarning, stacklevel=3)


def quoted_names(cols: Sequence[str], limit: int = 5) -> str:
    """The first ``limit`` names, quoted, and how many more (for messages)."""
    shown = ", ".join(f"'{c}'" for c in cols[:limit])
    return shown + (f" and {len(cols) - limit} more" if len(cols) > limit else "")


_NUMBER = r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*|\s*[+-]?(?:inf|infinity|nan)\s*"


def cell_texts(s: pd.Series) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """The cells of ``s`` as text, to be read once per distinct text when they repeat.

    Returns ``(codes, distinct, text)``: ``distinct[codes]`` is every cell's text when the cells repeat
    (a column of a million cells usually holds few distinct values: reading each once is many times faster);
    ``distinct`` is None when a spread sample of the cells hardly repeats (ids, free text: at least 99 % of it
    distinct, about 100,000 distinct texts or more), where a table of distinct texts would cost memory and save
    little: read ``text`` (every cell's) instead.
    """
    text = s.astype(str).to_numpy(dtype=object)
    if len(text) > _PROBE:
        step = len(text) // _PROBE
        probe = text[::step][:_PROBE][s.notna().to_numpy()[::step][:_PROBE]]  # gaps are no repeats of a value
        if len(set(probe)) >= len(probe) - len(probe) // 100:
            return np.zeros(0, dtype=np.intp), None, text
    codes, distinct = pd.factorize(text)
    return codes, distinct, text


# cells sampled to decide whether a column's cells repeat (cell_texts)
_PROBE = 2048


def by_cell_text(s: pd.Series, read: Callable[[pd.Series], Any]) -> Any:
    """``read`` (a Series of texts -> an array of one value per text) applied to the cells of ``s`` as text:
    to each distinct text once when the cells repeat, to every cell otherwise (see :func:`cell_texts`)."""
    codes, distinct, text = cell_texts(s)
    if distinct is None:
        return read(pd.Series(text, dtype=object))
    return read(pd.Series(distinct, dtype=object)).take(codes)


def text_among_numbers(s: pd.Series, parsed: pd.Series | None = None) -> tuple[np.ndarray, str]:
    """The cells of ``s`` that hold text where numbers are expected (a mask over its rows), and the first of
    them as a message shows it ('' when there is none); ``parsed``: :func:`parse_numbers` of ``s``, when the
    caller has it."""
    text = s.notna().to_numpy() & (parse_numbers(s) if parsed is None else parsed).isna().to_numpy()
    if not text.any():
        return text, ""
    first = str(s.iloc[int(np.flatnonzero(text)[0])]).strip()
    return text, repr(first if len(first) <= 20 else first[:20] + "...")


def parse_numbers(s: pd.Series) -> pd.Series:
    """Text cells that are decimal numbers, as floats (NaN elsewhere).

    A strict pattern first, then ``float``: ``pandas.to_numeric`` on arbitrary text (hex-like tokens such
    as ``8e9806212f3cf443``) was seen to crash the interpreter, and ids and pseudonyms are such text.
    """
    out = by_cell_text(s, _numbers_of)
    out[s.isna().to_numpy()] = np.nan
    return pd.Series(out, index=s.index, dtype=np.float64)


def _numbers_of(text: pd.Series) -> np.ndarray:
    ok = text.str.fullmatch(_NUMBER, case=False).to_numpy(dtype=bool)
    out = np.full(len(text), np.nan)
    out[ok] = [float(v) for v in text.to_numpy()[ok]]
    return out


def _looks_numeric(s: pd.Series) -> bool:
    """True when an object column holds mostly numbers (so stray text in it is a data error)."""
    vals = s.dropna()
    if len(vals) == 0:
        return False
    parsed = parse_numbers(vals)
    return bool(parsed.notna().mean() >= 0.5)


def check_unique_ids(df: pd.DataFrame | None, id: str | None, repeated: int | None = None) -> None:
    """Refuse an id column whose values repeat (``repeated``: their count, when it was found elsewhere) or are
    missing (a record without an id would share its pseudonym with every other one)."""
    if df is not None and id is not None and id in df.columns:
        missing = int(df[id].isna().sum())
        if missing:
            raise InputError(f"--id column '{id}' has {missing} missing value(s); every record needs an id (fill "
                             "them, or leave --id out)")
    if repeated is None:
        repeated = int(df[id].duplicated().sum()) if df is not None and id is not None and id in df.columns else 0
    if repeated:
        raise InputError(f"--id column '{id}' has {repeated} duplicate value(s); ids must name one record each (fix "
                         "them, or leave --id out)")


def resolve_schema(
    df: pd.DataFrame,
    *,
    columns: Sequence[str] | None = None,
    id: str | None = None,
    label: str | None = None,
    drop: Sequence[str] = (),
    drop_other: bool = False,
    allow_categorical: bool = False,
) -> Schema:
    """Decide the role of every column of ``df``.

    Parameters
    ----------
    df : DataFrame
    columns : sequence of str, optional
        Columns to perturb. Default: every numeric column that is not the id or the label.
    id, label : str, optional
        Identifier and class columns, passed through unchanged and never perturbed.
    drop : sequence of str
        Columns to leave out of the release.
    drop_other : bool
        Drop (instead of passing through) columns that are neither released, id nor label.
    allow_categorical : bool
        Let text columns be released (only for mechanisms that handle categorical data).
    """
    cols = tuple(map(str, df.columns))
    check_named(cols, id=id, label=label, columns=columns, drop=drop)
    check_roles(cols, id=id, label=label, drop=drop, columns=columns)
    if id is not None and id == label:
        raise InputError(f"column '{id}' cannot be both --id and --label; name two different columns")
    check_unique_ids(df, id)
    if columns is not None and len(set(columns)) != len(columns):
        raise InputError("--columns names a column twice; list each column once")
    special = {c for c in (id, label) if c is not None}
    if columns is not None:
        clash = special.intersection(columns)
        if clash:
            raise InputError(f"column {quoted_names(sorted(clash))} is the id or label and cannot be perturbed")
        released = [c for c in cols if c in set(columns)]
        for c in released:
            if not pd.api.types.is_numeric_dtype(df[c]) and not allow_categorical:
                raise InputError(
                    f"column '{c}' holds text, which this method cannot perturb; fix the values or leave it out"
                )
    else:
        released = []
        for c in cols:
            if c in special or c in drop:
                continue
            s = df[c]
            if pd.api.types.is_bool_dtype(s):
                continue
            if pd.api.types.is_numeric_dtype(s):
                released.append(c)
            elif _looks_numeric(s) and not allow_categorical:
                text, first = text_among_numbers(s)
                if not text.any():  # numbers the reader kept as text (beyond 64-bit integers): numeric after all
                    released.append(c)
                    continue
                raise InputError(f"column '{c}' is numeric but {int(text.sum())} cell(s) hold text, first in data row "
                                 f"{int(np.flatnonzero(text)[0]) + 1} ({first}); fix them, or pass --drop '{c}'")
            elif allow_categorical:
                released.append(c)
    if not released:
        raise InputError("no numeric column to perturb; name them with --columns or check --id/--label")
    other = [c for c in cols if c not in released and c not in special]
    dropped = [c for c in other if c in drop or drop_other]
    passthrough = [c for c in other if c not in dropped]
    return Schema(cols, tuple(released), id, label, tuple(passthrough), tuple(dropped))


def numeric_matrix(df: pd.DataFrame, cols: Sequence[str], *, what: str | None = None, min_rows: int = 2,
                   consume: bool = False, gaps: bool = False) -> np.ndarray:
    """``df[cols]`` as float64, with a clear error for text, NaN or infinite cells.

    ``what`` names the table in messages (e.g. "the new batch"); ``min_rows`` is the fewest rows accepted.
    ``consume``: delete each column from ``df`` once it is copied. ``gaps``: missing cells are NaN, not an
    error (infinite ones still are).
    """
    prefix = f"{what}: " if what else ""
    converted = {}
    for c in cols:
        if not pd.api.types.is_numeric_dtype(df[c]):
            # numbers kept as text by the reader (integers beyond 64 bits): numeric when every cell parses
            conv = parse_numbers(df[c])
            text = conv.isna().to_numpy() & df[c].notna().to_numpy()
            if text.any() or conv.notna().sum() == 0:
                where = f" (first in data row {int(np.flatnonzero(text)[0]) + 1})" if text.any() else ""
                raise InputError(f"{prefix}column '{c}' holds text{where}; fix the values or leave the column out")
            converted[c] = conv.astype(np.float64)
    # a column at a time: selecting the columns first would copy the whole frame once more
    X = np.empty((len(df), len(cols)), dtype=np.float64)
    for j, c in enumerate(cols):
        X[:, j] = converted.pop(c) if c in converted else df[c].to_numpy(dtype=np.float64)
        if consume:
            del df[c]
    bad = np.isinf(X) if gaps else ~np.isfinite(X)
    if bad.any():
        empty = np.flatnonzero(bad.all(axis=0))
        if len(empty):  # dropping its rows would leave none: the column goes, not the rows
            c = cols[int(empty[0])]
            raise InputError(f"{prefix}column '{c}' has no values; leave it out (--drop '{c}')")
        j = int(np.flatnonzero(bad.any(axis=0))[0])
        n_nan, n_inf = int(np.isnan(X).sum()), int(np.isinf(X).sum())
        kind = " and ".join(k for k, n in (("missing", n_nan), ("infinite", n_inf)) if n)
        raise InputError(
            f"{prefix}{n_nan + n_inf} {kind} value(s), first in column '{cols[j]}'; fill or drop those rows first"
        )
    if X.shape[0] < min_rows:
        need = "two rows" if min_rows == 2 else f"{min_rows} row(s)"
        raise InputError(f"the table has {X.shape[0]} data row; a release needs at least {need}")
    return X
