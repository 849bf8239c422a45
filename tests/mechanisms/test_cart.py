"""Sequential CART synthesis: values come from leaves of >= min_leaf real records, within each class."""

from __future__ import annotations

import numpy as np
import pytest

from ppdm.exceptions import ParameterError
from ppdm.mechanisms.cart import CARTSynthesis, _leaf_donors


def _table(n: int = 600, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    a = rng.normal(size=n) + 3 * y
    b = 2 * a + rng.normal(scale=0.5, size=n)
    cat = rng.integers(0, 3, n) + (a > 1.5)  # 4 categories, related to a
    onehot = np.eye(4)[cat]
    return np.column_stack([a, b, onehot]), y


def test_leaf_donors_come_from_the_same_leaf() -> None:
    rng = np.random.default_rng(0)
    real = np.array([3, 1, 3, 2, 1, 3])
    synth = np.array([1, 2, 3, 3, 1])
    donors = _leaf_donors(real, synth, rng)
    assert np.array_equal(real[donors], synth)


def test_every_released_value_is_a_real_value_of_its_class_and_blocks_stay_valid() -> None:
    X, y = _table()
    # without tail coding (tail_k=1) every value is a donor's
    B = CARTSynthesis(min_leaf=10, variables=[[2, 3, 4, 5]], tail_k=1, random_state=1).fit_transform(X, y)
    assert B.shape == X.shape
    for c in (0, 1):
        rows = y == c
        for j in (0, 1):  # a donor's value, from the same class
            assert np.isin(B[rows, j], X[rows, j]).all()
    # the one-hot block is drawn as a unit: exactly one category per released row
    assert np.array_equal(B[:, 2:].sum(axis=1), np.ones(len(B)))
    assert set(np.unique(B[:, 2:])) <= {0.0, 1.0}


def test_relations_survive_and_rows_are_not_copied() -> None:
    X, y = _table(2000)
    B = CARTSynthesis(min_leaf=20, variables=[[2, 3, 4, 5]], random_state=2).fit_transform(X, y)
    for c in (0, 1):
        rows = y == c
        r_x = np.corrcoef(X[rows, 0], X[rows, 1])[0, 1]
        r_b = np.corrcoef(B[rows, 0], B[rows, 1])[0, 1]
        assert r_b > 0.8 * r_x  # b follows a through the tree's leaves
    # the category's dependence on a survives (the original has category 3 only where a > 1.5 on average)
    high = X[:, 5] == 1
    assert B[B[:, 5] == 1, 0].mean() > B[B[:, 5] == 0, 0].mean() + 0.5 * (X[high, 0].mean() - X[~high, 0].mean())
    # whole rows are rarely a person's own row (each variable from an independently drawn donor)
    own = np.mean([np.array_equal(B[i], X[i]) for i in range(len(X))])
    assert own < 0.01


def test_the_draws_are_the_key_and_a_seed_repeats_them() -> None:
    X, y = _table()
    a = CARTSynthesis(random_state=5).fit_transform(X, y)
    assert np.array_equal(a, CARTSynthesis(random_state=5).fit_transform(X, y))
    assert not np.array_equal(a, CARTSynthesis(random_state=6).fit_transform(X, y))


def test_a_sampled_fit_draws_from_the_sample_only() -> None:
    X, y = _table(3000)
    B = CARTSynthesis(max_fit_rows=200, per_class=False, random_state=0).fit_transform(X)
    # at most 200 distinct donors' values per column
    assert len(np.unique(B[:, 0])) <= 200 and len(B) == 3000


def test_bad_parameters_are_clear_errors() -> None:
    X, y = _table(100)
    with pytest.raises(ParameterError, match="min_leaf"):
        CARTSynthesis(min_leaf=0).fit_transform(X, y)
    with pytest.raises(ParameterError, match="disjoint"):
        CARTSynthesis(variables=[[0, 1], [1, 2]]).fit_transform(X, y)
    with pytest.raises(ParameterError, match="whole table"):
        CARTSynthesis(random_state=0).fit(X, y).transform(X)


def test_leaves_found_a_block_of_rows_at_a_time_give_the_same_release(monkeypatch: pytest.MonkeyPatch) -> None:
    from ppdm.mechanisms import cart

    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 5)) @ rng.normal(size=(5, 5))
    y = rng.integers(0, 3, 1500)
    whole = CARTSynthesis(min_leaf=10, random_state=4).fit_transform(X, y)
    monkeypatch.setattr(cart._leaves, "__defaults__", (97,))  # blocks of 97 rows, a short last one
    np.testing.assert_array_equal(CARTSynthesis(min_leaf=10, random_state=4).fit_transform(X, y), whole)


def test_tail_coding_keeps_rare_and_extreme_values_out_of_the_release() -> None:
    """With tail coding (the default, k = min_leaf) no released number is one that fewer than k records of its
    class hold, and nothing lies beyond the class's k-th most extreme values; a category fewer than k records
    hold is never released."""
    X, y = _table(600)
    X = np.column_stack([X, np.zeros(len(X))])
    X[:5, 2:6], X[:5, 6] = 0.0, 1.0  # a fifth category, held by five records only
    k = 20
    B = CARTSynthesis(min_leaf=k, variables=[[2, 3, 4, 5, 6]], random_state=3).fit_transform(X, y)
    assert not B[:, 6].any() and np.array_equal(B[:, 2:].sum(axis=1), np.ones(len(B)))
    for c in (0, 1):
        rows = y == c
        for j in (0, 1):
            real = np.sort(X[rows, j])
            values, counts = np.unique(real, return_counts=True)
            rare = set(values[counts < k])
            released = B[rows, j]
            assert released.min() >= real[k - 1] - 1e-12 and released.max() <= real[-k] + 1e-12
            assert not (set(released) & rare - {real[k - 1], real[-k]})  # interior rare values are coded


@pytest.mark.parametrize("max_fit_rows", [20_000, 300])
def test_the_unvalidated_trees_release_what_the_validated_ones_do(monkeypatch: pytest.MonkeyPatch,
                                                                   max_fit_rows: int) -> None:
    """Finite input skips scikit-learn's validation of each tree's input; the release is the same as with it
    (also when the trees are grown on a sample of the stratum and the other rows fall into their leaves)."""
    import ppdm.mechanisms.cart as cart

    X, y = _table(n=900, seed=3)
    X[:, 0] *= 1e3  # values far from float32's precision
    fast = CARTSynthesis(min_leaf=15, variables=[[2, 3, 4, 5]], max_fit_rows=max_fit_rows,
                         random_state=7).fit_transform(X, y)
    monkeypatch.setattr(cart, "_needs_validation", lambda R32: True)
    checked = CARTSynthesis(min_leaf=15, variables=[[2, 3, 4, 5]], max_fit_rows=max_fit_rows,
                            random_state=7).fit_transform(X, y)
    assert np.array_equal(fast, checked)


def test_non_finite_input_is_validated() -> None:
    from ppdm.mechanisms.cart import _needs_validation

    assert not _needs_validation(np.ones((3, 2), dtype=np.float32))
    assert _needs_validation(np.array([[1.0, np.nan]], dtype=np.float32))
    with np.errstate(over="ignore"):  # beyond float32: infinite there
        assert _needs_validation(np.array([[1e39]]).astype(np.float32))
