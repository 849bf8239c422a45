"""Utility estimates on large tables: seeded stratified samples, the same rows for every table."""

from __future__ import annotations

import numpy as np

from ppdm.release import evaluate
from ppdm.release.evaluate import stratified_sample, utility_scores


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
