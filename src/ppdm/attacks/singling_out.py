"""Singling out: does a predicate built from the release alone isolate one real person?

The attacker reads the release and writes predicates that hold for exactly one released row ("age >= 90
and native-country == Holand"). Where such a predicate also holds for exactly one of the people the release
was made from, that person is singled out; the same predicate isolating exactly one of the real people
outside the release (the control) measures what the population's own rarity gives away. Three families of
predicates are drawn from the (deduplicated) release, as anonymeter draws the first two:

- **univariate**: per column, ``isna`` when exactly one released row has a gap there, ``x <= min`` and
  ``x >= max`` for numbers, and ``x == v`` for every value held by exactly one released row;
- **multivariate**: a random released row and ``n_cols`` random columns; a number gives ``>=`` its value
  when above the released column's median and ``<=`` otherwise, a category ``==``, a gap ``isna``;
- **targeted**: the same conditions, on the columns where the row is most unusual (its rarest categories
  and its numbers in the thinnest tails: the fewest released rows at least as extreme), for the rows most
  unusual in the release first. These are the predicates that find a copied rare or extreme value.

A predicate is kept when it isolates exactly one released row. Each family is scored on the deduplicated
members and control: ``main`` and ``control`` are the shares of its predicates that isolate exactly one
record there, and the risk is their excess (:func:`ppdm.attacks._excess.excess`), the control's successes
scaled as anonymeter scales them when the control is smaller (:func:`control_scale`).

Predicates are counted vectorised (:mod:`ppdm.attacks._predicates`): one-column predicates by binary search
in sorted columns, conjunctions with bitsets of the records meeting each condition.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ppdm.attacks._excess import excess
from ppdm.attacks._predicates import TOP, ColumnIndex, Predicates, count_matches
from ppdm.attacks.mixed import MixedTable, check_same_columns
from ppdm.exceptions import InputError, ParameterError

__all__ = ["singling_out", "control_scale", "univariate_predicates", "multivariate_predicates",
           "targeted_predicates"]

FAMILIES = ("univariate", "multivariate", "targeted")


def _conditions(values: np.ndarray, numeric: np.ndarray, medians: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """anonymeter's condition on a released cell: gap -> isna; number -> ``>=`` above the median, else
    ``<=``; category -> ``==``."""
    gap = np.isinf(values)
    above = numeric & ~gap & (values > medians)
    below = numeric & ~gap & ~above
    low = np.where(below, -np.inf, values)
    high = np.where(above, TOP, values)
    return low, high


def univariate_predicates(index: ColumnIndex, numeric: np.ndarray, *, rng: np.random.Generator,
                          n: int) -> tuple[Predicates, int]:
    """anonymeter's univariate predicates on a deduplicated release, those isolating one released row.

    Parameters
    ----------
    index : ColumnIndex
        The deduplicated release's :meth:`MixedTable.values`, indexed.
    numeric : ndarray of bool, shape (m,)
        Which columns are numeric (they also get ``<= min`` and ``>= max``).
    rng : numpy.random.Generator
        Shuffles the predicates before the first ``n`` isolating ones are kept.
    n : int
        At most this many predicates.

    Returns
    -------
    The isolating predicates (at most ``n``) and the number of candidates they were drawn from.
    """
    S = index.sorted
    columns = [_column_candidates(S[:, j], bool(numeric[j])) for j in range(S.shape[1])]
    sizes = np.array([len(low) for low, _ in columns], dtype=np.int64)
    total = int(sizes.sum())
    if total == 0:
        return Predicates(np.zeros((0, 1), int), np.zeros((0, 1)), np.zeros((0, 1))), 0
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    lows = np.concatenate([low for low, _ in columns])
    heads = [(int(s0), high) for s0, (_, high) in zip(starts, columns, strict=True)]
    del columns
    # the candidates in a random order, counted a chunk at a time until n isolate one released row (a
    # million-row release has millions of candidates; the few hundred kept are found in the first chunks)
    order = rng.permutation(total)
    chunk = max(1024, 2 * n)
    kept: list[Predicates] = []
    found = 0
    for s0 in range(0, total, chunk):
        at = order[s0:s0 + chunk]
        col = np.searchsorted(starts, at, side="right") - 1
        low = lows[at]
        high = low.copy()
        for j in np.unique(col):
            first, head_high = heads[j]
            head = (col == j) & (at - first < len(head_high))
            high[head] = head_high[at[head] - first]
        preds = Predicates(col[:, None], low[:, None], high[:, None])
        single = np.flatnonzero(count_matches(index, preds) == 1)[: n - found]
        kept.append(preds.take(single))
        found += len(single)
        if found >= n:
            break
    return Predicates(*(np.concatenate([getattr(p, a) for p in kept]) for a in ("columns", "low", "high"))), total


def _column_candidates(col: np.ndarray, numeric: bool) -> tuple[np.ndarray, np.ndarray]:
    """One sorted column's univariate candidates, in order: ``isna`` when exactly one row has a gap, ``<= min``
    and ``>= max`` for a number, then ``== v`` for every value held by exactly one row (ascending). Returns
    every candidate's lower end and the upper ends of the first ones (those not ``==``)."""
    n_gap = int(np.isinf(col).sum())
    vals = col[: len(col) - n_gap]
    low: list[float] = []
    high: list[float] = []
    if n_gap == 1:
        low.append(np.inf)
        high.append(np.inf)
    if numeric and len(vals):
        low += [-np.inf, float(vals[-1])]
        high += [float(vals[0]), TOP]
    once = np.zeros(0)
    if len(vals):
        u, k = np.unique(vals, return_counts=True)
        once = u[k == 1]
    return np.concatenate([np.array(low, dtype=float), once]), np.array(high, dtype=float)


