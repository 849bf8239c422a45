"""A numeric mechanism on a table's numbers and a categorical mechanism on its categories, as one release.

The whole-table design (:class:`ppdm.data.codec.TableCodec`) holds z-scored numbers followed by one-hot
blocks, one per categorical column. :class:`Combined` releases the numeric columns with a numeric
mechanism (MDAV, noise, ...) and the categorical blocks with a categorical one (PRAM, recoding, local
suppression; :mod:`ppdm.mechanisms.categorical`): each block is read as its category, the categorical
mechanism releases the categories, and each released category goes back into its block as one indicator.
A suppressed cell leaves its block empty (NaN), which the codec publishes as a missing cell.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from ppdm.mechanisms.base import Mechanism

__all__ = ["Combined"]


class Combined(Mechanism):
    """Numeric columns through one mechanism, one-hot blocks through a categorical mechanism.

    Parameters
    ----------
    numeric : Mechanism or None
        Releases the columns ``numeric_columns`` (None: they are released unchanged).
    categorical : transformer or None
        Releases the categories of the blocks ``blocks[i]`` for ``i`` in ``categorical_blocks``, given as a
        2-D array of category codes (None: every block unchanged).
    numeric_columns : sequence of int
        The design's numeric columns.
    blocks : sequence of sequence of int
        The design's one-hot blocks (one per categorical column).
    categorical_blocks : sequence of int or None
        The blocks the categorical mechanism acts on (None: all of them).
    random_state : ignored
        The two mechanisms carry their own seeds (the release key, in ``ppdm release``).

    Attributes
    ----------
    n_suppressed_ : int
        Cells left missing by the categorical mechanism.
    """

    _stochastic: ClassVar[bool] = True
    _table_level: ClassVar[bool] = True
    _uses_label: ClassVar[bool] = True

    def __init__(self, numeric: Any = None, categorical: Any = None, *, numeric_columns: Sequence[int] = (),
                 blocks: Sequence[Sequence[int]] = (), categorical_blocks: Sequence[int] | None = None,
                 random_state: object = None) -> None:
        self.numeric = numeric
        self.categorical = categorical
        self.numeric_columns = numeric_columns
        self.blocks = blocks
        self.categorical_blocks = categorical_blocks
        self.random_state = random_state

    def fit(self, X: object, y: object = None) -> Combined:
        self.fit_transform(X, y)
        return self

    def fit_transform(self, X: object, y: object = None, **fit_params: object) -> np.ndarray:
        A = self._check_X(X, reset=True)
        out = A.copy()
        num = np.asarray(self.numeric_columns, dtype=int)
        if self.numeric is not None and num.size:
            out[:, num] = _apply(self.numeric, A[:, num], y)
        self.n_suppressed_ = 0
        chosen = range(len(self.blocks)) if self.categorical_blocks is None else self.categorical_blocks
        blocks = [np.asarray(self.blocks[i], dtype=int) for i in chosen]
        if self.categorical is None or not blocks:
            return out
        codes = np.column_stack([np.argmax(A[:, b], axis=1) for b in blocks]).astype(object)
        fixed = "n_fixed" in self.categorical.get_params() and num.size > 0
        if fixed:
            # the combination includes the released numbers (a group of MDAV shares one row of them), which the
            # categorical mechanism may not change
            row = np.unique(out[:, num], axis=0, return_inverse=True)[1].reshape(-1, 1).astype(object)
            codes = np.hstack([row, codes])
            self.categorical.set_params(n_fixed=1)
        released = np.asarray(_apply(self.categorical, codes, y), dtype=object)[:, 1 if fixed else 0:]
        rows = np.arange(len(A))
        for j, b in enumerate(blocks):
            weight = float(np.max(A[:, b])) if A.size else 1.0
            col = released[:, j]
            gap = np.array([v is None or (isinstance(v, float) and np.isnan(v)) for v in col])
            block = np.zeros((len(A), b.size))
            keep = ~gap
            block[rows[keep], col[keep].astype(int)] = weight
            block[gap] = np.nan
            out[:, b] = block
            self.n_suppressed_ += int(gap.sum())
        return out

    def transform(self, X: object) -> np.ndarray:
        """Both mechanisms act on the table as a whole: a new table is released on its own."""
        return self.fit_transform(X)

    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The fitted numeric mechanism's own state and the categorical mechanism's parameters (its seed
        among them: refitted on the same table it makes the same draws)."""
        header, arrays = super().to_state()
        header["params"] = {k: v for k, v in header["params"].items() if k not in ("numeric", "categorical")}
        if self.numeric is not None:
            nh, na = self.numeric.to_state()
            header["numeric"] = nh
            arrays |= {f"numeric.{k}": v for k, v in na.items()}
        if self.categorical is not None:
            params = {k: v.item() if isinstance(v, np.generic) else v
                      for k, v in self.categorical.get_params(deep=False).items()
                      if v is None or isinstance(v, (int, float, str, bool, np.integer, np.floating, np.bool_))}
            header["categorical"] = {"class": type(self.categorical).__name__, "params": params}
        return header, arrays

    @classmethod
    def from_state(cls, header: dict[str, Any], arrays: dict[str, np.ndarray]) -> Combined:
        from ppdm.exceptions import ParameterError
        from ppdm.mechanisms import categorical as cat_module
        from ppdm.registry import class_by_name

        numeric = None
        if "numeric" in header:
            numeric = class_by_name(header["numeric"]["class"]).from_state(
                header["numeric"], {k[8:]: v for k, v in arrays.items() if k.startswith("numeric.")})
        categorical = None
        if "categorical" in header:
            name = header["categorical"]["class"]
            if name not in cat_module.__all__ or not isinstance(getattr(cat_module, name), type):
                raise ParameterError(f"state refers to unknown categorical mechanism '{name}'")
            categorical = getattr(cat_module, name)(**header["categorical"]["params"])
        obj = super().from_state(header, {k: v for k, v in arrays.items() if not k.startswith("numeric.")})
        obj.numeric, obj.categorical = numeric, categorical
        return obj


def _apply(mech: Any, X: np.ndarray, y: object) -> np.ndarray:
    if getattr(mech, "_uses_label", False) and y is not None:
        return mech.fit_transform(X, y)
    return mech.fit_transform(X)
