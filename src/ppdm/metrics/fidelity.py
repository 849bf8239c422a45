"""How closely a release keeps each column's distribution and each pair of columns' association.

Marginals: the Kolmogorov-Smirnov statistic for numbers and the total variation distance for categories
(both 0 when the distributions are equal, 1 at most). Pairs: the association of every pair of columns in
each table, on one scale from 0 to 1 (absolute Pearson correlation for two numbers, Cramer's V for two
categorical columns, the correlation ratio for a number and a category), and its change.

Row order does not matter: each table is summarised on its own, so a shuffled, pseudonymous release is
compared as it is published. Only aggregates are returned, never rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["marginal_fidelity", "association_matrix", "fidelity"]

_MAX_ROWS = 20_000  # a seeded sample of each table above this (said in the result)


def _ks(a: np.ndarray, b: np.ndarray) -> float:
    from scipy.stats import ks_2samp

    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    # the statistic is what is reported; the asymptotic p-value avoids exact-method warnings
    return float(ks_2samp(a, b, method="asymp").statistic) if a.size and b.size else float("nan")


def _tv(a: pd.Series, b: pd.Series) -> float:
    p = a.dropna().astype(str).value_counts(normalize=True)
    q = b.dropna().astype(str).value_counts(normalize=True)
    return float(0.5 * p.sub(q, fill_value=0.0).abs().sum())


def _numbers(s: pd.Series) -> np.ndarray:
    from ppdm.data.columns import parse_dates
    from ppdm.data.schema import parse_numbers

    if pd.api.types.is_numeric_dtype(s):
        return s.to_numpy(dtype=np.float64, na_value=np.nan)
    num = parse_numbers(s)
    if num.notna().sum() >= 0.5 * s.notna().sum():
        return num.to_numpy()
    days = (parse_dates(s) - pd.Timestamp("1970-01-01")) / pd.Timedelta(days=1)
    return days.to_numpy(dtype=np.float64, na_value=np.nan)


def marginal_fidelity(original: pd.DataFrame, release: pd.DataFrame, numeric: Sequence[str],
                      categorical: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per column: ``{"measure": "ks" | "tv", "value": float}`` (0 = the same distribution)."""
    out: dict[str, dict[str, Any]] = {}
    for c in numeric:
        out[c] = {"measure": "ks", "value": _ks(_numbers(original[c]), _numbers(release[c]))}
    for c in categorical:
        out[c] = {"measure": "tv", "value": _tv(original[c], release[c])}
    return out


def _cramers_v(a: tuple[np.ndarray, int], b: tuple[np.ndarray, int]) -> float:
    """Cramer's V of two categorical columns given as (codes, number of categories), every code present."""
    (ca, ka), (cb, kb) = a, b
    if min(ka, kb) < 2:
        return 0.0
    # the contingency table by one bincount of the code pairs (a crosstab per pair took most of a report)
    table = np.bincount(ca * kb + cb, minlength=ka * kb).reshape(ka, kb).astype(np.float64)
    n = table.sum()
    expected = table.sum(1, keepdims=True) * table.sum(0, keepdims=True) / n
    chi2 = float(((table - expected) ** 2 / np.where(expected > 0, expected, 1.0)).sum())
    return float(np.sqrt(chi2 / (n * (min(table.shape) - 1))))


def _eta(x: np.ndarray, groups: tuple[np.ndarray, int]) -> float:
    """The correlation ratio of a number and a categorical column given as (codes, number of categories)."""
    codes, k = groups
    ok = np.isfinite(x)
    x, codes = x[ok], codes[ok]
    if x.size < 2 or np.var(x) == 0:
        return 0.0
    size = np.bincount(codes, minlength=k).astype(np.float64)
    held = size > 0
    means = np.bincount(codes, weights=x, minlength=k)[held] / size[held]
    between = float((size[held] * (means - x.mean()) ** 2).sum())
    return float(np.sqrt(between / (np.var(x) * x.size)))


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 3 or np.std(a[ok]) == 0 or np.std(b[ok]) == 0:
        return 0.0
    return float(abs(np.corrcoef(a[ok], b[ok])[0, 1]))


def _codes(values: np.ndarray) -> tuple[np.ndarray, int]:
    codes, uniques = pd.factorize(values)
    return codes.astype(np.int64), len(uniques)


def association_matrix(df: pd.DataFrame, numeric: Sequence[str], categorical: Sequence[str]) -> np.ndarray:
    """Association of every pair of columns (numbers first, then categories), each on a 0-1 scale."""
    cols = [*numeric, *categorical]
    nums = {c: _numbers(df[c]) for c in numeric}
    cats = {c: _codes(df[c].astype(str).where(df[c].notna(), "<missing>").to_numpy()) for c in categorical}
    A = np.eye(len(cols))
    for i, a in enumerate(cols):
        for j in range(i + 1, len(cols)):
            b = cols[j]
            if a in nums and b in nums:
                v = _pearson(nums[a], nums[b])
            elif a in cats and b in cats:
                v = _cramers_v(cats[a], cats[b])
            else:
                x, g = (nums[a], cats[b]) if a in nums else (nums[b], cats[a])
                v = _eta(x, g)
            A[i, j] = A[j, i] = v
    return A


def fidelity(original: pd.DataFrame, release: pd.DataFrame, numeric: Sequence[str], categorical: Sequence[str],
             *, seed: int = 0) -> dict[str, Any]:
    """Marginal and pairwise fidelity of a release (a seeded sample of each table above 20,000 rows)."""
    note = None
    if max(len(original), len(release)) > _MAX_ROWS:
        rng = np.random.default_rng(seed)
        original = original.iloc[np.sort(rng.choice(len(original), min(_MAX_ROWS, len(original)), replace=False))]
        release = release.iloc[np.sort(rng.choice(len(release), min(_MAX_ROWS, len(release)), replace=False))]
        note = f"seeded samples of {_MAX_ROWS} rows of each table"
    marg = marginal_fidelity(original, release, numeric, categorical)
    A, B = association_matrix(original, numeric, categorical), association_matrix(release, numeric, categorical)
    diff = np.abs(A - B)
    off = diff[~np.eye(len(diff), dtype=bool)]
    values = [v["value"] for v in marg.values() if np.isfinite(v["value"])]
    return {
        "marginal": marg,
        "mean_marginal_distance": float(np.mean(values)) if values else None,
        "pairwise": {"columns": [*numeric, *categorical], "original": A.tolist(), "release": B.tolist(),
                     "difference": diff.tolist(),
                     "mean_abs_difference": float(off.mean()) if off.size else 0.0,
                     "max_abs_difference": float(off.max()) if off.size else 0.0},
        **({"sample": note} if note else {}),
    }
