"""The utility suite of Alotaibi (2015, Ch. 5): classifiers, clusterings, validity indices and structure.

Every measure is computed on the original and on the release under the same protocol (both tables scaled
with the original's z-scores, seeded folds and starts), so the pair shows what the release keeps. Above
``max_rows`` rows the quadratic measures (SVM, single linkage, DBSCAN, silhouette, k-NN cross-validation)
run on one seeded sample of rows, the same rows for both tables, and the result says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ppdm.exceptions import InputError

__all__ = [
    "SVM_KERNELS",
    "zscore",
    "knn_accuracy",
    "svm_kernel_accuracy",
    "cluster_labels",
    "dbscan_eps",
    "variation_of_information",
    "f_measure",
    "cluster_validity",
    "neighbourhood_preservation",
    "class_compactness",
    "utility_suite",
    "evaluation_entries",
]

#: kernel name -> SVC parameters matching the thesis' MATLAB svmtrain kernels (inputs z-scored)
SVM_KERNELS: dict[str, dict[str, Any]] = {
    "linear": {"kernel": "linear"},
    "poly3": {"kernel": "poly", "degree": 3, "gamma": 1.0, "coef0": 1.0},      # (1 + u.v)^3
    "rbf": {"kernel": "rbf", "gamma": 0.5},                                     # sigma = 1
    "sigmoid": {"kernel": "sigmoid", "gamma": 1.0, "coef0": -1.0},             # tanh(u.v - 1)
}


def zscore(X: np.ndarray) -> np.ndarray:
    """Column z-scores with the sample SD; constant columns become 0."""
    X = np.asarray(X, dtype=np.float64)
    sd = X.std(axis=0, ddof=1)
    return (X - X.mean(axis=0)) / np.where(sd == 0, 1.0, sd)


def _cv(y: np.ndarray, n_splits: int, n_repeats: int, random_state: int):  # type: ignore[no-untyped-def]
    from sklearn.model_selection import RepeatedStratifiedKFold

    min_class = int(np.min(np.unique(y, return_counts=True)[1]))
    return RepeatedStratifiedKFold(n_splits=max(2, min(n_splits, min_class)), n_repeats=n_repeats,
                                   random_state=random_state)


def _per_repeat(scores: np.ndarray, n_repeats: int) -> list[float]:
    return [100.0 * float(v) for v in np.asarray(scores).reshape(n_repeats, -1).mean(axis=1)]


def knn_accuracy(X: np.ndarray, y: np.ndarray, *, k: int = 4, n_splits: int = 10, n_repeats: int = 3,
                 random_state: int = 0, standardise: bool = True) -> list[float]:
    """k-NN accuracy (%) per repetition of stratified k-fold CV (Euclidean, z-scored inputs)."""
    from sklearn.model_selection import cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    from ppdm.utils.threads import openmp_threads_for

    with openmp_threads_for(X.size * len(X) / n_splits):
        s = cross_val_score(KNeighborsClassifier(n_neighbors=k), zscore(X) if standardise else X, y,
                            cv=_cv(y, n_splits, n_repeats, random_state))
    return _per_repeat(s, n_repeats)


def svm_kernel_accuracy(X: np.ndarray, y: np.ndarray, kernel: str = "linear", *, C: float = 1.0,
                        n_splits: int = 10, n_repeats: int = 3, random_state: int = 0,
                        standardise: bool = True, max_iter: int = -1) -> list[float]:
    """SVM accuracy (%) per repetition of stratified k-fold CV with one of :data:`SVM_KERNELS`.

    ``max_iter`` caps the solver's iterations (-1: until converged). MATLAB's ``svmtrain``, which the
    thesis used, stops its SMO solver at 15000 iterations; without a cap the cubic polynomial kernel on
    z-scored data can take minutes per fold to converge.
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import cross_val_score
    from sklearn.svm import SVC

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a capped solve is the protocol asked for
        s = cross_val_score(SVC(C=C, max_iter=max_iter, **SVM_KERNELS[kernel]), zscore(X) if standardise else X,
                            y, cv=_cv(y, n_splits, n_repeats, random_state))
    return _per_repeat(s, n_repeats)


def dbscan_eps(X: np.ndarray, min_pts: int = 4) -> float:
    """eps at the knee of the sorted ``min_pts``-th neighbour distances (farthest point from the chord)."""
    from ppdm.utils.neighbors import nearest_neighbors

    d = np.sort(nearest_neighbors(X, X, min_pts, exclude_self=True, return_distance=True)[1][:, -1])
    x = np.linspace(0.0, 1.0, len(d))
    span = d[-1] - d[0]
    yv = (d - d[0]) / span if span > 0 else np.zeros_like(d)
    knee = int(np.argmax(x - yv))  # convex increasing curve: the knee is farthest below the chord
    return float(d[knee]) if d[knee] > 0 else float(d[d > 0].min() if (d > 0).any() else 1.0)


