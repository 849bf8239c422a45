"""Pair layouts behind the NMDS optimiser: what one stress evaluation and one gradient cost in memory.

Two layouts share one interface (``evaluate`` / ``accept`` / ``gradient`` / ``final``):

* :class:`CondensedPairs` keeps the condensed (``pdist``) order with dense row blocks, so the gradient
  runs on BLAS; it holds about 120 bytes a pair and is used for small n.
* :class:`SortedPairs` stores every pair once, in the order of its dissimilarity, as one 64-bit word
  (the float32 dissimilarity over the row indices ``i``, ``j`` as 16-bit halves) plus one float32 work
  array that holds the distances and then, in place, the disparities: 12 bytes a pair. The rank order
  needed by PAV is the storage order, so no permutation array exists; distances and the gradient are
  computed chunk by chunk from ``Y[i] - Y[j]`` and ``np.bincount``.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ppdm.mds.pav import MonotoneFit, RatioFit
from ppdm.mds.stress import PairBlocks, distances, gradient, raw_stress_terms

__all__ = ["CondensedPairs", "SortedPairs", "SORTED_BYTES_PER_PAIR", "CONDENSED_BYTES_PER_PAIR", "MAX_SORTED_N"]

#: storage of the sorted layout (8-byte key + 4-byte work value), plus chunk and PAV-summary temporaries
SORTED_BYTES_PER_PAIR = 13.0
#: the condensed layout: order, float64 distance buffers, PAV copies and dense blocks (measured ~117)
CONDENSED_BYTES_PER_PAIR = 120.0
#: row indices are 16-bit halves of the key
MAX_SORTED_N = 65_535
_FLOAT32_FROM = 4_000_000  # pairs at and above which the work values are float32
_CHUNK = 1 << 18  # pairs per PAV segment
_ROWS_CHUNK = 1 << 16  # pairs per chunk of the distance and gradient passes (temporaries stay in cache)
_LITTLE = sys.byteorder == "little"


def _stress(s: float, t: float) -> float:
    return float(np.sqrt(s / t)) if t > 0 else 0.0


def _dot(x: np.ndarray, y: np.ndarray) -> float:
    # einsum, not BLAS: a threaded BLAS dot per chunk stalls on a busy machine
    return float(np.einsum("i,i->", x, y))


def _knot_positions(M: int, knots: int) -> np.ndarray:
    return np.unique(np.linspace(0, M - 1, min(knots, M)).astype(np.int64))


class CondensedPairs:
    """Condensed layout: dissimilarities in ``pdist`` order, a stored sort order, dense row blocks."""

    def __init__(self, delta: np.ndarray, n: int, ties: str = "primary") -> None:
        self.n, self.M = n, delta.shape[0]
        self.delta = delta
        self.fit = MonotoneFit(delta, ties)
        self.ratio = RatioFit(delta)
        self.blocks = PairBlocks(n)
        dtype = np.float64 if self.M < _FLOAT32_FROM else np.float32
        self.dbuf, self.dnew = np.empty(self.M, dtype=dtype), np.empty(self.M, dtype=dtype)
        self.dhat: np.ndarray | None = None
        self.dhn: np.ndarray | None = None

    def evaluate(self, Y: np.ndarray, ratio: bool = False) -> tuple[float, float, float]:
        """Stress-1 (and its raw terms) of a trial configuration; kept pending until :meth:`accept`."""
        distances(Y, self.blocks, self.dnew)
        self.dhn = (self.ratio if ratio else self.fit)(self.dnew)
        s, t = raw_stress_terms(self.dnew, self.dhn)
        return _stress(s, t), s, t

    def accept(self) -> None:
        self.dbuf, self.dnew = self.dnew, self.dbuf
        self.dhat = self.dhn

    def gradient(self, Y: np.ndarray, s: float, t: float) -> np.ndarray:
        return gradient(Y, self.dhat, self.blocks, s, t, self.dbuf)  # type: ignore[arg-type]

    def square(self) -> np.ndarray:
        """The ``n x n`` matrix of squared dissimilarities (for a classical start)."""
        from scipy.spatial.distance import squareform

        A = squareform(np.asarray(self.delta, dtype=np.float64), checks=False)
        A *= A
        return A

    def final(self, Y: np.ndarray, rng: np.random.Generator, knots: int = 2048,
              sample: int = 200_000) -> dict[str, Any]:
        """Sums for the output scale, the monotone map at knots and a Shepard sample, at ``Y``."""
        M, delta = self.M, self.delta
        d = distances(Y, self.blocks, np.empty(M, dtype=np.float32 if M >= _FLOAT32_FROM else np.float64))
        dhat = self.fit(d)
        d64 = delta.astype(np.float64)
        pos = _knot_positions(M, knots)
        keep = np.sort(rng.choice(M, sample, replace=False)) if M > sample else np.arange(M)
        return {"dd": float(np.dot(d, d)), "xx": float(np.dot(d64, delta)), "xd": float(np.dot(d64, d)),
                "knot_delta": self.fit.delta_sorted.astype(np.float64)[pos],
                "knot_fit": self.fit.last_sorted_[pos],
                "shepard": (delta[keep], d[keep], dhat[keep])}


class SortedPairs:
    """Every pair once, in the order of its dissimilarity (12 bytes a pair).

    Parameters
    ----------
    P : prepared data (:func:`ppdm.distances.pairwise.prepare`)
        Source of the dissimilarities, computed in row blocks straight into the sort keys.
    n : int
        Rows (at most 65,535).
    ties : {'primary', 'secondary'}
        Kruskal's tie approach (see :class:`ppdm.mds.pav.MonotoneFit`).
    dtype : numpy dtype, optional
        Type of the work values (default float32 from 4,000,000 pairs, float64 below).
    chunk : int
        Pairs per chunk of the passes (the temporaries scale with ``chunk * p``).
    """

    def __init__(self, P: Any, n: int, ties: str = "primary", dtype: Any = None, chunk: int = _CHUNK) -> None:
        if n > MAX_SORTED_N:
            raise ValueError(f"the sorted pair layout holds at most {MAX_SORTED_N} rows")
        self.n, self.M = n, n * (n - 1) // 2
        self.ties = ties
        self.chunk = int(chunk)
        self.key = self._build_keys(P, n)
        self.key.sort()  # by dissimilarity, then i, then j: the stable order of the condensed layout
        self.buf = np.empty(self.M, dtype=dtype or (np.float64 if self.M < _FLOAT32_FROM else np.float32))
        self.xx = 0.0
        for a, b in self._chunks():
            x = self.delta(a, b).astype(np.float64)
            self.xx += _dot(x, x)
        self.segments = self._segments()
        self.s_ = self.t_ = 0.0

    # -- layout ------------------------------------------------------------------------------------------

    def _build_keys(self, P: Any, n: int) -> np.ndarray:
        key = np.empty(self.M, dtype=np.uint64)
        pos, a = 0, 0
        while a < n - 1:
            b = min(n - 1, a + max(1, _ROWS_CHUNK * 8 // max(n - a, 1)))  # small blocks: small temporaries
            blk = P.block(P.rows(a, b), P.rows(a, n))
            r, c = np.nonzero(np.triu(np.ones(blk.shape, dtype=bool), k=1))
            # + 0.0 turns -0.0 into +0.0: non-negative float32 bit patterns sort like the floats
            bits = (blk[r, c].astype(np.float32) + np.float32(0.0)).view(np.uint32).astype(np.uint64)
            k = bits << np.uint64(32)
            k |= ((r + a).astype(np.uint64) << np.uint64(16)) | (c + a).astype(np.uint64)
            key[pos:pos + k.size] = k
            pos += k.size
            a = b
        return key

    def _chunks(self, chunk: int | None = None) -> Any:
        c = chunk or self.chunk
        return ((a, min(self.M, a + c)) for a in range(0, self.M, c))

    def delta(self, a: int, b: int) -> np.ndarray:
        """Dissimilarities of sorted positions ``[a, b)`` (float32)."""
        if _LITTLE:  # a strided view of the keys' upper halves: no arithmetic, no copy
            return self.key[a:b].view(np.float32)[1::2]
        return (self.key[a:b] >> np.uint64(32)).astype(np.uint32).view(np.float32)

    def pairs(self, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        """Row indices ``i < j`` of sorted positions ``[a, b)``."""
        if _LITTLE:
            k16 = self.key[a:b].view(np.uint16)
            return k16[1::4].astype(np.intp), k16[0::4].astype(np.intp)
        lo = self.key[a:b] & np.uint64(0xFFFFFFFF)
        return (lo >> np.uint64(16)).astype(np.intp), (lo & np.uint64(0xFFFF)).astype(np.intp)

    def _segments(self) -> list[tuple[int, int, bool]]:
        """Chunks of the PAV pass, widened so that no tie group is cut, each with a flag: holds ties."""
        out, a = [], 0
        while a < self.M:
            b = min(self.M, a + self.chunk)
            if b < self.M and self.key[b] >> np.uint64(32) == self.key[b - 1] >> np.uint64(32):
                # the first key above this dissimilarity's bit pattern ends its tie group
                nxt = ((self.key[b] >> np.uint64(32)) + np.uint64(1)) << np.uint64(32)
                b = int(np.searchsorted(self.key, nxt, side="left"))
            x = self.delta(a, b)
            out.append((a, b, bool(np.any(x[1:] == x[:-1]))))
            a = b
        return out

    def _rows_chunk(self, p: int) -> int:
        return max(1 << 12, min(self.chunk, _ROWS_CHUNK // max(1, p // 4)))

    # -- distances, disparities, gradient --------------------------------------------------------------

    def _distances(self, Yt: np.ndarray) -> float:
        t = 0.0
        for a, b in self._chunks(self._rows_chunk(Yt.shape[0])):
            i, j = self.pairs(a, b)
            d2 = np.zeros(b - a)
            for y in Yt:  # one coordinate at a time: 1-D gathers are several times faster than row gathers
                dk = y[i]
                dk -= y[j]
                dk *= dk
                d2 += dk
            self.buf[a:b] = np.sqrt(d2, out=d2)
            dd = self.buf[a:b].astype(np.float64)
            t += _dot(dd, dd)
        return t

    def _sort_ties(self, a: int, b: int, d: np.ndarray) -> np.ndarray:
        """Primary approach: order the distances within each tie group of ``[a, b)`` (pairs follow).

        The keys keep the order of the last call, so the groups are nearly sorted and the stable
        (merge-based) sort is close to linear.
        """
        x = self.delta(a, b)
        same = x[1:] == x[:-1]
        bad = np.flatnonzero(same & (d[1:] < d[:-1])) + 1  # members out of order within their group
        if not bad.size:
            return d
        gid = np.cumsum(np.concatenate([[True], ~same]))  # group number (1-based) of every position
        unsorted = np.zeros(int(gid[-1]) + 1, dtype=bool)
        unsorted[gid[bad]] = True
        pos = np.flatnonzero(unsorted[gid])  # only the groups that need it are re-sorted
        gid = gid[pos].astype(np.float64)
        sub = d[pos]
        top = float(sub.max())
        # group number + distance scaled into [0, 1): one sort orders by group, then by distance
        perm = np.argsort(gid + (sub / (top * (1 + 1e-9)) if top > 0 else 0.0), kind="stable")
        d[pos] = sub[perm]
        keys = self.key[a:b]
        keys[pos] = keys[pos][perm]
        return d

    def _level1(self, a: int, b: int, d: np.ndarray, tied: bool) -> tuple[np.ndarray, np.ndarray]:
        """PAV of one segment: its block means and sizes (pooling within a segment is final)."""
        from scipy.optimize import isotonic_regression

        if tied and self.ties == "secondary":
            x = self.delta(a, b)
            starts = np.flatnonzero(np.concatenate([[True], x[1:] != x[:-1]]))
            counts = np.diff(np.append(starts, b - a))
            if starts.size < d.size:
                res = isotonic_regression(np.add.reduceat(d, starts) / counts, weights=counts.astype(np.float64))
                r = res.blocks
                return res.x[r[:-1]], np.add.reduceat(counts, r[:-1])
        res = isotonic_regression(d)
        r = res.blocks
        return res.x[r[:-1]], np.diff(r)

    def _fit(self, t: float) -> float:
        """Disparities of the distances in ``buf``, written over them; returns ``S* = sum (d - dhat)^2``."""
        from scipy.optimize import isotonic_regression

        means, sizes = [], []
        for a, b, tied in self.segments:
            d = self.buf[a:b].astype(np.float64)
            if tied and self.ties == "primary":
                d = self._sort_ties(a, b, d)
                self.buf[a:b] = d
            m, c = self._level1(a, b, d, tied)
            means.append(m)
            sizes.append(c.astype(np.int64))
        # merging the segments' blocks by a weighted PAV gives the PAV of the whole sequence
        V = np.concatenate(means)
        W = np.concatenate(sizes)
        del means
        V = isotonic_regression(V, weights=W.astype(np.float64)).x if V.size > 1 else V
        s, k = 0.0, 0
        for (a, b, _), c in zip(self.segments, sizes, strict=True):
            dhat = np.repeat(V[k:k + c.size], c)
            k += c.size
            r = self.buf[a:b] - dhat
            s += _dot(r, r)
            self.buf[a:b] = dhat
        return s

    def _fit_ratio(self, t: float) -> float:
        """Ratio disparities ``c * delta`` with the least-squares ``c`` (random-start warm-up)."""
        xd = 0.0
        for a, b in self._chunks():
            xd += _dot(self.delta(a, b).astype(np.float64), self.buf[a:b].astype(np.float64))
        c = xd / self.xx if self.xx > 0 else 0.0
        s = 0.0
        for a, b in self._chunks():
            dhat = self.delta(a, b).astype(np.float64) * c
            r = self.buf[a:b] - dhat
            s += _dot(r, r)
            self.buf[a:b] = dhat
        return s

    def evaluate(self, Y: np.ndarray, ratio: bool = False) -> tuple[float, float, float]:
        """Stress-1 of ``Y``; the work array then holds its disparities (there is one current state)."""
        t = self._distances(np.ascontiguousarray(Y.T))
        s = self._fit_ratio(t) if ratio else self._fit(t)
        self.s_, self.t_ = s, t
        return _stress(s, t), s, t

    def accept(self) -> None:
        """Nothing to swap: the last evaluation is the current state."""

    def gradient(self, Y: np.ndarray, s: float, t: float) -> np.ndarray:
        """Gradient of stress-1 at the last evaluated ``Y`` (see :func:`ppdm.mds.stress.gradient`)."""
        n, p = Y.shape
        Yt = np.ascontiguousarray(Y.T)
        G = np.zeros((p, n))
        for a, b in self._chunks(self._rows_chunk(p)):
            i, j = self.pairs(a, b)
            diff = [y[i] - y[j] for y in Yt]
            d2 = np.zeros(b - a)
            for dk in diff:
                d2 += dk * dk
            d = np.sqrt(d2, out=d2)
            with np.errstate(divide="ignore", invalid="ignore"):
                c = self.buf[a:b] / d
                np.subtract(1.0, c, out=c)
                c /= s
                c -= 1.0 / t
                c[d <= 0] = 0.0
            for k, dk in enumerate(diff):
                dk *= c
                G[k] += np.bincount(i, weights=dk, minlength=n)
                G[k] -= np.bincount(j, weights=dk, minlength=n)
        return np.sqrt(s / t) * G.T

    def _exact_distances(self, Yt: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        d2 = np.zeros(i.size)
        for y in Yt:
            dk = y[i] - y[j]
            d2 += dk * dk
        return np.sqrt(d2)

    def square(self) -> np.ndarray:
        """The ``n x n`` matrix of squared dissimilarities (for a classical start)."""
        A = np.zeros((self.n, self.n))
        for a, b in self._chunks():
            i, j = self.pairs(a, b)
            x = self.delta(a, b).astype(np.float64)
            x *= x
            A[i, j] = x
            A[j, i] = x
        return A

    def final(self, Y: np.ndarray, rng: np.random.Generator, knots: int = 2048,
              sample: int = 200_000) -> dict[str, Any]:
        """Sums for the output scale, the monotone map at knots and a Shepard sample, at ``Y``."""
        self.evaluate(Y)
        M = self.M
        dd, xd = 0.0, 0.0
        Yt = np.ascontiguousarray(Y.T)
        for a, b in self._chunks(self._rows_chunk(Y.shape[1])):
            i, j = self.pairs(a, b)
            d = self._exact_distances(Yt, i, j)
            dd += _dot(d, d)
            xd += _dot(self.delta(a, b).astype(np.float64), d)
        pos = _knot_positions(M, knots)
        keep = np.sort(rng.choice(M, sample, replace=False)) if M > sample else np.arange(M)
        key = self.key[keep]
        lo = key & np.uint64(0xFFFFFFFF)
        i, j = (lo >> np.uint64(16)).astype(np.intp), (lo & np.uint64(0xFFFF)).astype(np.intp)
        x = (key >> np.uint64(32)).astype(np.uint32).view(np.float32)
        kd = (self.key[pos] >> np.uint64(32)).astype(np.uint32).view(np.float32).astype(np.float64)
        return {"dd": dd, "xx": self.xx, "xd": xd, "knot_delta": kd,
                "knot_fit": self.buf[pos].astype(np.float64),
                "shepard": (x, self._exact_distances(Yt, i, j), self.buf[keep].copy())}
