"""Linkability on releases whose answer is known by construction."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdm.attacks.linkability import default_splits, linkability
from ppdm.attacks.mixed import from_frames
from ppdm.exceptions import ParameterError


def _people(n: int, seed: int) -> pd.DataFrame:
    """Six correlated measurements and two categories, drawn from one population."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 2))
    X = z @ rng.normal(size=(2, 6)) + 0.5 * rng.normal(size=(n, 6))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(6)])
    df["site"] = np.where(z[:, 0] > 0, "north", "south")
    df["grade"] = rng.choice(list("abcd"), n)
    return df


def test_a_release_equal_to_its_members_links_every_member() -> None:
    members, control = _people(400, 0), _people(200, 1)
    r, m, c = from_frames([members, members, control])
    res = linkability(r, m, c, rng=np.random.default_rng(0))
    for s in res["splits"]:
        assert s["main"] == 1.0  # each half's nearest released row is the member's own, at distance 0
        assert s["control"] < 0.1
    assert res["risk"] > 0.9 and res["interval"][0] > 0.85


def test_an_independent_sample_links_no_more_members_than_controls() -> None:
    members, control, other = _people(400, 0), _people(300, 1), _people(400, 2)
    r, m, c = from_frames([other, members, control])
    res = linkability(r, m, c, rng=np.random.default_rng(0))
    assert res["risk"] < 0.05 and res["interval"][0] == 0.0
    for s in res["splits"]:
        assert s["neighbors"]["main"] >= s["main"]  # ten neighbours a side link at least as often as one


def test_default_splits_start_with_anonymeters_halves_without_the_label() -> None:
    df = _people(10, 0)
    df["label"] = 1
    t, = from_frames([df])
    splits = default_splits(t, rng=np.random.default_rng(0), label="label", n_random=3)
    cols = [c for c in df.columns if c != "label"]
    assert splits[0] == (tuple(cols[:4]), tuple(cols[4:]))
    assert 2 <= len(splits) <= 4
    for a, b in splits[1:]:
        assert not set(a) & set(b) and set(a) | set(b) == set(df.columns)