def cluster_labels(X: np.ndarray, y: np.ndarray, method: str, *, random_state: int = 0,
                   standardise: bool = True) -> np.ndarray:
    """Cluster labels with K = number of classes.

    ``method``: ``kmeans_first`` (first-K rows start), ``kmeans_classmean`` (class-mean start, the
    thesis' deterministic protocol), ``kmeans_pp`` (k-means++), ``single`` (single-linkage agglomerative),
    ``dbscan`` (MinPts 4, eps at the knee; noise is one extra label).
    """
    from ppdm.metrics.utility import lloyd_kmeans

    Z = zscore(X) if standardise else np.asarray(X, dtype=np.float64)
    classes = np.unique(y)
    K = len(classes)
    if method == "kmeans_first":
        return lloyd_kmeans(Z, Z[:K])[0]
    if method == "kmeans_classmean":
        return lloyd_kmeans(Z, np.vstack([Z[y == c].mean(axis=0) for c in classes]))[0]
    if method == "kmeans_pp":
        from sklearn.cluster import KMeans

        return KMeans(K, init="k-means++", n_init=1, random_state=random_state).fit_predict(Z)
    if method == "single":
        from sklearn.cluster import AgglomerativeClustering

        return AgglomerativeClustering(n_clusters=K, linkage="single").fit_predict(Z)
    if method == "dbscan":
        from sklearn.cluster import DBSCAN

        return DBSCAN(eps=dbscan_eps(Z), min_samples=4).fit_predict(Z)
    raise InputError(f"unknown clustering '{method}'; use kmeans_first, kmeans_classmean, kmeans_pp, single, dbscan")


