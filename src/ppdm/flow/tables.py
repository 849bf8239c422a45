"""Two tables made comparable: rows matched (by id or position), released columns picked, rows sampled."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ppdm.exceptions import InputError

__all__ = ["align_tables", "sample_rows", "column_re"]


def align_tables(
    original: pd.DataFrame,
    release: pd.DataFrame,
    *,
    id: str | None = None,
    label: str | None = None,
    columns: Sequence[str] | None = None,
    gaps: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, list[str]]:
    """Match the rows (by id, else by position) and the released columns of two tables.

    Returns the original block, the released block, the labels (or None) and the column names. The columns
    compared by default are the original's numeric ones that the release has too: a text cell in one of them
    in the release is an error that names the column and the row. ``gaps``: missing cells are kept (NaN) for
    the caller to leave out; otherwise they are an error.
    """
    for name, df in (("original", original), ("release", release)):
        for flag, c in (("--id", id), ("--label", label)):
            if c is not None and c not in df.columns:
                raise InputError(f"{flag} column '{c}' is missing from the {name} table")
    if id is not None:
        if original[id].duplicated().any():
            raise InputError(f"id column '{id}' has duplicate values in the original; ids must be unique")
        pos = pd.Index(original[id]).get_indexer(release[id])
        if (pos < 0).any():
            raise InputError(f"{int((pos < 0).sum())} release row(s) have ids not in the original; check --id")
        original = original.iloc[pos].reset_index(drop=True)
    elif len(original) != len(release):
        raise InputError(
            f"original has {len(original)} rows and release {len(release)}; pass --id to match rows by id"
        )
    skip = {c for c in (id, label) if c is not None}
    if columns is None:
        columns = [c for c in release.columns if c in original.columns and c not in skip
                   and pd.api.types.is_numeric_dtype(original[c])]
    if not columns:
        raise InputError("the tables share no numeric column to compare; check the files or --columns")
    from ppdm.data.schema import check_named, numeric_matrix

    # a named column either table lacks is the user's mistake, said as perturb and hide say it (not a KeyError)
    check_named(list(original.columns), columns=columns, table="the original table")
    check_named(list(release.columns), columns=columns, table="the release")

    A = numeric_matrix(original, columns, what="the original", gaps=gaps)
    B = numeric_matrix(release, columns, what="the release", gaps=gaps)
    y = original[label].to_numpy() if label is not None else None
    return A, B, y, list(columns)


def sample_rows(original: pd.DataFrame, release: pd.DataFrame, size: int | None, *, by_id: bool,
                seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A seeded sample of ``size`` released rows and, when rows match by position, the same original rows."""
    if size is None:
        return original, release
    from ppdm.utils.validation import check_int

    size = check_int(size, "sample", low=2)
    if size >= len(release) or (not by_id and len(original) != len(release)):
        return original, release  # nothing to sample, or rows that cannot be matched (align_tables says so)
    idx = np.sort(np.random.default_rng(seed).choice(len(release), size, replace=False))
    release = release.iloc[idx].reset_index(drop=True)
    if not by_id:
        original = original.iloc[idx].reset_index(drop=True)
    return original, release


def column_re(a: np.ndarray, b: np.ndarray) -> float:
    den = float(np.linalg.norm(a))
    return float(np.linalg.norm(a - b) / den) if den > 0 else float(np.linalg.norm(a - b))
