"""Significance tests for comparing releases (Demsar 2006): Friedman, Nemenyi, paired t-tests.

``friedman`` ranks the methods per dataset (1 = best, ties get the average rank) and tests that all are
equal; ``nemenyi_cd`` is the critical difference ``q_alpha sqrt(k (k + 1) / (6 N))`` of the average
ranks; ``cd_diagram`` draws the usual diagram (matplotlib, imported lazily).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ppdm.exceptions import InputError, ParameterError

__all__ = ["average_ranks", "friedman", "nemenyi_q", "nemenyi_cd", "cd_diagram", "paired_ttest"]

# Demsar (2006) Table 5(a): two-tailed Nemenyi critical values q_alpha (studentized range / sqrt 2)
_Q = {
    0.05: (1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164),
    0.10: (1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920),
}


def average_ranks(scores: np.ndarray, *, higher_is_better: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Per-dataset ranks (rows: datasets, columns: methods; ties averaged) and their column means."""
    from scipy.stats import rankdata

    S = np.asarray(scores, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] < 2 or S.shape[1] < 2:
        raise InputError("scores must be a datasets x methods table with at least 2 of each")
    R = rankdata(-S if higher_is_better else S, axis=1, method="average")
    return R, R.mean(axis=0)


def friedman(scores: np.ndarray, *, higher_is_better: bool = True) -> dict[str, Any]:
    """Friedman test: average ranks, chi^2_F (tie-corrected), its p-value and the Iman-Davenport F statistic."""
    from scipy.stats import chi2, f

    R, avg = average_ranks(scores, higher_is_better=higher_is_better)
    N, k = R.shape
    chi = 12 * N / (k * (k + 1)) * (float((avg**2).sum()) - k * (k + 1) ** 2 / 4)
    # tie correction: divide by 1 - sum(t^3 - t) / (N k (k^2 - 1)) over the groups of tied ranks
    ties = sum(float((c**3 - c).sum()) for c in (np.unique(row, return_counts=True)[1] for row in R))
    chi /= 1.0 - ties / (N * k * (k * k - 1))
    den = N * (k - 1) - chi
    ff = (N - 1) * chi / den if den > 0 else float("inf")
    return {"ranks": R.tolist(), "average_ranks": avg.tolist(), "chi2": chi, "p_value": float(chi2.sf(chi, k - 1)),
            "iman_davenport_f": ff,
            "iman_davenport_p": float(f.sf(ff, k - 1, (k - 1) * (N - 1))) if np.isfinite(ff) else 0.0}


def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """Critical value q_alpha for k methods (table for k <= 10, studentized range beyond)."""
    if k < 2:
        raise ParameterError("the Nemenyi test needs at least 2 methods")
    if alpha in _Q and k <= 10:
        return _Q[alpha][k - 2]
    from scipy.stats import studentized_range

    return float(studentized_range.ppf(1 - alpha, k, 1e6) / np.sqrt(2))


def nemenyi_cd(k: int, n_datasets: int, alpha: float = 0.05) -> float:
    """Critical difference of average ranks: ``q_alpha sqrt(k (k + 1) / (6 N))``."""
    return nemenyi_q(k, alpha) * float(np.sqrt(k * (k + 1) / (6.0 * n_datasets)))


def cd_diagram(average: Sequence[float], names: Sequence[str], cd: float, path: str | os.PathLike[str],
               *, title: str = "") -> None:
    """Write a critical-difference diagram (PNG): methods on a rank axis, cliques joined by bars."""
    import matplotlib

    matplotlib.use("Agg")
    # column names are data: shown as plain text, never parsed as TeX math (a "$" cannot break a plot)
    matplotlib.rcParams["text.parse_math"] = False
    import matplotlib.pyplot as plt

    from ppdm.data.io import atomic_write

    avg = np.asarray(average, dtype=float)
    order = np.argsort(avg)
    k = len(avg)
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.3 * k))
    ax.set_xlim(0.5, k + 0.5)
    ax.set_ylim(-k - 1, 2)
    ax.hlines(0, 1, k, color="black")
    for r in range(1, k + 1):
        ax.vlines(r, 0, 0.2, color="black")
        ax.text(r, 0.35, str(r), ha="center")
    ax.hlines(1.3, 1, 1 + cd, color="red", linewidth=2)
    ax.text(1 + cd / 2, 1.5, f"CD = {cd:.2f}", ha="center", color="red")
    for i, j in enumerate(order):
        yv = -(i + 1)
        ax.plot([avg[j], avg[j]], [0, yv], color="grey", linewidth=0.8)
        ax.text(avg[j], yv - 0.1, f"{names[j]} ({avg[j]:.2f})", ha="center", va="top", fontsize=8)
    # cliques: maximal runs of methods whose rank spread is below the CD
    s = avg[order]
    level = 0
    for a in range(k):
        b = a
        while b + 1 < k and s[b + 1] - s[a] < cd:
            b += 1
        if b > a and (a == 0 or s[b] - s[a - 1] >= cd):
            ax.hlines(-0.3 - 0.25 * level, s[a] - 0.05, s[b] + 0.05, color="black", linewidth=3)
            level += 1
    ax.axis("off")
    if title:
        ax.set_title(title)
    with atomic_write(path) as f:
        fig.savefig(f, format="png", dpi=120, bbox_inches="tight")
    plt.close(fig)


def paired_ttest(a: Sequence[float], b: Sequence[float]) -> dict[str, float]:
    """Two-sided paired t-test over repeated trials (mean difference a - b, t, p)."""
    from scipy.stats import ttest_rel

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) != len(y) or len(x) < 2:
        raise InputError("a paired t-test needs two equally long series of at least 2 trials")
    d = x - y
    if np.allclose(d, d[0]):
        return {"mean_difference": float(d.mean()), "t": float("nan"), "p_value": 1.0 if d[0] == 0 else 0.0,
                "n": int(len(d))}
    res = ttest_rel(x, y)
    return {"mean_difference": float(d.mean()), "t": float(res.statistic), "p_value": float(res.pvalue),
            "n": int(len(d))}
