"""Pool-adjacent-violators isotonic regression with Kruskal's primary and secondary tie approaches."""

from __future__ import annotations

import numpy as np

from ppdm.utils.validation import check_choice

__all__ = ["pav", "MonotoneFit", "RatioFit"]


def pav(y: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Least-squares non-decreasing fit of ``y`` (already in the order of the dissimilarities).

    Standard PAV: a new value starts its own block; while the previous block's mean exceeds the
    last block's, the two are pooled into their weighted mean (repeated backwards).
    """
    y = np.asarray(y, dtype=np.float64)
    w = np.ones_like(y) if weights is None else np.asarray(weights, dtype=np.float64)
    means: list[float] = []
    wts: list[float] = []
    sizes: list[int] = []
    for v, wv in zip(y.tolist(), w.tolist(), strict=True):
        means.append(v)
        wts.append(wv)
        sizes.append(1)
        while len(means) > 1 and means[-2] > means[-1]:
            m2, w2, s2 = means.pop(), wts.pop(), sizes.pop()
            tw = wts[-1] + w2
            means[-1] = (means[-1] * wts[-1] + m2 * w2) / tw
            wts[-1] = tw
            sizes[-1] += s2
    return np.repeat(np.asarray(means), np.asarray(sizes, dtype=np.int64)) if means else y.copy()


def _stable_order(delta: np.ndarray) -> np.ndarray:
    """``argsort(delta, kind='stable')``; for non-negative float32 by one sort of 64-bit keys (bits, index)."""
    M = delta.shape[0]
    if delta.dtype != np.float32 or not 0 < M < 2**32 or bool((delta < 0).any()):
        return np.argsort(delta, kind="stable")
    # non-negative float32 bit patterns sort like the values; the index below them breaks ties stably
    key = (delta + np.float32(0.0)).view(np.uint32).astype(np.uint64) << np.uint64(32)
    key |= np.arange(M, dtype=np.uint64)
    key.sort()
    return (key & np.uint64(0xFFFFFFFF)).astype(np.int64)


def _isotonic(y: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Compiled PAV (scipy) for long sequences; same result as :func:`pav`."""
    from scipy.optimize import isotonic_regression

    return isotonic_regression(y, weights=weights, increasing=True).x


class MonotoneFit:
    """Disparities ``dhat`` of distances ``d`` under the rank order of fixed dissimilarities ``delta``.

    The sort of ``delta`` is done once; each call costs one gather, one PAV and one scatter.

    Parameters
    ----------
    delta : ndarray (M,)
        Dissimilarities (condensed); only their order is used.
    ties : {'primary', 'secondary'}
        Primary: tied dissimilarities impose no order (their distances are sorted before pooling).
        Secondary: tied dissimilarities must get equal disparities.
    """

    def __init__(self, delta: np.ndarray, ties: str = "primary") -> None:
        check_choice(ties, "ties", ("primary", "secondary"))
        self.ties = ties
        M = delta.shape[0]
        self.order = _stable_order(delta).astype(np.int32 if M < 2**31 - 1 else np.int64)
        ds = delta[self.order]
        new = np.empty(M, dtype=bool)
        if M:
            new[0] = True
            np.not_equal(ds[1:], ds[:-1], out=new[1:])
        self.has_ties = bool(M and not new.all())
        if self.has_ties:
            self.starts = np.flatnonzero(new)
            self.counts = np.diff(np.append(self.starts, M))
            # only members of tie groups need re-sorting under the primary approach
            bid = np.repeat(np.arange(self.starts.size, dtype=np.float64), self.counts)
            in_tie = np.repeat(self.counts > 1, self.counts)
            self.tie_pos = np.flatnonzero(in_tie).astype(self.order.dtype)
            self.tie_bid = bid[in_tie]
        # the fitted monotone map (sorted delta -> dhat) is kept for out-of-sample placement
        self.delta_sorted = ds

    def __call__(self, d: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Disparities in the condensed layout of ``d`` (written into ``out`` when given)."""
        ds = d[self.order]
        if self.has_ties and self.ties == "primary" and self.tie_pos.size:
            sub = ds[self.tie_pos].astype(np.float64)
            # the order within tie groups is kept from the last call (pairs with equal distances get
            # equal disparities, so it does not matter); only groups out of order need sorting
            if np.any((sub[1:] < sub[:-1]) & (self.tie_bid[1:] == self.tie_bid[:-1])):
                top = float(sub.max())
                # block id + distance scaled into [0, 1): one sort orders by block, then by distance
                key = self.tie_bid + (sub / (top * (1 + 1e-9)) if top > 0 else 0.0)
                perm = np.argsort(key, kind="stable")
                ds[self.tie_pos] = sub[perm]
                self.order[self.tie_pos] = self.order[self.tie_pos][perm]
        idx = self.order
        if self.has_ties and self.ties == "secondary":
            means = np.add.reduceat(ds.astype(np.float64), self.starts) / self.counts
            fit = np.repeat(_isotonic(means, self.counts.astype(np.float64)), self.counts)
        else:
            fit = _isotonic(ds.astype(np.float64))
        self.last_sorted_ = fit
        res = np.empty_like(d) if out is None else out
        res[idx] = fit
        return res

    def transfer(self, delta_new: np.ndarray) -> np.ndarray:
        """The fitted monotone map applied to new dissimilarities (linear interpolation, clamped)."""
        x = self.delta_sorted.astype(np.float64)
        return np.interp(delta_new, x, self.last_sorted_)


class RatioFit:
    """Metric (ratio) disparities ``c * delta`` with the least-squares ``c``: a warm-up for random starts.

    From a random start, non-metric descent first falls onto the near-degenerate solution where all
    distances are almost equal (the disparities pool into a constant); a few ratio-MDS steps avoid it.
    """

    def __init__(self, delta: np.ndarray) -> None:
        self.delta = delta
        self.dd = float(np.einsum("i,i->", delta.astype(np.float64), delta))

    def __call__(self, d: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        # einsum, not a BLAS dot (see ppdm.mds.stress.vdot); pav does not import stress
        c = float(np.einsum("i,i->", self.delta.astype(np.float64), d)) / self.dd if self.dd > 0 else 0.0
        res = np.empty_like(d) if out is None else out
        np.multiply(self.delta, c, out=res, casting="unsafe")
        return res