def _contingency(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    _, ai = np.unique(a, return_inverse=True)
    _, bi = np.unique(b, return_inverse=True)
    T = np.zeros((ai.max() + 1, bi.max() + 1))
    np.add.at(T, (ai, bi), 1)
    return T


def variation_of_information(a: Sequence[object], b: Sequence[object]) -> float:
    """VI = H(A) + H(B) - 2 I(A; B) in bits (Meila 2007; thesis eq. 5.8). 0 means identical clusterings."""
    P = _contingency(np.asarray(a), np.asarray(b))
    P /= P.sum()
    pa, pb = P.sum(axis=1), P.sum(axis=0)
    nz = P > 0
    h_a = -float((pa[pa > 0] * np.log2(pa[pa > 0])).sum())
    h_b = -float((pb[pb > 0] * np.log2(pb[pb > 0])).sum())
    mi = float((P[nz] * np.log2(P[nz] / np.outer(pa, pb)[nz])).sum())
    return max(0.0, h_a + h_b - 2 * mi)


def f_measure(classes: Sequence[object], clusters: Sequence[object]) -> float:
    """Clustering F-measure: for each class the best F1 over clusters, weighted by class size."""
    T = _contingency(np.asarray(classes), np.asarray(clusters))
    n_c, n_k = T.sum(axis=1, keepdims=True), T.sum(axis=0, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        F = np.where(T > 0, 2 * T / (n_c + n_k), 0.0)
    return float((n_c[:, 0] / T.sum() * F.max(axis=1)).sum())


def cluster_validity(X: np.ndarray, y: np.ndarray, labels: np.ndarray, *, random_state: int = 0,
                     standardise: bool = True) -> dict[str, float]:
    """VI, ARI, NMI and F-measure against the classes, and the silhouette (sampled above 5,000 rows)."""
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score, silhouette_score

    n_lab = len(np.unique(labels))
    sil = float("nan")
    if 1 < n_lab < len(labels):
        sil = float(silhouette_score(zscore(X) if standardise else X, labels, sample_size=min(len(labels), 5000),
                                     random_state=random_state))
    return {"vi": variation_of_information(y, labels), "ari": float(adjusted_rand_score(y, labels)),
            "nmi": float(normalized_mutual_info_score(y, labels)), "f_measure": f_measure(y, labels),
            "silhouette": sil}


def _knn_sets(X: np.ndarray, k: int) -> np.ndarray:
    from ppdm.utils.neighbors import nearest_neighbors

    X = np.asarray(X, dtype=np.float64)
    return np.asarray(nearest_neighbors(X, X, k, exclude_self=True))


def neighbourhood_preservation(
    X: np.ndarray, Y: np.ndarray, ks: Sequence[int] = tuple(range(3, 11))
) -> dict[int, float]:
    """NP_k = mean over records of |kNN_X(i) & kNN_Y(i)| / k (thesis eq. 5.21), for each k (self excluded).

    Distances are taken as given: scale both tables the same way first (the suite uses the original's z-scores).
    """
    kmax = max(ks)
    NX, NY = _knn_sets(X, kmax), _knn_sets(Y, kmax)
    out = {}
    for k in ks:
        a, b = NX[:, :k], NY[:, :k]
        same = (a[:, :, None] == b[:, None, :]).any(axis=2).sum(axis=1)
        out[int(k)] = float(same.mean() / k)
    return out


def class_compactness(X: np.ndarray, y: np.ndarray, ks: Sequence[int] = tuple(range(3, 11))) -> dict[int, float]:
    """CC_k: mean over classes of the share of each member's k nearest neighbours in its class (eqs. 5.22-5.23)."""
    y = np.asarray(y)
    N = _knn_sets(X, max(ks))
    same = y[N] == y[:, None]
    classes = np.unique(y)
    return {int(k): float(np.mean([same[y == c, :k].mean() for c in classes])) for k in ks}


def utility_suite(
    A: np.ndarray,
    B: np.ndarray,
    y: np.ndarray,
    *,
    n_repeats: int = 3,
    max_rows: int = 5000,
    random_state: int = 0,
) -> dict[str, Any]:
    """Every utility measure on the original ``A`` and the release ``B`` (same rows, labels ``y``).

    Returns ``pairs`` (measure -> {original, release}, percentages or indices), ``trials`` (per-repetition
    values for paired tests), ``clustering_agreement`` (VI between the clusterings of A and B) and
    ``sample`` (how many rows were used).
    """
    y = np.asarray(y)
    n = len(y)
    if len(np.unique(y)) < 2:
        raise InputError("the label column has a single class; the utility suite needs at least two")
    rows = np.arange(n) if n <= max_rows else np.sort(np.random.default_rng(random_state).choice(
        n, max_rows, replace=False))
    # one normalisation for both tables (the original's z-scores), so a distance-preserving release scores alike
    mu, sd = A.mean(axis=0), A.std(axis=0, ddof=1)
    sd = np.where(sd == 0, 1.0, sd)
    As, Bs, ys = (A[rows] - mu) / sd, (B[rows] - mu) / sd, y[rows]
    pairs: dict[str, dict[str, float]] = {}
    trials: dict[str, dict[str, list[float]]] = {}
    kw = {"n_repeats": n_repeats, "random_state": random_state, "standardise": False}
    tr = {"original": knn_accuracy(As, ys, **kw), "release": knn_accuracy(Bs, ys, **kw)}
    trials["knn4_pct"] = tr
    for kern in SVM_KERNELS:
        trials[f"svm_{kern}_pct"] = {"original": svm_kernel_accuracy(As, ys, kern, **kw),
                                     "release": svm_kernel_accuracy(Bs, ys, kern, **kw)}
    for name, t in trials.items():
        pairs[name] = {"original": float(np.mean(t["original"])), "release": float(np.mean(t["release"]))}
    agreement = {}
    for method in ("kmeans_first", "kmeans_classmean", "kmeans_pp", "single", "dbscan"):
        la = cluster_labels(As, ys, method, random_state=random_state, standardise=False)
        lb = cluster_labels(Bs, ys, method, random_state=random_state, standardise=False)
        va = cluster_validity(As, ys, la, random_state=random_state, standardise=False)
        vb = cluster_validity(Bs, ys, lb, random_state=random_state, standardise=False)
        for key in va:
            pairs[f"{method}_{key}"] = {"original": va[key], "release": vb[key]}
        agreement[method] = variation_of_information(la, lb)
    # k-means++ VI against the classes over repeated random starts (for the paired t-test)
    trials["kmeans_pp_vi"] = {
        which: [variation_of_information(ys, cluster_labels(M, ys, "kmeans_pp", random_state=random_state + r,
                                                            standardise=False))
                for r in range(max(n_repeats, 2) * 5)]
        for which, M in (("original", As), ("release", Bs))
    }
    np_k = neighbourhood_preservation(As, Bs)
    cc_a, cc_b = class_compactness(As, ys), class_compactness(Bs, ys)
    pairs["neighbourhood_preservation"] = {"original": 1.0, "release": float(np.mean(list(np_k.values())))}
    pairs["class_compactness"] = {"original": float(np.mean(list(cc_a.values()))),
                                  "release": float(np.mean(list(cc_b.values())))}
    return {
        "pairs": pairs,
        "trials": trials,
        "clustering_agreement_vi": agreement,
        "neighbourhood_preservation_by_k": {str(k): v for k, v in np_k.items()},
        "class_compactness_by_k": {str(k): {"original": cc_a[k], "release": cc_b[k]} for k in cc_a},
        "sample": "all rows" if len(rows) == n else f"seeded sample of {len(rows)} of {n} rows",
    }


def evaluation_entries(
    A: np.ndarray, B: np.ndarray, y: np.ndarray, *, random_state: int = 0, tests: bool = False
) -> tuple[dict[str, dict[str, float | None]], dict[str, Any], dict[str, Any] | None]:
    """The suite shaped for ``evaluate``: flat pairs, details, and (with ``tests``) paired t-tests."""
    from ppdm.metrics.stats import paired_ttest

    res = utility_suite(A, B, y, random_state=random_state)
    pairs = {k: {kk: (None if v is None or not np.isfinite(v) else float(v)) for kk, v in d.items()}
             for k, d in res["pairs"].items()}
    details = {k: v for k, v in res.items() if k not in ("pairs",)}
    sig = None
    if tests:
        sig = {name: paired_ttest(t["original"], t["release"]) | {"alpha": 0.05}
               for name, t in res["trials"].items()}
        for v in sig.values():
            v["significant"] = bool(v["p_value"] < 0.05)
        sig = {k: {kk: (None if isinstance(x, float) and not np.isfinite(x) else x) for kk, x in v.items()}
               for k, v in sig.items()}
    return pairs, details, sig
