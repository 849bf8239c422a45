from __future__ import annotations

import numpy as np
import pytest

from ppdm.metrics.utility_suite import (
    class_compactness,
    cluster_labels,
    dbscan_eps,
    f_measure,
    knn_accuracy,
    neighbourhood_preservation,
    svm_kernel_accuracy,
    utility_suite,
    variation_of_information,
)


def test_vi_hand_values() -> None:
    assert variation_of_information([0, 0, 1, 1], [5, 5, 7, 7]) == 0.0
    # independent halves: H = 1 bit each, MI = 0 -> VI = 2
    assert variation_of_information([0, 0, 1, 1], [0, 1, 0, 1]) == pytest.approx(2.0)
    # one cluster vs two equal classes: VI = H(classes) = 1
    assert variation_of_information([0, 0, 1, 1], [0, 0, 0, 0]) == pytest.approx(1.0)


def test_f_measure_hand_values() -> None:
    assert f_measure([0, 0, 1, 1], [3, 3, 4, 4]) == 1.0
    # one cluster holding both classes of 2: precision 1/2, recall 1 -> F = 2/3 for each class
    assert f_measure([0, 0, 1, 1], [9, 9, 9, 9]) == pytest.approx(2 / 3)


def _blobs(rng: np.random.Generator, n: int = 60) -> tuple[np.ndarray, np.ndarray]:
    y = np.repeat([0, 1, 2], n // 3)
    X = rng.normal(size=(n, 3)) * 0.3 + np.eye(3)[y] * 10
    return X, y


def test_structure_measures(rng: np.random.Generator) -> None:
    X, y = _blobs(rng)
    assert neighbourhood_preservation(X, X) == dict.fromkeys(range(3, 11), 1.0)
    assert all(v == 1.0 for v in class_compactness(X, y).values())
    noise = rng.normal(size=X.shape)
    assert np.mean(list(neighbourhood_preservation(X, noise).values())) < 0.4


def test_clusterings_find_separated_blobs(rng: np.random.Generator) -> None:
    X, y = _blobs(rng)
    for method in ("kmeans_classmean", "kmeans_pp", "single"):
        lab = cluster_labels(X, y, method, random_state=0)
        assert variation_of_information(y, lab) < 1e-9, method
    # DBSCAN at the knee eps may call some blob points noise, but never mixes blobs
    lab = cluster_labels(X, y, "dbscan")
    core = lab >= 0
    assert core.mean() > 0.6
    assert all(len(set(y[lab == c])) == 1 for c in set(lab[core]))
    assert dbscan_eps(X) > 0


def test_classifiers_on_separable_data(rng: np.random.Generator) -> None:
    X, y = _blobs(rng, 90)
    assert min(knn_accuracy(X, y, n_repeats=2)) == 100.0
    assert len(svm_kernel_accuracy(X, y, "linear", n_repeats=2)) == 2
    assert np.mean(svm_kernel_accuracy(X, y, "rbf", n_repeats=2)) > 95


def test_suite_shape_and_sampling(rng: np.random.Generator) -> None:
    X, y = _blobs(rng, 120)
    res = utility_suite(X, X + rng.normal(scale=0.01, size=X.shape), y, n_repeats=2, max_rows=90)
    assert res["sample"].startswith("seeded sample of 90")
    assert res["pairs"]["knn4_pct"]["release"] == pytest.approx(res["pairs"]["knn4_pct"]["original"], abs=2)
    assert set(res["trials"]) >= {"knn4_pct", "svm_linear_pct", "svm_poly3_pct", "svm_rbf_pct", "svm_sigmoid_pct"}
