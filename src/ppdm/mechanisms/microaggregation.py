"""Multivariate microaggregation: MDAV (Domingo-Ferrer and Mateo-Sanz 2002).

Records are grouped into clusters of at least ``k`` similar records and each record is released as its
group's centroid, so every released row is shared by ``k`` or more records: a row can point at a group,
never at a person (k-anonymity on the released numeric block), while the group structure that
classifiers and clusterings use survives. Within strata (typically the class label), groups never mix
strata, so class structure is kept exactly.

MDAV: while at least ``3k`` records remain, take the record farthest from the centroid of the remaining
ones and group it with its ``k - 1`` nearest neighbours, then the record farthest from that one with its
``k - 1`` nearest; with ``2k..3k - 1`` left, one more group around the farthest record and the rest; below
``2k``, the rest form the last group. Every group therefore has between ``k`` and ``2k - 1`` records.
The cost is ``O(n^2 m / k)``: tables beyond ``max_exact_rows`` records (per stratum) are first split
recursively at the median of their widest principal direction into blocks of about ``max_exact_rows``
records (never fewer than ``k``), and MDAV runs inside each block, so the whole costs
``O(n m (max_exact_rows / k + log n))``. The loop inside a block masks grouped rows instead of copying
the remaining ones (see :func:`mdav_groups`): 1,000,000 x 20 records with ``k = 20`` take 20 to 30 s on
two shared cores (``benchmarks/bench_mdav.py``).

``variable=True`` forms groups of variable size ``k .. 2k - 1`` by V-MDAV (Solanas and Martinez-Balleste
2006): groups extend over nearby records instead of splitting natural clusters.
``univariate=True`` microaggregates every column on its own by individual ranking (sorted runs of ``k``
values), the univariate microaggregation of statistical disclosure control.
"""

from __future__ import annotations

import warnings
from typing import ClassVar

import numpy as np

from ppdm.exceptions import ParameterError, PrivacyWarning
from ppdm.mechanisms.base import Mechanism, given_up, strata_of
from ppdm.utils.validation import check_int, check_real

__all__ = ["MDAV", "mdav_groups", "univariate_groups", "vmdav_groups", "warn_small_centroids", "warn_small_groups"]


def mdav_groups(X: np.ndarray, k: int) -> np.ndarray:
    """Group label of every row by exact MDAV (groups of ``k`` to ``2k - 1`` rows; fewer than 2k rows: one group).

    Every step works on the whole block with the grouped rows masked out (no copies of the remaining rows):
    squared distances come from one matrix-vector product each (``|x|^2 - 2 x.p + |p|^2`` on the centred
    block), the distances to the first record of a pair also give the second record (the farthest from
    it), and the block is compacted whenever half of it has been grouped. The groups are those of the
    textbook loop (up to ties between equal distances).
    """
    X = np.asarray(X, dtype=np.float64)
    n = len(X)
    labels = np.full(n, -1, dtype=np.int64)
    if n < 2 * k:
        labels[:] = 0
        return labels
    rows = np.arange(n)  # original positions of the rows of the working block
    Z = X - (np.ones(n) @ X) / n
    sq = np.einsum("ij,ij->i", Z, Z)
    alive = np.ones(n, dtype=bool)
    left = n
    g = 0

    def dist(p: np.ndarray) -> np.ndarray:
        return sq - 2.0 * (Z @ p) + float(p @ p)

    def take(d: np.ndarray) -> None:
        nonlocal left, g
        sel = np.argpartition(np.where(alive, d, np.inf), k - 1)[:k]
        labels[rows[sel]] = g
        alive[sel] = False
        left -= k
        g += 1

    def farthest(d: np.ndarray) -> int:
        return int(np.argmax(np.where(alive, d, -np.inf)))

    while left >= 3 * k:
        if left <= len(rows) // 2:  # compact: later steps only touch the rows still to group
            rows, Z, sq = rows[alive], Z[alive], sq[alive]
            alive = np.ones(len(rows), dtype=bool)
        c = (alive @ Z) / left
        r = farthest(dist(c))
        d_r = dist(Z[r])
        take(d_r)
        s = farthest(d_r)  # the farthest remaining record from r
        take(dist(Z[s]))
    if left >= 2 * k:
        c = (alive @ Z) / left
        take(dist(Z[farthest(dist(c))]))
    labels[rows[alive]] = g
    return labels


