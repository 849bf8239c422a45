"""Plain-words summary of a release record, and the aggregate plot data the report needs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["summary_text", "plot_data"]

_OBJECTIVE_NAMES = {"knn_pct": "k-NN accuracy", "svm_pct": "SVM accuracy", "kmeans_pct": "K-means accuracy",
                    "neighbour_pct": "nearest-neighbour preservation"}


def summary_text(record: dict[str, Any]) -> list[str]:
    """A few sentences a data steward can read: what was chosen, the risk, the utility."""
    ch = record["chosen"]
    obj = record["policy"]["objective"]
    params = ", ".join(f"{k}={v}" for k, v in ch["params"].items()) or "default parameters"
    risk = ch["risk"]
    lines = [
        f"Released with {ch['method']} ({params}); relative error RE = {ch['value']['re']:.4f}.",
        f"Threat model: {record['threat']['description']}. Under it the strongest attack re-identifies "
        f"{risk['reidentification']:.1%} of the records and recovers {risk['within_5pct']:.1%} of all values "
        "within +-5 % of the truth.",
    ]
    orig = record["original_utility"].get(obj)
    name = _OBJECTIVE_NAMES.get(obj, obj)
    if orig is not None:
        lines.append(f"{name}: {ch['utility'][obj]:.1f} % on the release vs {orig:.1f} % on the original.")
    n = len(record["candidates"])
    feasible = sum(1 for c in record["candidates"] if not c["verdict"].startswith("violates"))
    lines.append(f"{n} candidates were tried; {feasible} met the policy (re-identification <= "
                 f"{record['policy']['max_reidentification']:.0%}, values within 5 % <= "
                 f"{record['policy']['max_within_5pct']:.0%}).")
    return lines


def plot_data(
    X: np.ndarray, B: np.ndarray, y: np.ndarray | None, columns: Sequence[str], *, seed: int = 0,
    n_pairs: int = 3000, n_hist: int = 4,
) -> dict[str, Any]:
    """Aggregates for the report's plots: a sample of pairwise distances and a few histograms.

    Only aggregates leave this function (distances of a seeded sample of pairs, histogram counts), never
    rows of the table.
    """
    rng = np.random.default_rng(seed)
    n = len(X)
    i = rng.integers(0, n, size=n_pairs)
    j = rng.integers(0, n, size=n_pairs)
    keep = i != j
    sx = X.std(axis=0)
    sx[sx == 0] = 1.0
    d_orig = np.linalg.norm((X[i[keep]] - X[j[keep]]) / sx, axis=1)
    d_rel = np.linalg.norm((B[i[keep]] - B[j[keep]]) / sx, axis=1)
    hists = []
    for c in range(min(n_hist, X.shape[1])):
        lo = float(min(X[:, c].min(), B[:, c].min()))
        hi = float(max(X[:, c].max(), B[:, c].max()))
        edges = np.linspace(lo, hi if hi > lo else lo + 1, 31)
        hists.append({"column": str(columns[c]), "edges": edges,
                      "original": np.histogram(X[:, c], edges)[0], "release": np.histogram(B[:, c], edges)[0]})
    return {"shepard": {"original": d_orig, "release": d_rel}, "histograms": hists}
