"""Microaggregation (MDAV) on hand-computed examples, and the per-class Gaussian copula's guarantees."""

from __future__ import annotations

import numpy as np
import pytest

from ppdm.mechanisms.microaggregation import MDAV, mdav_groups
from ppdm.mechanisms.synthetic import GaussianCopula


def test_mdav_groups_by_hand() -> None:
    # 9 points, k = 3 (>= 3k left): the farthest from the centroid 11 is 0 (tie with 22, first wins), grouped
    # with its 2 nearest: {0, 1, 2}; then the farthest from 0, 22: {20, 21, 22}; 3 left (< 2k): the last group
    X = np.array([0, 1, 2, 10, 11, 12, 20, 21, 22], dtype=float)[:, None]
    g = mdav_groups(X, 3)
    assert [sorted(X[g == v, 0]) for v in range(3)] == [[0, 1, 2], [20, 21, 22], [10, 11, 12]]
    np.testing.assert_allclose(MDAV(k=3).fit_transform(X)[:, 0], [1, 1, 1, 11, 11, 11, 21, 21, 21])
    # 7 points, k = 3: fewer than 3k, so one group around the farthest from the centroid 39/7 (12), then
    # the remaining 4 (between k and 2k - 1) form the last group
    Y = np.array([0, 1, 2, 3, 10, 11, 12], dtype=float)[:, None]
    np.testing.assert_allclose(MDAV(k=3).fit_transform(Y)[:, 0], [1.5, 1.5, 1.5, 1.5, 11, 11, 11])


def test_mdav_group_sizes_strata_and_blocks() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1003, 4))
    y = rng.integers(0, 3, 1003)
    m = MDAV(k=7, max_exact_rows=200).fit(X, y)
    sizes = np.bincount(m.groups_)
    assert sizes.min() >= 7 and sizes.max() <= 13  # k .. 2k - 1, also across the blocks
    for g in range(m.n_groups_):  # no group mixes classes
        assert len(set(y[m.groups_ == g])) == 1
    # every record is released as its group's mean
    B = m.centroids_[m.groups_]
    for g in (0, 5, m.n_groups_ - 1):
        np.testing.assert_allclose(B[m.groups_ == g], np.broadcast_to(X[m.groups_ == g].mean(0), (sizes[g], 4)))
    with pytest.raises(Exception, match="exceeds"):
        MDAV(k=2000).fit(X)


def test_copula_draws_new_records_within_each_class() -> None:
    rng = np.random.default_rng(1)
    n = 400
    y = np.repeat([0, 1], n // 2)
    a = rng.normal(size=n) + 4 * y
    X = np.column_stack([a, 2 * a + rng.normal(scale=0.3, size=n), rng.exponential(size=n)])
    B = GaussianCopula(random_state=3).fit_transform(X, y)
    assert B.shape == X.shape
    for c in (0, 1):  # every value within its class's observed range (empirical marginals)
        rows = y == c
        assert (B[rows] >= X[rows].min(0) - 1e-12).all() and (B[rows] <= X[rows].max(0) + 1e-12).all()
        assert abs(np.corrcoef(B[rows, 0], B[rows, 1])[0, 1] - np.corrcoef(X[rows, 0], X[rows, 1])[0, 1]) < 0.05
    # no released row is a record's own row
    assert not any(np.allclose(B[i], X[i]) for i in range(n))
    # the draws are the key: another seed, other records
    assert not np.allclose(B, GaussianCopula(random_state=4).fit_transform(X, y))
