"""A whole table released by one mechanism through the codec's design, as ``ppdm release`` releases it: every
kept column (numbers, integers, dates, categories) enters one design matrix (:class:`ppdm.data.codec.TableCodec`),
the mechanism releases the design, and the codec decodes it back to each column's type, units and range
(integers rounded, categories among the original's); gaps stay gaps. ``ppdm perturb`` uses it for every table
that is not continuous numbers only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ppdm.data.preprocess import Scaler
from ppdm.data.schema import Schema
from ppdm.exceptions import ParameterError

__all__ = ["WholeRelease", "release_whole", "design_preprocess", "whole_schema", "take_codec_blocks", "block_reading"]

#: preprocessings that only shift columns (they keep the design's distances: NMF needs non-negative input)
_SHIFTS = ("minshift", "nonneg")


def design_preprocess(preprocess: str) -> str:
    """The preprocessing of a design: the codec scales it already (numbers z-scored, categories one-hot); only a
    shift asked for (``minshift``, ``nonneg``: a non-negative design) is applied on top."""
    return preprocess if preprocess in _SHIFTS else "none"


def whole_schema(df: pd.DataFrame, codec: Any, id: str | None, label: str | None) -> Schema:
    """The roles of a table released whole: the codec's columns released, the id and the label passed through,
    every other column dropped."""
    cols = tuple(map(str, df.columns))
    kept = set(codec.names)
    return Schema(cols, tuple(c for c in cols if c in kept), id, label, (),
                  tuple(c for c in cols if c not in kept and c not in (id, label)))


@dataclass
class WholeRelease:
    """What :func:`release_whole` made: the published frame (the id and label beside the decoded columns, or
    a mechanism's new columns), the scaler of the design, and the relative error of the numbers in their units
    (of the design when the table has no numbers; None for new columns)."""

    frame: pd.DataFrame
    scaler: Scaler
    re: float | None
    numeric: list[str]


def take_codec_blocks(mech: Any, codec: Any) -> None:
    """Give a mechanism that releases a categorical column's one-hot block as one variable (MDAV's support and
    rarity rules, the synthesisers' draws) the codec's blocks, unless it holds blocks of its own: ``perturb``
    and ``release`` then make the same release of the same candidate."""
    if getattr(mech, "_uses_blocks", False) and codec is not None and getattr(mech, "variables", None) is None:
        mech.set_params(variables=[b.tolist() for b in codec.blocks_])


def block_reading(mech: Any) -> str:
    """How the codec reads the categorical blocks of ``mech``'s release (a mechanism or its class; see
    :data:`ppdm.data.codec.READINGS`): what the mechanism declares, ``calibrated`` when it declares nothing."""
    return str(getattr(mech, "_block_reading", "calibrated"))


def release_whole(df: pd.DataFrame, schema: Schema, codec: Any, mech: Any, *, preprocess: str, key_seed: int,
                  y: np.ndarray | None) -> WholeRelease:
    """Release ``df``'s kept columns through the codec's design with ``mech`` (see the module docstring).

    ``key_seed``: the release key's mechanism seed; the categorical draws of the decoding come from it, as
    those of ``ppdm release`` do.
    """
    from ppdm.flow.arrays import perturb_array
    from ppdm.metrics.value import relative_error

    take_codec_blocks(mech, codec)
    X = codec.encode(df)
    B, scaler = perturb_array(X, mech, preprocess=design_preprocess(preprocess), y=y)
    if not np.isfinite(B).all():
        raise ParameterError("the release has non-finite values (the input is too close to overflow); rescale it")
    if B.shape != X.shape:
        # a mechanism that releases new columns (a projection, an embedding): they stand for the whole design
        names = list(mech.get_feature_names_out()) if hasattr(mech, "get_feature_names_out") else []
        if len(names) != B.shape[1] or any(n in schema.columns for n in names):
            names = [f"d{k + 1}" for k in range(B.shape[1])]
        return WholeRelease(schema.assemble_new(df, B, [str(n) for n in names]), scaler, None, [str(n) for n in names])
    decoded = codec.decode_parts(B, rng=np.random.default_rng([int(key_seed), 1]), reading=block_reading(mech))
    if codec.numeric_names:
        re = relative_error(codec.numbers(df), codec.filled_numbers(decoded).copy())
    else:
        re = relative_error(X, codec.encode_decoded(decoded))
    published = codec.table(decoded)
    frame = pd.DataFrame({c: (published[c].to_numpy() if c in published.columns else df[c].to_numpy())
                          for c in schema.columns if c not in schema.dropped}, index=range(len(df)))
    return WholeRelease(frame, scaler, re, list(codec.numeric_names))
