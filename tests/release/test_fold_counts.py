"""A fold's release stands in for the release of every row: parameters that count records of the whole table
(MDAV's ``min_count``) are scaled by the fold's share of the rows, so the fold drops the categories the
whole release drops and keeps those it keeps."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdm.data.codec import TableCodec
from ppdm.data.columns import infer_columns
from ppdm.release.candidates import scaled_to_rows
from ppdm.release.trial import SweepTable, Trial


def test_only_the_whole_table_counts_are_scaled() -> None:
    params = {"k": 20, "min_count": 60, "min_support": 5}
    assert scaled_to_rows("mdav", params, 560, 700) == {"k": 20, "min_count": 48, "min_support": 5}
    assert scaled_to_rows("mdav", params, 700, 700) == params  # the release of every row: as given
    assert scaled_to_rows("mdav", {"k": 20, "min_count": 2}, 100, 700)["min_count"] == 1  # never below 1
    # a group's size, a leaf's size and the categorical part of a combined candidate count no table
    assert scaled_to_rows("mdav+pram", {"k": 20, "min_count": 60, "pram.pd": 0.1}, 560, 700) == {
        "k": 20, "min_count": 48, "pram.pd": 0.1}
    assert scaled_to_rows("cart", {"min_leaf": 20}, 560, 700) == {"min_leaf": 20}


def test_a_fold_release_keeps_the_categories_the_whole_release_keeps() -> None:
    rng = np.random.default_rng(3)
    n = 700
    # 'b' is held by 70 of 700 records (10 %): above a min_count of 60 in the whole table, and about 56 of a
    # fold's 560, below 60 but above the scaled 48
    city = np.array(["a"] * 420 + ["b"] * 70 + ["c"] * 210)
    rng.shuffle(city)
    df = pd.DataFrame({"x": rng.normal(size=n), "y": rng.normal(size=n), "city": city})
    codec = TableCodec(infer_columns(df)).fit(df)
    X = codec.encode(df)
    table = SweepTable(X=X, y=None, codec=codec, shown=None, folds=None, columns=codec.names, preprocess="none",
                       threat="population", seed=0, key_seed=5)
    trial = Trial(table, "mdav", {"k": 10, "min_count": 60})
    whole = trial.release()
    # a fold holding 56 of the 70 'b' records (its share of them): unscaled, it would drop 'b'
    held_out = np.concatenate([np.flatnonzero(city == "b")[:14], np.flatnonzero(city != "b")[:126]])
    fold = np.setdiff1d(np.arange(n), held_out)
    assert len(fold) == 560 and (city[fold] == "b").sum() == 56
    part = trial.release(fold, name="fold")

    def released(r: object) -> set[str]:
        return set(codec.filled(r.published)[:, 0])

    assert released(whole) == released(part) == {"a", "b", "c"}
    # a category the whole table holds too rarely is dropped by both
    rare = city.copy()
    rare[rng.choice(np.flatnonzero(rare == "b"), 20, replace=False)] = "a"  # 'b' now 50 of 700
    df2 = df.assign(city=rare)
    codec2 = TableCodec(infer_columns(df2)).fit(df2)
    t2 = SweepTable(X=codec2.encode(df2), y=None, codec=codec2, shown=None, folds=None, columns=codec2.names,
                    preprocess="none", threat="population", seed=0, key_seed=5)
    trial2 = Trial(t2, "mdav", {"k": 10, "min_count": 60})
    assert "b" not in set(codec2.filled(trial2.release().published)[:, 0])
    assert "b" not in set(codec2.filled(trial2.release(fold, name="fold").published)[:, 0])


def test_a_large_tables_training_rows_stand_in_for_every_row_too(monkeypatch) -> None:
    # the screening and the confirmation of a large table release its training rows: the same scaling
    import ppdm.release.candidates as candidates
    from ppdm.release.scale import score_at_scale
    from ppdm.release.utility import holdout_split

    built: list[dict] = []
    real = candidates.build_candidate

    def spy(method: str, params: dict, **kw: object) -> object:
        built.append(dict(params))
        return real(method, params, **kw)

    monkeypatch.setattr(candidates, "build_candidate", spy)
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 1000).astype(str)
    X = rng.normal(size=(1000, 3)) + (y == "1")[:, None]
    ho = holdout_split(y, seed=0)
    assert ho is not None and len(ho[0]) == 800
    score_at_scale(X, y, "mdav", {"k": 10, "min_count": 60}, preprocess="zscore", threat="default", seed=0,
                   key_seed=5, holdout=ho, max_reidentification=1.0, categories=y[:, None].astype(object),
                   targets=200, first_batch=100)
    assert built[0] == {"k": 10, "min_count": 48}
