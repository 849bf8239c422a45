"""Linkage by an attacker who holds the population and knows the mechanism (Kerckhoffs).

Every space here standardises with the *population's* statistics (the attacker has the original table;
standardising the release with its own statistics shrinks noisy rows towards the centre and hides them):

* ``population_z``: nearest original record in the population's z-scores. For additive noise of known,
  equal variance in those units (ppdm's noise is drawn on z-scored data), this is the likelihood-optimal
  linkage;
* ``norm``: distance to the population centre, which every rotation and orthonormal projection about
  the centre keeps (isometry invariant);
* ``profile``: each record's sorted distances to its k nearest other records, kept by every isometry;
* ``assignment``: one-to-one matching (each released row to a different record) minimising the total
  squared distance, which stops many released rows from claiming the same record (on a sparse graph of
  each row's near records: :mod:`ppdm.attacks._matching`);
* ``mixed``: exact match on the released categorical columns (and the label) that pass through, then the
  nearest record in population z-scores among those sharing the combination: every column that reaches
  the release is part of what the attacker sees.

Ties are broken at random (seeded): when released rows are identical (microaggregation), nothing in the
row order may help the attacker.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ppdm.attacks._linkage import POOL_BLOCK  # rows of the attacker's pool put into z-scores at a time
from ppdm.attacks._matching import one_to_one
from ppdm.utils.neighbors import nearest_neighbors
from ppdm.utils.rows import row_dtype

__all__ = ["FIRST_SPACES", "LINKAGE_SPACES", "population_linkage", "combination_codes", "uniqueness"]

#: the k-NN distance profile compares every record with its nearest others: rows beyond this are sampled
MAX_PROFILE_ROWS = 50_000
PROFILE_K = 10
#: every space of the linkage attack (this module's and :mod:`ppdm.attacks._linkage`'s)
LINKAGE_SPACES = frozenset({"raw", "standardised", "projected", "known_columns", "population_z", "norm", "profile",
                            "multiplicative", "assignment", "mixed"})
#: the spaces a sweep's first pass measures: cheap, and the ones that settle most candidates
FIRST_SPACES = frozenset({"population_z", "norm", "mixed"})




class _Pool:
    """The attacker's pool ``X[rows]`` (None: all of X) in its own z-scores, made a block of rows at a time.

    ``mu``, ``sd``: the pool's column means and deviations (ddof 1; a constant column gets 1).
    """

    def __init__(self, X: np.ndarray, rows: np.ndarray | None) -> None:
        from ppdm.utils.linalg import column_mean_std

        self.X, self.rows = X, rows
        self.n = len(X) if rows is None else len(rows)
        if self.n > 1:
            mu, sd = column_mean_std(X, rows)
        else:
            mu, sd = np.asarray(self.take(None, raw=True).mean(axis=0)), np.ones(X.shape[1])
        self.mu, self.sd = mu, np.where(~np.isfinite(sd) | (sd == 0), 1.0, sd)
        self._whole: np.ndarray | None = None

    def whole(self) -> np.ndarray:
        """The whole pool in z-scores, made once and shared by the spaces that need it at once (only a small
        pool: at most :data:`POOL_BLOCK` rows searched in one piece, the profile, the matching)."""
        if self._whole is None:
            self._whole = self.take(None)
            self._whole.flags.writeable = False
        return self._whole

    def take(self, positions: np.ndarray | slice | None, *, raw: bool = False) -> np.ndarray:
        """The pool rows at ``positions`` (None: all) as a new array, in z-scores (``raw``: as they are)."""
        sel = slice(None) if positions is None else positions
        Z = self.X[sel] if self.rows is None else self.X[self.rows[sel]]
        if Z.dtype != np.float64 or np.may_share_memory(Z, self.X):  # a view: copied (rows picked are a copy)
            Z = np.array(Z, dtype=np.float64)
        if not raw:
            Z -= self.mu
            Z /= self.sd
        return Z

    def norms(self) -> np.ndarray:
        """Every pool row's distance to the pool's centre, in z-scores."""
        out = np.empty(self.n)
        for start in range(0, self.n, POOL_BLOCK):
            Z = self.take(slice(start, start + POOL_BLOCK))
            out[start:start + len(Z)] = np.sqrt(np.einsum("ij,ij->i", Z, Z))
            del Z  # freed before the next block is made, not after: one block at a time
        return out


def _pick_among(idx: np.ndarray, dist: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per row, one of the candidates ``idx`` (nearest first) at the least distance, chosen at random."""
    best = dist[:, :1]
    tied = np.isclose(dist, best, rtol=1e-12, atol=1e-12)
    # a random tied column per row: random keys, non-tied columns pushed out
    keys = rng.random(idx.shape) + np.where(tied, 0.0, 2.0)
    return idx[np.arange(len(idx)), keys.argmin(axis=1)]


