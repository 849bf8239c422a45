"""Release keys are secret by default; the identity channel is closed by default; the state reopens it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ppdm.keys import MECHANISM_STREAM, release_key
from ppdm.mechanisms.base import seed_from
from ppdm.pipeline import align_with_state, perturb


@pytest.fixture
def table() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.normal(size=(60, 4)) * [1, 5, 10, 0.5] + [0, 100, -3, 7], columns=list("abcd"))
    df.insert(0, "pid", np.arange(501, 561))
    df["y"] = np.arange(60) % 3
    return df


def test_default_key_is_fresh_entropy_and_not_in_the_summary(table: pd.DataFrame, tmp_path) -> None:
    runs = [perturb(table, method="noise", id="pid", label="y") for _ in range(2)]
    a, b = (np.sort(r.release[list("abcd")].to_numpy(), axis=0) for r in runs)
    assert not np.allclose(a, b)  # two default releases draw different noise
    s = runs[0].summary
    assert s["key"]["seed_known"] is False
    assert str(runs[0].mechanism.seed_) not in json.dumps(s)


@pytest.mark.parametrize(("method", "params"), [("noise", {}), ("mdav", {"k": 5}), ("copula", {})])
def test_what_a_notebook_shows_of_a_result_hides_its_key(table: pd.DataFrame, method: str,
                                                         params: dict[str, object]) -> None:
    """``repr`` of a perturb's result, and of its mechanism, is what a notebook cell, ``print`` or a log line
    shows: it showed ``random_state=<the key>``, with which the noise was redrawn and the table recovered."""
    res = perturb(table, method=method, params=params, id="pid", label="y")
    key = str(res.mechanism.random_state)
    assert len(key) > 10  # a key from OS entropy
    for shown in (repr(res), str(res), repr(res.mechanism), str(res.mechanism)):
        assert key not in shown and "random_state=<secret>" in shown, shown
    assert "60 rows" in repr(res)


@pytest.mark.slow
def test_no_seed_up_to_a_million_regenerates_a_default_release(table: pd.DataFrame) -> None:
    """The noise is a function of the mechanism's 63-bit ``seed_``: no seed 0..10^6 gives it."""
    res = perturb(table, method="noise", id="pid", label="y")
    secret = int(res.mechanism.seed_)
    found = [s for s in range(1_000_000) if seed_from(s) == secret]
    assert found == []
    # while a release made with a small seed is found by the same scan
    known = perturb(table, method="noise", id="pid", label="y", seed=4242)
    assert int(known.mechanism.seed_) == seed_from(4242)


def test_a_known_seed_is_found_by_the_seed_search_and_marked(table: pd.DataFrame, tmp_path) -> None:
    from ppdm.attacks import attack_tables

    src = tmp_path / "t.csv"
    table.to_csv(src, index=False)
    for seed, found in ((42, True), (None, False)):
        with pytest.warns(UserWarning) if seed is not None else _nothing():
            res = perturb(src, method="noise", id="pid", label="y", seed=seed, output=tmp_path / f"r{seed}.csv",
                          state=tmp_path / f"r{seed}.state", force=True)
        assert res.summary["key"]["seed_known"] is (seed is not None)
        out = attack_tables(src, tmp_path / f"r{seed}.csv", threat="population", id="pid", label="y",
                            state=tmp_path / f"r{seed}.state", attacks=["seed_search"])
        r = out["results"][0]
        assert r["details"]["key_found"] is found
        assert (r["within_5pct"] == 1.0) is found


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *a: object) -> None:
        return None


