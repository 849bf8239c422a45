"""Similarity-to-dissimilarity transforms (thesis Sec. 2.3.1)."""

from __future__ import annotations

import numpy as np

from ppdm.utils.validation import check_choice

__all__ = ["similarity_to_dissimilarity", "TRANSFORMS"]

TRANSFORMS = ("one_minus", "negative", "sqrt2", "sqrt")


def similarity_to_dissimilarity(s: np.ndarray, kind: str = "one_minus") -> np.ndarray:
    """``1 - s``, ``-s``, ``sqrt(2 (1 - s))`` or ``sqrt(1 - s)`` (a metric for the identity similarity).

    NMDS uses only the order of the dissimilarities, and every transform is decreasing in ``s``, so
    they all give the same NMDS solution; ``sqrt2`` is the one that stays Euclidean for correlations.
    """
    check_choice(kind, "transform", TRANSFORMS)
    s = np.asarray(s)
    if kind == "one_minus":
        return 1.0 - s
    if kind == "negative":
        return -s
    one = np.clip(1.0 - s, 0.0, None)
    return np.sqrt(2.0 * one) if kind == "sqrt2" else np.sqrt(one)
