"""Mechanisms that release a table of their own: synthetic records of the whole record, the label included.

A formally private synthesiser (``dp-aim``, ``dp-mst``) covers every value of a record, so it takes the table
in its units (numbers as they are, categories as codes, gaps as gaps: :func:`raw_table`) rather than the
standardised design the other mechanisms share, and it releases its own label. The protocol is two class
attributes, read here and nowhere else:

* ``_releases_table``: the mechanism is given the table's layout (:func:`layout`) and its raw values, and its
  output is published as it comes (no clipping to the original's ranges, no gaps put back at the original's
  rows: both would disclose the original's values);
* ``_releases_label``: after ``fit_transform`` its synthetic label is in ``released_label_`` and replaces the
  label everywhere the release is used (:func:`released_label`).

The release sweep scores such a candidate on the design (:func:`release_design`: the design's numbers mapped
back to their units, its categories read from their blocks); the published release is made from the table
itself (:func:`release_frame`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["releases_table", "released_label", "layout", "raw_table", "release_design", "release_frame",
           "release_whole_table", "label_values", "with_label"]


def releases_table(mech: Any) -> bool:
    """True when ``mech`` synthesises the whole record and publishes its own table."""
    return bool(getattr(mech, "_releases_table", False))


def released_label(mech: Any, y: Any) -> Any:
    """The label that goes with the release: the mechanism's synthetic one, or ``y`` as it is."""
    if getattr(mech, "_releases_label", False) and y is not None:
        return np.asarray(mech.released_label_)
    return y


def with_label(shown: np.ndarray | None, y_released: Any, y: Any) -> np.ndarray | None:
    """The columns shown beside a release (the label last, see :func:`ppdm.release.table.prepare_table`) with
    the released label in place of the original's when the mechanism synthesised it."""
    if shown is None or y is None or y_released is y or shown.shape[1] == 0:
        return shown
    out = shown.copy()
    out[:, -1] = np.asarray(y_released).astype(str)
    return out


def _full_categories(c: Any) -> list[str]:
    """Every category of a codec column (the rare ones that share an indicator in the design, each its own; a
    column's gaps are one of them, see :mod:`ppdm.data.codec`)."""
    return [*c.categories[:-1], *c.rare] if c.rare else list(c.categories)


def layout(codec: Any, *, design: bool) -> dict[str, list[Any]]:
    """The mechanism's ``kinds`` and ``levels`` for the codec's columns (numbers first, then categories): of the
    design's blocks (``design``) or of every category of the table."""
    kinds = ["continuous" if n.kind == "continuous" else "integer" for n in codec.numeric_]
    levels = [0] * len(kinds)
    for c in codec.categorical_:
        kinds.append("categorical")
        levels.append(len(c.categories) if design else len(_full_categories(c)))
    return {"kinds": kinds, "levels": levels}


def raw_table(codec: Any, df: pd.DataFrame) -> np.ndarray:
    """The codec's columns of ``df`` in their units (dates as days), categories as codes of every category (a
    gap is the code of its column's gap category), a number's gap as NaN: what a table-releasing mechanism is
    given."""
    numbers = codec.numbers(df)
    for j, mask in codec.number_gaps(df).items():
        numbers[mask, j] = np.nan
    texts = codec.categories(df)
    cols = [numbers[:, j] for j in range(numbers.shape[1])]
    for k, c in enumerate(codec.categorical_):
        cols.append(pd.Index(_full_categories(c)).get_indexer(texts[:, k]).astype(np.float64))
    return np.column_stack(cols)


def _design_to_raw(codec: Any, X: np.ndarray) -> np.ndarray:
    """The design's numbers in their units (integers and dates whole; a gap, as its gap block says, NaN) and its
    categories as block codes."""
    cols = []
    for j, n in enumerate(codec.numeric_):
        v = X[:, j] * n.sd + n.mean
        v = np.round(v) if n.kind in ("integer", "date") else v
        if j in codec.gap_blocks_:
            v = np.where(np.argmax(X[:, codec.gap_blocks_[j]], axis=1) == 1, np.nan, v)
        cols.append(v)
    for block in codec.blocks_[:len(codec.categorical_)]:
        cols.append(np.argmax(X[:, block], axis=1).astype(np.float64))
    return np.column_stack(cols)