def _nearest_random_ties(Q: np.ndarray, P: np.ndarray, rng: np.random.Generator, k: int = 8) -> np.ndarray:
    """Index of the nearest row of P for every row of Q, ties (equal distance) broken at random."""
    k = min(k, len(P))
    idx, dist = nearest_neighbors(Q, P, k, return_distance=True)
    return _pick_among(idx, dist, rng)


def _nearest_in_pool_random_ties(Q: np.ndarray, pool: _Pool, rng: np.random.Generator,
                                 positions: np.ndarray | None = None, k: int = 8) -> np.ndarray:
    """:func:`_nearest_random_ties` against the pool's rows at ``positions`` (None: all), in z-scores: index
    into those rows. A large pool is searched a block at a time, keeping each query's ``k`` nearest so far
    (earlier rows first among equals, as one search orders them)."""
    size = pool.n if positions is None else len(positions)
    if size <= POOL_BLOCK:
        return _nearest_random_ties(Q, pool.whole() if positions is None else pool.take(positions), rng, k)
    k = min(k, size)
    idx = dist = None
    for start in range(0, size, POOL_BLOCK):
        sel = slice(start, start + POOL_BLOCK) if positions is None else positions[start:start + POOL_BLOCK]
        P = pool.take(sel)
        i, d = nearest_neighbors(Q, P, min(k, len(P)), return_distance=True)
        del P  # one block at a time
        i = i + start
        if idx is None:
            idx, dist = i, d
            continue
        both_i, both_d = np.hstack([idx, i]), np.hstack([dist, d])
        keep = np.argsort(both_d, axis=1, kind="stable")[:, :k]
        idx, dist = np.take_along_axis(both_i, keep, axis=1), np.take_along_axis(both_d, keep, axis=1)
    return _pick_among(idx, dist, rng)


def _nearest_1d_random_ties(q: np.ndarray, p: np.ndarray, rng: np.random.Generator, k: int = 8, *,
                            sort_p: bool = False) -> np.ndarray:
    """:func:`_nearest_random_ties` for one column, by sorting instead of a distance search: exact, every
    tie (equal distance, either side) equally likely. Draws from ``rng`` what the search would (a key per
    query and neighbour), so the attacks after it see the same random stream. ``sort_p``: ``p`` is the
    caller's to give up, and is sorted where it is (no sorted copy beside it and its order)."""
    keys = rng.random((len(q), min(k, len(p))))[:, 0]
    order = np.argsort(p, kind="stable")
    if sort_p:
        p.sort(kind="stable")  # the same values in the same places as p[order]: both sorts are stable
        ps = p
    else:
        ps = p[order]
    pos = np.searchsorted(ps, q)
    left = np.abs(q - ps[np.clip(pos - 1, 0, len(ps) - 1)])
    right = np.abs(ps[np.clip(pos, 0, len(ps) - 1)] - q)
    left[pos == 0], right[pos == len(ps)] = np.inf, np.inf
    best = np.minimum(left, right)
    tol = 1e-12 + 1e-12 * best  # the search's tie rule: np.isclose(distance, best, rtol=1e-12, atol=1e-12)
    lo1, hi1 = np.searchsorted(ps, q - best - tol, "left"), np.searchsorted(ps, q - best + tol, "right")
    lo2, hi2 = np.searchsorted(ps, q + best - tol, "left"), np.searchsorted(ps, q + best + tol, "right")
    overlap = lo2 <= hi1  # the two runs of tied values touch (best ~ 0): one run
    hi1 = np.where(overlap, np.maximum(hi1, hi2), hi1)
    lo2, hi2 = np.where(overlap, hi1, lo2), np.where(overlap, hi1, hi2)
    n1, count = hi1 - lo1, (hi1 - lo1) + (hi2 - lo2)
    draw = np.minimum((keys * count).astype(np.int64), count - 1)
    return order[np.where(draw < n1, lo1 + draw, lo2 + draw - n1)]


