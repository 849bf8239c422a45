"""Whole tables: column types and roles, and the codec between a mixed table and one design matrix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdm.data.codec import TableCodec
from ppdm.data.columns import announce_columns, infer_columns, is_whole_table, parse_roles
from ppdm.exceptions import InputError


def _table(n: int = 200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "pid": np.arange(1, n + 1),
        "age": rng.integers(18, 90, n),
        "income": rng.lognormal(10, 1, n),
        "sex": rng.choice(["F", "M"], n),
        "city": rng.choice(["Leeds", "York", "Hull", "Bath"], n, p=[0.4, 0.3, 0.2, 0.1]),
        "visit": (pd.Timestamp("2015-01-01") + pd.to_timedelta(rng.integers(0, 3000, n), unit="D")
                  ).strftime("%Y-%m-%d"),
        "note": [f"free text number {i} about the visit" for i in range(n)],
        "smoker": rng.choice([True, False], n),
        "class": rng.choice(["a", "b"], n),
    })
    return df


def test_types_and_roles_are_inferred() -> None:
    infos = {i.name: i for i in infer_columns(_table(), id="pid", label="class")}
    assert {k: v.type for k, v in infos.items()} == {
        "pid": "integer", "age": "integer", "income": "continuous", "sex": "categorical", "city": "categorical",
        "visit": "date", "note": "text", "smoker": "boolean", "class": "categorical"}
    assert infos["pid"].role == "identifier" and infos["class"].role == "label"
    assert infos["note"].treatment.startswith("dropped") and infos["age"].role == "quasi-identifier"


def test_roles_override_and_bad_roles_are_one_line_errors() -> None:
    roles = parse_roles("city=sensitive, age=qi, income=drop")
    infos = {i.name: i for i in infer_columns(_table(), id="pid", label="class", roles=roles)}
    assert infos["city"].role == "sensitive" and infos["city"].treatment == "perturbed"
    assert infos["income"].treatment == "dropped (asked for)"
    with pytest.raises(InputError, match="not a role"):
        parse_roles("city=secret")
    with pytest.raises(InputError, match="does not have"):
        infer_columns(_table(), roles={"nope": "drop"})


def test_continuous_tables_take_the_numeric_path() -> None:
    df = _table()[["income", "class"]].dropna()
    assert not is_whole_table(df, infer_columns(df, label="class"))
    assert is_whole_table(_table(), infer_columns(_table(), id="pid", label="class"))
    # integers come back as integers within their range only through the codec: a table of them is released whole
    ints = _table()[["age", "income", "class"]].dropna()
    assert is_whole_table(ints, infer_columns(ints, label="class"))


def test_codec_round_trip_is_exact_on_the_original() -> None:
    df = _table()
    codec = TableCodec(infer_columns(df, id="pid", label="class")).fit(df)
    back = codec.decode(codec.encode(df))
    for c in ("age", "sex", "city", "visit", "smoker"):
        assert (back[c].astype(str) == df[c].astype(str)).all(), c
    assert np.allclose(back["income"], df["income"])
    assert "note" not in back.columns


def test_decoded_releases_keep_types_ranges_and_categories() -> None:
    df = _table()
    codec = TableCodec(infer_columns(df, id="pid", label="class")).fit(df)
    X = codec.encode(df)
    noisy = X + np.random.default_rng(1).normal(0, 3.0, X.shape)  # far outside every range
    for rng in (None, np.random.default_rng(2)):
        out = codec.decode(noisy, rng=rng)
        assert out["age"].dtype.kind == "i" and out["age"].between(df["age"].min(), df["age"].max()).all()
        assert out["income"].between(df["income"].min(), df["income"].max()).all()
        assert set(out["city"]) <= set(df["city"]) and set(out["sex"]) <= set(df["sex"])
        assert set(out["smoker"]) <= {True, False}
        days = pd.to_datetime(out["visit"], format="%Y-%m-%d")
        assert days.min() >= pd.Timestamp(df["visit"].min()) and days.max() <= pd.Timestamp(df["visit"].max())


def test_draws_follow_the_released_shares() -> None:
    df = pd.DataFrame({"c": ["x", "y", "z"] * 100, "v": np.arange(300.0)})
    codec = TableCodec(infer_columns(df)).fit(df)
    B = np.zeros((20_000, codec.width_))
    B[:, codec.blocks_[0]] = [0.6, 0.3, 0.1]  # every row released as group shares 60/30/10
    got = codec.decode(B, rng=np.random.default_rng(3), reading="shares")["c"].value_counts(normalize=True)
    assert got["x"] == pytest.approx(0.6, abs=0.02) and got["z"] == pytest.approx(0.1, abs=0.02)
    assert (codec.decode(B, reading="shares")["c"] == "x").all()  # without draws: the largest share
    assert (codec.decode(B, rng=np.random.default_rng(3))["c"] == "x").all()  # read as the nearest


def test_gaps_are_values_of_their_own_that_the_mechanism_releases() -> None:
    df = _table()
    df.loc[[3, 7], "age"] = np.nan
    df.loc[[5], "city"] = np.nan
    df.loc[[9], "visit"] = np.nan
    codec = TableCodec(infer_columns(df, id="pid", label="class")).fit(df)
    X = codec.encode(df)
    assert np.isfinite(X).all()
    gaps = codec.missing(df)
    assert {c: list(np.flatnonzero(m)) for c, m in gaps.items()} == {"age": [3, 7], "city": [5], "visit": [9]}
    # the identity release gives every gap back where it was: the design carries them
    out = codec.decode(X)
    for c, m in gaps.items():
        np.testing.assert_array_equal(out[c].isna().to_numpy(), m)
    assert out.loc[0, "age"] == df.loc[0, "age"]
    # a release that moves the rows moves their gaps with them: a gap belongs to the row the mechanism made
    order = np.roll(np.arange(len(df)), 1)
    moved = codec.decode(X[order])
    np.testing.assert_array_equal(moved["age"].isna().to_numpy(), gaps["age"][order])
    np.testing.assert_array_equal(moved["city"].isna().to_numpy(), gaps["city"][order])
    # a group's share of gaps decodes to gaps by the same draws as any category
    mixed = X.copy()
    mixed[:] = X.mean(axis=0)
    drawn = codec.decode(mixed, rng=np.random.default_rng(0), reading="shares")
    assert drawn["age"].isna().sum() < len(df) and not drawn["age"].notna().all() or gaps["age"].sum() == 0


def test_many_categories_share_one_indicator_beyond_the_most_frequent() -> None:
    rng = np.random.default_rng(4)
    codes = np.concatenate([np.repeat([f"c{i}" for i in range(20)], 50), [f"r{i}" for i in range(300)]])
    df = pd.DataFrame({"code": rng.permutation(codes), "v": rng.normal(size=len(codes))})
    infos = infer_columns(df)
    assert {i.name: i.type for i in infos}["code"] == "categorical"
    codec = TableCodec(infos).fit(df)
    assert len(codec.blocks_[0]) == 60  # 59 most frequent categories and one shared by the other 261
    back = codec.decode(codec.encode(df), rng=np.random.default_rng(5))
    frequent = df["code"].str.startswith("c")
    assert (back["code"][frequent] == df["code"][frequent]).all()
    assert set(back["code"]) <= set(df["code"])  # a shared indicator decodes to one of its own categories


def test_an_empty_column_is_dropped_with_its_reason() -> None:
    df = pd.DataFrame({"v": [1.0, 2.0, 3.0], "empty": [np.nan] * 3, "c": ["a", "b", "a"]})
    info = {i.name: i for i in infer_columns(df)}["empty"]
    assert info.treatment == "dropped (no values)"


def test_a_running_number_is_dropped_as_an_identifier_unless_kept_or_named() -> None:
    rng = np.random.default_rng(8)
    n = 120
    df = pd.DataFrame({
        "rid": rng.permutation(np.arange(1001, 1001 + n)),  # row numbers, shuffled: still one per row
        "text_rid": [str(i) for i in range(n)],  # read from text, as a CSV gives them
        "even": np.arange(0, 2 * n, 2),  # distinct whole numbers with gaps: a quantity, kept
        "short": np.r_[np.arange(n - 1), n],  # one step of two: no run, kept
        "v": rng.normal(size=n)})
    infos = {i.name: i for i in infer_columns(df)}
    running = "dropped (a running number, one per row: an identifier)"
    assert infos["rid"].treatment == infos["text_rid"].treatment == running
    assert infos["rid"].role == "other"
    assert infos["even"].treatment == infos["short"].treatment == infos["v"].treatment == "perturbed"
    # under 50 rows a run is left as a quantity; named as the id it becomes pseudonyms; a role keeps it
    assert {i.name: i for i in infer_columns(df.head(49))}["text_rid"].treatment == "perturbed"
    assert {i.name: i for i in infer_columns(df, id="rid")}["rid"].role == "identifier"
    assert {i.name: i for i in infer_columns(df, roles={"rid": "other"})}["rid"].treatment == "perturbed"
    with pytest.warns(UserWarning, match="'rid' is not released: a running number"):
        announce_columns(list(infos.values()), n)


def _released(seed: int = 6) -> tuple[TableCodec, pd.DataFrame, np.ndarray]:
    """A codec of a table with gaps, month-first dates, negative integers and a column of more categories than
    indicators, and a noisy release of its design with a categorical block left empty in some rows."""
    rng = np.random.default_rng(seed)
    n = 3000
    df = pd.DataFrame({
        "a": rng.normal(size=n), "b": rng.integers(-3, 5, n), "c": rng.choice(list("xyz"), n),
        "d": rng.choice([f"k{i}" for i in range(90)], n), "e": rng.random(n) < 0.3,
        "f": (pd.Timestamp("2000-01-01") + pd.to_timedelta(rng.integers(0, 900, n), unit="D")).strftime("%m/%d/%Y"),
        "g": rng.choice([1.5, 2.5, 7.0], n)})
    df.loc[rng.random(n) < 0.05, "a"] = np.nan
    df.loc[rng.random(n) < 0.05, "c"] = None
    codec = TableCodec(infer_columns(df)).fit(df)
    B = codec.encode(df) + rng.normal(0, 0.7, (n, codec.width_))
    B[np.flatnonzero(rng.random(n) < 0.02)[:, None], codec.blocks_[0]] = np.nan
    return codec, df, B


@pytest.mark.parametrize(("draw", "reading"), [(False, "nearest"), (True, "shares"), (True, "calibrated")])
def test_decoded_parts_are_what_the_decoded_table_reads_back(draw: bool, reading: str) -> None:
    # the parts a large release is measured on, against the published table read back by the table's own
    # readers (dates parsed from their text, categories from the cells)
    codec, _, B = _released()
    rng = (lambda: np.random.default_rng(8)) if draw else (lambda: None)
    table, parts = codec.decode(B, rng=rng(), reading=reading), codec.decode_parts(B, rng=rng(), reading=reading)
    assert table["c"].isna().sum() > 0  # the empty blocks are published gaps
    np.testing.assert_array_equal(parts.numbers, codec.numbers(table))
    np.testing.assert_array_equal(codec.filled(parts), codec.categories(table))
    np.testing.assert_array_equal(codec.encode_decoded(parts), codec.encode(table))
    for c in codec.categorical_names:
        assert list(pd.Series(codec.values_of(parts, c)).astype(str)) == list(table[c].astype(str)), c
    b = parts.numbers[:, codec.numeric_names.index("b")]
    assert (b == 0).any() and not np.signbit(b[b == 0]).any()  # a whole number rounded up to 0 is 0, not -0


@pytest.mark.parametrize("reading", ["shares", "calibrated"])
def test_categorical_blocks_decode_the_same_a_block_of_rows_at_a_time(monkeypatch: pytest.MonkeyPatch,
                                                                      reading: str) -> None:
    import ppdm.data.codec as codec_module

    codec, _, B = _released(seed=9)
    whole = codec.decode_parts(B, rng=np.random.default_rng(10), reading=reading)
    monkeypatch.setattr(codec_module, "_ROW_BLOCK", 97)  # many blocks, the last one short
    blocks = codec.decode_parts(B, rng=np.random.default_rng(10), reading=reading)
    np.testing.assert_array_equal(blocks.text, whole.text)
    np.testing.assert_array_equal(blocks.numbers, whole.numbers)


def test_published_gaps_read_as_the_column_median_in_the_numbers() -> None:
    codec, df, B = _released(seed=11)
    parts = codec.decode_parts(B)
    want = codec.numbers(codec.decode(B))
    np.testing.assert_array_equal(codec.filled_numbers(parts), want)
    assert codec.missing(df)["a"].any() and any(m.any() for m in parts.gaps.values())


def test_a_category_is_drawn_by_its_positive_indicators_or_else_the_largest() -> None:
    """Each row's category, checked row by row against the rule: weights are the positive indicators over
    their sum, the category is the first whose running weight reaches the row's uniform draw; a row with no
    positive indicator takes its largest one."""
    from ppdm.data.codec import _choose

    rng = np.random.default_rng(4)
    block = rng.normal(size=(400, 7))
    block[::9] = -np.abs(block[::9])  # rows with no positive indicator
    block[5::11] = 0.0
    u = rng.random((400, 1))
    picked = _choose(block.copy(), u)
    for i, row in enumerate(block):
        pos = np.clip(row, 0.0, None)
        if pos.sum() <= 0:
            assert picked[i] == np.argmax(row)
            continue
        running = np.cumsum(pos / pos.sum())
        assert picked[i] == min(int(np.sum(running < u[i, 0])), 6)
    assert np.array_equal(_choose(block, None), np.argmax(block, axis=1))


def test_rows_released_alike_release_each_category_as_often_as_its_share_in_a_random_order() -> None:
    """A microaggregated group's rows share its category shares: their draws are systematic, so the group
    releases each category as often as its share says (to within one row), on rows in a random order; a row
    released alone keeps its own draw."""
    from ppdm.data.codec import _choose

    df = pd.DataFrame({"c": ["x", "y", "z"] * 100, "v": np.arange(300.0)})
    codec = TableCodec(infer_columns(df)).fit(df)
    block = codec.blocks_[0]
    B = np.zeros((60, codec.width_))
    B[:20, block] = [0.15, 0.85, 0.0]  # a group of 20: 3 x and 17 y
    B[20:40, block] = [0.35, 0.35, 0.3]  # 7, 7 and 6, within one row each
    alone = np.random.default_rng(1).random((20, 3))
    B[40:, block] = alone
    got_x = np.zeros(20)
    for seed in range(40):
        c = codec.decode(B, rng=np.random.default_rng(seed), reading="shares")["c"].to_numpy()
        assert (c[:20] == "x").sum() == 3 and (c[:20] == "y").sum() == 17
        counts = [(c[20:40] == v).sum() for v in "xyz"]
        assert sum(counts) == 20 and all(abs(k - 20 * s) < 1 for k, s in zip(counts, (0.35, 0.35, 0.3), strict=True))
        got_x += c[:20] == "x"
        # the rows alone: the rule of _choose with their own draws (the first 60 of the stream)
        u = np.random.default_rng(seed).random((60, 1))
        want = np.asarray(["x", "y", "z"], dtype=object)[_choose(alone.copy(), u[40:])]
        assert (c[40:] == want).all()
    assert (got_x > 0).all() and got_x.max() < 20  # no row always holds the group's x


@pytest.mark.parametrize("method", ["noise", "rotation", "projection"])
def test_a_category_or_gap_few_records_hold_does_not_swamp_a_noisy_or_mixed_release(
        method: str, tmp_path: Path, cli: Callable[..., tuple[int, str, str]]) -> None:
    """Drawn by the positive released indicators, as a microaggregated group's shares are, every category of a
    release with noise added or columns mixed drifted towards an equal share: ten countries one record of 300
    holds each were published in 151 to 179 rows, and the 16 gaps of a number of 699 records in 224 to 419. A
    rotation or a projection (every column a mix of all) now publishes the original's frequencies; noise
    publishes what its own indicators' means say, which for these rare values is within their noise."""
    from ppdm import datasets

    adult = datasets.load("adult").head(300)[["age", "hours-per-week", "education", "native-country", "class"]]
    wbc = datasets.load("wbc", fill="none")
    counts = adult["native-country"].value_counts()
    single = counts.index[counts == 1]
    assert len(single) == 10 and wbc["bare_nuclei"].isna().sum() == 16
    published = {}
    for name, df in (("adult", adult), ("wbc", wbc)):
        path, out = tmp_path / f"{name}.csv", tmp_path / f"{name}_{method}.csv"
        df.to_csv(path, index=False)
        code, _, err = cli("perturb", path, "-m", method, "--label", "class", "--seed", 3, "-o", out)
        assert code == 0, err
        published[name] = pd.read_csv(out)
        if method == "noise":
            continue
        for c in df.columns.drop("class"):
            if df[c].dtype == object:
                pd.testing.assert_series_equal(published[name][c].value_counts(dropna=False).sort_index(),
                                               df[c].value_counts(dropna=False).sort_index(), obj=c)
            else:
                assert published[name][c].isna().sum() == df[c].isna().sum(), c
    assert published["adult"]["native-country"].isin(single).sum() < 100
    assert published["wbc"]["bare_nuclei"].isna().sum() < 80


