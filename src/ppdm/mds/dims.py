"""Choosing the release dimension p: stress-vs-p sweep, elbow, Kruskal's quality labels, plot."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["kruskal_quality", "elbow", "stress_sweep", "plot_sweep"]


def kruskal_quality(stress: float) -> str:
    """Kruskal's rule of thumb (thesis Table 3.6, with the missing 10-20 % band restored as 'fair-poor')."""
    pct = 100.0 * stress
    if pct <= 0:
        return "perfect"
    if pct <= 2.5:
        return "excellent"
    if pct <= 5:
        return "good"
    if pct <= 10:
        return "fair"
    if pct <= 20:
        return "fair-poor"
    return "poor"


def elbow(dims: Sequence[int], stress: Sequence[float]) -> int:
    """The p at the knee of stress(p): the point farthest below the chord from the first to the last point.

    Both axes are scaled to [0, 1] first, so the answer does not depend on the units of p or stress.
    """
    x = np.asarray(dims, dtype=float)
    y = np.asarray(stress, dtype=float)
    if x.size <= 2:
        return int(x[-1] if y[-1] < y[0] else x[0])
    xs = (x - x[0]) / (x[-1] - x[0])
    span = y.max() - y.min()
    ys = (y - y.min()) / span if span > 0 else np.zeros_like(y)
    chord = ys[0] + (ys[-1] - ys[0]) * xs
    return int(x[int(np.argmax(chord - ys))])


def stress_sweep(Z: np.ndarray | None, dims: Sequence[int], *, estimator: Callable[..., Any],
                 dissimilarity: str = "euclidean", data: object = None, max_rows: int = 600,
                 random_state: object = 0, **nmds_params: object) -> dict[str, object]:
    """NMDS stress-1 for each p in ``dims`` (on at most ``max_rows`` sampled rows, reported).

    ``estimator`` is the NMDS class (called with ``n_components``, ``dissimilarity``, ``random_state``,
    ``leak_check`` and ``nmds_params``; it must set ``stress_`` when fitted). It is passed in, not imported,
    because the estimator itself calls this sweep to choose its dimension.
    """

    src = Z if Z is not None else data
    n = len(src)  # type: ignore[arg-type]
    rng = np.random.default_rng(random_state)  # type: ignore[arg-type]
    idx = np.sort(rng.choice(n, max_rows, replace=False)) if n > max_rows else np.arange(n)
    sub = src[idx] if isinstance(src, np.ndarray) else src.iloc[idx]  # type: ignore[union-attr]
    stress = []
    for p in dims:
        m = estimator(n_components=int(p), dissimilarity=dissimilarity, random_state=random_state,
                         leak_check=False, **nmds_params)  # type: ignore[arg-type]
        m.fit(sub)
        stress.append(float(m.stress_))
    best = elbow(list(dims), stress)
    return {"dims": [int(p) for p in dims], "stress": stress, "quality": [kruskal_quality(s) for s in stress],
            "elbow": best, "rows_used": int(idx.size), "rows": int(n)}


def plot_sweep(sweep: dict[str, object], path: str | Path) -> Path:
    """Stress-vs-p PNG with the Kruskal bands and the elbow marked (written atomically)."""
    import matplotlib

    matplotlib.use("Agg")
    # column names are data: shown as plain text, never parsed as TeX math (a "$" cannot break a plot)
    matplotlib.rcParams["text.parse_math"] = False
    import matplotlib.pyplot as plt

    from ppdm.data.io import atomic_write

    dims, stress = sweep["dims"], sweep["stress"]
    fig, ax = plt.subplots(figsize=(6, 4))
    for lo, hi, name in ((0, 0.025, "excellent"), (0.025, 0.05, "good"), (0.05, 0.10, "fair"),
                         (0.10, 0.20, "fair-poor")):
        ax.axhspan(lo, hi, alpha=0.08 + 0.04 * (hi > 0.05), color="grey")
        ax.text(dims[-1], (lo + hi) / 2, name, ha="right", va="center", fontsize=7)  # type: ignore[index]
    ax.plot(dims, stress, "o-")
    ax.axvline(sweep["elbow"], ls="--", color="red", label=f"elbow p = {sweep['elbow']}")
    ax.set_xlabel("dimension p")
    ax.set_ylabel("Kruskal stress-1")
    ax.legend()
    ax.set_title(f"NMDS stress vs p ({sweep['rows_used']} of {sweep['rows']} rows)")
    fig.tight_layout()
    path = Path(path)
    with atomic_write(path) as f:
        fig.savefig(f, format="png", dpi=100)
    plt.close(fig)
    return path
