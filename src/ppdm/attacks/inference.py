"""Attribute inference and l-diversity: what a release tells about a person's sensitive column.

The attacker knows a person's quasi-identifiers and holds the public release. They learn a model of the
sensitive column from the release (quasi-identifiers -> sensitive value) and apply it to the person. The
control is the same model applied to people who are *not* in the release: what it gets right there, the
population already tells; what it gets right beyond that for the people in the release is what the
release discloses about them.

l-diversity counts, in the release, the distinct sensitive values among the records that share a
combination of the categorical quasi-identifiers: a group with one value tells its value to anyone who
can place a person in the group.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["attribute_inference", "l_diversity"]


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
