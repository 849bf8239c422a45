"""Singling out on tables where the answer is known by construction, and the population-sample finding."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdm import datasets
from ppdm.attacks._predicates import TOP, ColumnIndex, Predicates, count_matches
from ppdm.attacks.mixed import from_frames
from ppdm.attacks.singling_out import (
    control_scale,
    singling_out,
    targeted_predicates,
    univariate_predicates,
)
from ppdm.exceptions import InputError, ParameterError

FAMILIES = ("univariate", "multivariate", "targeted")


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return datasets.load("adult")


def _split(df: pd.DataFrame, seed: int, sizes: tuple[int, ...]) -> list[pd.DataFrame]:
    idx = np.random.default_rng(seed).permutation(len(df))
    bounds = np.cumsum((0,) + sizes)
    return [df.iloc[idx[a:b]].reset_index(drop=True) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _brute_counts(V: np.ndarray, P: Predicates) -> np.ndarray:
    return np.array([np.all((V[:, P.columns[i]] >= P.low[i]) & (V[:, P.columns[i]] <= P.high[i]), axis=1).sum()
                     for i in range(len(P))])


@pytest.mark.parametrize("bitsets", [True, False])
def test_counts_match_a_brute_force_count(bitsets: bool) -> None:
    rng = np.random.default_rng(0)
    V = np.asfortranarray(rng.integers(0, 6, size=(300, 5)).astype(float))
    V[rng.random(V.shape) < 0.05] = np.inf  # gaps
    B = 2000
    cols = np.sort(np.argsort(rng.random((B, 5)), axis=1)[:, :3], axis=1)
    value = rng.integers(0, 6, size=(B, 3)).astype(float)
    kind = rng.integers(0, 4, size=(B, 3))  # ==, <=, >=, isna
    low = np.select([kind == 1, kind == 3], [-np.inf, np.inf], value)
    high = np.select([kind == 2, kind == 3], [TOP, np.inf], value)
    P = Predicates(cols, low, high)
    index = ColumnIndex(V, bitsets=bitsets)
    assert (index.prefix is not None) == bitsets
    np.testing.assert_array_equal(count_matches(index, P), _brute_counts(V, P))
    one = P.take(np.arange(B))
    one = Predicates(one.columns[:, :1], one.low[:, :1], one.high[:, :1])
    np.testing.assert_array_equal(count_matches(index, one), _brute_counts(V, one))


def test_univariate_predicates_are_anonymeters_and_each_isolates_one_released_row() -> None:
    release = pd.DataFrame({"age": [20.0, 30.0, 30.0, 40.0], "colour": ["a", "a", "b", None]})
    r, = from_frames([release])
    index = ColumnIndex(r.values())
    numeric = np.array([True, False])
    preds, candidates = univariate_predicates(index, numeric, rng=np.random.default_rng(0), n=100)
    # age <= 20, age >= 40, age == 20, age == 40, colour isna, colour == b
    assert candidates == 6 and len(preds) == 6
    assert (count_matches(index, preds) == 1).all()
    shown = {(int(c), float(lo), float(hi)) for c, lo, hi in zip(preds.columns[:, 0], preds.low[:, 0],
                                                                 preds.high[:, 0], strict=True)}
    b = float(r.codes[2, 0])
    assert shown == {(0, -np.inf, 20.0), (0, 40.0, TOP), (0, 20.0, 20.0), (0, 40.0, 40.0), (1, np.inf, np.inf),
                     (1, b, b)}


def test_a_release_that_copies_its_members_singles_them_out(adult: pd.DataFrame) -> None:
    members, control = _split(adult, 1, (400, 150))
    r, m, c = from_frames([members, members, control])
    # budget=1: shares over the predicates found, so that a copy scores exactly 1
    res = singling_out(r, m, c, rng=np.random.default_rng(0), n_predicates=200, budget=1)
    for f in FAMILIES:
        # every predicate isolating one released row isolates that member: main is 1, so the risk is 1
        assert res[f]["n_predicates"] > 50
        assert res[f]["main"] == 1.0 and res[f]["risk"] == 1.0 and res[f]["unscaled"]["risk"] == 1.0
    assert res["risk"] == 1.0


def test_targeted_predicates_find_the_one_copied_outlier(adult: pd.DataFrame) -> None:
    members, control, fresh = _split(adult, 2, (500, 200, 500))
    members.loc[0, ["age", "fnlwgt", "native-country"]] = [97.0, 1_490_400.0, "Atlantis"]
    release = fresh.copy()
    release.iloc[0] = members.iloc[0]  # the release copies this one person, and no other member
    r, m, c = from_frames([release, members, control])
    numeric = np.arange(r.numbers.shape[1] + r.codes.shape[1]) < r.numbers.shape[1]
    preds, _ = targeted_predicates(ColumnIndex(r.values()), numeric, rng=np.random.default_rng(0), n=50,
                                   n_cols=3, max_attempts=1000)
    first = preds.take(np.array([0]))
    assert count_matches(ColumnIndex(r.values()), first)[0] == 1
    assert count_matches(ColumnIndex(m.values()), first)[0] == 1
    assert count_matches(ColumnIndex(c.values()), first)[0] == 0
    # that released row is the copied one
    V = r.values()
    ok = np.all((V[:, first.columns[0]] >= first.low[0]) & (V[:, first.columns[0]] <= first.high[0]), axis=1)
    assert np.flatnonzero(ok).tolist() == [0]


def test_targeted_predicates_try_each_combination_of_a_rows_rarest_cells_once() -> None:
    """Six distinct released rows of five columns: each row's combinations of 3 of its 5 rarest cells are 10,
    so 60 attempts try every targeted predicate there is (random draws of combinations spent the whole budget
    of attempts, 50,000 in a release, re-drawing the same ones), and every row that some combination of its
    own cells isolates is found."""
    import itertools

    rng = np.random.default_rng(3)
    V = rng.integers(0, 3, size=(6, 5)).astype(float)
    numeric = np.zeros(5, dtype=bool)
    index = ColumnIndex(V)
    preds, attempts = targeted_predicates(index, numeric, rng=np.random.default_rng(0), n=1000, n_cols=3,
                                          max_attempts=50_000)
    assert attempts == 60
    found = {(tuple(c), tuple(lo)) for c, lo in zip(preds.columns.tolist(), preds.low.tolist(), strict=True)}
    brute = set()
    for row in V:
        for cols in itertools.combinations(range(5), 3):
            if (np.all(V[:, cols] == row[list(cols)], axis=1)).sum() == 1:
                brute.add((cols, tuple(row[list(cols)])))
    assert found == brute


def test_a_release_of_other_people_is_flagged_by_anonymeters_scaling_but_not_at_equal_size(
        adult: pd.DataFrame) -> None:
    """2,000 members, 600 control records, and a release of 2,000 other people of the same population: the
    release tells nothing about its members, yet the scaled multivariate excess is far above 0.05 (as
    anonymeter 1.1 scores it); at equal sizes the excess vanishes."""
    members, control, fresh = _split(adult, 0, (2000, 600, 2000))
    r, m, c = from_frames([fresh, members, control])
    res = singling_out(r, m, c, rng=np.random.default_rng(100))
    multi = res["multivariate"]
    assert res["control_scale"]["factor"] == pytest.approx(601 / 2001)
    assert multi["main"] > multi["control"] > multi["control_scaled"]
    assert multi["risk"] > 0.10  # anonymeter 1.1 gives 0.17-0.21 on such splits
    assert multi["unscaled"]["risk"] < multi["risk"]
    for f in FAMILIES:
        assert res[f]["equal_size"]["risk"] < 0.05, (f, res[f]["equal_size"])
    assert res["equal_size"]["size"] == 600


def test_duplicates_count_once_as_anonymeter_counts_them() -> None:
    release = pd.DataFrame({"x": [1.0, 3.0, 3.0, 4.0], "k": ["a", "c", "c", "d"]})
    members = pd.DataFrame({"x": [1.0, 1.0, 2.0, 2.0], "k": ["a", "a", "b", "b"]})  # two records, each twice
    control = pd.DataFrame({"x": [7.0, 8.0], "k": ["e", "f"]})
    r, m, c = from_frames([release, members, control])
    res = singling_out(r, m, c, rng=np.random.default_rng(0), n_predicates=50, budget=1)
    uni = res["univariate"]
    # released (1, a), (3, c), (4, d): x <= 1, x >= 4, x == 1, x == 3, x == 4, k == a, k == c, k == d; of these
    # x <= 1, x == 1 and k == a isolate the deduplicated member (1, a), none would isolate a duplicated one
    assert uni["n_predicates"] == 8 and uni["main"] == pytest.approx(3 / 8) and uni["control"] == 0.0
    # over the default budget of 300 predicates, as anonymeter counts successes over its n_attacks
    uni = singling_out(r, m, c, rng=np.random.default_rng(0), n_predicates=50)["univariate"]
    assert uni["budget"] == 300 and uni["main"] == pytest.approx(3 / 300)


def test_control_scale_is_anonymeters_ratio() -> None:
    assert control_scale(2000, 600, "anonymeter") == pytest.approx(601 / 2001)
    assert control_scale(500, 500, "anonymeter") == 1.0
    assert control_scale(2000, 600, "none") == 1.0
    with pytest.raises(ParameterError, match="control_scale"):
        control_scale(10, 5, "fitted")


def test_bad_input_is_refused(adult: pd.DataFrame) -> None:
    members, control = _split(adult, 3, (100, 50))
    r, m = from_frames([members, members])
    c, = from_frames([control.drop(columns="age")])
    with pytest.raises(InputError, match="same columns"):
        singling_out(r, m, c, rng=np.random.default_rng(0))
    with pytest.raises(ParameterError, match="at least 1"):
        singling_out(r, m, m, rng=np.random.default_rng(0), n_predicates=0)
