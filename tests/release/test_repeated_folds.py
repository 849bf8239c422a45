"""A small table's train-on-release utility on repeated splits of every row (repeated cross-validation), and the
paired comparison that counts each record once however often it was predicted."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from ppdm.release.config import Policy
from ppdm.release.first_pass import first_pass, pack_hits
from ppdm.release.full_battery import full_battery
from ppdm.release.halving import compare_with_most_useful
from ppdm.release.trial import SweepTable
from ppdm.release.utility import REPEAT_MAX, REPEAT_TESTED, holdout_folds, repeat_folds

OPEN = Policy(objective="tstr_logreg_pct", max_reidentification=1.0, max_within_5pct=1.0, max_singling_out=1.0,
              max_linkability=1.0, max_membership_outliers=1.0)


def _labels(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).choice(["good", "bad"], size=n, p=[0.7, 0.3])


def test_a_small_table_is_split_again_until_enough_predictions_are_made() -> None:
    y = _labels(700)
    folds = holdout_folds(y, seed=5)
    assert folds is not None and len(folds) == 5
    more = repeat_folds(y, folds, seed=5)
    assert more is not None
    # 700 records: three repetitions in all (2,100 predictions, the most allowed), so two more sets of 5 folds
    assert REPEAT_MAX == 3 and len(more) == 10
    for r in range(2):
        block = more[5 * r: 5 * r + 5]
        tested = np.concatenate([te for _, te in block])
        assert np.array_equal(np.sort(tested), np.arange(700))  # each repetition tests every record once
        for tr, te in block:
            assert len(np.intersect1d(tr, te)) == 0 and len(tr) + len(te) == 700
            assert abs(float(np.mean(y[te] == "bad")) - float(np.mean(y == "bad"))) < 0.02
    # fresh shuffles: no repetition repeats the folds' split
    first = {tuple(te) for _, te in folds}
    assert not first & {tuple(te) for _, te in more}
    assert not {tuple(te) for _, te in more[:5]} & {tuple(te) for _, te in more[5:]}


def test_tables_that_make_enough_predictions_are_not_split_again() -> None:
    y = _labels(REPEAT_TESTED)  # one repetition already makes REPEAT_TESTED predictions
    assert repeat_folds(y, holdout_folds(y, seed=0), seed=0) is None
    y = _labels(1500)  # two repetitions make 3,000
    more = repeat_folds(y, holdout_folds(y, seed=0), seed=0)
    assert more is not None and len(more) == 5
    big = _labels(15_000)  # its folds do not test every record: it has enough
    assert repeat_folds(big, holdout_folds(big, seed=0), seed=0) is None
    assert repeat_folds(y, None, seed=0) is None


def test_a_candidate_is_scored_on_every_split() -> None:
    # the identity release ("noise" with scale 0) makes every split's score the original's, which plain
    # scikit-learn recomputes here split by split
    rng = np.random.default_rng(8)
    n = 600
    y = rng.integers(0, 2, n).astype(str)
    X = rng.normal(size=(n, 3)) + (y == "1")[:, None] * np.array([0.6, 0.3, 0.0])
    folds = holdout_folds(y, seed=2)
    more = repeat_folds(y, folds, seed=2)
    assert folds is not None and more is not None and len(more) == 10
    table = SweepTable(X=X, y=y, codec=None, shown=None, folds=folds, columns=["a", "b", "c"], preprocess="none",
                       threat="population", seed=2, key_seed=1, policy=OPEN, repeats=more)
    res = full_battery(table, "noise", {"scale": 0.0}, first_pass(table, "noise", {"scale": 0.0}))
    right = 0
    for tr, te in [*folds, *more]:
        mu, sd = X[tr].mean(axis=0), X[tr].std(axis=0, ddof=1)
        lr = LogisticRegression(max_iter=2000).fit((X[tr] - mu) / sd, y[tr])
        right += int((lr.predict((X[te] - mu) / sd) == y[te]).sum())
    assert res["utility"]["tstr_logreg_pct"] == pytest.approx(100.0 * right / (3 * n))
    assert res["hits_pooled_rows"] == 3 * n
    assert np.array_equal(np.sort(table.tested_rows()), np.repeat(np.arange(n), 3))


def _cand(k: int, hits: np.ndarray) -> dict:
    return {"method": "mdav", "params": {"k": k}, "value": {"re": 0.3}, "stage": "full battery",
            "utility": {"tstr_logreg_pct": 100.0 * float(hits.mean())},
            "risk": {"reidentification": 0.0, "within_5pct": 0.0, "singling_out": {"risk": 0.0}},
            "hits_pooled": pack_hits(hits), "hits_pooled_rows": len(hits)}


def test_a_record_predicted_on_several_splits_counts_once_in_the_comparison() -> None:
    n = 200
    tested = np.concatenate([np.arange(n), np.arange(n)[::-1]])  # every record twice, in another order
    top = np.ones(2 * n, dtype=bool)
    other = top.copy()
    # records 0..19 wrong on both splits, records 20..39 on the first only
    other[:40] = False
    other[n + (n - 1 - np.arange(20))] = False
    a, b = _cand(50, top), _cand(20, other)
    compare_with_most_useful([a, b], OPEN, tested)
    d = b["utility_vs_best"]
    per_record = np.zeros(n)
    per_record[:20], per_record[20:40] = -1.0, -0.5
    assert d["records"] == n
    assert d["difference"] == pytest.approx(100 * per_record.mean())
    assert d["se"] == pytest.approx(100 * per_record.std(ddof=1) / np.sqrt(n), abs=1e-4)
    # counted apart, the 400 predictions would claim a smaller error
    apart = other.astype(float) - top.astype(float)
    assert d["se"] > 100 * apart.std(ddof=1) / np.sqrt(2 * n)
