"""Spreadsheet formula cells in passed-through text (CSV injection, after OWASP's advice).

A released text cell that starts with ``=``, ``+``, ``-``, ``@`` (or a tab or carriage return) is run as a
formula when the CSV is opened in a spreadsheet (``=HYPERLINK(...)`` exfiltrates, ``=cmd|...`` executes on
some systems). ppdm reports such cells; ``--escape-formulas`` prefixes them with a single quote, which
spreadsheets show as text. Cells that are plain numbers (``-3.5``) are not formulas and are left alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["formula_cells", "escape_formulas"]

_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def _is_formula(s: pd.Series) -> pd.Series:
    from ppdm.data.schema import by_cell_text

    return pd.Series(by_cell_text(s, _formulas_of) & s.notna().to_numpy(), index=s.index)


def _formulas_of(text: pd.Series) -> np.ndarray:
    from ppdm.data.schema import parse_numbers

    # numbers are parsed only among the texts that start like a formula (-3.5 is not one)
    rows = np.flatnonzero(text.str.startswith(_TRIGGERS).to_numpy(dtype=bool))
    out = np.zeros(len(text), dtype=bool)
    out[rows] = parse_numbers(text.iloc[rows]).isna().to_numpy()
    return out


def formula_cells(df: pd.DataFrame, columns: Sequence[str] | None = None) -> dict[str, int]:
    """Count of formula-like cells per text column (only columns with at least one)."""
    out: dict[str, int] = {}
    for c in columns if columns is not None else df.columns:
        s = df[c]
        if s.dtype == object or pd.api.types.is_string_dtype(s):
            n = int(_is_formula(s).sum())
            if n:
                out[str(c)] = n
    return out


def escape_formulas(df: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """A copy with every formula-like text cell prefixed by a single quote."""
    out = df.copy()
    for c in formula_cells(df, columns):
        mask = _is_formula(out[c])
        out.loc[mask, c] = "'" + out.loc[mask, c].astype(str)
    return out
