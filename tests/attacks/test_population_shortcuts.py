"""The population attacker's shortcuts (a sorted one-column search, a pool profile found once per sweep)
give the answers of the plain searches they replace, computed here with numpy on whole distance tables."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.attacks import _population
from ppdm.attacks._population import _nearest_1d_random_ties, population_linkage

_values = st.lists(st.integers(-6, 6).map(lambda v: v / 2), min_size=1, max_size=40)


@settings(max_examples=200, deadline=None)
@given(pool=_values, queries=_values, offset=st.sampled_from([0.0, 0.25, 1e-13]), seed=st.integers(0, 10**6))
def test_the_sorted_search_picks_a_record_at_the_least_distance(pool: list[float], queries: list[float],
                                                                offset: float, seed: int) -> None:
    p, q = np.array(pool), np.array(queries) + offset
    pick = _nearest_1d_random_ties(q, p, np.random.default_rng(seed))
    least = np.abs(q[:, None] - p[None, :]).min(axis=1)
    np.testing.assert_allclose(np.abs(q - p[pick]), least, atol=1e-11)


@settings(max_examples=200, deadline=None)
@given(pool=_values, queries=_values, seed=st.integers(0, 10**6))
def test_sorting_the_pool_in_place_picks_the_same_records(pool: list[float], queries: list[float],
                                                          seed: int) -> None:
    """A pool the caller gives up is sorted where it is: the picks (ties included) and the random stream
    are those of the search on a sorted copy."""
    p, q = np.array(pool), np.array(queries)
    r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
    copied = _nearest_1d_random_ties(q, p.copy(), r1)
    given_up = p.copy()
    np.testing.assert_array_equal(_nearest_1d_random_ties(q, given_up, r2, sort_p=True), copied)
    np.testing.assert_array_equal(given_up, np.sort(p))  # sorted where it was
    assert r1.random() == r2.random()


def test_every_tie_on_either_side_is_equally_likely() -> None:
    p = np.array([0.0, 2.0, 2.0, 2.0, 4.0, 7.0])
    # 1.0 is as far from record 0 as from records 1-3; 2.0 is one of the three equal records
    for value, tied in ((1.0, [0, 1, 2, 3]), (2.0, [1, 2, 3])):
        share = np.bincount(_nearest_1d_random_ties(np.full(60_000, value), p, np.random.default_rng(1)),
                            minlength=len(p)) / 60_000
        np.testing.assert_allclose(share[tied], 1 / len(tied), atol=0.01)
        assert share[[i for i in range(len(p)) if i not in tied]].sum() == 0


def test_without_ties_the_sorted_search_agrees_with_the_distance_search_and_draws_the_same() -> None:
    rng = np.random.default_rng(3)
    p, q = rng.normal(size=3000), rng.normal(size=2000)
    r1, r2 = np.random.default_rng(9), np.random.default_rng(9)
    plain = np.abs(q[:, None] - p[None, :]).argmin(axis=1)
    np.testing.assert_array_equal(_nearest_1d_random_ties(q, p, r1), plain)
    _population._nearest_random_ties(q[:, None], p[:, None], r2)
    assert r1.random() == r2.random()  # the attacks after it see the same random stream


def _profile(Z: np.ndarray, k: int) -> np.ndarray:
    d = np.sqrt(((Z[:, None, :] - Z[None, :, :]) ** 2).sum(axis=2))
    np.fill_diagonal(d, np.inf)
    return np.sort(d, axis=1)[:, :k]


def test_the_pool_profile_is_the_plain_one_found_once_and_cannot_be_changed(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(300, 4))
    monkeypatch.setattr(_population, "_PROFILE_CACHE", {})
    calls = []
    real = _population.nearest_neighbors
    monkeypatch.setattr(_population, "nearest_neighbors", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = _population._pool_profile(Z, 5)
    np.testing.assert_allclose(first, _profile(Z, 5), rtol=1e-12)
    again = _population._pool_profile(Z.copy(), 5)  # another array with the same values: found, not searched
    assert again is first and len(calls) == 1
    assert not first.flags.writeable
    other = Z.copy()
    other[0, 0] += 1e-9  # any change of the pool is a new pool
    assert _population._pool_profile(other, 5) is not first and len(calls) == 2


def test_population_rates_are_the_same_with_the_profile_found_or_remembered() -> None:
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 5))
    Y = X + rng.normal(0, 0.8, X.shape)
    _population._PROFILE_CACHE.clear()
    cold = population_linkage(X, Y, np.random.default_rng(5))
    warm = population_linkage(X, Y, np.random.default_rng(5))
    assert cold["rates"] == warm["rates"] and "profile" in cold["rates"]


def _z(X: np.ndarray) -> np.ndarray:
    return (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)


@pytest.mark.parametrize("block", [10**9, 70])
def test_the_pool_in_blocks_gives_the_plain_population_answers(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    monkeypatch.setattr(_population, "POOL_BLOCK", block)
    rng = np.random.default_rng(4)
    n = 500
    X = rng.normal(size=(n, 4)) @ rng.normal(size=(4, 4)) + 3.0
    Y = X + rng.normal(0, 0.6, X.shape)
    group = rng.integers(0, 3, n).astype(str)[:, None]
    targets = np.sort(rng.choice(n, 200, replace=False))
    res = population_linkage(X, Y, np.random.default_rng(0), targets=targets, categories=(group, group),
                             mechanism={"method": "mult-noise", "preprocess": "zscore", "params": {"sigma": 0.3}})
    mu, sd = X.mean(axis=0), X.std(axis=0, ddof=1)
    Za, Zt = _z(X), (Y[targets] - mu) / sd
    d = ((Zt[:, None, :] - Za[None, :, :]) ** 2).sum(axis=2)
    assert res["rates"]["population_z"] == np.mean(d.argmin(axis=1) == targets)
    na, nb = np.linalg.norm(Za, axis=1), np.linalg.norm(Zt, axis=1)
    assert res["rates"]["norm"] == np.mean(np.abs(nb[:, None] - na[None, :]).argmin(axis=1) == targets)
    same = group[targets, 0][:, None] == group[None, :, 0]
    assert res["rates"]["mixed"] == np.mean(np.where(same, d, np.inf).argmin(axis=1) == targets)
    a = np.where(np.abs(Za) < 1e-6, 1e-6, Za)
    nll = ((Zt[:, None, :] - a[None]) ** 2 / (2 * 0.3 ** 2 * a[None] ** 2)).sum(axis=2) + np.log(np.abs(a)).sum(1)
    assert res["rates"]["multiplicative"] == np.mean(nll.argmin(axis=1) == targets)
