"""Numpy pieces of the partitioned backend: mergeable column statistics, the chunked noise stream and
the per-partition release function.

Nothing here imports dask: these objects are what travels to the workers (pickled by dask), and they
are small. A partition is a pandas DataFrame plus the global position of its first row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ppdm.data.preprocess import Scaler
from ppdm.data.schema import Schema

__all__ = ["ColumnStats", "Hidden", "NOISE_CHUNK_ROWS", "noise_rows", "scaler_from_stats", "scaled_gram",
           "PartitionRelease"]

#: rows per chunk of the noise stream: chunk c of a table is drawn from SeedSequence(seed_, spawn_key=(c,))
NOISE_CHUNK_ROWS = 65536


class Hidden:
    """Key material on its way to a worker: its repr (what dask prints when a task fails) shows nothing."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<key material>"


@dataclass
class ColumnStats:
    """Mergeable statistics of a block of rows: count, mean, centred cross-products, min, max.

    ``m2`` is ``(X - mean)^T (X - mean)``; two blocks merge exactly (Chan et al.'s pairwise update), so
    the statistics of a table do not depend on how it is partitioned (up to rounding).
    """

    n: int
    mean: np.ndarray
    m2: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    bad: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # non-finite cells per column

    @classmethod
    def of(cls, X: np.ndarray) -> ColumnStats:
        n, m = X.shape
        bad = (~np.isfinite(X)).sum(axis=0).astype(np.int64)
        if n == 0 or bad.any():
            return cls(0, np.zeros(m), np.zeros((m, m)), np.full(m, np.inf), np.full(m, -np.inf), bad)
        mean = X.mean(axis=0)
        C = X - mean
        return cls(n, mean, C.T @ C, X.min(axis=0), X.max(axis=0), bad)

    def merge(self, other: ColumnStats) -> ColumnStats:
        bad = self.bad + other.bad
        if other.n == 0 or self.n == 0:
            base = self if other.n == 0 else other
            return ColumnStats(base.n, base.mean, base.m2, base.lo, base.hi, bad)
        n = self.n + other.n
        delta = other.mean - self.mean
        mean = self.mean + delta * (other.n / n)
        m2 = self.m2 + other.m2 + np.outer(delta, delta) * (self.n * other.n / n)
        return ColumnStats(n, mean, m2, np.minimum(self.lo, other.lo), np.maximum(self.hi, other.hi), bad)

    def subset(self, cols: np.ndarray) -> ColumnStats:
        return ColumnStats(self.n, self.mean[cols], self.m2[np.ix_(cols, cols)], self.lo[cols], self.hi[cols],
                           self.bad[cols])


def scaler_from_stats(method: str, st: ColumnStats) -> Scaler:
    """The :class:`Scaler` that ``Scaler(method).fit(X)`` would give, from statistics of ``X``."""
    m = len(st.mean)
    offset, scale = np.zeros(m), np.ones(m)
    if method == "zscore":
        offset = st.mean.copy()
        scale = np.sqrt(np.diag(st.m2) / max(st.n - 1, 1)) if st.n > 1 else np.ones(m)
    elif method == "range":
        offset, scale = st.lo.copy(), st.hi - st.lo
    elif method == "minshift":
        offset = st.lo.copy()
    elif method == "nonneg":
        offset = np.minimum(st.lo, 0.0)
    scale = np.where((scale == 0) | ~np.isfinite(scale), 1.0, scale)
    return Scaler.from_stats(method, offset, scale)