class _Kept:
    """Isolating predicates gathered over batches of attempts, each distinct one once."""

    def __init__(self, n_conditions: int) -> None:
        self.seen: set[bytes] = set()
        self.parts: list[Predicates] = []
        self.size = 0
        self.n_conditions = n_conditions

    def add(self, index: ColumnIndex, preds: Predicates, limit: int) -> None:
        single = np.flatnonzero(count_matches(index, preds) == 1)
        keep = []
        for i in single:
            if self.size + len(keep) >= limit:
                break
            key = preds.columns[i].tobytes() + preds.low[i].tobytes() + preds.high[i].tobytes()
            if key not in self.seen:
                self.seen.add(key)
                keep.append(i)
        if keep:
            self.parts.append(preds.take(np.array(keep)))
            self.size += len(keep)

    def result(self) -> Predicates:
        if not self.parts:
            c = self.n_conditions
            return Predicates(np.zeros((0, c), int), np.zeros((0, c)), np.zeros((0, c)))
        return Predicates(*(np.concatenate([getattr(p, a) for p in self.parts]) for a in ("columns", "low", "high")))


def _medians(V: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        W = np.where(np.isinf(V), np.nan, V)
        out = np.full(V.shape[1], np.nan)
        has = ~np.isnan(W).all(axis=0)
        out[has] = np.nanmedian(W[:, has], axis=0)
    return out


def multivariate_predicates(index: ColumnIndex, numeric: np.ndarray, *, rng: np.random.Generator, n: int,
                            n_cols: int, max_attempts: int) -> tuple[Predicates, int]:
    """anonymeter's multivariate predicates: a random released row on ``n_cols`` random columns.

    Returns the isolating predicates (at most ``n``, each distinct one once) and the attempts made.
    """
    V = index.V
    rows_n, m = V.shape
    medians = _medians(V)
    kept, attempts = _Kept(n_cols), 0
    while kept.size < n and attempts < max_attempts:
        batch = int(min(max_attempts - attempts, max(256, 2 * (n - kept.size))))
        rows = rng.integers(rows_n, size=batch)
        cols = np.sort(np.argsort(rng.random((batch, m)), axis=1)[:, :n_cols], axis=1)
        low, high = _conditions(V[rows[:, None], cols], numeric[cols], medians[cols])
        kept.add(index, Predicates(cols, low, high), n)
        attempts += batch
    return kept.result(), attempts


def _cell_rarity(V: np.ndarray, S: np.ndarray, numeric: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every released cell, the released rows meeting its own rarest condition, and that condition."""
    rows_n, m = V.shape
    count = np.empty((rows_n, m), dtype=np.int64)
    low, high = V.copy(), V.copy()
    for j in range(m):
        col, s = V[:, j], S[:, j]
        left, right = np.searchsorted(s, col, side="left"), np.searchsorted(s, col, side="right")
        gap = np.isinf(col)
        if numeric[j]:
            n_valid = rows_n - int(np.isinf(s).sum())
            le, ge = right, n_valid - left
            down = le <= ge
            count[:, j] = np.where(down, le, ge)
            low[:, j] = np.where(down & ~gap, -np.inf, col)
            high[:, j] = np.where(~down & ~gap, TOP, col)
        else:
            count[:, j] = right - left
        count[gap, j] = int(gap.sum())
    return count, low, high


def targeted_predicates(index: ColumnIndex, numeric: np.ndarray, *, rng: np.random.Generator, n: int, n_cols: int,
                        max_attempts: int) -> tuple[Predicates, int]:
    """Predicates on each released row's most unusual cells, the most unusual rows first.

    A cell's rarity is the number of released rows meeting its condition (its category, its tail at least
    as extreme, its gap); a row's is the product of its ``n_cols`` rarest cells' shares. The first pass
    takes, row by row, the ``n_cols`` rarest cells; each later pass another combination of ``n_cols`` of its
    ``n_cols + 2`` rarest, until every combination was tried, ``n`` predicates isolate, or ``max_attempts``
    were made. Returns the isolating predicates (at most ``n``) and the attempts made.
    """
    V = index.V
    rows_n, m = V.shape
    count, low, high = _cell_rarity(V, index.sorted, numeric)
    # rank cells within a row by rarity, ties at random
    by_rarity = np.lexsort((rng.random((rows_n, m)), count), axis=1) if m > 1 else np.zeros((rows_n, 1), int)
    rarest = np.take_along_axis(count, by_rarity[:, :n_cols], axis=1)
    score = np.log(np.maximum(rarest, 1)).sum(axis=1)
    row_order = np.lexsort((rng.random(rows_n), score))
    wider = by_rarity[:, : min(m, n_cols + 2)]
    # every combination of n_cols of a row's n_cols + 2 rarest cells, one a pass, the rarest n_cols first: a
    # few distinct rows (a microaggregated release) run out of combinations long before the attempts do
    kept, attempts = _Kept(n_cols), 0
    for combo in itertools.combinations(range(wider.shape[1]), min(n_cols, wider.shape[1])):
        if kept.size >= n or attempts >= max_attempts:
            break
        rows = row_order[: max_attempts - attempts]
        cols = np.sort(wider[rows][:, list(combo)], axis=1)
        r = rows[:, None]
        kept.add(index, Predicates(cols, low[r, cols], high[r, cols]), n)
        attempts += len(rows)
    return kept.result(), attempts


def _hits(index: ColumnIndex, preds: Predicates) -> np.ndarray:
    return count_matches(index, preds) == 1


#: the attack's budget of predicates per family (anonymeter's ``n_attacks`` in the auditors' runs)
BUDGET = 300


def control_scale(n_members: int, n_control: int, method: str) -> float:
    """The factor applied to the control's successes before they are compared with the members'.

    ``"anonymeter"``: anonymeter 1.1's correction for a control of another size than the members,
    ``(n_control + 1) / (n_members + 1)``. anonymeter fits a model of singling-out success against table
    size to the control and extrapolates it to the members' size; version 1.1 fits it to the number of
    predicates evaluated instead of the number that isolate a record (``len`` of the tuple of counts), so the
    fit does not depend on the data and ends at that ratio for every pair of sizes (checked against its
    fitting function for controls of 150 to 5,000 records). ``"none"``: 1.
    """
    if method == "none" or n_members == n_control:
        return 1.0
    if method == "anonymeter":
        return (n_control + 1.0) / (n_members + 1.0)
    raise ParameterError(f"control_scale '{method}' is not known; use 'anonymeter' or 'none'")


def _score(preds: Predicates, members: ColumnIndex, control: ColumnIndex, subsets: list[ColumnIndex],
           scale: float, budget: int) -> dict[str, Any]:
    """The family's excess on members and control (the control's successes scaled by ``scale``), the same
    unscaled, and on both at the smaller one's size (``subsets``: random subsets of the larger one); every
    share over the attack's budget, or over the predicates found when there are more."""
    B = max(len(preds), budget)
    hits_m, hits_c = int(_hits(members, preds).sum()), int(_hits(control, preds).sum())
    out = excess(hits_m, B, hits_c * scale, B)
    unscaled = excess(hits_m, B, hits_c, B)
    out["control"] = unscaled["control"]
    out["control_scaled"] = hits_c * scale / B if B else 0.0
    out["unscaled"] = {k: unscaled[k] for k in ("risk", "risk_raw", "interval")}
    shares = {"m": unscaled["main"], "c": unscaled["control"]}
    if B and subsets:
        key = "m" if len(members) > len(control) else "c"
        shares[key] = float(np.mean([_hits(sub, preds).sum() / B for sub in subsets]))
    equal = excess(shares["m"] * B, B, shares["c"] * B, B)
    out["equal_size"] = {**equal, "size": min(len(members), len(control)), "draws": len(subsets)}
    out["n_predicates"] = len(preds)
    out["budget"] = B
    return out


