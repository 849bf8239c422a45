"""How the cells of a table just read are understood: missing-value marks among numbers, numbers written with
commas, timestamps with a time zone, binary cells and Python numbers pandas keeps as objects.

Each function takes the frame :func:`ppdm.data.io.read_table` read and returns it with such columns converted
(in place); a column that cannot be read as what it holds is refused in one line or left as it was read.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdm.exceptions import InputError

__all__ = ["MISSING_MARKS", "marks_as_gaps", "numbers_as_floats", "separated_numbers", "text_of_bytes",
           "times_in_utc"]


#: a number written with a decimal comma, its thousands grouped by points or not ("67574,04", "1.234.567,5", "12")
_DECIMAL_COMMA = r"\s*[+-]?(?:\d{1,3}(?:\.\d{3})+|\d+)(?:,\d+)?\s*"
#: a number with its thousands grouped by commas and a decimal point ("1,234", "12,345.67", "12.5")
_THOUSANDS_COMMA = r"\s*[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\s*"


def separated_numbers(df: pd.DataFrame, sep: str, name: str) -> pd.DataFrame:
    """Columns of numbers written with a comma in them, as numbers: a decimal comma ("67574,04", as a
    spreadsheet of a European locale saves its CSV, ';'-separated), or commas between groups of thousands
    ("12,345.67"). Such a column was read as text and dropped as free text.

    Every cell but a gap or a missing-value mark must be such a number, one at least with a comma. What is
    ambiguous is read so only where the file settles it. "1,234" is a decimal comma in a ';'-separated file
    (the locales that write decimal commas separate fields by ';'), thousands elsewhere when some cell has a
    decimal point; "1.234" groups thousands in a ';'-separated file or beside a cell such as "1.234,5". A
    column left unsettled is left as it was read (text). Each column read so is named on stderr (a
    :class:`~ppdm.exceptions.ReadWarning`)."""
    import warnings

    read: list[str] = []
    for c in df.columns:
        s = df[c]
        if s.dtype != object or pd.api.types.infer_dtype(s, skipna=True) != "string" \
                or not s.str.contains(",", regex=False).any():
            continue
        stripped = s.str.strip()
        cells = stripped.notna() & ~stripped.str.lower().isin(MISSING_MARKS)
        given = stripped[cells]
        points = given.str.contains(".", regex=False)
        comma_decimal = bool(given.str.fullmatch(_DECIMAL_COMMA).all())
        if comma_decimal and points.any() and sep != ";" and not (points & given.str.contains(",", regex=False)).any():
            comma_decimal = False  # "1.234" may be 1.234: points group thousands only beside a comma ("1.234,5")
        comma_thousands = bool(given.str.fullmatch(_THOUSANDS_COMMA).all())
        if comma_decimal and comma_thousands:  # every comma before three digits, no point: "1,234" alone
            comma_decimal, comma_thousands = sep == ";", sep != ";" and bool(points.any())
        if not (comma_decimal or comma_thousands):
            continue
        plain = (given.str.replace(".", "", regex=False).str.replace(",", ".", regex=False) if comma_decimal
                 else given.str.replace(",", "", regex=False))
        out = pd.Series(np.nan, index=s.index, dtype=np.float64)
        out[cells] = plain.astype(np.float64)
        df[c] = out
        at = given.index[given.str.contains(",", regex=False)][0]  # the first cell with a comma, as an example
        read.append(f"'{c}' with {'a decimal comma' if comma_decimal else 'commas between thousands'} "
                    f"({given[at]} = {float(out[at])})")
    if read:
        from ppdm.exceptions import ReadWarning

        warnings.warn(f"'{name}': number column{'s' if len(read) > 1 else ''} {', '.join(read)}; outputs write "
                      "numbers with a decimal point", ReadWarning, stacklevel=3)
    return df


#: cells that mark a missing value in a column of numbers (UCI's "?", a dash, "n/a"...), lower case: pandas
#: reads some of them as gaps in a CSV, none in Parquet or a DataFrame
MISSING_MARKS = frozenset({"", "?", "-", "--", ".", "na", "n/a", "nan", "null", "none", "#n/a", "<na>"})
# the marks as they are usually written, to find a column holding one at a glance (a lookup in C)
_MARK_SPELLINGS = frozenset(v for m in MISSING_MARKS for v in (m, m.upper(), m.title()))


def marks_as_gaps(df: pd.DataFrame) -> pd.DataFrame:
    """Missing-value marks in a column of numbers as gaps: one "?" among 300 incomes made the whole column text,
    which was dropped as free text. A column that is numbers but for its marks becomes numbers; one with other
    text among its numbers keeps it (the release refuses it, naming the first such cell)."""
    from ppdm.data.schema import by_cell_text, parse_numbers

    for c in df.columns:
        s = df[c]
        if s.dtype != object or not s.isin(_MARK_SPELLINGS).any():
            continue
        given = s.notna().to_numpy()
        marks = given & by_cell_text(s, lambda t: t.str.strip().str.lower().isin(MISSING_MARKS).to_numpy())
        rest = given & ~marks
        nums = parse_numbers(s.where(rest, None))
        if not rest.any() or nums.notna().sum() < 0.5 * rest.sum():
            continue  # text, with a category spelt like a mark
        df[c] = nums if nums.notna().sum() == rest.sum() else s.where(~marks, None)
    return df


def times_in_utc(df: pd.DataFrame) -> pd.DataFrame:
    """Timestamps with a time zone as the same instants in UTC, without the zone.

    A column's cells may come from several zones (daylight saving): UTC is one clock for all of them, and
    naive timestamps are what the schema and the codec read as dates.
    """
    for c in df.columns:
        if isinstance(df[c].dtype, pd.DatetimeTZDtype):
            df[c] = df[c].dt.tz_convert("UTC").dt.tz_localize(None)
    return df


def text_of_bytes(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """Binary cells (Parquet's binary columns) decoded as UTF-8 text; a column of other bytes is refused."""
    for c in df.columns:
        s = df[c]
        # read in C, most columns at a glance: only bytes, or values of several kinds, can hold bytes
        if s.dtype != object or pd.api.types.infer_dtype(s, skipna=True) not in ("bytes", "mixed"):
            continue
        raw = np.fromiter((isinstance(v, (bytes, bytearray)) for v in s.to_numpy(dtype=object)), bool, len(s))
        if not raw.any():
            continue
        cells = s.to_numpy(dtype=object).copy()
        for k in np.flatnonzero(raw):
            try:
                cells[k] = bytes(cells[k]).decode("utf-8")
            except UnicodeDecodeError:
                raise InputError(f"column '{c}' of '{name}' holds binary data that is not UTF-8 text (first in data "
                                 f"row {k + 1}); store it as text, or write the table without it") from None
        df[c] = pd.Series(cells, index=s.index, dtype=object)
    return df


def numbers_as_floats(df: pd.DataFrame) -> pd.DataFrame:
    """Columns of Python numbers (integers beyond 64 bits, Parquet decimals) become float64 columns.

    pandas keeps such values as objects, which no numeric mechanism can read; as floats they keep about 15
    significant digits.
    """
    import decimal
    import numbers

    for c in df.columns:
        s = df[c]
        if s.dtype != object:
            continue
        vals = s.dropna()
        if len(vals) and all(isinstance(v, (numbers.Number, decimal.Decimal)) and not isinstance(v, bool)
                             for v in vals):
            df[c] = s.map(lambda v: float(v) if v is not None and v == v else np.nan).astype(np.float64)
    return df