def scaled_gram(st: ColumnStats, offset: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``Z^T Z`` for ``Z = (X - offset) / scale`` from the statistics of ``X`` (no pass over the data)."""
    d = st.mean - offset
    G = st.m2 + st.n * np.outer(d, d)
    return G / np.outer(scale, scale)


def noise_rows(seed: int, start: int, stop: int, m: int, draw: Any) -> np.ndarray:
    """Rows ``start:stop`` of the table-wide noise matrix with ``m`` columns.

    The matrix is cut into chunks of :data:`NOISE_CHUNK_ROWS` rows; chunk ``c`` is drawn row-major by
    ``draw(default_rng(SeedSequence(seed, spawn_key=(c,))), (rows, m))``. A row's noise therefore depends
    only on the seed and the row's global position, never on how the table is partitioned. A generator
    fills its output sequentially, so the first ``r`` rows of a chunk are drawn without the rest.
    """
    out = np.empty((stop - start, m))
    R = NOISE_CHUNK_ROWS
    pos = start
    while pos < stop:
        c = pos // R
        lo, hi = pos - c * R, min(stop - c * R, R)
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(c,)))
        out[pos - start : pos - start + hi - lo] = draw(rng, (hi, m))[lo:]
        pos = c * R + hi
    return out


def _noise_draw(mech: Any) -> tuple[Any, str]:
    """The draw function and the way ('add' or 'multiply') a fitted noise mechanism applies its noise."""
    from ppdm.mechanisms.noise import AdditiveNoise

    if isinstance(mech, AdditiveNoise):
        a = float(mech.scale)
        if mech.distribution == "normal":
            return (lambda rng, shape: rng.normal(0.0, a, size=shape)), "add"
        low = -a if mech.symmetric else 0.0
        return (lambda rng, shape: rng.uniform(low, a, size=shape)), "add"
    s = float(mech.sigma)
    return (lambda rng, shape: rng.normal(1.0, s, size=shape)), "multiply"


@dataclass(repr=False)
class PartitionRelease:
    """Release one partition: what travels to every worker.

    It holds the schema, the fitted scaler and either the fused ``m x m`` operator ``M`` and offset
    ``b`` (linear mechanisms without a partition block: ``release = X @ M + b``) or the fitted inner
    mechanism (its key material: singular vectors, rotation, projection, or the noise seed).
    """

    schema: Schema
    scaler: Scaler
    release_units: str
    mechanism: Any = None
    operator: tuple[np.ndarray, np.ndarray] | None = None
    columns: np.ndarray | None = None  # positions (within the released columns) of the distorted block
    noise_seed: int | None = None
    #: the release key when rows are shuffled within the partition and ids pseudonymised (key material)
    identity_key: Any = None

    def __repr__(self) -> str:  # dask logs the arguments of a failed task; keep the keys out of the logs
        return f"PartitionRelease({len(self.schema.released)} columns, <key material>)"

    def matrix(self, df: pd.DataFrame) -> np.ndarray:
        return df[list(self.schema.released)].to_numpy(dtype=np.float64, copy=True)

    def release(self, X: np.ndarray, start: int, rows: np.ndarray | None,
                factors: np.ndarray | None = None) -> np.ndarray:
        """The released values of ``X`` (the partition's released columns; first row at ``start``).

        ``rows`` are the partition-local positions of the distorted rows (None: every row). ``factors``
        are the fitted factor rows of those rows when the mechanism releases its own factorisation
        (NMF: ``H W``) rather than a transform of the data.
        """
        if self.operator is not None:
            M, b = self.operator
            out = X @ M
            out += b
            return out
        sc = self.scaler
        Z = sc.transform(X)
        cols = np.arange(X.shape[1]) if self.columns is None else self.columns
        r = np.arange(X.shape[0]) if rows is None else rows
        out = X if self.release_units == "original" else Z
        if len(r) == 0:  # no row of this partition is in the distorted block
            return out
        Zb = Z[np.ix_(r, cols)]
        if self.noise_seed is not None:
            draw, how = _noise_draw(self.mechanism)
            E = noise_rows(self.noise_seed, start, start + X.shape[0], len(cols), draw)[r]
            Ob = Zb + E if how == "add" else Zb * E
        elif factors is not None:
            Ob = self.mechanism._release(factors)
        else:
            Ob = self.mechanism.transform(Zb)
        if self.release_units == "original":
            Ob = Ob * sc.scale_[cols] + sc.offset_[cols]
        out[np.ix_(r, cols)] = Ob
        return out

    def __call__(self, df: pd.DataFrame, start: int, rows: np.ndarray | None = None,
                 factors: np.ndarray | None = None) -> tuple[pd.DataFrame, np.ndarray]:
        """The released partition and ``[sum (X - release)^2, sum X^2, non-finite cells]`` for the summary."""
        X = self.matrix(df)
        ss_x = float(np.einsum("ij,ij->", X, X))
        out = self.release(X.copy() if self.operator is None else X, start, rows, factors)
        diff = X - out
        stats = np.array([float(np.einsum("ij,ij->", diff, diff)), ss_x, float((~np.isfinite(out)).sum())])
        frame = self.schema.assemble(df.reset_index(drop=True), out)
        if self.identity_key is not None:
            from ppdm.keys import hide_identity

            # rows are shuffled within the partition (one stream per partition start), ids hashed with the key
            frame, _ = hide_identity(frame, self.schema.id, self.identity_key, stream=(int(start),))
        return frame, stats
