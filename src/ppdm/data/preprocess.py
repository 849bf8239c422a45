"""Column-wise affine preprocessing with an exact inverse.

Every method is ``Z = (X - offset) / scale`` per column, so a release computed on ``Z`` goes back to
original units with ``Z * scale + offset``.

========== ============================================================ ==========================
method     offset / scale                                               constant column
========== ============================================================ ==========================
none       0 / 1                                                        unchanged
zscore     mean / sample std (ddof=1)                                   becomes 0
range      min / (max - min)  -> values in [0, 1]                       becomes 0
minshift   min / 1            -> column minimum 0                       becomes 0
nonneg     min if min < 0 else 0 / 1  -> shift only negative columns    unchanged
========== ============================================================ ==========================
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ppdm.exceptions import ParameterError
from ppdm.utils.linalg import column_mean_std

__all__ = ["Scaler", "PREPROCESSING"]

PREPROCESSING = ("none", "zscore", "range", "minshift", "nonneg")


class Scaler:
    """Fitted column-wise affine scaler with an exact inverse.

    Parameters
    ----------
    method : {'none', 'zscore', 'range', 'minshift', 'nonneg'}, default='none'

    Attributes
    ----------
    offset_ : ndarray of shape (n_features,)
    scale_ : ndarray of shape (n_features,)
    """

    def __init__(self, method: str = "none") -> None:
        self.method = method

    def fit(self, X: np.ndarray) -> Scaler:
        if self.method not in PREPROCESSING:
            raise ParameterError(
                f"preprocessing must be one of {', '.join(PREPROCESSING)}; got '{self.method}'"
            )
        X = np.asarray(X, dtype=np.float64)
        m = X.shape[1]
        offset, scale = np.zeros(m), np.ones(m)
        if self.method == "zscore":
            # in row chunks: X.std makes a centred copy of the whole table
            offset, scale = column_mean_std(X) if X.shape[0] > 1 else (X.mean(axis=0), np.ones(m))
        elif self.method == "range":
            offset = X.min(axis=0)
            scale = X.max(axis=0) - offset
        elif self.method == "minshift":
            offset = X.min(axis=0)
        elif self.method == "nonneg":
            offset = np.minimum(X.min(axis=0), 0.0)
        scale = np.where((scale == 0) | ~np.isfinite(scale), 1.0, scale)
        self.offset_, self.scale_ = offset.astype(np.float64), scale.astype(np.float64)
        return self

    @classmethod
    def from_stats(cls, method: str, offset: np.ndarray, scale: np.ndarray) -> Scaler:
        """A fitted scaler from statistics computed elsewhere (e.g. in a chunked pass)."""
        s = cls(method)
        s.offset_, s.scale_ = np.asarray(offset, np.float64), np.asarray(scale, np.float64)
        return s

    def transform(self, X: np.ndarray, *, copy: bool = True) -> np.ndarray:
        Z = np.array(X, dtype=np.float64, copy=copy)
        if self.method != "none":
            Z -= self.offset_
            Z /= self.scale_
        return Z

    def inverse_transform(self, Z: np.ndarray, *, copy: bool = True) -> np.ndarray:
        X = np.array(Z, dtype=np.float64, copy=copy)
        if self.method != "none":
            X *= self.scale_
            X += self.offset_
        return X

    def fit_transform(self, X: np.ndarray) -> np.ndarray:
        return self.fit(X).transform(X)

    @property
    def is_identity(self) -> bool:
        return bool(np.all(self.offset_ == 0) and np.all(self.scale_ == 1))

    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        return {"method": self.method}, {"offset": self.offset_, "scale": self.scale_}

    @classmethod
    def from_state(cls, header: dict[str, Any], arrays: dict[str, np.ndarray]) -> Scaler:
        s = cls(header["method"])
        s.offset_, s.scale_ = np.asarray(arrays["offset"], float), np.asarray(arrays["scale"], float)
        return s