def test_ids_are_pseudonyms_rows_shuffled_and_the_state_aligns_exactly(table: pd.DataFrame, tmp_path) -> None:
    st = tmp_path / "r.state"
    res = perturb(table, method="svd", params={"rank": 2}, id="pid", label="y", state=st)
    R = res.release
    assert not set(R["pid"].astype(str)) & set(table["pid"].astype(str))
    assert R["pid"].str.fullmatch(r"[0-9a-f]{16}").all() and R["pid"].is_unique
    back = align_with_state(table, R, st, "pid")
    assert back["pid"].tolist() == table["pid"].tolist() and back["y"].tolist() == table["y"].tolist()
    # independent check: the aligned release is the rank-2 approximation of each record's own row
    A = table[list("abcd")].to_numpy()
    mu, sd = A.mean(0), A.std(0, ddof=1)
    U, s, Vt = np.linalg.svd((A - mu) / sd, full_matrices=False)
    np.testing.assert_allclose(back[list("abcd")].to_numpy(), ((U[:, :2] * s[:2]) @ Vt[:2]) * sd + mu, atol=1e-9)
    # a filtered, reordered release still aligns through its pseudonyms
    part = R.iloc[::-3]
    back2 = align_with_state(table, part, st, "pid")
    assert sorted(back2["pid"]) == sorted(table["pid"].iloc[back2["pid"].to_numpy() - 501])
    # without ids: by the stored permutation
    st2 = tmp_path / "n.state"
    res2 = perturb(table.drop(columns="pid"), method="svd", params={"rank": 2}, label="y", state=st2)
    back3 = align_with_state(table, res2.release, st2, None)
    np.testing.assert_allclose(back3[list("abcd")].to_numpy(), back[list("abcd")].to_numpy(), atol=1e-9)


def test_keep_ids_is_the_linkable_layout_and_warns(table: pd.DataFrame) -> None:
    with pytest.warns(UserWarning, match="linkable"):
        res = perturb(table, method="svd", params={"rank": 2}, id="pid", label="y", keep_ids=True, seed=1)
    assert res.release["pid"].tolist() == table["pid"].tolist()
    assert "linkable" in res.summary["identity"]["layout"]


def test_key_streams_are_independent_and_a_user_seed_passes_through() -> None:
    k = release_key(None)
    assert k.entropy.bit_length() > 64 and not k.known
    assert release_key(7).seed(MECHANISM_STREAM) == 7
    assert len({k.seed(0), k.seed(1), k.seed(2)}) == 3
    from ppdm.exceptions import ParameterError

    with pytest.raises(ParameterError, match="non-negative"):
        release_key(-5)


def test_stream_releases_are_pseudonymous_and_align_through_the_state(table: pd.DataFrame, tmp_path) -> None:
    from ppdm.streaming import stream_init, stream_update

    st = tmp_path / "s.state"
    stream_init(table.iloc[:40], state=st, output=tmp_path / "r1.csv", rank=2, id="pid", label="y")
    stream_update(st, table.iloc[40:], output=tmp_path / "r2.csv", refresh_all=tmp_path / "all.csv")
    r1, r2, full = (pd.read_csv(tmp_path / n) for n in ("r1.csv", "r2.csv", "all.csv"))
    for r in (r1, r2, full):
        assert not set(r["pid"].astype(str)) & set(table["pid"].astype(str))
    # the same record has the same pseudonym in the batch release and in the refresh of the whole table
    assert set(r1["pid"]) <= set(full["pid"])
    back = align_with_state(table, pd.concat([r1, r2]), st, "pid")
    assert back["pid"].tolist() == table["pid"].tolist() and back["y"].tolist() == table["y"].tolist()
    assert align_with_state(table, full, st, "pid")["pid"].tolist() == table["pid"].tolist()


def test_match_rows_pairs_each_published_row_with_its_replayed_twin() -> None:
    """Linear-time matching of a shuffled, rounded copy: every row finds its twin (duplicates pair one to one)."""
    from ppdm.attacks._seed import match_rows

    rng = np.random.default_rng(0)
    B = rng.normal(size=(5000, 6)) * [1, 1e3, 1e-3, 5, 5, 5]
    B[100:110] = B[100]  # ten equal rows, as microaggregation publishes them
    perm = rng.permutation(len(B))
    Y = np.round(B[perm], 12)  # a CSV round trip's rounding
    order = match_rows(Y, B, np.abs(B).max(axis=0))
    assert np.allclose(B[order], Y, rtol=1e-9, atol=1e-9)
    assert len(np.unique(order)) == len(B)  # one to one, the duplicates included
    single = np.setdiff1d(np.arange(len(B)), np.arange(100, 110))
    assert np.array_equal(order[np.argsort(perm)][single], single)