def test_the_calibrated_readings_keep_rows_released_as_one_category_and_the_frequencies_they_are_given() -> None:
    """Rows released as one category (the original's rows, a categorical mechanism's) keep it, so a part of the
    table reads back as itself though its frequencies are not the table's. Other rows take the frequencies the
    release's indicators say (``calibrated``) or the original's (``original``), the rows nearest each category
    first: noise of mean zero keeps a category one record holds to one row, where the largest indicator
    publishes it in 18 of 200."""
    df = _table()
    rows = np.flatnonzero(df["city"].to_numpy() != "Bath")
    df.loc[rows[[2, 5]], "age"] = np.nan
    df.loc[rows[0], "city"] = "Ely"  # held by one record
    codec = TableCodec(infer_columns(df, id="pid", label="class")).fit(df)
    X = codec.encode(df)
    for reading in ("calibrated", "original"):
        back = codec.decode(X[rows], rng=np.random.default_rng(1), reading=reading)
        for c in ("sex", "city", "smoker"):
            assert back[c].astype(str).tolist() == df[c].iloc[rows].astype(str).tolist(), (reading, c)
        assert back["age"].isna().sum() == 2  # the part holds both gaps
        np.testing.assert_array_equal(back["age"].astype(float), df["age"].iloc[rows])
    block = codec.blocks_[codec.categorical_names.index("city")]
    assert codec.categorical_[codec.categorical_names.index("city")].categories == ["Bath", "Ely", "Hull", "Leeds",
                                                                                   "York"]
    noise = np.random.default_rng(2).normal(0, 0.5, (len(df), len(block)))
    B = X.copy()
    B[:, block] += noise - noise.mean(axis=0)  # the release's means are the original's frequencies
    nearest, calibrated = codec.decode(B)["city"], codec.decode(B, reading="calibrated")["city"]
    assert (nearest == "Ely").sum() > 10 and (calibrated == "Ely").sum() == 1
    pd.testing.assert_series_equal(calibrated.value_counts().sort_index(), df["city"].value_counts().sort_index())
    assert (calibrated == df["city"]).mean() > (nearest == df["city"]).mean()
    # one row released with noise takes what the original's frequencies leave to it, not its largest indicator
    B = X.copy()
    row = int(np.flatnonzero(df["city"].to_numpy() == "Bath")[0])
    B[row, block] = [0.2, 0.0, 0.5, 0.1, 0.0]
    assert codec.decode(B)["city"][row] == "Hull"
    out = codec.decode(B, reading="original")["city"]
    assert out[row] == "Bath" and (out == df["city"]).all()
    with pytest.raises(ValueError, match="reading"):
        codec.decode(X, reading="largest")
