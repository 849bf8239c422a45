"""Utility estimates on large tables: seeded stratified samples, the same rows for every table."""

from __future__ import annotations

import numpy as np

from ppdm.release import utility as evaluate
from ppdm.release.utility import stratified_sample, utility_scores


def test_a_stratified_sample_keeps_class_shares_and_repeats_with_its_seed() -> None:
    y = np.array(["a"] * 9000 + ["b"] * 1000)
    rows = stratified_sample(y, 2000, seed=3)
    assert rows is not None and len(rows) == 2000 and np.all(np.diff(rows) > 0)
    assert (y[rows] == "b").mean() == 0.1
    assert np.array_equal(rows, stratified_sample(y, 2000, seed=3))
    assert not np.array_equal(rows, stratified_sample(y, 2000, seed=4))
    assert stratified_sample(y, 20_000, seed=3) is None  # small enough: every row


def test_utility_above_the_cap_is_measured_on_the_sample(monkeypatch) -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 3000)
    X = y[:, None] * 2.0 + rng.normal(size=(3000, 4))
    full = utility_scores(X, y, seed=1)
    monkeypatch.setattr(evaluate, "UTILITY_SAMPLE", 600)
    sampled = utility_scores(X, y, seed=1)
    rows = stratified_sample(y, 600, seed=1)
    # the sampled scores are those of the sample itself, and close to the full table's
    monkeypatch.setattr(evaluate, "UTILITY_SAMPLE", 10**9)
    assert sampled == utility_scores(X[rows], y[rows], seed=1)
    assert abs(sampled["knn_pct"] - full["knn_pct"]) < 5.0


def test_a_stratified_sample_rounds_shares_by_largest_remainder_and_compares_classes_as_text() -> None:
    # 3 classes of 5000, 3000 and 2000 rows: 7 rows are 3.5, 2.1 and 1.4; the largest remainder (.5) gets
    # the row left over
    y = np.array(["a"] * 5000 + ["b"] * 3000 + ["c"] * 2000)
    rows = stratified_sample(y, 7, seed=0)
    assert [int((y[rows] == c).sum()) for c in "abc"] == [4, 2, 1]
    # 1 and "1" are one class as text: two classes of 300, not three
    mixed = np.array([1] * 150 + ["1"] * 150 + ["x"] * 300, dtype=object)
    rows = stratified_sample(mixed, 100, seed=0)
    assert int((mixed[rows] == "x").sum()) == 50
    # a class of one record cannot keep its share: the sample is drawn from every row
    lonely = np.array(["a"] * 999 + ["b"])
    rows = stratified_sample(lonely, 10, seed=0)
    assert rows is not None and len(np.unique(rows)) == 10


def test_a_stratified_sample_of_a_million_labels_needs_a_few_code_vectors() -> None:
    import tracemalloc

    y = np.array(["0", "1", "2", "3"])[np.random.default_rng(0).integers(0, 4, 1_000_000)]
    stratified_sample(y[:1000], 100, seed=0)
    tracemalloc.start()
    try:
        rows = stratified_sample(y, 20_000, seed=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rows is not None and len(rows) == 20_000
    # codes, the sort of the labels and one class's rows: 33 MB measured (a scikit-learn split: 79 MB)
    assert peak < 40e6, peak / 1e6
