"""The clustering an analyst runs on the table: Lloyd K-means from fixed seed rows.

The papers' protocol seeds Lloyd's algorithm with the first K rows of the table being clustered
(``'first-rows'``); ``'kmeans++'`` picks K seed rows by seeded D^2 sampling instead. Either way the
protocol is a list of seed *rows*, so the original and every candidate release are clustered the same
way, and cluster j (numbered from 1 in the CLI) is the cluster seeded by the j-th seed row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ppdm.exceptions import ParameterError
from ppdm.metrics.utility import lloyd_kmeans

__all__ = ["REFERENCES", "ClusterProtocol", "reference_protocol", "nmf_labels"]

REFERENCES = ("first-rows", "kmeans++")


@dataclass(frozen=True)
class ClusterProtocol:
    """Lloyd K-means seeded at fixed row positions."""

    seeds: tuple[int, ...]

    @property
    def n_clusters(self) -> int:
        return len(self.seeds)

    def fit(self, T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Labels (0..K-1) and centroids of ``T`` under this protocol."""
        T = np.asarray(T, dtype=np.float64)
        return lloyd_kmeans(T, T[list(self.seeds)])

    def labels(self, T: np.ndarray) -> np.ndarray:
        return self.fit(T)[0]


def _kmeanspp_rows(X: np.ndarray, K: int, rng: np.random.Generator) -> list[int]:
    rows = [int(rng.integers(len(X)))]
    d2 = ((X - X[rows[0]]) ** 2).sum(axis=1)
    for _ in range(1, K):
        total = float(d2.sum())
        if total <= 0:
            free = np.setdiff1d(np.arange(len(X)), rows)
            rows.append(int(rng.choice(free)))
        else:
            rows.append(int(rng.choice(len(X), p=d2 / total)))
        d2 = np.minimum(d2, ((X - X[rows[-1]]) ** 2).sum(axis=1))
    return rows


def reference_protocol(X: np.ndarray, n_clusters: int, method: str = "first-rows",
                       random_state: object = 0) -> ClusterProtocol:
    """The seed rows of the reference clustering (``'first-rows'``: rows 1..K; ``'kmeans++'``: seeded D^2)."""
    n = len(X)
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, (int, np.integer)) or n_clusters < 1:
        raise ParameterError(f"the number of clusters must be a positive integer; got {n_clusters!r}")
    if n_clusters > n:
        raise ParameterError(f"{n_clusters} clusters need at least as many records; the table has {n}")
    if method == "first-rows":
        return ClusterProtocol(tuple(range(int(n_clusters))))
    if method == "kmeans++":
        rng = np.random.default_rng(random_state)  # type: ignore[arg-type]
        return ClusterProtocol(tuple(_kmeanspp_rows(np.asarray(X, dtype=np.float64), int(n_clusters), rng)))
    raise ParameterError(f"reference clustering must be one of {', '.join(REFERENCES)}; got {method!r}")


def nmf_labels(H: np.ndarray) -> np.ndarray:
    """The NMF clustering rule: record i belongs to cluster ``argmax_j H[i, j]`` (0-based)."""
    return np.argmax(np.asarray(H), axis=1)
