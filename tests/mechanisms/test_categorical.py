"""Categorical mechanisms: PRAM, global recoding of rare categories, local suppression (hand-computed cases)."""

from __future__ import annotations

import numpy as np
import pytest

from ppdm.exceptions import ParameterError
from ppdm.mechanisms.categorical import (
    PRAM,
    LocalSuppression,
    RareCategoryRecoding,
    invariant_matrix,
    k_anonymity_counts,
    pram_matrix,
)

# -- PRAM --------------------------------------------------------------------------------------------


def test_invariant_matrix_hand_computed() -> None:
    # counts (30, 10), P = [[.9, .1], [.5, .5]]: lam = counts P = (32, 8);
    # Q = [[27/32, 5/32], [3/8, 5/8]]; R = P Q = [[25.5/32, 6.5/32], [19.5/32, 12.5/32]];
    # alpha = 1/2: (R + I) / 2
    R = invariant_matrix(np.array([[0.9, 0.1], [0.5, 0.5]]), np.array([30.0, 10.0]), alpha=0.5)
    expected = np.array([[0.8984375, 0.1015625], [0.3046875, 0.6953125]])
    np.testing.assert_allclose(R, expected, atol=1e-12)
    np.testing.assert_allclose(np.array([30.0, 10.0]) @ R, [30.0, 10.0])


