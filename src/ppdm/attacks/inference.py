"""Attribute inference and l-diversity: what a release tells about a person's sensitive column.

The attacker knows a person's quasi-identifiers and holds the public release. They learn a model of the
sensitive column from the release (quasi-identifiers -> sensitive value) and apply it to the person. The
control is the same model applied to people who are *not* in the release: what it gets right there, the
population already tells; what it gets right beyond that for the people in the release is what the
release discloses about them.

l-diversity counts, in the release, the distinct sensitive values among the records that share a
combination of the categorical quasi-identifiers: a group with one value tells its value to anyone who
can place a person in the group.

:func:`inference_by_column` is the auditors' form of the same question (anonymeter's InferenceEvaluator)
for every column in turn: the attacker knows all of a person's other columns, takes the released row
nearest on them (Gower-type distance, :mod:`ppdm.attacks.mixed`) and reads the secret column off it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ppdm.attacks._excess import excess
from ppdm.attacks.mixed import GowerTerms, MixedTable, check_same_columns, column_ranges, distinct_rows, sample_rows
from ppdm.exceptions import ParameterError

__all__ = ["attribute_inference", "l_diversity", "inference_by_column"]


def _standardise(train: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    mu = train.mean(axis=0)
    sd = train.std(axis=0)
    sd = np.where((sd == 0) | ~np.isfinite(sd), 1.0, sd)
    return [(a - mu) / sd for a in (train, *others)]


def attribute_inference(Q_release: np.ndarray, s_release: np.ndarray, Q_members: np.ndarray, s_members: np.ndarray,
                        Q_others: np.ndarray, s_others: np.ndarray, *, numeric: bool, k: int = 5) -> dict[str, Any]:
    """Success of inferring a sensitive column from the quasi-identifiers, for members and for others.

    Parameters
    ----------
    Q_release, s_release
        The release: its quasi-identifier design and its sensitive column (what the attacker learns from).
    Q_members, s_members
        The true quasi-identifiers and sensitive values of people in the release (the targets).
    Q_others, s_others
        The same for real people not in the release (the control).
    numeric : bool
        A numeric sensitive column: success is the share predicted within +-5 %; otherwise exact matches.

    Returns
    -------
    dict with ``members`` (success on the targets), ``control`` (on the others), ``excess`` (members minus
    control, floored at 0) and ``measure``.
    """
    from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

    k = int(min(k, len(Q_release)))
    Qr, Qm, Qo = _standardise(np.asarray(Q_release, float), np.asarray(Q_members, float), np.asarray(Q_others, float))
    if numeric:
        model = KNeighborsRegressor(k).fit(Qr, np.asarray(s_release, float))

        def score(Q: np.ndarray, s: np.ndarray) -> float:
            s = np.asarray(s, float)
            return float((np.abs(model.predict(Q) - s) <= 0.05 * np.abs(s)).mean()) if len(s) else 0.0
        measure = "share of values inferred within +-5 %"
    else:
        model = KNeighborsClassifier(k).fit(Qr, np.asarray(s_release).astype(str))

        def score(Q: np.ndarray, s: np.ndarray) -> float:
            return float((model.predict(Q) == np.asarray(s).astype(str)).mean()) if len(s) else 0.0
        measure = "share of values inferred exactly"
    from ppdm.utils.threads import openmp_threads_for

    with openmp_threads_for(Qr.size * (len(Qm) + len(Qo))):
        members, control = score(Qm, s_members), score(Qo, s_others)
    return {"measure": measure, "members": members, "control": control, "excess": max(0.0, members - control)}


def l_diversity(qi_categories: np.ndarray, sensitive: np.ndarray) -> dict[str, Any]:
    """Distinct l-diversity of a released sensitive column within groups of equal categorical quasi-identifiers.

    Returns the smallest number of distinct sensitive values in a group (``l``), the share of records in
    groups with a single value (``share_in_uniform_groups``) and the number of groups.
    """
    import pandas as pd

    Q = np.asarray(qi_categories, dtype=object)
    key = pd.Series(["\x1f".join(map(str, row)) for row in Q]) if Q.shape[1] else pd.Series([""] * len(Q))
    frame = pd.DataFrame({"g": key.to_numpy(), "s": pd.Series(np.asarray(sensitive)).astype(str).to_numpy()})
    distinct = frame.groupby("g")["s"].nunique()
    per_row = frame["g"].map(distinct)
    return {"l": int(distinct.min()) if len(distinct) else 0, "groups": int(len(distinct)),
            "share_in_uniform_groups": float((per_row == 1).mean()) if len(per_row) else 0.0}


def _guessed(release: MixedTable, targets: MixedTable, name: str, rows: np.ndarray, tolerance: float) -> np.ndarray:
    """Whether the value of ``name`` in the released ``rows`` is each target's own (numbers: within
    ``tolerance`` of the true value; a gap guessed for a gap counts as right)."""
    if name in release.numeric_names:
        j = release.numeric_names.index(name)
        guess, truth = release.numbers[rows, j], targets.numbers[:, j]
        both_gaps = np.isnan(guess) & np.isnan(truth)
        with np.errstate(invalid="ignore"):
            return both_gaps | (np.abs(guess - truth) <= tolerance * np.abs(truth))
    j = release.categorical_names.index(name)
    return release.codes[rows, j] == targets.codes[:, j]


def inference_by_column(
    release: MixedTable,
    members: MixedTable,
    control: MixedTable,
    *,
    rng: np.random.Generator,
    columns: Sequence[str] | None = None,
    n_targets: int | None = 1000,
    tolerance: float = 0.05,
) -> dict[str, dict[str, Any]]:
    """Inference of each column from all the others through the nearest released row, beyond the control.

    Parameters
    ----------
    release, members, control : MixedTable
        The release, the records it was made from, and real records it did not contain (shared codes).
    rng : numpy.random.Generator
        Draws the targets and the tie-breaking order.
    columns : sequence of str, optional
        The secrets tried in turn (default: every column).
    n_targets : int or None, default=1000
        At most this many seeded targets among the members and among the control (None: all).
    tolerance : float, default=0.05
        A number is inferred when the guess is within this share of the true value, ``|g - x| <= 0.05 |x|``
        (anonymeter's default tolerance; anonymeter divides by the guess instead of the true value).

    Returns
    -------
    dict
        Per secret column: ``main`` and ``control`` (shares of targets whose value is inferred), ``risk``,
        ``risk_raw``, ``interval``, ``n_main``, ``n_control`` (:func:`ppdm.attacks._excess.excess`) and
        ``measure``.
    """
    check_same_columns(release, members, control)
    secrets = list(release.columns) if columns is None else list(columns)
    release.locate(secrets)
    if len(release.columns) < 2:
        raise ParameterError("inference needs at least two columns: the secret and what the attacker knows")
    tm, tc = sample_rows(members, n_targets, rng), sample_rows(control, n_targets, rng)
    targets = MixedTable.concat([members.take(tm), control.take(tc)])
    nc, cc = list(range(release.numbers.shape[1])), list(range(release.codes.shape[1]))
    names = list(release.numeric_names) + list(release.categorical_names)
    # identical released rows (a microaggregated group's row, released k times) are searched once, each
    # standing for its copies in the order of ties (as in the linkability's search): any copy tells the same value
    distinct, copies = distinct_rows(release)
    repeated = len(distinct) < release.n_rows
    terms = GowerTerms(targets, release.take(distinct) if repeated else release, nc, cc,
                       ranges=column_ranges(release, members, control), rng=rng, weights=copies if repeated else None)
    m = terms.n_columns
    nearest = {c: np.empty(targets.n_rows, dtype=np.int64) for c in secrets}
    # prefix and suffix sums: the distance without column p is before[p] + after[p + 1], summed in one order
    # whichever column is left out (equal records tie exactly)
    for rows, t in terms.blocks(terms.block_rows() // 3 or 1):
        before = np.zeros((m + 1,) + t.shape[1:], dtype=np.float32)
        after = np.zeros_like(before)
        for i in range(m):
            np.add(before[i], t[i], out=before[i + 1])
            np.add(after[m - i], t[m - 1 - i], out=after[m - 1 - i])
        for c in secrets:
            p = names.index(c)
            nearest[c][rows] = distinct[terms.order[(before[p] + after[p + 1]).argmin(axis=1)]]
    n_m = len(tm)
    out = {}
    for c in secrets:
        ok = _guessed(release, targets, c, nearest[c], tolerance)
        res = excess(int(ok[:n_m].sum()), n_m, int(ok[n_m:].sum()), len(tc))
        res["measure"] = (f"share of values inferred within +-{100 * tolerance:g} %" if c in release.numeric_names
                          else "share of values inferred exactly")
        out[c] = res
    return out