def _decoded(codec: Any, R: np.ndarray, *, design: bool) -> Any:
    """A released raw table as the codec's decoded parts (numbers in units, a released gap at the column's
    median and marked in ``gaps``; categories as text, a gap as its gap category)."""
    from ppdm.data.codec import Decoded

    k = len(codec.numeric_)
    text = np.empty((len(R), len(codec.categorical_)), dtype=object)
    for i, c in enumerate(codec.categorical_):
        names = np.asarray(c.categories if design else _full_categories(c), dtype=object)
        col = R[:, k + i]
        known = np.isfinite(col)
        text[:, i] = names[np.where(known, col, 0).astype(np.int64)]
        text[~known, i] = None  # read as the column's gap category (or most frequent one) by the codec
    numbers = np.asarray(R[:, :k], dtype=np.float64).copy()
    gaps = {}
    for j, n in enumerate(codec.numeric_):
        blank = np.isnan(numbers[:, j])
        if blank.any() or j in codec.gap_blocks_:
            gaps[j] = blank
            numbers[blank, j] = n.fill
    return Decoded(numbers, text, gaps)


def release_design(X: np.ndarray, mech: Any, *, preprocess: str, y: Any, codec: Any) -> tuple[np.ndarray, Any]:
    """Release the design ``X`` with ``mech``: the released design and the label that goes with it.

    A table-releasing mechanism of a whole table gets the design's values in their units and its release is
    encoded back into the design (as published tables are, for scoring); any other goes through
    :func:`~ppdm.flow.arrays.perturb_array`.
    """
    from ppdm.flow.arrays import perturb_array

    if codec is None or not releases_table(mech):
        B, _ = perturb_array(X, mech, preprocess=preprocess, y=y)
        return B, released_label(mech, y)
    mech.set_params(**layout(codec, design=True))
    out = mech.fit_transform(_design_to_raw(codec, X), y)
    return codec.encode_decoded(_decoded(codec, out, design=True)), released_label(mech, y)


def release_frame(df: pd.DataFrame, mech: Any, codec: Any, y: Any) -> tuple[pd.DataFrame, Any, Any]:
    """The published release of ``df``'s codec columns by a table-releasing mechanism.

    Returns the released columns in their types (the mechanism's values as they are: no clipping, its own
    gaps), the released label and the decoded parts (for the figures).
    """
    mech.set_params(**layout(codec, design=False))
    out = mech.fit_transform(raw_table(codec, df), y)
    decoded = _decoded(codec, out, design=False)
    return codec.table(decoded), released_label(mech, y), decoded


def release_whole_table(df: pd.DataFrame, mech: Any, *, id: str | None, label: str | None,
                        columns: Any = None, drop: Any = ()) -> tuple[pd.DataFrame, Any]:
    """``ppdm perturb`` with a table-releasing mechanism: every column but the id (and those dropped, or not
    in ``columns``) synthesised, the label included; the id column kept for the pseudonyms that replace it.

    Returns the release in the table's column order and its schema.
    """
    from ppdm.data.codec import TableCodec
    from ppdm.data.columns import infer_columns
    from ppdm.data.schema import Schema, check_named, check_unique_ids

    cols = tuple(map(str, df.columns))
    check_named(cols, id=id, label=label, columns=columns, drop=drop)
    check_unique_ids(df, id)
    left_out = [c for c in cols if columns is not None and c not in columns and c not in (id, label)]
    infos = infer_columns(df, id=id, label=label, drop=[*drop, *left_out])
    codec = TableCodec(infos).fit(df)
    y = _label_text(df[label]) if label is not None else None
    if y is not None and len(np.unique(y)) < 2:
        y = None  # a label of one class is a constant column: it is released as it is (the record says so)
    synthetic, y_out, _ = release_frame(df, mech, codec, y)
    kept = set(codec.names)
    out = {}
    for c in cols:
        if c in kept:
            out[c] = synthetic[c].to_numpy()
        elif c == label:
            out[c] = df[c].to_numpy() if y_out is None else label_values(df[c], y_out)
        elif c == id:
            out[c] = df[c].to_numpy()
    released = pd.DataFrame(out, index=range(len(df)))
    schema = Schema(cols, tuple(c for c in cols if c in kept), id, label, (),
                    tuple(c for c in cols if c not in kept and c not in (id, label)))
    return released, schema


def _label_text(col: pd.Series) -> np.ndarray:
    if col.dtype == object:
        col = col.astype(str)
    codes, classes = pd.factorize(col, use_na_sentinel=False)
    return np.asarray([str(c) for c in classes], dtype=str)[codes]


def label_values(original: pd.Series, released: Any) -> np.ndarray:
    """A released label (its classes as text) in the original column's values (``2``, not ``'2'``)."""
    lookup = dict(zip(_label_text(original), original.to_numpy(), strict=True))
    return np.asarray([lookup.get(v, v) for v in np.asarray(released)], dtype=object)
