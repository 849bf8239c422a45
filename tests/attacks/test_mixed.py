"""Mixed tables with shared codes, and Gower nearest neighbours against a distance written out by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ppdm.attacks.mixed import (
    MixedTable,
    column_ranges,
    encode_tables,
    from_frames,
    gower_nearest,
    k_smallest,
)
from ppdm.exceptions import InputError, ParameterError


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age": rng.integers(18, 90, n).astype(float),
        "colour": rng.choice(["red", "green", "blue"], n).astype(object),
        "income": rng.normal(50, 10, n).round(1),
        "site": rng.choice(["a", "b"], n).astype(object),
    })
    df.loc[rng.random(n) < 0.1, "income"] = np.nan
    df.loc[rng.random(n) < 0.1, "colour"] = None
    return df


def _gower_by_hand(q: pd.Series, p: pd.Series, numeric: list[str], categorical: list[str],
                   ranges: dict[str, float]) -> float:
    """The distance as the module documents it, one pair at a time."""
    total = 0.0
    for c in numeric:
        a, b = q[c], p[c]
        total += 1.0 if (pd.isna(a) or pd.isna(b)) else abs(a - b) / ranges[c]
    for c in categorical:
        a, b = q[c], p[c]
        total += 0.0 if (pd.isna(a) and pd.isna(b)) or (not pd.isna(a) and not pd.isna(b) and a == b) else 1.0
    return total / (len(numeric) + len(categorical))


def test_codes_are_shared_across_tables_and_gaps_are_minus_one() -> None:
    a = np.array([["x"], ["y"], [None]], dtype=object)
    b = np.array([[1], ["y"], [np.nan], ["x"]], dtype=object)
    c = np.array([[1.0], ["1"]], dtype=object)
    ta, tb, tc = encode_tables([np.zeros((3, 0)), np.zeros((4, 0)), np.zeros((2, 0))], [a, b, c], [], ["k"])
    assert ta.codes[:, 0].tolist()[:2] == [tb.codes[3, 0], tb.codes[1, 0]]
    assert ta.codes[2, 0] == -1 and tb.codes[2, 0] == -1
    # 1, 1.0 and "1" are one category
    assert tb.codes[0, 0] == tc.codes[0, 0] == tc.codes[1, 0] not in (ta.codes[0, 0], ta.codes[1, 0])


def test_frames_infer_types_keep_the_order_and_refuse_text_in_numbers() -> None:
    df = _frame(20, 0)
    t, = from_frames([df])
    assert t.numeric_names == ("age", "income") and t.categorical_names == ("colour", "site")
    assert t.columns == ("age", "colour", "income", "site")
    bad = df.astype({"income": object})
    bad.loc[3, "income"] = "n/a"
    with pytest.raises(InputError, match="income"):
        from_frames([df, bad])
    with pytest.raises(InputError, match="the release has no column 'site'"):
        from_frames([df, df.drop(columns="site")], names=["original", "release"])


def test_unique_rows_treat_gaps_as_equal() -> None:
    t = MixedTable(np.array([[1.0], [np.nan], [np.nan], [1.0]]), np.array([[0], [-1], [-1], [1]]), ("x",), ("k",))
    assert t.unique_rows().tolist() == [0, 1, 3]


def test_nearest_neighbours_match_the_distance_written_out() -> None:
    q, p = _frame(25, 1), _frame(40, 2)
    tq, tp = from_frames([q, p])
    ranges = column_ranges(tq, tp)
    by_name = dict(zip(tq.numeric_names, ranges, strict=True))
    for nc, cc in (([0, 1], [0, 1]), ([1], [0]), ([], [1]), ([0], [])):
        num = [tq.numeric_names[j] for j in nc]
        cat = [tq.categorical_names[j] for j in cc]
        idx, dist = gower_nearest(tq, tp, nc, cc, ranges=ranges, rng=np.random.default_rng(0), k=3)
        full = np.array([[_gower_by_hand(q.iloc[i], p.iloc[j], num, cat, by_name) for j in range(len(p))]
                         for i in range(len(q))])
        expected = np.sort(full, axis=1)[:, :3]
        np.testing.assert_allclose(dist, expected, atol=1e-6)
        np.testing.assert_allclose(np.take_along_axis(full, idx, axis=1), expected, atol=1e-6)


def test_ties_are_broken_at_random() -> None:
    pool = pd.DataFrame({"k": ["a", "a", "a", "b"], "x": [1.0, 1.0, 1.0, 5.0]})
    query = pd.DataFrame({"k": ["a"], "x": [1.0]})
    tq, tp = from_frames([query, pool])
    picks = {int(gower_nearest(tq, tp, ranges=column_ranges(tq, tp), rng=np.random.default_rng(s))[0][0, 0])
             for s in range(40)}
    assert picks == {0, 1, 2}


def test_a_record_is_not_its_own_neighbour_with_exclude_self() -> None:
    df = _frame(30, 3)
    t, = from_frames([df])
    idx, dist = gower_nearest(t, t, ranges=column_ranges(t), rng=np.random.default_rng(0), k=2, exclude_self=True)
    assert not (idx == np.arange(30)[:, None]).any()
    assert (dist >= 0).all() and (np.diff(dist, axis=1) >= 0).all()
    with pytest.raises(ParameterError, match="neighbours"):
        gower_nearest(t, t, ranges=column_ranges(t), rng=np.random.default_rng(0), k=30, exclude_self=True)


def test_k_smallest_is_the_stable_order_of_each_row() -> None:
    rng = np.random.default_rng(4)
    D = rng.integers(0, 4, size=(50, 30)).astype(np.float32)  # many ties
    for k in (1, 3, 10, 30):
        np.testing.assert_array_equal(k_smallest(D, k), np.argsort(D, axis=1, kind="stable")[:, :k])


def test_blocks_give_the_same_neighbours_as_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    import ppdm.attacks.mixed as mixed

    q, p = _frame(60, 5), _frame(80, 6)
    tq, tp = from_frames([q, p])
    one = gower_nearest(tq, tp, ranges=column_ranges(tq, tp), rng=np.random.default_rng(1), k=4)
    monkeypatch.setattr(mixed, "BLOCK_BYTES", 4 * 4 * 80 * 7)  # 7 query rows a block
    terms = mixed.GowerTerms(tq, tp, [0, 1], [0, 1], ranges=column_ranges(tq, tp), rng=np.random.default_rng(1))
    assert terms.block_rows() == 7 and len(list(terms.blocks())) == 9
    many = gower_nearest(tq, tp, ranges=column_ranges(tq, tp), rng=np.random.default_rng(1), k=4)
    np.testing.assert_array_equal(one[0], many[0])
    np.testing.assert_allclose(one[1], many[1])


def test_ranges_span_every_table_and_constant_columns_get_one() -> None:
    a = MixedTable(np.array([[0.0, 3.0], [2.0, 3.0]]), np.zeros((2, 0), int), ("x", "y"), ())
    b = MixedTable(np.array([[10.0, 3.0]]), np.zeros((1, 0), int), ("x", "y"), ())
    assert column_ranges(a, b).tolist() == [10.0, 1.0]
    assert math.isclose(float(column_ranges(a)[0]), 2.0)


def test_no_embedding_with_a_numeric_gap() -> None:
    from ppdm.attacks.mixed import l1_embedding

    t, = from_frames([pd.DataFrame({"a": [1.0, np.nan], "c": ["x", "y"]})])
    assert l1_embedding([t], column_ranges(t)) is None
    u, = from_frames([pd.DataFrame({"a": [1.0, 3.0], "c": ["x", None]})])
    np.testing.assert_array_equal(l1_embedding([u], column_ranges(u))[0], [[0.5, 0.0, 0.5], [1.5, 0.5, 0.0]])
