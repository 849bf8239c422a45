"""Mining utility under the dissertation's protocols, plus sweep statistics.

K-means (Wang 2008 Sec. 2.6, verified protocol): range-normalise the matrix with its own column min
and max (constant column -> 0), run Lloyd's algorithm from the first K rows, and score the labels
against the classes with the best one-to-one matching.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ppdm.exceptions import InputError, ParameterError
from ppdm.metrics.pattern import range_normalize

__all__ = [
    "lloyd_kmeans",
    "matched_accuracy",
    "kmeans_accuracy",
    "svm_accuracy",
    "sweep_stats",
    "select_equal_re",
]


def lloyd_kmeans(X: np.ndarray, init: np.ndarray, *, max_iter: int = 1000) -> tuple[np.ndarray, np.ndarray]:
    """Lloyd's K-means from explicit initial centroids; stops when the labels stop changing.

    An empty cluster keeps its previous centroid. Cluster j is the one seeded by ``init[j]``.

    Returns
    -------
    labels : ndarray of shape (n,), values 0..K-1
    centroids : ndarray of shape (K, m)
    """
    X = np.asarray(X, dtype=np.float64)
    C = np.array(init, dtype=np.float64)
    K = len(C)
    labels = None
    x2 = np.einsum("ij,ij->i", X, X)[:, None]
    for _ in range(max_iter):
        d = x2 - 2.0 * X @ C.T + np.einsum("ij,ij->i", C, C)[None, :]
        new = np.argmin(d, axis=1)
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        for j in range(K):
            members = labels == j
            if members.any():
                C[j] = X[members].mean(axis=0)
    assert labels is not None
    return labels, C


def matched_accuracy(labels: np.ndarray, classes: np.ndarray) -> float:
    """Fraction of agreement under the best one-to-one matching of clusters to classes."""
    from scipy.optimize import linear_sum_assignment

    lab_vals, lab = np.unique(labels, return_inverse=True)
    cls_vals, cls = np.unique(classes, return_inverse=True)
    table = np.zeros((len(lab_vals), len(cls_vals)), dtype=np.int64)
    np.add.at(table, (lab, cls), 1)
    r, c = linear_sum_assignment(-table)
    return float(table[r, c].sum() / len(labels))


def kmeans_accuracy(
    X: np.ndarray,
    y: Sequence[object] | np.ndarray,
    *,
    n_clusters: int | None = None,
    normalize: str | None = "range",
) -> float:
    """K-means accuracy (%) under the first-K-rows protocol with best label matching."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    K = n_clusters or len(np.unique(y))
    if K > len(X):
        raise ParameterError(f"n_clusters={K} exceeds the {len(X)} rows; use fewer clusters")
    Z = range_normalize(X) if normalize == "range" else X
    labels, _ = lloyd_kmeans(Z, Z[:K])
    return 100.0 * matched_accuracy(labels, y)


def svm_accuracy(
    X: np.ndarray,
    y: Sequence[object] | np.ndarray,
    *,
    kernel: str = "rbf",
    gamma: float | str = "scale",
    C: float = 1.0,
    n_folds: int = 10,
    normalize: str | None = "range",
    stratified: bool = True,
    random_state: int = 0,
) -> float:
    """Mean N-fold cross-validated SVM accuracy (%), Wang 2008 Algorithm 1.

    Folds are stratified and shuffled with ``random_state`` (``stratified=False`` gives the
    dissertation's contiguous folds).
    """
    from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score
    from sklearn.svm import SVC

    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if len(np.unique(y)) < 2:
        raise InputError("the label column has a single class; SVM accuracy needs at least two")
    Z = range_normalize(X) if normalize == "range" else X
    min_class = int(np.min(np.unique(y, return_counts=True)[1]))
    folds = max(2, min(n_folds, min_class)) if stratified else n_folds
    cv = (
        StratifiedKFold(folds, shuffle=True, random_state=random_state)
        if stratified
        else KFold(folds, shuffle=False)
    )
    scores = cross_val_score(SVC(kernel=kernel, gamma=gamma, C=C), Z, y, cv=cv)
    return 100.0 * float(np.mean(scores))


def sweep_stats(values: Sequence[float], original: float | None = None) -> dict[str, float | None]:
    """Mean, Std (ddof=1), Max, Min and ``Max.rel.err = (original - Min) / original * 100``."""
    v = np.asarray(values, dtype=np.float64)
    return {
        "mean": float(v.mean()),
        "std": float(v.std(ddof=1)) if len(v) > 1 else 0.0,
        "max": float(v.max()),
        "min": float(v.min()),
        "max_rel_err_pct": None if original is None else float((original - v.min()) / original * 100.0),
    }


def select_equal_re(
    sweeps: Mapping[str, Sequence[Mapping[str, Any]]],
    target: float,
    key: str = "re",
) -> dict[str, Mapping[str, Any]]:
    """For each method, the sweep member whose ``key`` (RE) is closest to ``target``."""
    return {
        method: min(rows, key=lambda r: abs(float(r[key]) - target))
        for method, rows in sweeps.items()
        if rows
    }
