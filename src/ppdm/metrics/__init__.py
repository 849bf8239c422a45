"""Distortion and utility metrics: plain functions plus a small metadata table (:data:`METRICS`)."""

from __future__ import annotations

from dataclasses import dataclass

from ppdm.metrics.pattern import (
    corr_maintain,
    corr_val,
    dist_maintain,
    dist_val,
    pair_sample,
    pattern_metrics,
    range_normalize,
    varp,
)
from ppdm.metrics.utility import (
    kmeans_accuracy,
    lloyd_kmeans,
    matched_accuracy,
    select_equal_re,
    svm_accuracy,
    sweep_stats,
)
from ppdm.metrics.value import (
    attribute_rank_change,
    attribute_rank_maintenance,
    rank_maintenance,
    rank_position,
    relative_error,
    value_metrics,
)


@dataclass(frozen=True)
class MetricInfo:
    """What a metric measures and which direction is better."""

    name: str
    kind: str  # "privacy" | "utility" | "pattern"
    goal: str  # "maximize" | "minimize"
    bounds: tuple[float, float]
    reference: str
    description: str


_INF = float("inf")
METRICS: dict[str, MetricInfo] = {
    m.name: m
    for m in (
        MetricInfo("re", "privacy", "maximize", (0, _INF), "Wang 2008 Sec. 2.3", "||A-B||_F / ||A||_F (= VD)"),
        MetricInfo("rp", "privacy", "maximize", (0, _INF), "Wang 2008 Sec. 2.3", "mean rank-position change"),
        MetricInfo("rk", "privacy", "minimize", (0, 1), "Wang 2008 Sec. 2.3", "share of ranks kept"),
        MetricInfo("cp", "privacy", "maximize", (0, _INF), "Wang 2008 Sec. 2.3", "mean change of column-mean ranks"),
        MetricInfo("ck", "privacy", "minimize", (0, 1), "Wang 2008 Sec. 2.3", "share of column-mean ranks kept"),
        MetricInfo("distval", "pattern", "minimize", (0, _INF), "Wang 2008 Sec. 2.4",
                   "relative pairwise-distance error"),
        MetricInfo("distmaintain_pct", "pattern", "maximize", (0, 100), "Wang 2008 Sec. 2.4", "% distance ranks kept"),
        MetricInfo("corrval", "pattern", "minimize", (0, _INF), "Wang 2008 Sec. 2.4", "relative A^T A error"),
        MetricInfo("corrmaintain_pct", "pattern", "maximize", (0, 100), "Wang 2008 Sec. 2.4",
                   "% inner-product ranks kept"),
        MetricInfo("kmeans_pct", "utility", "maximize", (0, 100), "Wang 2008 Sec. 2.6", "K-means accuracy"),
        MetricInfo("svm_pct", "utility", "maximize", (0, 100), "Wang 2008 Sec. 2.6", "SVM cross-validated accuracy"),
    )
}

__all__ = [
    "METRICS",
    "MetricInfo",
    "attribute_rank_change",
    "attribute_rank_maintenance",
    "corr_maintain",
    "corr_val",
    "dist_maintain",
    "dist_val",
    "kmeans_accuracy",
    "lloyd_kmeans",
    "matched_accuracy",
    "pair_sample",
    "pattern_metrics",
    "range_normalize",
    "rank_maintenance",
    "rank_position",
    "relative_error",
    "select_equal_re",
    "svm_accuracy",
    "sweep_stats",
    "value_metrics",
    "varp",
]
