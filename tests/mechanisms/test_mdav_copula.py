"""Microaggregation (MDAV) on hand-computed examples, and the per-class Gaussian copula's guarantees."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def _textbook_mdav(X: np.ndarray, k: int) -> np.ndarray:
    """MDAV written plainly (copies of the remaining rows at every step): the reference for the fast loop."""
    labels = np.zeros(len(X), dtype=np.int64)
    if len(X) < 2 * k:
        return labels
    rem, g = np.arange(len(X)), 0

    def farthest(p: np.ndarray) -> np.ndarray:
        return X[rem[np.argmax(((X[rem] - p) ** 2).sum(1))]]

    def take(p: np.ndarray) -> None:
        nonlocal rem, g
        sel = np.argsort(((X[rem] - p) ** 2).sum(1), kind="stable")[:k]
        labels[rem[sel]] = g
        g += 1
        rem = np.delete(rem, sel)

    while len(rem) >= 3 * k:
        r = farthest(X[rem].mean(0))
        take(r)
        take(farthest(r))
    if len(rem) >= 2 * k:
        take(farthest(X[rem].mean(0)))
    labels[rem] = g
    return labels


@pytest.mark.parametrize(("n", "m", "k"), [(500, 3, 5), (1003, 6, 7), (97, 2, 3), (900, 20, 20)])
def test_fast_mdav_loop_finds_the_textbook_groups(n: int, m: int, k: int) -> None:
    # continuous data (no ties), columns on very different scales and far from the origin
    X = np.random.default_rng(n).normal(size=(n, m)) * np.geomspace(1, 1e3, m) + 1e4
    np.testing.assert_array_equal(mdav_groups(X, k), _textbook_mdav(X, k))


def test_mdav_blocks_of_a_large_table_keep_group_sizes_and_most_of_the_quality() -> None:
    rng = np.random.default_rng(5)
    X = rng.normal(size=(6000, 5)) @ rng.normal(size=(5, 5))
    m = MDAV(k=10, max_exact_rows=1000).fit(X)
    sizes = np.bincount(m.groups_)
    assert sizes.min() >= 10 and sizes.max() <= 19
    sst = ((X - X.mean(0)) ** 2).sum()
    sse_blocked = ((X - m.centroids_[m.groups_]) ** 2).sum()
    g = mdav_groups(X, 10)
    cent = np.array([X[g == v].mean(0) for v in range(g.max() + 1)])
    sse_exact = ((X - cent[g]) ** 2).sum()
    # blocks of 1000 cost a little within-group homogeneity, not much (measured ~3 % here; 10 % allowed)
    assert sse_blocked / sst <= 1.10 * sse_exact / sst


def test_univariate_microaggregation_by_hand() -> None:
    # k = 3: each column sorted and cut into runs of 3; a value is released as its run's mean
    X = np.array([[5, 10], [1, 60], [4, 20], [2, 50], [3, 30], [6, 40]], dtype=float)
    m = MDAV(k=3, univariate=True)
    np.testing.assert_allclose(m.fit_transform(X), [[5, 20], [2, 50], [5, 20], [2, 50], [2, 20], [5, 50]])
    assert m.groups_.shape == (6, 2) and m.n_groups_ == 2
    # new values go to the nearest released value of their column
    np.testing.assert_allclose(m.transform(np.array([[3.4, 36.0], [0.0, 99.0]])), [[2, 50], [2, 50]])
    # k = 2 with 5 values: runs {1, 2} and {3, 4, 7} (the last run takes the remainder)
    np.testing.assert_allclose(MDAV(k=2, univariate=True).fit_transform(np.array([[7.0], [1], [3], [2], [4]]))[:, 0],
                               [14 / 3, 1.5, 14 / 3, 1.5, 14 / 3])
    # strata: runs never mix classes
    y = np.array([0, 0, 0, 1, 1, 1])
    np.testing.assert_allclose(MDAV(k=3, univariate=True).fit_transform(X, y)[:, 0], [10 / 3] * 3 + [11 / 3] * 3)


def test_vmdav_by_hand() -> None:
    # k = 2, gamma = 1: the farthest from the centroid 39/7 is 12; its group {12, 11} grows by 10 (1 away from
    # the group, 7 from its nearest other record 3) to 2k - 1 = 3 records. Of {0, 1, 2, 3} the farthest from
    # 1.5 is 0 (tie with 3, first wins): {0, 1}; it cannot grow (k records must remain): {2, 3} is the last.
    X = np.array([0, 1, 2, 3, 10, 11, 12], dtype=float)[:, None]
    np.testing.assert_allclose(MDAV(k=2, variable=True, gamma=1.0).fit_transform(X)[:, 0],
                               [0.5, 0.5, 2.5, 2.5, 11, 11, 11])
    # fixed-size MDAV splits the cluster: {12, 11}, {0, 1} and the rest {2, 3, 10}
    np.testing.assert_allclose(MDAV(k=2).fit_transform(X)[:, 0], [0.5, 0.5, 5, 5, 5, 11.5, 11.5])
    # a small gamma never grows a group (1 < 0.1 * 7 fails): {12, 11}, then around 10 (farthest from 3.2)
    # its nearest 3, and the last {0, 1, 2}
    np.testing.assert_allclose(MDAV(k=2, variable=True, gamma=0.1).fit_transform(X)[:, 0],
                               [1, 1, 1, 6.5, 6.5, 11.5, 11.5])


def test_vmdav_sizes_and_lower_loss_on_clustered_data() -> None:
    rng = np.random.default_rng(8)
    # clusters of 7 records with k = 5: fixed groups of 5 cut clusters; V-MDAV can keep a cluster whole
    X = np.repeat(rng.normal(scale=20, size=(60, 3)), 7, axis=0) + rng.normal(scale=0.5, size=(420, 3))
    fixed = MDAV(k=5).fit(X)
    var = MDAV(k=5, variable=True, gamma=1.0).fit(X)
    sizes = np.bincount(var.groups_)
    assert sizes.min() >= 5 and sizes.max() <= 9 and (sizes > 5).any()

    def sse(m: MDAV) -> float:
        return float(((X - m.centroids_[m.groups_]) ** 2).sum())

    assert sse(var) < 0.5 * sse(fixed)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.integers(-3, 3).map(float), st.floats(-1e6, 1e6, allow_nan=False),
                          st.just(float("nan"))), min_size=0, max_size=60))
def test_the_copulas_ranks_are_scipys_average_ranks_bit_for_bit(values: list[float]) -> None:
    from scipy.stats import rankdata

    from ppdm.mechanisms.synthetic import _average_ranks

    col = np.array(values, dtype=np.float64)
    assert np.array_equal(_average_ranks(col), np.asarray(rankdata(col), dtype=np.float64), equal_nan=True)


def test_the_copulas_ranks_of_a_million_values_take_a_few_vectors() -> None:
    import tracemalloc

    from ppdm.mechanisms.synthetic import _average_ranks

    col = np.random.default_rng(0).standard_normal(1_000_000)
    tracemalloc.start()
    try:
        _average_ranks(col)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the copy, the order and the ranks (24 MB; scipy's rankdata takes 57 MB here)
    assert peak < 32e6, peak / 1e6


@pytest.mark.parametrize("univariate", [False, True])
def test_mdav_writes_its_release_into_a_table_given_up_and_only_then(univariate: bool) -> None:
    """``overwrite_input`` (perturb_array's own z-scored copy): the same release, in the given buffer; without
    it, and through perturb_array, the caller's table is left as it was."""
    from ppdm.flow.arrays import perturb_array
    from ppdm.mechanisms.microaggregation import MDAV

    rng = np.random.default_rng(4)
    X = rng.normal(size=(900, 4))
    y = rng.integers(0, 3, 900).astype(str)
    plain = MDAV(k=6, univariate=univariate).fit_transform(X.copy(), y)
    given = X.copy()
    out = MDAV(k=6, univariate=univariate).fit_transform(given, y, overwrite_input=True)
    assert out is given
    np.testing.assert_array_equal(out, plain)
    before = X.copy()
    B, _ = perturb_array(X, MDAV(k=6, univariate=univariate), preprocess="zscore", y=y)
    np.testing.assert_array_equal(X, before)
    assert not np.shares_memory(B, X)


def test_mdav_splits_a_large_block_on_its_principal_scores_read_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A block larger than a chunk is scored on its leading principal direction without a copy of it: the
    scores equal those of a direct SVD of the centred block (up to the direction's sign)."""
    from ppdm.mechanisms import microaggregation as mda

    rng = np.random.default_rng(3)
    X = rng.normal(size=(3_000, 6)) @ rng.normal(size=(6, 6)) + 5.0
    rows = np.sort(rng.choice(3_000, size=2_001, replace=False))
    Z = X[rows] - X[rows].mean(axis=0)
    direct = Z @ np.linalg.svd(Z, full_matrices=False)[2][0]
    monkeypatch.setattr(mda, "_SCORE_CHUNK", 128)  # 16 chunks, the last one shorter
    chunked = mda._principal_scores(X, rows)
    sign = np.sign(chunked @ direct)
    np.testing.assert_allclose(sign * chunked, direct, atol=1e-9)
    monkeypatch.setattr(mda, "_SCORE_CHUNK", 10_000)  # one piece, the copy-and-centre path
    np.testing.assert_allclose(np.abs(mda._principal_scores(X, rows)), np.abs(direct), atol=1e-9)