def test_match_rows_pairs_equal_rows_as_a_stack_of_row_keys_would(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows matched through sorted 64-bit keys, a block at a time, pair exactly as a table of each row's grid
    values would (the first of the published equal rows takes the last replayed twin), rows without a twin
    included; a key shared by unequal rows is not taken for a match."""
    from ppdm.attacks import _seed

    rng = np.random.default_rng(4)
    B = np.repeat(rng.normal(size=(300, 5)), rng.integers(1, 6, size=300), axis=0)  # groups of equal rows
    Y = np.round(B[rng.permutation(len(B))], 12)
    Y[:7] += 0.5  # published rows without a replayed twin
    scale = np.abs(B).max(axis=0)
    step = 1e-9 * scale
    pool: dict[bytes, list[int]] = {}  # the reference: a stack of row indices per row of grid values
    for i, r in enumerate(np.round(B / step).astype(np.int64)):
        pool.setdefault(r.tobytes(), []).append(i)
    expected = np.full(len(Y), -1)
    for i, r in enumerate(np.round(Y / step).astype(np.int64)):
        if pool.get(r.tobytes()):
            expected[i] = pool[r.tobytes()].pop()
    monkeypatch.setattr(_seed, "_CHUNK", 97)
    order = _seed.match_rows(Y, B, scale)
    twin = expected >= 0
    assert np.array_equal(order[twin], expected[twin]) and (~twin).sum() == 7
    assert not np.isin(order[~twin], expected[twin]).any()  # left-over rows go to rows nobody took
    # every key equal (as if all collided): the grid values reject the unequal pairs, and every row with a
    # twin still ends on a row of equal values
    monkeypatch.setattr(_seed, "_row_keys", lambda V, step: np.zeros(len(V), dtype=np.uint64))
    order = _seed.match_rows(Y, B, scale)
    assert np.all(np.abs(B[order] - Y) <= 1e-9, axis=1)[twin].all()


def test_a_bounded_seed_scan_says_it_stopped() -> None:
    from ppdm.attacks._seed import seed_search

    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    Y = X + rng.normal(size=X.shape)  # no seed of the scan made this
    res = seed_search(X, Y, "noise", {"scale": 1.0, "distribution": "normal"}, "none", range(10_000),
                      max_seconds=0.0)
    assert res["found"] is False and res["seeds_tried"] == 1 and "stopped" in res["why"]


def test_the_shuffle_a_column_at_a_time_is_the_row_shuffle_for_every_column_type() -> None:
    import pandas as pd

    from ppdm.keys import _rows_in_order

    df = pd.DataFrame({
        "int_na": [1, 2, None, 2], "text": ["x", None, "y", np.nan], "cat": pd.Categorical(["p", "q", None, "p"]),
        "float": [1.5, np.nan, 2.0, 1.5], "bool": [True, False, True, True],
        "nullable": pd.array([1, None, 3, 1], dtype="Int64"), "string": pd.array(["u", None, "v", "u"], dtype="string"),
        "date": pd.to_datetime(["2020-01-01", None, "2020-01-02", "2020-01-01"]).tz_localize("UTC"),
        "period": pd.period_range("2020", periods=4, freq="M"), "mixed": [1, "1", 1.0, None]}, index=[7, 5, 3, 1])
    order = np.array([2, 0, 3, 1])
    pd.testing.assert_frame_equal(_rows_in_order(df, order), df.iloc[order].reset_index(drop=True))
    twin = pd.DataFrame([[1, 2], [3, 4]], columns=["a", "a"])  # duplicate names: the row shuffle itself
    pd.testing.assert_frame_equal(_rows_in_order(twin, np.array([1, 0])), twin.iloc[[1, 0]].reset_index(drop=True))
