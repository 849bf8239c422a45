"""Information loss of a dimension-changing release: original dissimilarities vs released distances.

Thesis eqs 4.1-4.3 and 2.21-2.22; sampled above ``max_pairs`` pairs (and the result says so).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["distance_loss", "distance_stress", "shepard_plot"]


def _pairs(A: np.ndarray, B: np.ndarray, max_pairs: int, random_state: object) -> tuple[np.ndarray, np.ndarray, int]:
    from scipy.spatial.distance import pdist

    n = A.shape[0]
    M = n * (n - 1) // 2
    if M <= max_pairs:
        return pdist(A), pdist(B), M
    rng = np.random.default_rng(random_state)  # type: ignore[arg-type]
    i = rng.integers(0, n, max_pairs)
    j = rng.integers(0, n - 1, max_pairs)
    j = np.where(j >= i, j + 1, j)
    return np.linalg.norm(A[i] - A[j], axis=1), np.linalg.norm(B[i] - B[j], axis=1), max_pairs


def distance_stress(A: np.ndarray, B: np.ndarray, *, max_pairs: int = 2_000_000, random_state: object = 0) -> float:
    """Stress (4.3) alone: ``sqrt(sum (delta - d)^2 / sum delta^2)`` over all pairs (a seeded sample above
    ``max_pairs``), without the monotone fit that :func:`distance_loss` also makes."""
    delta, d, _ = _pairs(np.asarray(A, float), np.asarray(B, float), max_pairs, random_state)
    dd = float(delta @ delta)
    return float(np.sqrt(((delta - d) ** 2).sum() / dd)) if dd > 0 else 0.0


def distance_loss(A: np.ndarray, B: np.ndarray, *, max_pairs: int = 2_000_000,
                  random_state: object = 0) -> dict[str, Any]:
    """Stress (4.3), Sammon loss (4.1), residual SS (4.2), average distortion (2.22), NMDS stress-1.

    ``A`` holds the original (e.g. z-scored) records, ``B`` the released ones (any number of columns).
    """
    from ppdm.mds.pav import MonotoneFit
    from ppdm.mds.stress import kruskal_stress

    delta, d, used = _pairs(np.asarray(A, float), np.asarray(B, float), max_pairs, random_state)
    r = delta - d
    pos = delta > 0
    rss = float(r @ r)
    return {
        "stress": float(np.sqrt(rss / (delta @ delta))) if delta @ delta > 0 else 0.0,
        "sammon": float((r[pos] ** 2 / delta[pos]).sum() / delta[pos].sum()) if pos.any() else 0.0,
        "residual_ss": rss,
        "average_distortion": float((d[pos] / delta[pos]).mean()) if pos.any() else 1.0,
        "nonmetric_stress1": kruskal_stress(d, MonotoneFit(delta)(d)),
        "pairs": used,
        "sampled": used < A.shape[0] * (A.shape[0] - 1) // 2,
    }


def shepard_plot(A: np.ndarray, B: np.ndarray, path: str | Path, *, max_points: int = 20_000,
                 random_state: object = 0) -> Path:
    """Shepard diagram (original dissimilarity vs released distance, with the monotone fit) as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    # column names are data: shown as plain text, never parsed as TeX math (a "$" cannot break a plot)
    matplotlib.rcParams["text.parse_math"] = False
    import matplotlib.pyplot as plt

    from ppdm.data.io import atomic_write
    from ppdm.mds.pav import MonotoneFit

    delta, d, _ = _pairs(np.asarray(A, float), np.asarray(B, float), max_points, random_state)
    dhat = MonotoneFit(delta)(d)
    o = np.argsort(delta)
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.scatter(delta, d, s=2, alpha=0.3, label="pairs")
    ax.plot(delta[o], dhat[o], color="red", label="monotone fit")
    ax.set_xlabel("original dissimilarity")
    ax.set_ylabel("released distance")
    ax.legend()
    fig.tight_layout()
    path = Path(path)
    with atomic_write(path) as f:
        fig.savefig(f, format="png", dpi=100)
    plt.close(fig)
    return path