@pytest.mark.parametrize("alpha", [0.0, 0.3, 1.0])
def test_pram_matrix_is_row_stochastic_and_invariant(alpha: float) -> None:
    counts = np.array([500.0, 300.0, 150.0, 49.0, 1.0])
    R = pram_matrix(counts, 0.4, alpha, np.random.default_rng(3))
    assert (R >= -1e-15).all()
    np.testing.assert_allclose(R.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(counts @ R, counts, rtol=1e-10)
    if alpha == 0.0:
        np.testing.assert_allclose(R, np.eye(5))


def test_pram_keeps_categories_and_frequencies() -> None:
    rng = np.random.default_rng(0)
    shares = np.array([0.5, 0.3, 0.15, 0.05])
    n = 20_000
    x = rng.choice(np.array(["a", "b", "c", "d"], dtype=object), size=n, p=shares)
    out = PRAM(pd=0.3, alpha=1.0, random_state=1).fit_transform(x)
    assert out.shape == (n, 1)
    assert set(out[:, 0]) <= {"a", "b", "c", "d"}
    assert (out[:, 0] != x).mean() > 0.2  # something changed
    before = np.array([(x == c).sum() for c in "abcd"])
    after = np.array([(out[:, 0] == c).sum() for c in "abcd"])
    # a released count is a sum of n independent draws: its standard deviation is at most sqrt(n) / 2
    assert np.all(np.abs(after - before) <= 5 * np.sqrt(n) / 2), (before, after)


def test_pram_draws_follow_its_matrix() -> None:
    x = np.array(["a"] * 6000 + ["b"] * 4000, dtype=object)
    pram = PRAM(pd=0.5, alpha=1.0, random_state=4)
    out = pram.fit_transform(x)[:, 0]
    R = pram.matrices_[0][None]
    a_to_b = (out[x == "a"] == "b").mean()
    b_to_a = (out[x == "b"] == "a").mean()
    assert abs(a_to_b - R[0, 1]) < 4 * np.sqrt(0.25 / 6000)
    assert abs(b_to_a - R[1, 0]) < 4 * np.sqrt(0.25 / 4000)


def test_pram_within_strata_keeps_each_stratum_apart() -> None:
    # stratum "s" has only a/b, stratum "t" only c: PRAM within strata never moves a record to c or c away
    x = np.array(["a", "b"] * 200 + ["c"] * 100, dtype=object)
    y = np.array(["s"] * 400 + ["t"] * 100)
    out = PRAM(pd=0.2, alpha=1.0, random_state=0).fit_transform(x, y)[:, 0]
    assert set(out[:400]) <= {"a", "b"}
    assert (out[400:] == "c").all()


def test_pram_unchanged_at_pd_one_and_missing_stays_missing() -> None:
    x = np.array([["a", None], ["b", "u"], ["a", "v"], ["c", "u"]], dtype=object)
    out = PRAM(pd=1.0, alpha=1.0, random_state=0).fit_transform(x)
    assert out.tolist() == x.tolist()
    out = PRAM(pd=0.1, alpha=1.0, random_state=0).fit_transform(x)
    assert out[0, 1] is None


def test_pram_rejects_bad_parameters() -> None:
    with pytest.raises(ParameterError, match="pd"):
        PRAM(pd=0.0).fit_transform(np.array(["a", "b"], dtype=object))
    with pytest.raises(ParameterError, match="alpha"):
        PRAM(alpha=1.5).fit_transform(np.array(["a", "b"], dtype=object))


# -- global recoding ---------------------------------------------------------------------------------


def test_recoding_merges_rare_categories_into_the_most_frequent_rare_one() -> None:
    # shares a 10/13, b c d 1/13 each (0.077 < 0.15); together 3/13 = 0.23 >= 0.15: published as 'b'
    # (equal counts: the first by text)
    x = np.array(["a"] * 10 + ["b", "c", "d"], dtype=object)
    rec = RareCategoryRecoding(min_share=0.15).fit(x)
    assert rec.mapping_ == [{"c": "b", "d": "b"}]
    out = rec.transform(x)[:, 0]
    assert out.tolist() == ["a"] * 10 + ["b", "b", "b"]


def test_recoding_into_the_most_frequent_category_when_the_rare_ones_stay_rare() -> None:
    # c 3 %, d 2 %: together 5 % < 6 %, so both are published as the most frequent category a
    x = np.array(["a"] * 50 + ["b"] * 45 + ["c"] * 3 + ["d"] * 2 + [None], dtype=object)
    rec = RareCategoryRecoding(min_share=0.06).fit(x)
    assert rec.mapping_ == [{"c": "a", "d": "a"}]
    out = rec.transform(x)[:, 0]
    assert (out[95:100] == "a").all() and out[100] is None
    assert set(out[:-1]) <= {"a", "b"}


def test_recoding_leaves_a_column_without_rare_categories() -> None:
    x = np.array([["a", "u"], ["b", "u"], ["a", "v"], ["b", "v"]], dtype=object)
    rec = RareCategoryRecoding(min_share=0.1).fit(x)
    assert rec.mapping_ == [{}, {}]
    assert rec.transform(x).tolist() == x.tolist()


# -- local suppression -------------------------------------------------------------------------------


def test_k_anonymity_counts_with_blank_matching_anything() -> None:
    # (a, -) matches (a, -) and (a, x); (a, x) matches both; (b, x) only itself
    x = np.array([["a", None], ["a", "x"], ["b", "x"]], dtype=object)
    assert k_anonymity_counts(x).tolist() == [2, 2, 1]


def test_local_suppression_hand_computed_tie() -> None:
    # (a, y) is unique (k = 2); blanking either column makes it match 3 records: a tie, both columns have
    # 2 categories, so the leftmost is blanked; one cell in all
    x = np.array([["a", "x"], ["a", "x"], ["a", "y"], ["b", "y"], ["b", "y"]], dtype=object)
    sup = LocalSuppression(k=2)
    out = sup.fit_transform(x)
    assert out.tolist() == [["a", "x"], ["a", "x"], [None, "y"], ["b", "y"], ["b", "y"]]
    assert sup.n_suppressed_ == 1


def test_local_suppression_blanks_the_cell_that_gains_most() -> None:
    # (a, y) is unique; blanking column 0 gives (-, y), matching 4 records; column 1 gives (a, -), matching 3
    x = np.array([["a", "x"], ["a", "x"], ["b", "y"], ["b", "y"], ["b", "y"], ["a", "y"]], dtype=object)
    out = LocalSuppression(k=2).fit_transform(x)
    assert out[5].tolist() == [None, "y"]
    assert (out[:5] == x[:5]).all()


def test_local_suppression_reaches_k_anonymity_and_respects_fixed_columns() -> None:
    rng = np.random.default_rng(2)
    n = 300
    x = np.column_stack([rng.integers(0, 10, n), rng.choice(list("abcd"), n), rng.choice(list("uvw"), n),
                         rng.choice(list("pq"), n)]).astype(object)
    for k in (2, 5):
        sup = LocalSuppression(k=k, n_fixed=1)
        out = sup.fit_transform(x)
        assert (out[:, 0] == x[:, 0]).all()  # the fixed column is never blanked
        assert (k_anonymity_counts(out) >= k).all()
        kept = out != None  # noqa: E711 (element-wise test for blanks)
        assert (out[kept] == x[kept]).all()  # cells are blanked, never changed
        assert sup.n_suppressed_ == int((~kept).sum())


def test_local_suppression_without_need_changes_nothing() -> None:
    x = np.array([["a", "x"]] * 3 + [["b", "y"]] * 3, dtype=object)
    sup = LocalSuppression(k=3)
    assert sup.fit_transform(x).tolist() == x.tolist()
    assert sup.n_suppressed_ == 0
