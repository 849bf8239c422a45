from __future__ import annotations

import numpy as np
import pytest

from ppdm.metrics import (
    corr_maintain,
    corr_val,
    dist_maintain,
    dist_val,
    kmeans_accuracy,
    lloyd_kmeans,
    matched_accuracy,
    pair_sample,
    select_equal_re,
    sweep_stats,
    value_metrics,
    varp,
)

A = np.array([[1.0, 10.0], [2.0, 30.0], [3.0, 20.0]])
B = np.array([[2.0, 10.0], [1.0, 30.0], [3.0, 25.0]])


def test_value_metrics_by_hand() -> None:
    # column 1 sorts as rows (0,1,2) in A and (1,0,2) in B; column 2 as (0,2,1) in both
    m = value_metrics(A, B, "sort_index")
    assert m["re"] == pytest.approx(np.sqrt(1 + 1 + 25) / np.sqrt(1 + 4 + 9 + 100 + 900 + 400))
    assert m["rp"] == pytest.approx((1 + 1 + 0 + 0 + 0 + 0) / 6)
    assert m["rk"] == pytest.approx(4 / 6)
    assert m["cp"] == 0 and m["ck"] == 1
    r = value_metrics(A, B, "rank")
    assert r["rk"] == m["rk"] and r["rp"] == pytest.approx(2 / 6)


def test_rank_conventions_differ_on_cycles() -> None:
    a = np.array([[1.0], [2.0], [3.0]])
    b = np.array([[2.0], [3.0], [1.0]])  # ranks (1,2,0) vs sort index (2,0,1)
    assert value_metrics(a, b, "rank")["rp"] == pytest.approx((1 + 1 + 2) / 3)
    assert value_metrics(a, b, "sort_index")["rp"] == pytest.approx((2 + 1 + 1) / 3)


def test_column_mean_ranks() -> None:
    a = np.array([[1.0, 5.0, 3.0, 9.0]] * 2)
    b = np.array([[6.0, 5.0, 3.0, 9.0]] * 2)  # sort index of the means: (0,2,1,3) -> (2,1,0,3)
    m = value_metrics(a, b)
    assert m["ck"] == pytest.approx(1 / 4)
    assert m["cp"] == pytest.approx((2 + 1 + 1 + 0) / 4)


def test_pattern_metrics_by_hand() -> None:
    X = np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])  # distances 5, 1, sqrt(18)
    Y = np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 2.0]])  # distances 5, 2, sqrt(13)
    d0, d1 = np.array([5, 1, np.sqrt(18)]), np.array([5, 2, np.sqrt(13)])
    assert dist_val(X, Y) == pytest.approx(np.linalg.norm(d0 - d1) / np.linalg.norm(d0))
    assert dist_maintain(X, Y) == pytest.approx(100.0)  # order 1 < sqrt18 < 5 and 2 < sqrt13 < 5
    S0, S1 = X.T @ X, Y.T @ Y
    assert corr_val(X, Y) == pytest.approx(np.linalg.norm(S0 - S1) / np.linalg.norm(S0))
    assert corr_maintain(X, X) == 100.0
    assert varp(np.array([3.0, 1.0]), 1) == 0.75


def test_pairwise_metrics_are_sampled_above_budget(rng: np.random.Generator) -> None:
    s = pair_sample(10_000, max_pairs=1000)
    assert s.sampled and s.n_pairs <= 1000 and "sampled" in s.describe()
    X = rng.normal(size=(300, 3))
    Y = X + rng.normal(scale=0.1, size=X.shape)
    exact = dist_val(X, Y)
    approx = dist_val(X, Y, sample=pair_sample(300, max_pairs=5000, random_state=1))
    assert approx == pytest.approx(exact, rel=0.15)


def test_lloyd_kmeans_by_hand() -> None:
    X = np.array([[0.0], [10.0], [1.0], [11.0], [0.5]])
    labels, C = lloyd_kmeans(X, X[:2])
    np.testing.assert_array_equal(labels, [0, 1, 0, 1, 0])
    np.testing.assert_allclose(C, [[0.5], [10.5]])
    assert matched_accuracy(labels, np.array(["b", "a", "b", "a", "a"])) == pytest.approx(0.8)
    assert kmeans_accuracy(X, ["b", "a", "b", "a", "b"]) == 100.0


def test_sweep_stats_and_selector() -> None:
    st = sweep_stats([90.0, 80.0, 100.0], original=95.0)
    assert st["mean"] == 90 and st["std"] == pytest.approx(10.0)
    assert st["max_rel_err_pct"] == pytest.approx(15 / 95 * 100)
    pick = select_equal_re({"svd": [{"re": 0.1, "k": 1}, {"re": 0.01, "k": 4}], "noise": [{"re": 0.02}]}, 0.012)
    assert pick["svd"]["k"] == 4 and pick["noise"]["re"] == 0.02


def test_dist_maintain_equals_the_share_of_unchanged_ordinal_ranks() -> None:
    """Against scipy's ordinal (stable) ranks, with ties and with the original reused across releases."""
    from scipy.spatial.distance import pdist
    from scipy.stats import rankdata

    rng = np.random.default_rng(5)
    X = rng.integers(0, 3, (25, 2)).astype(float)  # many tied distances
    for Y in (X + rng.integers(0, 2, X.shape), rng.normal(size=X.shape), X.copy(), X[::-1].copy()):
        expected = 100.0 * np.mean(rankdata(pdist(X), "ordinal") == rankdata(pdist(Y), "ordinal"))
        assert dist_maintain(X, Y) == pytest.approx(expected)
        assert dist_maintain(Y, X) == pytest.approx(expected)
