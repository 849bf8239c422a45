"""Linkability: can two sources about the same person be joined through the release?

The attacker holds two disjoint sets of a person's columns from two other sources (auxiliary sets A and B)
and looks each of them up in the release: the released row nearest on A, the one nearest on B (Gower-type
distance, :mod:`ppdm.attacks.mixed`). When both are the same released row, the two sources are linked to
each other (the Article 29 Working Party's linkability, measured as anonymeter's LinkabilityEvaluator
measures it). The attack is run on people in the release (``main``) and on real people outside it
(``control``, linked by resemblance alone); the risk is the excess (:func:`ppdm.attacks._excess.excess`).
With ``n_neighbors`` the looser success is also reported: the two sets of nearest distinct released rows
intersect (identical rows, the copies of a microaggregated group, count once).

The columns may be split in many ways. The default splits are anonymeter's usual one (the columns but the
label, in table order, first half and second half) and a few seeded random halvings of every column; the
risk is the worst split's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ppdm.attacks._excess import excess
from ppdm.attacks.mixed import (
    GowerTerms,
    MixedTable,
    check_same_columns,
    column_ranges,
    distinct_rows,
    k_smallest,
    sample_rows,
    summed,
)
from ppdm.exceptions import ParameterError

__all__ = ["linkability", "default_splits"]

Split = tuple[tuple[str, ...], tuple[str, ...]]


def default_splits(table: MixedTable, *, rng: np.random.Generator, label: str | None = None,
                   n_random: int = 3) -> list[Split]:
    """anonymeter's usual split (the columns but ``label`` in table order, halved; when there are two or more)
    and ``n_random`` seeded random halvings of every column; each distinct split once."""
    every = list(table.columns)
    if len(every) < 2:
        raise ParameterError("linkability needs at least two columns to split between sources")
    cols = [c for c in every if c != label]
    out: list[Split] = []
    seen = set()
    if len(cols) >= 2:
        half = len(cols) // 2
        out.append((tuple(cols[:half]), tuple(cols[half:])))
        seen.add(frozenset((frozenset(out[0][0]), frozenset(out[0][1]))))
    for _ in range(n_random):
        perm = [every[i] for i in rng.permutation(len(every))]
        a, b = tuple(perm[: len(perm) // 2]), tuple(perm[len(perm) // 2:])
        key = frozenset((frozenset(a), frozenset(b)))
        if key not in seen:
            seen.add(key)
            out.append((a, b))
    return out


def _check_split(split: Split, table: MixedTable) -> None:
    a, b = split
    if not a or not b:
        raise ParameterError("each linkability split needs columns on both sides")
    if set(a) & set(b):
        raise ParameterError(f"column '{sorted(set(a) & set(b))[0]}' is on both sides of a linkability split; "
                             "the two sources must hold disjoint columns")
    table.locate(list(a) + list(b))


def linkability(
    release: MixedTable,
    members: MixedTable,
    control: MixedTable,
    *,
    rng: np.random.Generator,
    splits: Sequence[Split] | None = None,
    n_targets: int | None = 2000,
    label: str | None = None,
    n_random_splits: int = 3,
    n_neighbors: int = 10,
) -> dict[str, Any]:
    """Linkability of the release's members beyond the control, over several splits of the columns.

    Parameters
    ----------
    release, members, control : MixedTable
        The release, the records it was made from, and real records it did not contain (shared codes).
    rng : numpy.random.Generator
        Draws the random splits, the targets and the tie-breaking order.
    splits : sequence of (columns of A, columns of B), optional
        The auxiliary sets to try (default :func:`default_splits`).
    n_targets : int or None, default=2000
        At most this many seeded targets among the members and among the control (None: all).
    label : str, optional
        Left out of anonymeter's usual split (as auditors do).
    n_random_splits : int, default=3
        Random halvings added to the usual split.
    n_neighbors : int, default=10
        The looser success: the ``n_neighbors`` nearest distinct rows on A and on B share one.

    Returns
    -------
    dict
        ``risk``, ``interval``, ``split`` (position of the worst split) and ``columns`` (its two sides);
        ``splits``: per split ``{columns, main, control, risk, risk_raw, interval, n_main, n_control,
        neighbors}`` where ``neighbors`` is the same excess with ``n_neighbors`` nearest rows;
        ``n_neighbors``; ``n_targets`` (``{members, control}``) and ``sampled`` (whether targets were
        sampled).
    """
    check_same_columns(release, members, control)
    if splits is None and len(release.columns) < 2:
        # one column: no two sources hold disjoint parts of it, so nothing can be linked through the release
        # (singling out and re-identification measure what a single column discloses)
        return {"risk": 0.0, "interval": [0.0, 0.0], "not_applicable": "the release has one column: there are no "
                "two sets of columns for two sources to link", "splits": [],
                "n_targets": {"members": 0, "control": 0}}
    chosen = list(splits) if splits is not None else default_splits(release, rng=rng, label=label,
                                                                     n_random=n_random_splits)
    if not chosen:
        raise ParameterError("give at least one linkability split")
    for sp in chosen:
        _check_split(sp, release)
    tm, tc = sample_rows(members, n_targets, rng), sample_rows(control, n_targets, rng)
    queries = MixedTable.concat([members.take(tm), control.take(tc)])
    used = [c for c in release.columns if any(c in a or c in b for a, b in chosen)]
    nc, cc = release.locate(used)
    names = [release.numeric_names[j] for j in nc] + [release.categorical_names[j] for j in cc]
    where = {c: i for i, c in enumerate(names)}
    # identical released rows (a microaggregated group's centroid, released k times) are searched once, each
    # standing for its copies: a source's lookup lands on one of the c copies at random, so the two sources
    # meet on the same row with probability 1/c (one shared tie-breaking order would link every member of the
    # group, an artefact of the row order no attacker has), and ties between distinct rows go to each with
    # the chance its copies give it (the weighted order of GowerTerms)
    distinct, copies = distinct_rows(release)
    pool = release.take(distinct) if len(distinct) < release.n_rows else release
    k = int(min(max(n_neighbors, 1), pool.n_rows))
    terms = GowerTerms(queries, pool, nc, cc, ranges=column_ranges(release, members, control), rng=rng,
                       weights=copies)
    one = np.zeros((len(chosen), queries.n_rows), dtype=bool)
    many = np.zeros_like(one)
    for rows, t in terms.blocks():
        for s, (a, b) in enumerate(chosen):
            da, db = summed(t, [where[c] for c in a]), summed(t, [where[c] for c in b])
            # the searches' columns are the pool's rows in the terms' random order: back to distinct rows
            na, nb = terms.order[k_smallest(da, k)], terms.order[k_smallest(db, k)]
            same = na[:, 0] == nb[:, 0]
            one[s, rows] = same & (rng.random(len(na)) * copies[na[:, 0]] < 1.0)
            many[s, rows] = (na[:, :, None] == nb[:, None, :]).any(axis=(1, 2))
    m = len(tm)
    per_split = []
    for s, (a, b) in enumerate(chosen):
        res = excess(int(one[s, :m].sum()), m, int(one[s, m:].sum()), len(tc))
        res["neighbors"] = excess(int(many[s, :m].sum()), m, int(many[s, m:].sum()), len(tc))
        per_split.append({"columns": [list(a), list(b)], **res})
    worst = max(range(len(chosen)), key=lambda s: per_split[s]["risk"])
    # the worst of several splits measured on the same targets is biased upwards (on 48 control records a
    # release that links no one scored 0.2): each half of the targets names its worst split, which is
    # measured on the other half, and the two halves' counts are pooled (cross-fitted, so unbiased)
    crossed = _cross_fitted(one, m, len(tc), rng)
    return {"risk": crossed["risk"], "interval": crossed["interval"], "split": crossed["split"],
            "columns": per_split[crossed["split"]]["columns"], "in_sample_worst": worst,
            "in_sample_risk": per_split[worst]["risk"], "splits": per_split, "n_neighbors": k,
            "n_targets": {"members": m, "control": len(tc)},
            "sampled": {"members": m < members.n_rows, "control": len(tc) < control.n_rows}}


def _cross_fitted(one: np.ndarray, m: int, n_control: int, rng: np.random.Generator) -> dict[str, Any]:
    """The linkability of the worst split chosen on one half of the targets and counted on the other, both
    ways, pooled: ``one[s, i]`` says whether split ``s`` links target ``i`` (members first, then control)."""
    half = rng.random(one.shape[1]) < 0.5
    picks = []
    for chooser in (half, ~half):
        risks = [excess(int(one[s, :m][chooser[:m]].sum()), max(int(chooser[:m].sum()), 1),
                        int(one[s, m:][chooser[m:]].sum()), max(int(chooser[m:].sum()), 1))["risk"]
                 for s in range(one.shape[0])]
        picks.append(int(np.argmax(risks)))
    main = int(one[picks[0], :m][~half[:m]].sum() + one[picks[1], :m][half[:m]].sum())
    ctrl = int(one[picks[0], m:][~half[m:]].sum() + one[picks[1], m:][half[m:]].sum())
    out = excess(main, m, ctrl, n_control)
    # the split reported: the one both halves chose, else the first half's
    return {**out, "split": picks[0], "picks": picks}

