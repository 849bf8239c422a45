"""Fingerprints of tables: a state records those of its original and of its release, so that a state is never
paired with tables it was not written with (their rows would be aligned by the wrong key).

A fingerprint must hold however the table reaches the command that checks it: read back from the file ppdm
wrote (CSV or Parquet), or read by the user's own code. So it describes each cell by what it means, not by how
it is stored: a cell is missing (a gap, an empty text, ``NA``...), a number (whatever its type: ``7``, ``7.0``
and the text ``"007"`` are one number) or a text (stripped). The texts and the kind of every cell are hashed
(SHA-256); the numbers, whose last digit a text reader may round either way, enter as a keyed sum per column,
``sum_i w_i x_i`` with fixed pseudo-random weights, compared within a relative ``1e-9``: two releases of one
table differ there far beyond that (other values, or the same values in another order), while a table read
twice does not.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["table_fingerprint", "same_table"]

#: what pandas reads as a gap in a text table (its default ``na_values``), and an empty cell
_GAPS = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                   "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})
_TOLERANCE = 1e-9
_ROWS = 65_536


def _weights(n: int) -> np.ndarray:
    return np.random.default_rng(0x9E3779B9).standard_normal(n)


def _cells(s: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's number (NaN where it is none) and its text (None where it is a number or a gap)."""
    from ppdm.data.schema import parse_numbers

    if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
        return s.to_numpy(dtype=np.float64, na_value=np.nan), np.full(len(s), None, dtype=object)
    text = s.astype(str).str.strip()
    gap = s.isna().to_numpy() | text.isin(_GAPS).to_numpy()
    nums = parse_numbers(text.where(~gap, None)).to_numpy(dtype=np.float64)
    words = text.to_numpy(dtype=object).copy()
    words[gap | ~np.isnan(nums)] = None
    if pd.api.types.is_bool_dtype(s):
        nums[:] = np.nan  # True and False are words, as a reader reads them back
        words = np.where(gap, None, text.to_numpy(dtype=object))
    return nums, words


def table_fingerprint(df: pd.DataFrame) -> dict[str, Any]:
    """The fingerprint of ``df`` (see the module docstring): JSON-able, a few numbers per column."""
    n = len(df)
    w = _weights(n)
    h = hashlib.sha256(json.dumps([[str(c).strip() for c in df.columns], n]).encode())
    sums = []
    for c in df.columns:
        nums, words = _cells(df[c])
        finite = np.isfinite(nums)
        # per cell: 0 a gap, 1 a number, 2 a text, 3 and 4 the infinities
        kind = np.where(finite, 1, np.where(words != None, 2, 0)).astype(np.uint8)  # noqa: E711 (elementwise)
        kind[np.isposinf(nums)], kind[np.isneginf(nums)] = 3, 4
        h.update(kind.tobytes())
        for a in range(0, n, _ROWS):
            part = words[a:a + _ROWS]
            h.update("\x1f".join(str(x) for x in part[part != None]).encode("utf-8", "surrogatepass"))  # noqa: E711
        v = np.where(finite, nums, 0.0)
        # scaled by a power of two (exact) so that no sum overflows, whatever the column's magnitude
        top = float(np.abs(v).max()) if n else 0.0
        shift = int(np.frexp(top)[1]) if top > 0 else 0
        v = np.ldexp(v, -shift)
        sums.append([float(w @ v), float(np.abs(w) @ np.abs(v)), shift])
    return {"rows": n, "digest": h.hexdigest(), "sums": sums}


def same_table(recorded: Any, df: pd.DataFrame) -> bool:
    """Whether ``df`` is the table whose fingerprint was ``recorded`` (False for a malformed record)."""
    try:
        now = table_fingerprint(df)
        if recorded["rows"] != now["rows"] or recorded["digest"] != now["digest"]:
            return False
        pairs = zip(recorded["sums"], now["sums"], strict=True)
        return all(abs(np.ldexp(float(a[0]), int(a[2])) - np.ldexp(b[0], b[2]))
                   <= _TOLERANCE * max(np.ldexp(float(a[1]), int(a[2])), np.ldexp(b[1], b[2])) + 1e-300
                   for a, b in pairs)
    except (KeyError, TypeError, ValueError, IndexError, OverflowError):
        return False
