"""The degenerate non-metric solution: one record dissimilar to all others lets every other record
collapse onto one point at stress ~0. The mechanism must detect it and release a spread configuration."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.spatial.distance import pdist
from scipy.stats import spearmanr

from ppdm.exceptions import PrivacyWarning
from ppdm.mechanisms.nmds import NonMetricMDS, median_rms_ratio


def _with_outlier(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((150, 5))
    X[0] = 60.0  # farther from every record than any two others are from each other
    return X


def test_outlier_collapse_is_detected_and_replaced() -> None:
    X = _with_outlier()
    with pytest.warns(PrivacyWarning, match="collapsed"):
        Y = NonMetricMDS(1, random_state=0, leak_check=False).fit_transform(X)
    d = pdist(Y)
    # a collapsed release has median/RMS distance ~0; an ordinary one about 0.7-1 (hand: pdist of N(0,1))
    assert np.median(d) / np.sqrt(np.mean(d * d)) > 0.05
    rest = np.arange(1, X.shape[0])
    # the distances among the ordinary records still follow theirs
    assert spearmanr(pdist(X[rest]), pdist(Y[rest])).statistic > 0.3


def test_ordinary_data_is_not_flagged() -> None:
    X = np.random.default_rng(1).standard_normal((150, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        m = NonMetricMDS(2, random_state=0, leak_check=False)
        m.fit_transform(X)
    assert m.collapsed_ is False


def test_median_rms_ratio_values() -> None:
    rng = np.random.default_rng(0)
    # 99 points at the origin and one at 1: 99 of 4950 pairs at distance 1, the rest 0 -> median 0
    Y = np.zeros((100, 1))
    Y[0] = 1.0
    assert median_rms_ratio(Y, rng) == 0.0
    # two points: median = RMS
    assert median_rms_ratio(np.array([[0.0], [3.0]]), rng) == pytest.approx(1.0)