#: sorted k-NN distance profiles of recent attacker pools: the pool is the same for every candidate of a
#: sweep, so its profile is found once (keyed by the pool's bytes, never by identity)
_PROFILE_CACHE: dict[tuple[str, int], np.ndarray] = {}
_PROFILE_CACHE_SIZE = 4


def _pool_profile(Za: np.ndarray, k: int) -> np.ndarray:
    """Each pool row's sorted distances to its ``k`` nearest other rows (a read-only array, shared)."""
    import hashlib

    key = (hashlib.blake2b(np.ascontiguousarray(Za).data, digest_size=16).hexdigest() + str(Za.shape), k)
    hit = _PROFILE_CACHE.get(key)
    if hit is None:
        hit = np.sort(nearest_neighbors(Za, Za, k, exclude_self=True, return_distance=True)[1], axis=1)
        hit.flags.writeable = False
        while len(_PROFILE_CACHE) >= _PROFILE_CACHE_SIZE:
            _PROFILE_CACHE.pop(next(iter(_PROFILE_CACHE)))
        _PROFILE_CACHE[key] = hit
    return hit


def _rate(pick: np.ndarray, truth: np.ndarray) -> float:
    return float(np.mean(pick == truth)) if len(truth) else 0.0


def combination_codes(orig: np.ndarray, rel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of the rows' value combinations (values compared as text), in order of first appearance
    in the original, shared between the two tables (-1: not in the original).

    Built a column at a time, the partial combinations renumbered after each column: codes stay below the
    number of records, and a million rows cost a few code vectors, not text copies and tuples.
    """
    from pandas import Index, factorize

    from ppdm.attacks.uniques import HASH_HINT, text_codes

    if orig.shape[1] == 0:
        return np.zeros(len(orig), dtype=np.int64), np.zeros(len(rel), dtype=np.int64)
    ko, kr, _ = text_codes(orig[:, 0], rel[:, 0])
    ko, kr = ko.astype(np.int64), kr.astype(np.int64)
    for j in range(1, orig.shape[1]):
        co, cr, k = text_codes(orig[:, j], rel[:, j])
        ko, uniq = factorize(ko * k + co, size_hint=min(len(ko), HASH_HINT))
        # a released row absent from the original on any column so far stays absent
        kr = np.where((kr < 0) | (cr < 0), -1, Index(uniq).get_indexer(np.maximum(kr, 0) * k + np.maximum(cr, 0)))
        ko = ko.astype(np.int64, copy=False)
    # held while the attack runs: codes are below the number of records, so row-number sized
    return ko.astype(row_dtype(len(ko)), copy=False), kr.astype(np.int64, copy=False)


def uniqueness(codes: np.ndarray) -> dict[str, Any]:
    """Share of records unique on a combination, and the k-anonymity level (smallest group)."""
    codes = np.asarray(codes)
    if codes.size and codes.min() >= 0:  # codes from 0 (as combination_codes gives): counted, not sorted
        counts = np.bincount(codes)
        present = counts[counts > 0]
        # each record's group looked up as "is it alone", not as its count: a byte a record, not eight
        return {"unique_share": float(np.mean((counts == 1)[codes])), "k_anonymity": int(present.min()),
                "n_groups": int(len(present))}
    _, counts = np.unique(codes, return_counts=True)
    per_record = counts[np.searchsorted(np.unique(codes), codes)]
    return {"unique_share": float(np.mean(per_record == 1)), "k_anonymity": int(counts.min()),
            "n_groups": int(len(counts))}


def population_linkage(
    X: np.ndarray,
    Y: np.ndarray,
    rng: np.random.Generator,
    *,
    rows: np.ndarray | None = None,
    targets: np.ndarray | None = None,
    categories: tuple[np.ndarray, np.ndarray] | None = None,
    mechanism: dict[str, Any] | None = None,
    spaces: frozenset[str] | None = None,
) -> dict[str, Any]:
    """Re-identification rates of the population attacker, one per space.

    Parameters
    ----------
    X, Y : original and release, rows aligned (row i of Y belongs to record i).
    rng : random generator for tie-breaking and the matching's row order.
    rows : the original records the attacker holds (None: all of them).
    targets : released rows attacked (None: every row of ``rows``); the candidate pool is always all
        of ``rows``, never a sample (a smaller pool would make linkage easier, not harder).
    categories : the passed-through columns of the original and of the release (same rows as X, Y),
        for the mixed-row linkage.
    mechanism : the published mechanism (``method``, ``params``, ``preprocess``); for multiplicative noise the
        likelihood-optimal linkage uses its published sigma.
    spaces : the spaces to measure (None: all); :data:`FIRST_SPACES` are the cheap ones a sweep's first pass
        uses to reject a candidate early (a subset can only find less than all of them).
    """
    def want(space: str) -> bool:
        return spaces is None or space in spaces

    n = X.shape[0]
    # the pool's rows (None: every row, with no row-length vector of their numbers)
    pool = None if rows is None else np.sort(np.asarray(rows, dtype=np.int64))
    n_pool = n if pool is None else len(pool)
    tgt = (np.arange(n) if pool is None else pool) if targets is None else np.asarray(targets, dtype=np.int64)
    pz = _Pool(X, pool)
    mu, sd = pz.mu, pz.sd
    same = Y.shape[1] == X.shape[1]
    rates: dict[str, float] = {}
    details: dict[str, Any] = {}
    # position of each target's own record in the pool (the truth)
    where = tgt if pool is None else np.searchsorted(pool, tgt)
    if same:
        Zt = (Y[tgt] - mu) / sd
        finite = np.isfinite(Zt).all(axis=1)
        Zt = np.where(np.isfinite(Zt), Zt, 0.0)
        if want("population_z"):
            rates["population_z"] = _rate(np.where(finite, _nearest_in_pool_random_ties(Zt, pz, rng), -1), where)
        if want("norm"):
            # distance to the population centre (rotations and orthonormal maps about the centre keep it)
            rates["norm"] = _rate(_nearest_1d_random_ties(np.linalg.norm(Zt, axis=1), pz.norms(), rng,
                                                          sort_p=True), where)
        if want("profile") and n_pool > PROFILE_K + 1 and n_pool <= MAX_PROFILE_ROWS:
            k = PROFILE_K
            Zb_all = ((Y if pool is None else Y[pool]) - mu) / sd
            Zb_all = np.where(np.isfinite(Zb_all), Zb_all, 0.0)
            da = _pool_profile(pz.whole(), k)
            db = np.sort(nearest_neighbors(Zb_all, Zb_all, k, exclude_self=True, return_distance=True)[1], axis=1)
            rates["profile"] = _rate(_nearest_random_ties(db[where], da, rng), where)
        published = mechanism or {}
        if want("multiplicative") and published.get("method") == "mult-noise" \
                and published.get("preprocess") == "zscore":
            sigma = float(published.get("params", {}).get("sigma", 0.1))
            rates["multiplicative"] = _rate(_multiplicative_pick(pz, Zt, sigma), where)
        # one-to-one matching (exact on a small table, on each row's near records beyond), for a pool held whole
        if not want("assignment"):
            pass
        elif n_pool <= MAX_PROFILE_ROWS:
            pick, how = one_to_one(Zt, pz.whole(), rng)
            rates["assignment"] = _rate(np.where(finite, pick, -1), where)
            details["assignment"] = how
        else:
            details["assignment"] = f"not run: a pool of {n_pool:,} records is beyond the matching's graph"
    elif want("profile") and n_pool > PROFILE_K + 1 and n_pool <= MAX_PROFILE_ROWS:
        # a release with its own columns (an embedding): only distances compare, each table in units of its
        # own median nearest-neighbour distance
        k = PROFILE_K
        Yp = Y if pool is None else Y[pool]
        Yp = np.where(np.isfinite(Yp), Yp, 0.0)
        da = _pool_profile(pz.whole(), k) / 1.0  # a private copy, scaled below
        db = np.sort(nearest_neighbors(Yp, Yp, k, exclude_self=True, return_distance=True)[1], axis=1)
        da /= max(float(np.median(da[:, 0])), 1e-12)
        db /= max(float(np.median(db[:, 0])), 1e-12)
        rates["profile"] = _rate(_nearest_random_ties(db[where], da, rng), where)
    if want("mixed") and categories is not None and categories[0].shape[1] > 0:
        from ppdm.attacks.uniques import special_uniques

        cats_pool, cats_tgt = categories[0] if pool is None else categories[0][pool], categories[1][tgt]
        co, cr = combination_codes(cats_pool, cats_tgt)
        details.update(uniqueness(co))
        details["special_uniques"] = special_uniques(cats_pool, cats_tgt, own=where)
        rates["mixed"] = _rate(_mixed_pick(pz, (Y[tgt] - mu) / sd if same else None, co, cr, rng), where)
    return {"rates": rates, "chance": 1.0 / max(n_pool, 1), "n_attacker_records": int(n_pool),
            "n_targets": int(len(tgt)), **details}


def _multiplicative_pick(pool: _Pool, Zt: np.ndarray, sigma: float, chunk: int = 256) -> np.ndarray:
    """Most likely record under ``b = a * e``, ``e ~ N(1, sigma^2)`` per value (ppdm's multiplicative noise on
    z-scores): minimise ``sum (b - a)^2 / (2 sigma^2 a^2) + log |a|`` over the records (a block of the pool
    at a time; the first record wins among equals)."""
    best = np.full(len(Zt), np.inf)
    pick = np.zeros(len(Zt), dtype=np.int64)
    for start in range(0, pool.n, POOL_BLOCK):
        Za = pool.take(slice(start, start + POOL_BLOCK))
        a = np.where(np.abs(Za) < 1e-6, 1e-6, Za)
        inv = 1.0 / (2.0 * max(sigma, 1e-12) ** 2 * a * a)           # block x m
        const = np.log(np.abs(a)).sum(axis=1) + ((a * a) * inv).sum(axis=1)
        a_inv = a * inv
        for s in range(0, len(Zt), chunk):
            B = Zt[s:s + chunk]
            # sum_j (b_j - a_j)^2 inv_j = b^2 . inv - 2 b . (a inv) + a^2 . inv, as three products
            cost = (B * B) @ inv.T - 2.0 * B @ a_inv.T + const[None, :]
            j = cost.argmin(axis=1)
            c = cost[np.arange(len(B)), j]
            closer = c < best[s:s + chunk]
            best[s:s + chunk][closer] = c[closer]
            pick[s:s + chunk][closer] = j[closer] + start
        del Za, a, inv, a_inv  # the block's arrays go before the next block's are made
    return pick


#: at most this many combinations among the targets: their records are found by a pass over the codes each
_FEW_GROUPS = 32


def _mixed_pick(pool: _Pool, Zt: np.ndarray | None, co: np.ndarray, cr: np.ndarray,
                rng: np.random.Generator) -> np.ndarray:
    """For each target: the nearest record (numeric, population z) among those sharing its categories."""
    pick = np.full(len(cr), -1, dtype=np.int64)
    groups = np.unique(cr)
    # the records of a few combinations are found by a pass each; of many, by one stable sort of every code
    few = len(groups) <= _FEW_GROUPS
    if not few:
        order = np.argsort(co, kind="stable")
        starts = np.searchsorted(co[order], np.arange(co.max() + 2 if len(co) else 1))
    for g in groups:
        t = np.flatnonzero(cr == g)
        cand = np.zeros(0, dtype=np.int64) if g < 0 else (
            np.flatnonzero(co == g) if few else order[starts[g]:starts[g + 1]])
        if len(cand) == 0:
            cand = np.arange(len(co))  # a combination the original lacks: every record, in row order
        if Zt is None or Zt.shape[1] == 0:
            pick[t] = cand[rng.integers(0, len(cand), size=len(t))]
            continue
        Q = np.where(np.isfinite(Zt[t]), Zt[t], 0.0)
        pick[t] = cand[_nearest_in_pool_random_ties(Q, pool, rng, positions=cand)]
    return pick
