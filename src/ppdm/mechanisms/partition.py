"""Structural partition (Wang 2008 Sec. 3.5, "selective" distortion).

Only one block of the table is distorted by an inner mechanism; the rest is released unchanged:

* ``rows`` (P1): the chosen records, all attributes;
* ``columns`` (P2): the chosen (confidential) attributes, all records;
* ``both`` (P3): the chosen attributes of the chosen records.

Blocks are given by count (the leading rows/columns, as in the dissertation) or by explicit 0-based
positions; the command line maps record ids and column names to positions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.base import clone

from ppdm.exceptions import ParameterError
from ppdm.mechanisms.base import Mechanism
from ppdm.utils.validation import check_choice

__all__ = ["StructuralPartition", "SCHEMES"]

SCHEMES = ("rows", "columns", "both")


def _block(spec: int | Sequence[int] | None, size: int, what: str) -> np.ndarray:
    if spec is None:
        return np.arange(size)
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        if not 1 <= int(spec) <= size:
            raise ParameterError(f"{what} block size must be in [1, {size}]; got {int(spec)}")
        return np.arange(int(spec))
    idx = np.asarray(list(spec), dtype=int)
    if idx.size == 0:
        raise ParameterError(f"the {what} block is empty; name at least one {what[:-1]}")
    if idx.min() < 0 or idx.max() >= size:
        raise ParameterError(f"{what} block positions must be in [0, {size - 1}]")
    if len(np.unique(idx)) != len(idx):
        raise ParameterError(f"the {what} block names a position twice; list each once")
    return np.sort(idx)


class StructuralPartition(Mechanism):
    """Distort one block of the table with an inner mechanism; release the rest unchanged.

    Parameters
    ----------
    mechanism : Mechanism, default=None
        The inner mechanism (default: ``SparsifiedSVD(rank=3)``). It is cloned, never modified.
    scheme : {'rows', 'columns', 'both'}, default='columns'
    rows : int or sequence of int, optional
        Leading-row count or row positions of the block (``rows`` and ``both`` schemes).
    columns : int or sequence of int, optional
        Leading-column count or column positions of the block (``columns`` and ``both`` schemes).

    Attributes
    ----------
    mechanism_ : Mechanism
        The fitted inner mechanism (its own key material applies).
    rows_, columns_ : ndarray of int
        Positions of the distorted block.
    """

    _table_level = True

    def __init__(
        self,
        mechanism: Mechanism | None = None,
        *,
        scheme: str = "columns",
        rows: int | Sequence[int] | None = None,
        columns: int | Sequence[int] | None = None,
    ) -> None:
        self.mechanism = mechanism
        self.scheme = scheme
        self.rows = rows
        self.columns = columns

    def _resolve(self, n: int, m: int) -> None:
        check_choice(self.scheme, "scheme", SCHEMES)
        if self.scheme in ("rows", "both") and self.rows is None:
            raise ParameterError(f"scheme '{self.scheme}' needs the row block; pass rows (a count or positions)")
        if self.scheme in ("columns", "both") and self.columns is None:
            raise ParameterError(f"scheme '{self.scheme}' needs the column block; pass columns")
        self.rows_ = _block(self.rows if self.scheme != "columns" else None, n, "rows")
        self.columns_ = _block(self.columns if self.scheme != "rows" else None, m, "columns")

    def _inner(self) -> Mechanism:
        if self.mechanism is None:
            from ppdm.mechanisms.sparsified import SparsifiedSVD

            return SparsifiedSVD(rank=3)
        return clone(self.mechanism)

    def fit(self, X: object, y: object = None) -> StructuralPartition:
        self.fit_transform(X)
        return self

    def fit_transform(self, X: object, y: object = None, **fit_params: object) -> np.ndarray:
        A = self._check_X(X, reset=True)
        self._resolve(*A.shape)
        self.n_rows_ = A.shape[0]
        block = A[np.ix_(self.rows_, self.columns_)]
        self.mechanism_ = self._inner()
        out = A.copy()
        out[np.ix_(self.rows_, self.columns_)] = self.mechanism_.fit_transform(block)
        return out

    def transform(self, X: object) -> np.ndarray:
        self._check_fitted()
        A = self._check_X(X, reset=False)
        if self.scheme != "columns" and A.shape[0] != self.n_rows_:
            raise ParameterError(
                f"a '{self.scheme}' partition releases only the table it was fitted on ({self.n_rows_} rows)"
            )
        out = A.copy()
        out[np.ix_(self.rows_, self.columns_)] = self.mechanism_.transform(A[np.ix_(self.rows_, self.columns_)])
        return out

    def distorted_block(self) -> tuple[np.ndarray, np.ndarray]:
        """Row and column positions of the distorted block; every other cell is released as given."""
        self._check_fitted()
        return self.rows_, self.columns_

    def to_state(self):  # type: ignore[no-untyped-def]
        header, arrays = super().to_state()
        inner_h, inner_a = self.mechanism_.to_state()
        header["params"].pop("mechanism", None)
        header["inner"] = inner_h
        header["fitted"].pop("mechanism_", None)
        arrays.update({f"inner.{k}": v for k, v in inner_a.items()})
        return header, arrays

    @classmethod
    def from_state(cls, header, arrays):  # type: ignore[no-untyped-def]
        from ppdm.registry import class_by_name

        inner_cls = class_by_name(header["inner"]["class"])
        inner = inner_cls.from_state(header["inner"], {k[6:]: v for k, v in arrays.items() if k.startswith("inner.")})
        obj = super().from_state(header, {k: v for k, v in arrays.items() if not k.startswith("inner.")})
        obj.mechanism = clone(inner)
        obj.mechanism_ = inner
        return obj
