"""Score one candidate release: distortion, utility and attack results (all JSON-able, no keys)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

__all__ = ["utility_scores", "score_candidate", "risk_of"]

#: bump when the scoring changes, so cached results are recomputed
SCORING_VERSION = 1


def utility_scores(X: np.ndarray, y: np.ndarray | None, *, seed: int = 0) -> dict[str, float]:
    """k-NN (k=4) and RBF-SVM 5-fold accuracy and K-means accuracy (%), or neighbour preservation."""
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    from ppdm.metrics import kmeans_accuracy

    if y is None:
        return {}
    classes, counts = np.unique(y, return_counts=True)
    folds = int(max(2, min(5, counts.min())))
    cv = StratifiedKFold(folds, shuffle=True, random_state=seed)
    out = {}
    for name, clf in (("knn_pct", KNeighborsClassifier(4)), ("svm_pct", SVC(kernel="rbf", C=1.0))):
        out[name] = 100.0 * float(np.mean(cross_val_score(make_pipeline(StandardScaler(), clf), X, y, cv=cv)))
    out["kmeans_pct"] = kmeans_accuracy(X, y)
    return out


def neighbour_preservation(A: np.ndarray, B: np.ndarray, k: int = 10, sample: int = 2000, seed: int = 0) -> float:
    """Share (%) of each record's k nearest neighbours that stay among its k nearest in the release."""
    from sklearn.neighbors import NearestNeighbors

    n = len(A)
    idx = np.random.default_rng(seed).choice(n, size=min(n, sample), replace=False)
    k = min(k, n - 1)
    na = NearestNeighbors(n_neighbors=k + 1).fit(A).kneighbors(A[idx], return_distance=False)[:, 1:]
    nb = NearestNeighbors(n_neighbors=k + 1).fit(B).kneighbors(B[idx], return_distance=False)[:, 1:]
    return 100.0 * float(np.mean([len(set(a) & set(b)) / k for a, b in zip(na, nb, strict=True)]))


def risk_of(attacks: list[dict[str, Any]]) -> dict[str, float]:
    """The worst case over attacks: highest re-identification rate and share of values disclosed."""
    reid = [a["reidentification_rate"] for a in attacks if a.get("reidentification_rate") is not None]
    w5 = [a["within_5pct"] for a in attacks if a.get("within_5pct") is not None]
    return {"reidentification": float(max(reid, default=0.0)), "within_5pct": float(max(w5, default=0.0))}


def _scalar_items(d: dict[str, Any]) -> dict[str, Any]:
    """Only scalar/short fields of an attack result go into the record (no reconstructed rows)."""
    keep: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, (bool, int, float, str)) or v is None:
            keep[k] = v
        elif isinstance(v, (list, tuple)) and len(v) <= 4 and all(isinstance(x, (int, float)) for x in v):
            keep[k] = list(v)
        elif isinstance(v, dict) and k.startswith("baseline"):
            keep[k] = _scalar_items(v)
    return keep


def score_candidate(
    X: np.ndarray,
    y: np.ndarray | None,
    method: str,
    params: dict[str, Any],
    *,
    preprocess: str,
    threat: str,
    seed: int,
) -> dict[str, Any]:
    """Release ``X`` with one candidate and score it. Runs in a worker process; returns plain data."""
    import warnings

    from ppdm import registry
    from ppdm.attacks import run_attacks_named
    from ppdm.metrics import value_metrics
    from ppdm.pipeline import perturb_array

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mech = registry.build(method, params, random_state=seed)
        B, _ = perturb_array(X, mech, preprocess=preprocess)
    if B.shape != X.shape:
        raise ValueError(f"{method} changes the number of columns; value metrics need the same columns")
    value = value_metrics(X, B)
    util = utility_scores(B, y, seed=seed)
    util["neighbour_pct"] = neighbour_preservation(X, B, seed=seed)
    # one seed per attack keeps the sweep affordable; `ppdm attack` reports intervals over seeds
    results = [r.to_dict() for r in run_attacks_named(X, B, threat, random_state=seed, n_seeds=1)]
    attacks = [_scalar_items(r) for r in results]
    return {
        "method": method,
        "params": params,
        "value": value,
        "utility": util,
        "attacks": attacks,
        "risk": risk_of(attacks),
        "seconds": time.perf_counter() - t0,
    }
