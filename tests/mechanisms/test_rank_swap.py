"""Rank swapping: hand-checked swaps, exact marginals, rank distances within the window."""

from __future__ import annotations

import numpy as np
import pytest

from ppdm.exceptions import ParameterError
from ppdm.mechanisms.swapping import RankSwap, rank_swap_column


def test_each_swap_exchanges_two_values_within_the_window() -> None:
    rng = np.random.default_rng(0)
    x = rng.permutation(np.arange(100.0))  # value = rank
    perm = rank_swap_column(x, 5, np.random.default_rng(1))
    y = x[perm]
    assert sorted(y) == sorted(x)  # a permutation of the values
    moved = y != x
    assert np.all(np.abs(y - x) <= 5)  # ranks are the values here: every swap within 5 ranks
    # swaps are pairwise: where row i received row j's value, row j received row i's
    assert np.array_equal(perm[perm], np.arange(100))
    assert moved.mean() > 0.9  # nearly every value found a partner


def test_a_window_of_zero_releases_the_input() -> None:
    X = np.random.default_rng(2).normal(size=(50, 3))
    assert np.array_equal(RankSwap(p=0, random_state=0).fit_transform(X), X)


def test_columns_keep_their_distribution_and_the_key_repeats_the_release() -> None:
    X = np.random.default_rng(3).lognormal(size=(400, 4))
    a = RankSwap(p=5, random_state=7).fit_transform(X)
    b = RankSwap(p=5, random_state=7).fit_transform(X)
    c = RankSwap(p=5, random_state=8).fit_transform(X)
    assert np.array_equal(np.sort(a, axis=0), np.sort(X, axis=0))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    # ranks move by at most 5 % of 400 = 20
    ranks = np.argsort(np.argsort(X, axis=0), axis=0)
    released_ranks = np.argsort(np.argsort(a, axis=0), axis=0)
    assert np.abs(ranks - released_ranks).max() <= 20


def test_p_out_of_range_is_refused() -> None:
    with pytest.raises(ParameterError):
        RankSwap(p=150).fit(np.zeros((5, 2)))