def vmdav_groups(X: np.ndarray, k: int, gamma: float = 0.2) -> np.ndarray:
    """Group label of every row by V-MDAV (Solanas and Martinez-Balleste 2006): groups of ``k`` to ``2k - 1``.

    While at least ``2k`` records remain, the record farthest from the centroid of the remaining ones is
    grouped with its ``k - 1`` nearest neighbours; the group then grows by the remaining record closest to
    it (distance ``d_in`` to its nearest member) while ``d_in < gamma * d_out`` (``d_out``: that record's
    distance to its own nearest remaining record), the group holds fewer than ``2k - 1`` records and at
    least ``k`` records would remain. The last ``k .. 2k - 1`` records form the last group. Small
    ``gamma`` gives MDAV-like groups of ``k``; larger ``gamma`` lets groups follow clusters. The distances
    of every record to a new group's ``k`` members cost ``O(n k m)``, so the whole is ``O(n^2 m)``: ``k``
    times MDAV's.
    """
    X = np.asarray(X, dtype=np.float64)
    n = len(X)
    labels = np.full(n, -1, dtype=np.int64)
    if n < 2 * k:
        labels[:] = 0
        return labels
    Z = X - (np.ones(n) @ X) / n
    sq = np.einsum("ij,ij->i", Z, Z)
    alive = np.ones(n, dtype=bool)
    left = n
    g = 0

    def dist(p: np.ndarray) -> np.ndarray:
        return np.maximum(sq - 2.0 * (Z @ p) + float(p @ p), 0.0)

    while left >= 2 * k:
        e = int(np.argmax(np.where(alive, dist((alive @ Z) / left), -np.inf)))
        sel = np.argpartition(np.where(alive, dist(Z[e]), np.inf), k - 1)[:k]
        labels[sel] = g
        alive[sel] = False
        left -= k
        # squared distance of every record to the group's nearest member
        to_group = np.maximum(sq[:, None] - 2.0 * (Z @ Z[sel].T) + sq[sel][None, :], 0.0).min(axis=1)
        size = k
        while size < 2 * k - 1 and left - 1 >= k:
            cand = np.where(alive, to_group, np.inf)
            i = int(np.argmin(cand))
            d_i = np.where(alive, dist(Z[i]), np.inf)
            d_i[i] = np.inf
            if not np.sqrt(cand[i]) < gamma * np.sqrt(d_i.min()):
                break
            labels[i] = g
            alive[i] = False
            left -= 1
            size += 1
            to_group = np.minimum(to_group, d_i)
        g += 1
    labels[alive] = g
    return labels