def singling_out(release: MixedTable, members: MixedTable, control: MixedTable, *, rng: np.random.Generator,
                 n_predicates: int = 1000, n_cols: int = 3, max_attempts: int | None = None,
                 equal_size_draws: int = 5, control_scale_method: str = "anonymeter",
                 budget: int = BUDGET) -> dict[str, Any]:
    """Singling out of the release's members beyond the control, in three families of predicates.

    Parameters
    ----------
    release, members, control : MixedTable
        The release, the records it was made from, and real records it did not contain (shared codes).
        Each is deduplicated, as anonymeter does.
    rng : numpy.random.Generator
        Draws the predicates and the equal-size subsets.
    n_predicates : int, default=1000
        At most this many isolating predicates per family.
    n_cols : int, default=3
        Conditions of a multivariate or targeted predicate.
    max_attempts : int, optional
        Predicates tried per family (default 50 x ``n_predicates``).
    equal_size_draws : int, default=5
        Random subsets averaged in the equal-size score.
    budget : int, default=300
        The attack's budget of predicates: a family's shares are taken over this many, or over the predicates
        found when there are more. anonymeter counts its successes over the attacks it was asked for
        (``n_attacks``, 300 in the auditors' runs) however few isolating predicates it found; ppdm counts the
        same way, so that a release where few predicates isolate anyone is not scored on those few alone.
    control_scale_method : {'anonymeter', 'none'}, default='anonymeter'
        How the control's successes are scaled when it is not as large as the members
        (:func:`control_scale`): as anonymeter 1.1 scales them, so that this measure is at least as strict as
        the auditors' tool, or not at all.

    Returns
    -------
    dict
        ``univariate``, ``multivariate``, ``targeted``: each ``{main, control, control_scaled, risk,
        risk_raw, interval, n_main, n_control, unscaled, equal_size, n_predicates, n_attempts}``, where
        ``main`` and ``control`` are the shares of the family's predicates isolating exactly one member and
        exactly one control record, ``control_scaled`` the control's share after scaling, ``risk`` and
        ``interval`` the excess against the scaled control (``risk_raw`` unfloored), ``unscaled`` the same
        against the control as measured, and ``equal_size`` the excess when the larger of members and
        control is scored on random subsets of the smaller one's size (``{main, control, risk, risk_raw,
        interval, size, draws}``). Then ``risk``, ``interval`` and ``family`` (the largest family risk, its
        interval and its name), ``n_predicates`` (per family), ``control_scale`` (``{method, factor}``) and
        ``equal_size`` (``{risk, interval, family, size}``, the largest family's).

    Notes
    -----
    Three readings of the same predicates, which differ when the control is smaller than the members:

    - a predicate built to isolate one of the release's rows isolates one of many members more often than
      one of few control records, even when the release tells nothing about the members. On the adult
      census sample (2,000 members, 600 control records; five splits), a release of 2,000 other people of
      the same population isolates one member with 22-26 % of the multivariate predicates and one control
      record with 13-16 %: an unscaled excess of 0.09-0.14 (``unscaled``);
    - anonymeter 1.1 multiplies the control's successes by 601 / 2,001 (:func:`control_scale`) and scores
      that release at 0.17-0.27 (this measure: 0.19-0.23). ``risk`` follows it by default, so that a release
      this measure accepts is not refused by the auditors' tool;
    - ``equal_size`` scores the same predicates with members and control at the same size: an estimate of
      what the release discloses beyond the population's own rarity (about 0 for that release), diluted:
      the members left out of the subset are not counted, and a predicate isolating a member outside the
      subset counts as a miss.
    """
    check_same_columns(release, members, control)
    if n_predicates < 1 or n_cols < 1:
        raise ParameterError("n_predicates and n_cols must be at least 1")
    attempts_cap = 50 * n_predicates if max_attempts is None else int(max_attempts)
    distinct = release.unique_rows()
    R = release if len(distinct) == release.n_rows else release.take(distinct)  # no copy of a release all distinct
    del distinct
    if R.n_rows == 0:
        raise InputError("the release is empty: there is nothing to single out with")
    index = ColumnIndex(R.values())
    numeric = np.arange(index.V.shape[1]) < R.numbers.shape[1]
    n_cols = min(n_cols, index.V.shape[1])
    Vm = members.take(members.unique_rows()).values()
    Vc = control.take(control.unique_rows()).values()
    im, ic = ColumnIndex(Vm), ColumnIndex(Vc)
    big, size = (Vm, len(Vc)) if len(Vm) > len(Vc) else (Vc, len(Vm))
    subsets = [] if len(Vm) == len(Vc) else [
        ColumnIndex(big[np.sort(rng.choice(len(big), size, replace=False))]) for _ in range(equal_size_draws)]
    uni, uni_candidates = univariate_predicates(index, numeric, rng=rng, n=n_predicates)
    multi, multi_attempts = multivariate_predicates(index, numeric, rng=rng, n=n_predicates, n_cols=n_cols,
                                                    max_attempts=attempts_cap)
    target, target_attempts = targeted_predicates(index, numeric, rng=rng, n=n_predicates, n_cols=n_cols,
                                                  max_attempts=attempts_cap)
    out: dict[str, Any] = {}
    factor = control_scale(len(Vm), len(Vc), control_scale_method)
    for name, preds, tries in (("univariate", uni, uni_candidates), ("multivariate", multi, multi_attempts),
                               ("targeted", target, target_attempts)):
        out[name] = _score(preds, im, ic, subsets, factor, int(budget))
        out[name]["n_attempts"] = int(tries)
    worst = max(FAMILIES, key=lambda f: out[f]["risk"])
    worst_eq = max(FAMILIES, key=lambda f: out[f]["equal_size"]["risk"])
    out.update({
        "risk": out[worst]["risk"], "interval": out[worst]["interval"], "family": worst,
        "n_predicates": {f: out[f]["n_predicates"] for f in FAMILIES},
        "control_scale": {"method": control_scale_method, "factor": factor},
        "equal_size": {"risk": out[worst_eq]["equal_size"]["risk"],
                       "interval": out[worst_eq]["equal_size"]["interval"], "family": worst_eq,
                       "size": out[worst_eq]["equal_size"]["size"]},
    })
    return out
