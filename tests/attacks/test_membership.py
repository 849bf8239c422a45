"""Membership inference from the distance to the release, on releases whose answer is known by construction."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdm.attacks.membership import (
    distance_to_closest,
    membership_advantage,
    outlyingness,
    paired_outlier_advantage,
)
from ppdm.attacks.mixed import column_ranges, from_frames
from ppdm.exceptions import InputError


def _people(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 4)), columns=list("abcd"))
    df["k"] = rng.choice(list("xyz"), n)
    return df


def test_a_release_that_copies_its_members_gives_them_away() -> None:
    members, others = _people(300, 0), _people(300, 1)
    r, m, o = from_frames([members, members, others])
    ranges = column_ranges(r, m, o)
    dm, do = distance_to_closest(m, r, ranges=ranges), distance_to_closest(o, r, ranges=ranges)
    assert (dm == 0).all() and (do > 0).all()
    res = membership_advantage(dm, do)
    assert res["advantage"] == 1.0 and res["threshold"] == 0.0 and res["p_value"] < 1e-10
    assert res["interval"][0] > 0.8


def test_an_independent_sample_gives_nothing_away() -> None:
    members, others, release = _people(600, 0), _people(600, 1), _people(600, 2)
    r, m, o = from_frames([release, members, others])
    ranges = column_ranges(r, m, o)
    res = membership_advantage(distance_to_closest(m, r, ranges=ranges), distance_to_closest(o, r, ranges=ranges))
    assert res["advantage"] < 0.1 and res["interval"][0] == 0.0 and res["p_value"] > 0.01


def test_the_distance_is_the_mean_gower_term() -> None:
    q = pd.DataFrame({"a": [0.0], "k": ["x"]})
    pool = pd.DataFrame({"a": [4.0, 10.0], "k": ["y", "x"]})
    tq, tp = from_frames([q, pool])
    # ranges 10: to row 0, (0.4 + 1) / 2; to row 1, (1.0 + 0) / 2
    assert distance_to_closest(tq, tp)[0] == pytest.approx(0.5)


def test_the_planted_outlier_is_the_most_outlying_record() -> None:
    df = _people(200, 3)
    df.loc[17, list("abcd")] = [9.0, -9.0, 9.0, -9.0]
    t, = from_frames([df])
    out = outlyingness(t, k=5)
    assert int(out.argmax()) == 17 and out.shape == (200,)
    with pytest.raises(Exception, match="k=5"):
        outlyingness(t.take(np.arange(5)), k=5)


def test_paired_statistic_is_zero_when_membership_changes_nothing() -> None:
    rng = np.random.default_rng(4)
    dcr = rng.random(100)
    res = paired_outlier_advantage(dcr, dcr.copy(), rng.random(100), threshold=0.3)
    assert res["advantage"] == 0.0 and res["p_value"] == 1.0
    assert res["interval"][0] < 0 < res["interval"][1] and res["n_outliers"] == 20


def test_paired_statistic_sees_outliers_copied_only_when_they_are_members() -> None:
    rng = np.random.default_rng(5)
    outlying = rng.random(200)
    top = np.argsort(-outlying)[:20]
    dcr_in, dcr_out = rng.uniform(0.2, 0.9, 200), rng.uniform(0.2, 0.9, 200)
    dcr_in[top] = 0.0  # a member outlier is copied into the release
    res = paired_outlier_advantage(dcr_in, dcr_out, outlying, threshold=0.1)
    assert res["advantage"] == 1.0 and res["tpr"] == 1.0 and res["fpr"] == 0.0
    assert res["p_value"] < 1e-5 and res["interval"][0] > 0.6


def test_the_paired_statistic_is_unbiased_where_the_maximised_one_is_not() -> None:
    """Nothing leaks: the paired statistic averages 0; TPR - FPR maximised over thresholds on the same 20 + 20
    values averages about 0.17, above a limit of 0.10 most of the time."""
    rng = np.random.default_rng(6)
    paired, maximised = [], []
    for _ in range(400):
        dcr_in, dcr_out, outlying = rng.random(100), rng.random(100), rng.random(100)
        paired.append(paired_outlier_advantage(dcr_in, dcr_out, outlying, threshold=0.5)["advantage"])
        top = np.argsort(-outlying)[:20]
        maximised.append(membership_advantage(dcr_in[top], dcr_out[top])["advantage"])
    assert abs(np.mean(paired)) < 0.02
    assert 0.13 < np.mean(maximised) < 0.22 and np.mean(np.array(maximised) > 0.10) > 0.5


def test_no_threshold_that_helps_on_all_records_scores_the_outliers_zero() -> None:
    """Members never closer than non-members: no threshold helps on all records, and the outliers' paired
    statistic (the release's membership test feeds it that threshold) says "member" of no one."""
    rng = np.random.default_rng(7)
    dcr_out = rng.uniform(0.0, 0.5, 100)
    dcr_in = dcr_out + 0.5
    overall = membership_advantage(dcr_in, dcr_out)
    assert overall["threshold"] is None
    res = paired_outlier_advantage(dcr_in, dcr_out, rng.random(100), overall["threshold"])
    assert res["advantage"] == 0.0 and res["tpr"] == 0.0 and res["fpr"] == 0.0 and res["threshold"] is None
    assert res["interval"][0] < 0 < res["interval"][1]


def test_bad_input_is_refused() -> None:
    with pytest.raises(InputError, match="one value per record"):
        paired_outlier_advantage(np.zeros(5), np.zeros(4), np.zeros(5), 0.1)
    with pytest.raises(InputError, match="members and of non-members"):
        membership_advantage(np.zeros(0), np.zeros(3))


def _gower_by_definition(q: np.ndarray, qc: np.ndarray, p: np.ndarray, pc: np.ndarray, ranges: np.ndarray) -> float:
    """The mean Gower-type term of two records, written from the definition (a numeric gap costs 1)."""
    terms = [1.0 if np.isnan(a) or np.isnan(b) else abs(a - b) / r for a, b, r in zip(q, p, ranges, strict=True)]
    terms += [float(a != b) for a, b in zip(qc, pc, strict=True)]
    return sum(terms) / len(terms)


@pytest.mark.parametrize("numeric_gaps", [False, True])
def test_distances_equal_the_definition_with_category_gaps_copies_and_number_gaps(numeric_gaps: bool) -> None:
    """Both searches (the compiled one without numeric gaps, the blockwise one with them) give the distance of
    the definition: the closest released row, and the k-th nearest other record among copies."""
    rng = np.random.default_rng(4)
    people = _people(120, 5)
    people.loc[rng.random(120) < 0.1, "k"] = None  # a categorical gap is a category of its own
    release = pd.concat([_people(80, 6), people.iloc[:10], people.iloc[:10]], ignore_index=True)  # copies
    if numeric_gaps:
        release.loc[3, "a"] = np.nan
        people.loc[7, "b"] = np.nan
    q, pool = from_frames([people, release])
    ranges = column_ranges(q, pool)
    d = distance_to_closest(q, pool, ranges=ranges)
    expected = [min(_gower_by_definition(q.numbers[i], q.codes[i], pool.numbers[j], pool.codes[j], ranges)
                    for j in range(pool.n_rows)) for i in range(q.n_rows)]
    np.testing.assert_allclose(d, expected, atol=1e-6)
    out = outlyingness(pool, k=3, ranges=ranges)
    for i in range(pool.n_rows):
        others = sorted(_gower_by_definition(pool.numbers[i], pool.codes[i], pool.numbers[j], pool.codes[j], ranges)
                        for j in range(pool.n_rows) if j != i)
        assert out[i] == pytest.approx(others[2], abs=1e-6)
