"""Column types and roles of a whole table: what each column is, what it is for, and what a release does to it.

Types: ``continuous`` and ``integer`` numbers, ``categorical`` and ``boolean`` values, ``date`` (text that
parses as dates), ``text`` (free text: nearly every value distinct), ``nested`` (lists, structs or maps: Parquet's
nested types, never released). Roles: ``identifier``,
``quasi-identifier`` (what an attacker may know of a person), ``sensitive``, ``label`` (the class analysts
predict) and ``other``. Free text and identifiers never reach a release as they are: text is dropped, an
identifier becomes a keyed pseudonym, and a column named as a direct identifier (``email``, ``phone``,
``surname``...) or holding one (e-mail addresses, telephone numbers) is dropped however often its values repeat.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InputError

__all__ = ["ColumnInfo", "TYPES", "ROLES", "infer_columns", "parse_roles", "is_whole_table", "announce_columns",
           "dropped_columns", "numbers_schema", "check_cells"]

TYPES = ("continuous", "integer", "categorical", "boolean", "date", "text", "nested")
ROLES = ("identifier", "quasi-identifier", "sensitive", "label", "other", "drop")

# ISO dates (2015-01-31, optionally with a time, and a time zone: Z or an offset) and the two common day-first /
# month-first forms
_DATE = (r"\d{4}-\d{1,2}-\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:\s?(?:Z|[+-]\d{2}(?::?\d{2})?))?)?"
         r"|\d{1,2}/\d{1,2}/\d{4}")
_SLASH = r"(\d{1,2})/(\d{1,2})/\d{4}"
_ZONE = r"\d:\d{2}(?::\d{2}(?:\.\d+)?)?\s?(?:Z|[+-]\d{2}(?::?\d{2})?)$"
#: a column this share of whose cells are numbers is a column of numbers (the others are typos)
_NUMBERS_SHARE = 0.5
_TEXT_DISTINCT = 0.5  # a text column whose values are this distinct (and many) is free text, not categories
_TEXT_MIN_VALUES = 50
#: a column of categories with a different value in each of at least this many rows names its rows: an identifier
_UNIQUE_MIN_VALUES = 10
#: why a column is dropped without being asked, as the schema, the record and stderr say it
FREE_TEXT = "dropped (free text)"
UNIQUE = "dropped (a different value in every row: an identifier)"
RUNNING = "dropped (a running number, one per row: an identifier)"
#: a column of whole numbers that counts its rows one by one (each of first..first+n-1 once) is a row number
#: from this many rows on: a measured quantity fills such a run exactly by chance only on tiny tables
_RUNNING_MIN_VALUES = 50
EMPTY = "dropped (no values)"
#: the start of the treatment of a column dropped because its name or its values say it identifies people
DIRECT = "dropped (a direct identifier: "
#: column names that say what identifies a person (lower case, words joined by single spaces): e-mail,
#: telephone, national and account numbers, addresses and a person's name, with at most a word either side
#: (``home_phone_no``, not spambase's ``word_freq_address``); a column named so is dropped whatever its values
#: look like, since a repeated e-mail (a patient seen twice) is no less identifying
_DIRECT_NAMES = re.compile(
    r"^(?:[a-z0-9']+ )?(?:e ?mail|mail address|phone|telephone|tel no|mobile|cellphone|cell phone|fax|ssn|sin|nino|"
    r"social security|social insurance|national (?:id|insurance)|passport|nhs (?:no|number)|driving licen[cs]e|"
    r"driver'?s? licen[cs]e|tax (?:id|number)|iban|credit card|card number|account number|ip address|"
    r"street|address|postal address|home address)(?: [a-z0-9']+)?$"
    r"|^(?:(?:first|last|given|middle|maiden|family|full|patient|customer|client|person|user|employee|member|"
    r"contact|owner|applicant|student|account) )?(?:name|names|surname|forename|fname|lname|username|login)$")
#: what the cells of a direct identifier are: a column whose values are nearly all such identifies people
#: however often its values repeat
_DIRECT_VALUES = {
    "e-mail addresses": r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}",
    "IP addresses": r"\d{1,3}(?:\.\d{1,3}){3}",
    "social security numbers": r"\d{3}-\d{2}-\d{4}",
    # 9 to 15 digits, led by +, ( or 0 or in three groups: not a date (8 digits) nor a band such as "50000-74999"
    "telephone numbers": r"(?=(?:\D*\d){9,15}\D*$)(?:[+(0][\d ().-]{7,20}\d|\d+[ .-]\d+[ .-][\d .-]*\d)",
}
_DIRECT_SHARE = 0.9
NESTED = "dropped (nested values: lists, structs or maps)"


@dataclass(frozen=True)
class ColumnInfo:
    """One column: its type, its role, and what the release does with it (``treatment``)."""

    name: str
    type: str
    role: str
    treatment: str
    n_missing: int = 0
    n_distinct: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _is_integral(v: np.ndarray) -> bool:
    return bool(v.size) and bool(np.all(np.isfinite(v))) and bool(np.all(v == np.round(v)))


def _type_of(s: pd.Series) -> str:
    from ppdm.data.schema import cell_texts, parse_numbers

    # on a Series of its own: dropping rows from the table's own Series would make its RangeIndex build (and
    # keep, for the table's lifetime) an array of every row number
    vals = pd.Series(s.array, copy=False).dropna()
    if _is_nested(vals):
        return "nested"
    if pd.api.types.is_bool_dtype(s):
        return "boolean"
    if pd.api.types.is_datetime64_any_dtype(s):
        return "date"
    if pd.api.types.is_numeric_dtype(s):
        return "integer" if _is_integral(vals.to_numpy(dtype=np.float64)) else "continuous"
    if len(vals) == 0:
        return "categorical"
    # each distinct cell text is read once, weighted by how many cells hold it (see cell_texts)
    codes, cells, every = cell_texts(vals)
    text = pd.Series(every if cells is None else cells, dtype=object).str.strip()
    cells_with = None if cells is None else np.bincount(codes, minlength=len(cells))
    nums = parse_numbers(text)

    def share(matches: pd.Series) -> float:  # of the cells
        m = matches.to_numpy(dtype=bool)
        return int(m.sum() if cells_with is None else cells_with[m].sum()) / len(every)

    # numbers with a few typos are numbers (the release names the typos): as text they were dropped unsaid
    if nums.notna().all() or share(nums.notna()) >= _NUMBERS_SHARE:
        return "integer" if _is_integral(nums.dropna().to_numpy()) else "continuous"

    if share(text.str.fullmatch(_DATE)) >= 0.95 and share(parse_dates(text).notna()) >= 0.95:
        return "date"
    distinct = text.nunique()
    if set(text.str.lower().unique()) <= {"true", "false"}:
        return "boolean"
    if distinct >= _TEXT_MIN_VALUES and distinct > _TEXT_DISTINCT * len(every):
        return "text"
    return "categorical"


def _is_nested(vals: pd.Series) -> bool:
    """Whether some cell of ``vals`` (no gaps) is a list, a struct or a map (a sequence or a dict)."""
    # read in C first: only a column of values of several kinds can hold such cells
    if vals.dtype != object or pd.api.types.infer_dtype(vals, skipna=True) != "mixed":
        return False
    return any(pd.api.types.is_list_like(v) for v in vals.to_numpy(dtype=object))


def parse_dates(s: pd.Series) -> pd.Series:
    """Text as timestamps (NaT where a cell is no date); ISO first (a time zone's times in UTC), then dates with
    slashes: month-first, or day-first when some first number exceeds 12 (see :func:`slash_format`)."""
    from ppdm.data.schema import by_cell_text

    # each distinct text is parsed once (a column of a million dates holds a few thousand days)
    return pd.Series(by_cell_text(s, _dates_of), index=s.index)


def slash_format(text: pd.Series) -> str:
    """The format of a column's dates with slashes: day-first (British, ``31/01/2020``) when some first number
    exceeds 12 and no second one does, month-first (``01/31/2020``) otherwise."""
    parts = text.str.strip().str.extract(_SLASH).dropna().astype(int)
    day_first = bool((parts[0] > 12).any()) and not bool((parts[1] > 12).any())
    return "%d/%m/%Y" if day_first else "%m/%d/%Y"


def _dates_of(cells: pd.Series) -> pd.api.extensions.ExtensionArray:
    text = cells.str.strip()
    # times with a time zone apart: pandas reads the times without one beside them with their offset
    zoned = text.str.contains(_ZONE)
    days = pd.to_datetime(text.where(~zoned), errors="coerce", format="ISO8601")
    if zoned.any():
        # the same instants in UTC (the zone dropped), as a Parquet timestamp with a time zone is read
        stamps = pd.to_datetime(text[zoned], errors="coerce", format="ISO8601", utc=True)
        days[zoned] = stamps.dt.tz_convert(None)
    slash = days.isna() & text.str.fullmatch(_SLASH)
    if slash.any():
        days[slash] = pd.to_datetime(text[slash], errors="coerce", format=slash_format(text[slash]))
    return days.array


def parse_roles(spec: str | Mapping[str, str] | None) -> dict[str, str]:
    """``--roles "age=quasi-identifier,diagnosis=sensitive,notes=drop"`` (or a mapping) as a dict."""
    if spec is None:
        return {}
    items = spec.items() if isinstance(spec, Mapping) else (
        tuple(p.strip() for p in part.split("=", 1)) for part in spec.split(",") if part.strip())
    out = {}
    for item in items:
        if len(item) != 2 or not item[0] or not item[1]:
            raise InputError(f"--roles takes COLUMN=ROLE pairs separated by commas; got '{'='.join(item)}'")
        col, role = item
        role = role.strip().lower().replace("_", "-")
        aliases = {"qi": "quasi-identifier", "id": "identifier", "quasi": "quasi-identifier"}
        role = aliases.get(role, role)
        if role not in ROLES:
            raise InputError(f"--roles: '{role}' for column '{col}' is not a role; use one of {', '.join(ROLES)}")
        out[str(col)] = role
    return out


def infer_columns(df: pd.DataFrame, *, id: str | None = None, label: str | None = None,
                  drop: Sequence[str] = (), roles: Mapping[str, str] | None = None) -> list[ColumnInfo]:
    """Type, role and treatment of every column, in table order (overrides from ``roles``).

    Free text and columns of categories with a different value in each row (names, e-mail addresses) are
    dropped, unless ``roles`` names them with a role that keeps them (their values can then identify people:
    :func:`announce_columns` warns).
    """
    from ppdm.data.schema import check_named, check_roles

    roles = dict(roles or {})
    check_named(list(map(str, df.columns)), id=id, label=label, drop=drop)
    check_roles(list(map(str, df.columns)), id=id, label=label, drop=drop, roles=roles)
    out = []
    for c in map(str, df.columns):
        s = df[c]
        kind = _type_of(s)
        role = roles.get(c)
        if kind == "nested":
            _check_nested_kept(c, id=id, label=label, drop=drop, role=role)
        n_values, n_distinct = int(s.notna().sum()), _distinct(s, kind)
        if c == id:
            role, treatment = "identifier", "replaced by keyed pseudonyms (rows shuffled)"
        elif c == label:
            role, treatment = "label", "released as it is (the class analysts predict)"
        elif c in drop or role == "drop":
            role, treatment = "other", "dropped (asked for)"
        elif role == "identifier":
            treatment = "dropped (an identifier; name it with --id to publish pseudonyms)"
        elif n_values == 0:
            role, treatment = role or "other", EMPTY
        elif kind == "nested":
            role, treatment = role or "other", NESTED
        elif role is not None:
            treatment = "perturbed"  # kept by the user's role, free text and identifiers too (with a warning)
        elif (what := _direct_identifier(c, s, kind, n_distinct)) is not None:
            role, treatment = "other", f"{DIRECT}{what})"
        elif kind == "text":
            role, treatment = "other", FREE_TEXT
        elif kind == "categorical" and n_distinct == n_values >= _UNIQUE_MIN_VALUES:
            role, treatment = "other", UNIQUE
        elif kind == "integer" and n_distinct == n_values >= _RUNNING_MIN_VALUES and _counts_rows(s, n_distinct):
            role, treatment = "other", RUNNING
        else:
            role, treatment = "quasi-identifier", "perturbed"
        out.append(ColumnInfo(c, kind, role, treatment, int(s.isna().sum()), n_distinct))
    return out


def _direct_identifier(name: str, s: pd.Series, kind: str, n_distinct: int) -> str | None:
    """What makes a column a direct identifier of people (``so named``, or what nearly all its values are:
    ``e-mail addresses``, ``telephone numbers``...), or None. Columns of two values (a yes/no "has e-mail") and
    fractional numbers are not."""
    if _named_identifier(name, kind, n_distinct):
        return "so named"
    if kind not in ("categorical", "text") or n_distinct < 3:
        return None
    vals = pd.Series(s.array, copy=False).dropna()
    # a spread sample decides: the patterns are read on at most 2,000 cells
    cells = vals.iloc[:: max(1, len(vals) // 2000)].astype(str).str.strip()
    for what, pattern in _DIRECT_VALUES.items():
        if cells.str.fullmatch(pattern).mean() >= _DIRECT_SHARE:
            return what
    return None


def _named_identifier(name: str, kind: str, n_distinct: int) -> bool:
    """A column whose name says it identifies people, of three values or more and not fractional numbers."""
    return kind not in ("boolean", "continuous") and n_distinct >= 3 and direct_identifier_name(name)


def direct_identifier_name(name: str) -> bool:
    """Whether a column's name says that it identifies people (``email``, ``phone_no``, ``SSN``, ``lastName``,
    ``patient name``...)."""
    words = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(name))
    words = " ".join(re.sub(r"[^0-9a-z']+", " ", words.lower()).split())
    return _DIRECT_NAMES.search(words) is not None


def _distinct(s: pd.Series, kind: str) -> int:
    """The distinct values of ``s`` (gaps aside); nested cells (lists, dicts) are told apart by their text."""
    return int((s.dropna().astype(str) if kind == "nested" else s).nunique(dropna=True))


def _check_nested_kept(c: str, *, id: str | None, label: str | None, drop: Sequence[str], role: str | None) -> None:
    """Refuse, in one line, options that would release or pass on a column of nested values (``c``)."""
    if c in drop or role in ("drop", "identifier") or (c not in (id, label) and role is None):
        return
    raise InputError(f"column '{c}' holds nested values (lists, structs or maps), which no release can hold; "
                     f"flatten it into plain columns, or leave it out (--drop '{c}')")


def _counts_rows(s: pd.Series, n_distinct: int) -> bool:
    """Whether the distinct whole numbers of ``s`` are a run ``first, first + 1, ..., first + n_distinct - 1``."""
    from ppdm.data.schema import parse_numbers

    vals = pd.Series(s.array, copy=False).dropna()
    nums = vals if pd.api.types.is_numeric_dtype(vals) else parse_numbers(vals.astype(str).str.strip())
    v = nums.to_numpy(dtype=np.float64)
    return bool(v.size) and float(v.max()) - float(v.min()) + 1 == n_distinct


def _identifying(i: ColumnInfo, rows: int) -> bool:
    """Free text, categories with a different value in each row, or a column named as a direct identifier (a
    kept column that names people)."""
    return i.type == "text" or (i.type == "categorical" and i.n_distinct == rows - i.n_missing >= _UNIQUE_MIN_VALUES) \
        or _named_identifier(i.name, i.type, i.n_distinct)


def announce_columns(infos: Sequence[ColumnInfo], rows: int) -> None:
    """Say on stderr (as warnings) each column dropped without being asked and why, and each identifying
    column kept by a role (``rows``: the table's rows). Every command that releases a table says it, once the
    table is accepted."""
    import warnings

    from ppdm.exceptions import ColumnWarning, PrivacyWarning

    for i in infos:
        why = i.treatment[len("dropped ("):-1]
        if i.treatment in (FREE_TEXT, UNIQUE, RUNNING):
            named = "name it with --id to publish keyed pseudonyms, or " if i.treatment != FREE_TEXT else ""
            warnings.warn(f"column '{i.name}' is not released: {why}; {named}keep it with --roles '{i.name}=other' "
                          "(its values then reach the release)", ColumnWarning, stacklevel=2)
        elif i.treatment.startswith(DIRECT):
            # --id takes a column that names each row once: a repeated e-mail (a patient seen twice) is not one
            named = "name it with --id to publish keyed pseudonyms, or " if i.n_distinct == rows - i.n_missing else ""
            warnings.warn(f"column '{i.name}' is not released: {why}; {named}keep it with --roles '{i.name}=other' "
                          "(its values then reach the release)", ColumnWarning, stacklevel=2)
        elif i.treatment == EMPTY:
            warnings.warn(f"column '{i.name}' is not released: {why}", ColumnWarning, stacklevel=2)
        elif i.treatment == NESTED:
            warnings.warn(f"column '{i.name}' is not released: {why}; flatten it into plain columns to release it, "
                          f"or leave it out (--drop '{i.name}')", ColumnWarning, stacklevel=2)
        elif i.treatment == "perturbed" and _identifying(i, rows):
            warnings.warn(f"column '{i.name}' is free text, names each row or is named as an identifier, and is "
                          "released because --roles keeps it: its values can identify people", PrivacyWarning,
                          stacklevel=2)


def dropped_columns(infos: Sequence[ColumnInfo], drop: Sequence[str] = ()) -> tuple[str, ...]:
    """The columns left out of a release: those asked for and those the schema drops."""
    return tuple(dict.fromkeys([*drop, *(i.name for i in infos if i.treatment.startswith("dropped"))]))


def is_whole_table(df: pd.DataFrame, infos: Sequence[ColumnInfo]) -> bool:
    """True when the table needs the whole-table release: categories, dates, integers or gaps among its columns
    (integers come back as integers within their range only through the codec's decoding)."""
    kept = [i for i in infos if i.treatment == "perturbed"]
    if any(i.type in ("categorical", "boolean", "date", "text", "integer") for i in kept):
        return True
    if any(i.n_missing for i in kept):
        return True
    # numbers the reader kept as text (beyond 64-bit integers) are numbers: the numeric path reads them
    return False


def numbers_schema(df: pd.DataFrame, *, columns: Sequence[str] | None = None, id: str | None = None,
                   label: str | None = None, drop: Sequence[str] = (), drop_other: bool = False,
                   roles: Mapping[str, str] | None = None, how: str = "") -> tuple[Any, Callable[[], None]]:
    """The roles of a table released by a mechanism of numbers (a stream, pattern hiding, the dask backend):
    the schema's treatment first (:func:`infer_columns`: free text and identifiers dropped), then the numeric
    columns released and the other kept ones passed through. Returns the schema and the call that says on
    stderr what was dropped and why and what passes through unperturbed (``how``: why), to be made once the
    run is past its checks (a refusal stays one line)."""
    from ppdm.data.schema import resolve_schema, warn_passthrough

    infos = infer_columns(df, id=id, label=label, drop=drop, roles=roles)
    schema = resolve_schema(df, columns=columns, id=id, label=label, drop=dropped_columns(infos, drop),
                            drop_other=drop_other)
    rows = len(df)

    def say() -> None:
        announce_columns(infos, rows)
        warn_passthrough(schema, how)

    return schema, say


#: whole numbers a release writes back as 64-bit integers (a number beyond them came back as
#: -9223372036854775808 in every row)
_INT64 = 2.0**63


def check_cells(df: pd.DataFrame, infos: Sequence[ColumnInfo]) -> None:
    """Refuse bad cells in the columns a release perturbs, naming the column and the first row: an infinite
    number, a whole number beyond 64 bits (an account or card number: an identifier, not a quantity), or text
    among numbers (a column most of whose cells are numbers is a column of numbers with typos, see
    :func:`infer_columns`)."""
    for i in infos:
        if i.treatment != "perturbed":
            continue
        found = _bad_cells(df[i.name], i.type)
        if found is not None:
            bad, what, fix = found
            row = int(np.flatnonzero(bad)[0]) + 1
            raise InputError(f"column '{i.name}' holds {what}, first in data row {row}; {fix} (--drop '{i.name}')")


def _bad_cells(s: pd.Series, kind: str) -> tuple[np.ndarray, str, str] | None:
    """The cells of a perturbed column of type ``kind`` that no release can take (a mask), what they are and
    what to do about them besides dropping the column; None when there are none."""
    from ppdm.data.schema import parse_numbers, text_among_numbers

    if kind in ("continuous", "integer"):
        if pd.api.types.is_numeric_dtype(s):
            v = s.to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            parsed = parse_numbers(s)
            text, first = text_among_numbers(s, parsed)
            if text.any():
                more = f" and {int(text.sum()) - 1} more" if text.sum() > 1 else ""
                return text, f"text among numbers ({first}{more})", "fix it, or leave the column out"
            v = parsed.to_numpy()
        if np.isinf(v).any():
            return np.isinf(v), "an infinite value", "fix it, or leave the column out"
        beyond = (v >= _INT64) | (v < -_INT64)
        if kind == "integer" and beyond.any():
            return beyond, "whole numbers beyond 64 bits", ("such a number names something (an account, a card) "
                                                           "rather than measures it: name the column with --id, "
                                                           "or leave it out")
    return None