def univariate_groups(x: np.ndarray, k: int) -> np.ndarray:
    """Group label of every value of one column by individual ranking: runs of ``k`` consecutive values in
    sorted order, the last run taking the remainder (``k`` to ``2k - 1`` values; fewer than 2k: one group)."""
    n = len(x)
    n_groups = max(1, n // k)
    order = np.argsort(x, kind="stable")
    labels = np.empty(n, dtype=np.int64)
    labels[order] = np.minimum(np.arange(n) // k, n_groups - 1)
    return labels


#: rows of a large block read at a time while its principal direction is found
_SCORE_CHUNK = 65_536


def _principal_scores(X: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The rows' scores on the leading principal direction of ``X[rows]`` (centred).

    A block of at most :data:`_SCORE_CHUNK` rows is copied and centred whole; a larger one (a class of a
    million-row table) is read in chunks of that many rows, three passes (mean, scatter matrix, scores),
    so that no copy of the class is held beside the table.
    """
    m = X.shape[1]
    if len(rows) <= _SCORE_CHUNK:
        Z = X[rows]  # a copy, centred in place (the mean as a matrix-vector product: axis-0 means are slow)
        Z -= (np.ones(len(Z)) @ Z) / len(Z)
        # the leading principal direction from the m x m scatter matrix (one pass over the rows)
        return Z @ np.linalg.eigh(Z.T @ Z)[1][:, -1]
    chunks = [rows[s:s + _SCORE_CHUNK] for s in range(0, len(rows), _SCORE_CHUNK)]
    mean = np.zeros(m)
    for c in chunks:
        mean += np.ones(len(c)) @ X[c]
    mean /= len(rows)
    scatter = np.zeros((m, m))
    for c in chunks:
        Z = X[c] - mean
        scatter += Z.T @ Z
    v = np.linalg.eigh(scatter)[1][:, -1]
    proj = np.empty(len(rows))
    for s, c in zip(range(0, len(rows), _SCORE_CHUNK), chunks, strict=True):
        proj[s:s + len(c)] = (X[c] - mean) @ v
    return proj


def warn_small_centroids(nearest: np.ndarray, n_centroids: int, k: int, name: str) -> None:
    """Warn when a ``transform`` that gave each row its ``nearest`` centroid released a centroid to fewer than
    ``k`` rows."""
    counts = np.bincount(nearest, minlength=n_centroids)
    small = int(((counts > 0) & (counts < k)).sum())
    if small:
        warn_small_groups(small, f"{int((counts > 0).sum())} released centroids", k, name)


def warn_small_groups(small: int, of: str, k: int, name: str) -> None:
    """Warn that a ``transform`` released groups smaller than ``k`` (``small`` of ``of``)."""
    warnings.warn(f"{name}.transform gave {small} of the {of} to fewer than k={k} rows: it maps each row to "
                  f"the nearest fitted centroid, so released groups can be smaller than k; release a table with "
                  f"fit_transform, which keeps every group at k or more", PrivacyWarning, stacklevel=3)


def _blocks(X: np.ndarray, rows: np.ndarray, size: int, k: int) -> list[np.ndarray]:
    """Split ``rows`` at the median of their widest principal direction until blocks hold <= ``size`` rows."""
    if len(rows) <= size or len(rows) < 4 * k:
        return [rows]
    proj = _principal_scores(X, rows)
    # split sizes are multiples of k, so blocks never leave a remainder smaller than k behind
    half = max(k, (len(rows) // 2) // k * k)
    part = np.argpartition(proj, half - 1)
    del proj  # the halves make their own: this level's goes first
    low, high = rows[part[:half]], rows[part[half:]]
    del part
    return _blocks(X, low, size, k) + _blocks(X, high, size, k)


def _keep_supported(centroids: np.ndarray, block: np.ndarray, counts: np.ndarray, support: int) -> None:
    """Zero, in place, the shares of a categorical block's categories that fewer than ``support`` records of a
    group hold (a group keeps its most frequent category when none has the support)."""
    shares = centroids[:, block]
    total = shares.sum(axis=1, keepdims=True)
    held = np.where(total > 0, shares / np.where(total > 0, total, 1.0), 0.0) * counts[:, None]
    keep = held >= support - 1e-9
    none = ~keep.any(axis=1)
    keep[none, shares[none].argmax(axis=1)] = True
    centroids[:, block] = np.where(keep, shares, 0.0)


def _drop_rare(centroids: np.ndarray, block: np.ndarray, held: np.ndarray, frequent: int) -> None:
    """Zero, in place, the shares of a categorical block's categories that fewer than ``frequent`` records of the
    table hold (``held``: each category's records); a group left with none takes the most frequent one."""
    rare = held < frequent
    if not rare.any() or rare.all():
        return
    shares = centroids[:, block]
    total = shares.sum(axis=1)
    shares[:, rare] = 0.0
    empty = shares.sum(axis=1) == 0
    shares[empty, int(np.argmax(held))] = total[empty]
    centroids[:, block] = shares


class MDAV(Mechanism):
    """Microaggregation by MDAV: each record released as the centroid of its group of >= ``k`` records.

    The groups of ``k`` or more are those of :meth:`fit_transform`. :meth:`transform` maps rows to their
    nearest centroid instead and does not keep ``k`` (see there): release a table with ``fit_transform``.

    Parameters
    ----------
    k : int, default=10
        Minimum group size (groups hold ``k`` to ``2k - 1`` records).
    within_strata : bool, default=True
        Group within the strata given to ``fit(X, y)`` (the class label in ``ppdm release``), so no group
        mixes classes. Without ``y`` the whole table is one stratum.
    max_exact_rows : int, default=5000
        Strata larger than this are split into blocks of about this many records first (see the module).
    variable : bool, default=False
        Variable group sizes by V-MDAV (:func:`vmdav_groups`): a group grows beyond ``k`` (up to
        ``2k - 1``) by nearby records that are closer to it than ``gamma`` times their distance to any
        other remaining record.
    gamma : float, default=0.2
        V-MDAV's gain factor (only with ``variable``).
    univariate : bool, default=False
        Microaggregate every column on its own (individual ranking: runs of ``k`` consecutive sorted
        values, see :func:`univariate_groups`) instead of whole records. Each released value is then shared
        by ``k`` records, but a released row is no longer shared as a whole: weaker protection, less loss
        (``variable`` does not apply).
    variables : list of lists of int or None, default=None
        Column groups that are one categorical variable each (the one-hot blocks of a whole table, which
        ``ppdm release`` passes): a group's centroid over a block holds the shares of its records in each
        category.
    min_support : int, default=1
        A category is kept in a group's centroid only when at least this many of the group's records hold
        it (the other shares are set to 0; a group where no category has the support keeps its most frequent
        one). Decoding gives the group's rows its kept categories as often as their shares say, to within
        one row, in a random order (:class:`~ppdm.data.codec.TableCodec`'s systematic draws), so a category
        that only one or two records of a group hold (a rare category, a rare combination with the group's
        numbers) is never published where it would point at them; the test of singling out measures what is
        left.
    min_count : int, default=1
        A category that fewer than this many records of the whole table hold is never released (its shares
        are set to 0; a group left with none takes the table's most frequent category): a rare category
        drawn into a group's rows would single out its few holders wherever the group is. On adult's 2,000
        records, groups of 20 with ``min_support=4, min_count=30`` keep 94 % of the label signal a logistic
        regression finds, against 72 % with ``min_support=10`` alone, at the same singling-out risk. The
        sweep's release of a held-out fold's rows stands in for the release of every row: it takes this count
        scaled by the fold's share of the rows, so that it drops the categories the whole release drops.
    random_state : ignored
        MDAV is deterministic; the parameter keeps the common mechanism interface.

    Attributes
    ----------
    groups_ : ndarray of shape (n,) or (n, m) when ``univariate``
        Group of every record (of every value, per column, when ``univariate``); key material: it says
        which records were merged.
    centroids_ : ndarray of shape (n_groups, m)
        Group means (per column when ``univariate``: ``centroids_[g, j]`` is the mean of column ``j``'s
        group ``g``).
    n_groups_ : int
    """

    _mixes_columns: ClassVar[bool] = False
    _secret = ("groups_",)
    _table_level: ClassVar[bool] = True
    _keeps_no_row: ClassVar[bool] = True
    _uses_label: ClassVar[bool] = True
    _releases_into_input: ClassVar[bool] = True

    #: ``ppdm release`` passes the categorical blocks of a whole table as ``variables``
    _uses_blocks: ClassVar[bool] = True
    _table_counts: ClassVar[tuple[str, ...]] = ("min_count",)
    #: a group's centroid over a block is its records' shares of each category (see ``variables``)
    _block_reading: ClassVar[str] = "shares"

    def __init__(self, k: int = 10, *, within_strata: bool = True, max_exact_rows: int = 5000,
                 variable: bool = False, gamma: float = 0.2, univariate: bool = False,
                 variables: list[list[int]] | None = None, min_support: int = 1, min_count: int = 1,
                 random_state: object = None) -> None:
        self.k = k
        self.within_strata = within_strata
        self.max_exact_rows = max_exact_rows
        self.variable = variable
        self.gamma = gamma
        self.univariate = univariate
        self.variables = variables
        self.min_support = min_support
        self.min_count = min_count
        self.random_state = random_state

    def fit(self, X: object, y: object = None) -> MDAV:
        A = self._check_X(X, reset=True)
        k = check_int(self.k, "k", low=1)
        size = check_int(self.max_exact_rows, "max_exact_rows", low=2)
        n, m = A.shape
        if k > n:
            raise ParameterError(f"k = {k} exceeds the {n} records; choose k <= {n}")
        gamma = check_real(self.gamma, "gamma", low=0.0)
        strata = strata_of(y, n, bool(self.within_strata))
        if self.univariate:
            groups = np.empty((n, m), dtype=np.int64)
            next_group = 0
            for s in np.unique(strata):
                rows = np.flatnonzero(strata == s)
                for j in range(m):
                    groups[rows, j] = univariate_groups(A[rows, j], k) + next_group
                next_group = int(groups[rows, 0].max()) + 1  # every column of a stratum has as many groups
            counts = np.bincount(groups[:, 0], minlength=next_group)
            cent = [np.bincount(groups[:, j], weights=A[:, j], minlength=next_group) for j in range(m)]
        else:
            groups = np.full(n, -1, dtype=np.int64)
            next_group = 0
            for s in np.unique(strata):
                for block in _blocks(A, np.flatnonzero(strata == s), max(size, 2 * k), k):
                    local = vmdav_groups(A[block], k, gamma) if self.variable else mdav_groups(A[block], k)
                    groups[block] = local + next_group
                    next_group += int(local.max()) + 1
            counts = np.bincount(groups, minlength=next_group)
            cent = [np.bincount(groups, weights=A[:, j], minlength=next_group) for j in range(m)]
        self.groups_ = groups
        self.centroids_ = np.column_stack(cent) / counts[:, None]
        support = check_int(self.min_support, "min_support", low=1)
        frequent = check_int(self.min_count, "min_count", low=1)
        if (support > 1 or frequent > 1) and not self.univariate:
            for block in self.variables or ():
                if len(block) > 1:
                    block = np.asarray(block, dtype=np.int64)
                    if support > 1:
                        _keep_supported(self.centroids_, block, counts, support)
                    if frequent > 1:
                        _drop_rare(self.centroids_, block, (A[:, block] > 0).sum(axis=0), frequent)
        self.n_groups_ = int(next_group)
        self.n_rows_ = n
        return self

    def transform(self, X: object) -> np.ndarray:
        """Map each row to the NEAREST fitted group centroid (per column when ``univariate``).

        .. warning::
           ``transform`` does not keep ``k``: ``MDAV(k).fit(X).transform(X)`` is **not**
           ``fit_transform(X)``. A row goes to the centroid nearest to it, not to its own group, so a released
           centroid may be shared by fewer than ``k`` rows (or by rows of a new batch alone) and the release
           loses its k-anonymity. Release a table with :meth:`fit_transform`, which gives every record its
           own group of ``k`` or more; a :class:`~ppdm.exceptions.PrivacyWarning` is emitted when the rows
           returned here share a centroid with fewer than ``k - 1`` others.

        Parameters
        ----------
        X : array-like of shape (n, m)
            Rows in the units the mechanism was fitted in.

        Returns
        -------
        ndarray of shape (n, m)
            The nearest centroid of each row.
        """
        from ppdm.utils.neighbors import nearest_neighbors

        self._check_fitted()
        A = self._check_X(X, reset=False)
        k = int(self.k)
        if self.groups_.ndim == 2:
            out = np.empty_like(A)
            small = shown = 0
            for j in range(A.shape[1]):
                c = np.unique(self.centroids_[:, j])
                pos = np.clip(np.searchsorted(c, A[:, j]), 1, max(len(c) - 1, 1))
                lo, hi = c[pos - 1], c[np.minimum(pos, len(c) - 1)]
                out[:, j] = np.where(np.abs(A[:, j] - lo) <= np.abs(hi - A[:, j]), lo, hi)
                counts = np.unique(out[:, j], return_counts=True)[1]
                small, shown = small + int((counts < k).sum()), shown + len(counts)
            if small:
                warn_small_groups(small, f"{shown} released values (column by column)", k, "MDAV")
            return out
        nearest = nearest_neighbors(A, self.centroids_, 1)[:, 0]
        warn_small_centroids(nearest, len(self.centroids_), k, "MDAV")
        return self.centroids_[nearest]

    def fit_transform(self, X: object, y: object = None, *, overwrite_input: bool = False,
                      **fit_params: object) -> np.ndarray:
        """Release each record's own group centroid; ``overwrite_input``: written into ``X`` (a float64
        array the caller gives up) instead of a new array."""
        self.fit(X, y)
        # fit is done with a table given up: every value is replaced by its group's centroid
        out = X if given_up(X, overwrite_input) else None
        if self.groups_.ndim == 2:
            if out is None:
                return np.take_along_axis(self.centroids_, self.groups_, axis=0)
            for j in range(out.shape[1]):
                out[:, j] = self.centroids_[self.groups_[:, j], j]
            return out
        if out is None:
            return self.centroids_[self.groups_]
        # mode 'clip' (every group number is valid): 'raise' would buffer a release-sized copy first
        return np.take(self.centroids_, self.groups_, axis=0, out=out, mode="clip")
