"""Mixed numeric + categorical records: Gower (with comparability weights) and Huang-type distances."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdm.exceptions import InputError

__all__ = ["MixedTable", "gower", "huang", "gower_block", "huang_block"]


@dataclass(frozen=True)
class MixedTable:
    """A table split into a numeric block (NaN = missing) and integer category codes (-1 = missing)."""

    num: np.ndarray
    cat: np.ndarray
    num_names: tuple[str, ...] = ()
    cat_names: tuple[str, ...] = ()

    @property
    def n_rows(self) -> int:
        return int(self.num.shape[0] if self.num.size or self.num.ndim == 2 else self.cat.shape[0])

    @classmethod
    def from_frame(cls, df: pd.DataFrame) -> MixedTable:
        """Numeric dtype columns -> numeric block; every other column -> category codes."""
        num_cols = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c]) and not
                    pd.api.types.is_bool_dtype(df[c])]
        cat_cols = [c for c in df.columns if c not in num_cols]
        num = df[num_cols].to_numpy(dtype=np.float64) if num_cols else np.empty((len(df), 0))
        if np.isinf(num).any():
            raise InputError("infinite values in a numeric column; fix them before computing dissimilarities")
        cat = np.empty((len(df), len(cat_cols)), dtype=np.int32)
        for k, c in enumerate(cat_cols):
            s = df[c]
            codes, _ = pd.factorize(s.astype(str).where(s.notna(), None), use_na_sentinel=True)
            cat[:, k] = codes
        return cls(num, cat, tuple(map(str, num_cols)), tuple(map(str, cat_cols)))

    def rows(self, a: int, b: int) -> MixedTable:
        return MixedTable(self.num[a:b], self.cat[a:b], self.num_names, self.cat_names)


def column_ranges(num: np.ndarray) -> np.ndarray:
    if num.shape[1] == 0:
        return np.ones(0)
    with np.errstate(all="ignore"):
        rng = np.nanmax(num, axis=0) - np.nanmin(num, axis=0)
    return np.where(np.isfinite(rng) & (rng > 0), rng, 1.0)


def gower_block(A: MixedTable, B: MixedTable, ranges: np.ndarray) -> np.ndarray:
    """Gower dissimilarity ``1 - sum_k w_k s_k / sum_k w_k`` between rows of A and rows of B.

    ``w_k = 0`` when attribute k is missing in either record (not comparable). A pair with no
    comparable attribute gets the largest dissimilarity, 1.
    """
    num = np.zeros((A.num.shape[0], B.num.shape[0]))
    den = np.zeros_like(num)
    for k in range(A.num.shape[1]):
        a, b = A.num[:, k][:, None], B.num[:, k][None, :]
        ok = ~(np.isnan(a) | np.isnan(b))
        s = 1.0 - np.abs(a - b) / ranges[k]
        num += np.where(ok, s, 0.0)
        den += ok
    for k in range(A.cat.shape[1]):
        a, b = A.cat[:, k][:, None], B.cat[:, k][None, :]
        ok = (a >= 0) & (b >= 0)
        num += ok & (a == b)
        den += ok
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, 1.0 - num / den, 1.0)


def huang_block(A: MixedTable, B: MixedTable, weight: float) -> np.ndarray:
    """``sqrt(sum_numeric (x - y)^2) + weight * (#categorical mismatches)`` (k-prototypes style)."""
    from scipy.spatial.distance import cdist

    if np.isnan(A.num).any() or np.isnan(B.num).any() or (A.cat < 0).any() or (B.cat < 0).any():
        raise InputError("huang dissimilarity needs complete records; fill the missing cells or use gower")
    out = cdist(A.num, B.num) if A.num.shape[1] else np.zeros((A.cat.shape[0], B.cat.shape[0]))
    for k in range(A.cat.shape[1]):
        out += weight * (A.cat[:, k][:, None] != B.cat[:, k][None, :])
    return out


def gower(x: pd.Series | list, y: pd.Series | list, ranges: np.ndarray | None = None) -> float:
    """Gower dissimilarity of two records (ranges default to 1 for every numeric attribute)."""
    t = MixedTable.from_frame(pd.DataFrame([list(x), list(y)]))
    r = np.ones(t.num.shape[1]) if ranges is None else np.asarray(ranges, float)
    return float(gower_block(t.rows(0, 1), t.rows(1, 2), r)[0, 0])


def huang(x: list, y: list, weight: float = 1.0) -> float:
    t = MixedTable.from_frame(pd.DataFrame([list(x), list(y)]))
    return float(huang_block(t.rows(0, 1), t.rows(1, 2), weight)[0, 0])