def test_one_column_beside_the_label_is_split_from_the_label() -> None:
    """No usual split without two columns besides the label: the halvings of every column pair the column
    with the label. Released as they are, a member's number finds its own row and a label shared by pairs of
    members finds it half the time; a label of two classes, one row among half of them."""
    members, control = _people(300, 9)[["x0"]], _people(150, 10)[["x0"]]
    members["label"], control["label"] = (np.arange(300) // 2).astype(str), (np.arange(150) // 2 + 1000).astype(str)
    r, m, c = from_frames([members, members, control])
    splits = default_splits(r, rng=np.random.default_rng(0), label="label")
    assert splits and all({*a, *b} == {"x0", "label"} and len(a) == len(b) == 1 for a, b in splits)
    res = linkability(r, m, c, rng=np.random.default_rng(0), label="label")
    assert 0.35 < res["risk"] < 0.65
    members["label"] = np.where(members["x0"] > 0, "p", "q")
    r, m, c = from_frames([members, members, control.assign(label=np.where(control["x0"] > 0, "p", "q"))])
    assert linkability(r, m, c, rng=np.random.default_rng(0), label="label")["risk"] < 0.05


def test_a_one_column_release_has_nothing_to_link() -> None:
    t, = from_frames([_people(50, 11)[["x0"]]])
    res = linkability(t, t, t, rng=np.random.default_rng(0))
    assert res["risk"] == 0.0 and "one column" in res["not_applicable"]
    with pytest.raises(ParameterError, match="two columns"):
        default_splits(t, rng=np.random.default_rng(0))


def test_the_worst_split_is_reported_with_its_columns() -> None:
    members, control = _people(300, 3), _people(150, 4)
    weak = members.copy()
    weak[["x0", "x1", "x2"]] = _people(300, 5)[["x0", "x1", "x2"]].to_numpy()  # these columns tell nothing
    r, m, c = from_frames([weak, members, control])
    splits = [(("x0", "x1"), ("x2", "site")), (("x3", "x4"), ("x5", "grade"))]
    res = linkability(r, m, c, rng=np.random.default_rng(0), splits=splits)
    assert res["split"] == 1 and res["columns"] == [["x3", "x4"], ["x5", "grade"]]
    assert res["splits"][1]["risk"] > res["splits"][0]["risk"]


def test_targets_are_sampled_and_the_sample_is_stated() -> None:
    members, control = _people(300, 6), _people(100, 7)
    r, m, c = from_frames([members, members, control])
    res = linkability(r, m, c, rng=np.random.default_rng(0), n_targets=50)
    assert res["n_targets"] == {"members": 50, "control": 50}
    assert res["sampled"] == {"members": True, "control": True}
    assert res["splits"][0]["n_main"] == 50


def test_bad_splits_are_refused() -> None:
    t, = from_frames([_people(20, 8)])
    for split, match in (((("x0", "x1"), ("x1", "x2")), "both sides"), ((("x0",), ()), "both sides"),
                         ((("x0",), ("nope",)), "nope")):
        with pytest.raises(ParameterError, match=match):
            linkability(t, t, t, rng=np.random.default_rng(0), splits=[split])


def test_a_group_of_identical_released_rows_links_each_of_its_members_once_in_its_size() -> None:
    """20 members released as one row 20 times (a microaggregated group) and 20 released as they are: each
    source's lookup lands on one of the 20 copies, so a group member is linked with probability 1/20, the
    others always: about 21 of 40. (Read at the copies' search positions instead of their rows, the group's
    size came from unrelated rows: a released-as-is member met a copy's 1/20 and about 11 of 40 were linked.)"""
    rng0 = np.random.default_rng(5)
    distinct = rng0.uniform(5, 50, size=(20, 4))
    members = pd.DataFrame(np.vstack([rng0.normal(0, 0.01, size=(20, 4)), distinct]), columns=list("abcd"))
    release = pd.DataFrame(np.vstack([np.zeros((20, 4)), distinct]), columns=list("abcd"))
    control = pd.DataFrame(rng0.uniform(5, 50, size=(40, 4)), columns=list("abcd"))
    r, m, c = from_frames([release, members, control])
    linked = [linkability(r, m, c, rng=np.random.default_rng(s), splits=[(("a", "b"), ("c", "d"))],
                          n_targets=None)["splits"][0]["main"] * 40 for s in range(20)]
    assert 19.5 <= float(np.mean(linked)) <= 23.0


def test_distinct_rows_tied_on_a_source_are_found_in_proportion_to_their_copies() -> None:
    """Identical released rows are searched once, standing for their copies: a source that ties a row held 3
    times with a row held once lands on the first 3 times in 4, as a lookup among the 4 rows would."""
    from ppdm.attacks.mixed import GowerTerms, column_ranges, k_smallest, summed

    pool, queries = from_frames([pd.DataFrame({"a": [0.0, 0.0], "b": [1.0, 2.0]}), pd.DataFrame({"a": [0.0],
                                                                                                 "b": [9.0]})])
    first = []
    for s in range(4000):
        terms = GowerTerms(queries, pool, [0], [], ranges=column_ranges(pool, queries), rng=np.random.default_rng(s),
                           weights=np.array([3.0, 1.0]))
        (_, t), = terms.blocks()
        first.append(int(terms.order[k_smallest(summed(t, [0]), 1)[0, 0]]) == 0)
    assert 0.72 <= float(np.mean(first)) <= 0.78


def test_linkability_of_copies_is_the_same_searched_once_or_row_by_row() -> None:
    """A release of microaggregated groups (each centroid released 5 times) links as many members whether its
    identical rows are searched once each (the default) or spread apart by a speck of noise (searched one by
    one): the copies' weights stand for the rows they replace."""
    rng0 = np.random.default_rng(8)
    members = pd.DataFrame(rng0.normal(size=(200, 4)), columns=list("abcd"))
    order = np.argsort(members["a"].to_numpy())
    centroids = np.repeat(members.to_numpy()[order].reshape(40, 5, 4).mean(axis=1), 5, axis=0)
    release = pd.DataFrame(centroids, columns=list("abcd"))
    apart = release + rng0.normal(0, 1e-4, size=release.shape)  # apart in float32, the searches' precision
    control = pd.DataFrame(rng0.normal(size=(200, 4)), columns=list("abcd"))
    rates = {}
    for name, rel in (("once", release), ("apart", apart)):
        r, m, c = from_frames([rel, members.iloc[order].reset_index(drop=True), control])
        rates[name] = np.mean([linkability(r, m, c, rng=np.random.default_rng(s), splits=[(("a", "b"), ("c", "d"))],
                                           n_targets=None)["splits"][0]["main"] for s in range(30)])
    assert rates["once"] > 0.01
    assert abs(rates["once"] - rates["apart"]) < 0.25 * rates["apart"]
