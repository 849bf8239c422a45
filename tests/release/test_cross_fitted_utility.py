"""Train-on-release utility pooled over disjoint held-out folds (small tables) instead of one split."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier

from ppdm.release.config import Policy
from ppdm.release.first_pass import first_pass
from ppdm.release.full_battery import full_battery
from ppdm.release.trial import SweepTable
from ppdm.release.utility import TSTR_MAX_FOLDS, holdout_folds, holdout_split, pooled


def _labels(n: int, shares: tuple[float, ...] = (0.7, 0.3), seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.choice([f"c{i}" for i in range(len(shares))], size=n, p=shares)


def test_folds_are_disjoint_stratified_and_cover_the_table_when_it_is_small() -> None:
    y = _labels(3000)
    folds = holdout_folds(y, seed=3)
    assert folds is not None and len(folds) == TSTR_MAX_FOLDS
    tested = np.concatenate([te for _, te in folds])
    assert len(tested) == len(np.unique(tested)) == 3000  # every record tested once
    share = float(np.mean(y == "c1"))
    for tr, te in folds:
        assert len(np.intersect1d(tr, te)) == 0 and len(tr) + len(te) == 3000
        assert abs(float(np.mean(y[te] == "c1")) - share) < 0.01
        assert 590 <= len(te) <= 610


def test_folds_stop_once_enough_records_are_tested() -> None:
    y = _labels(15_000)
    folds = holdout_folds(y, seed=0)
    assert folds is not None
    assert len(folds) == 2 and sum(len(te) for _, te in folds) == 6000  # 3,000 per fold, >= 5,000 in all
    tested = np.concatenate([te for _, te in folds])
    assert len(np.unique(tested)) == 6000


def test_a_large_table_keeps_the_single_split() -> None:
    y = _labels(40_000)
    folds = holdout_folds(y, seed=1)
    single = holdout_split(y, seed=1)
    assert folds is not None and single is not None and len(folds) == 1
    assert np.array_equal(folds[0][1], single[1]) and len(single[1]) == 5000


def test_a_class_too_small_for_the_folds_falls_back_to_one_split() -> None:
    y = np.array(["a"] * 400 + ["b"] * 3)
    folds = holdout_folds(y, seed=0)
    assert folds is not None and len(folds) == 1
    assert holdout_folds(np.array(["a"] * 50), seed=0) is None


def test_pooling_weights_each_fold_by_its_records() -> None:
    got = pooled([(100, {"acc": 90.0}), (300, {"acc": 70.0})])
    assert got["acc"] == pytest.approx(75.0)  # (100 * 90 + 300 * 70) / 400


def test_a_candidate_is_scored_on_every_fold() -> None:
    # the identity release ("noise" with scale 0) makes each fold's score the original's, which plain
    # scikit-learn recomputes here fold by fold
    rng = np.random.default_rng(4)
    n = 1000
    y = rng.integers(0, 2, n).astype(str)
    X = rng.normal(size=(n, 4)) + (y == "1")[:, None] * np.array([1.0, 0.5, 0.0, 0.0])
    folds = holdout_folds(y, seed=0)
    assert folds is not None and len(folds) == 5
    table = SweepTable(X=X, y=y, codec=None, shown=None, folds=folds, columns=[f"x{j}" for j in range(4)],
                       preprocess="none", threat="population", seed=0, key_seed=1,
                       policy=Policy(max_reidentification=1.0, max_within_5pct=1.0, max_singling_out=1.0,
                                     max_linkability=1.0, max_membership_outliers=1.0))
    first = first_pass(table, "noise", {"scale": 0.0})
    res = full_battery(table, "noise", {"scale": 0.0}, first)
    right_lr = right_knn = 0
    for tr, te in folds:
        mu, sd = X[tr].mean(axis=0), X[tr].std(axis=0, ddof=1)
        lr = LogisticRegression(max_iter=2000).fit((X[tr] - mu) / sd, y[tr])
        right_lr += int((lr.predict((X[te] - mu) / sd) == y[te]).sum())
        knn = KNeighborsClassifier(5).fit((X[tr] - mu) / sd, y[tr])
        right_knn += int((knn.predict((X[te] - mu) / sd) == y[te]).sum())
    assert res["utility"]["tstr_logreg_pct"] == pytest.approx(100.0 * right_lr / n)
    assert res["utility"]["tstr_knn_pct"] == pytest.approx(100.0 * right_knn / n)


def test_the_logistic_model_of_a_whole_table_sees_categories_as_an_analyst_encodes_them() -> None:
    # an analyst's model of a mixed table: one-hot categories (0/1) and standardised numbers, scikit-learn's
    # own encoders on the table itself, against ppdm's on its design (whose indicators are weighted)
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from ppdm.data.codec import TableCodec
    from ppdm.data.columns import infer_columns
    from ppdm.release.utility import logreg_predictions

    rng = np.random.default_rng(7)
    n_train, n = 200, 600
    site = rng.choice(list("abcdefghij"), n)
    age = rng.normal(40, 10, n)
    # a label carried by ten categories of weak effects: the L2 penalty's scale on them matters
    effect = dict(zip("abcdefghij", rng.normal(0, 0.8, 10), strict=True))
    logit = np.array([effect[s] for s in site]) + 0.02 * (age - 40)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), "yes", "no")
    df = pd.DataFrame({"age": age, "site": site, "y": y})
    train, test = np.arange(n_train), np.arange(n_train, n)
    codec = TableCodec(infer_columns(df, label="y")).fit(df)
    X = codec.encode(df)
    ours = logreg_predictions(X[train], y[train], X[test], codec.numeric_index_)
    pre = ColumnTransformer([("c", OneHotEncoder(handle_unknown="ignore"), ["site"]), ("n", StandardScaler(), ["age"])])
    cols = ["site", "age"]
    theirs = make_pipeline(pre, LogisticRegression(max_iter=2000)).fit(df.iloc[train][cols], y[train])
    assert (ours == theirs.predict(df.iloc[test][cols])).all()
    # the model on the weighted indicators as they are is another one: it disagrees on some records
    num = codec.numeric_index_
    B, T = X[train].copy(), X[test].copy()
    mu, sd = B[:, num].mean(axis=0), B[:, num].std(axis=0, ddof=1)
    B[:, num], T[:, num] = (B[:, num] - mu) / sd, (T[:, num] - mu) / sd
    weighted = LogisticRegression(max_iter=2000).fit(B, y[train]).predict(T)
    assert (weighted != ours).sum() >= 5
