from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import pdist

from ppdm.distances import (
    binary_counts,
    binary_similarity,
    chebyshev,
    euclidean,
    gower,
    huang,
    mahalanobis,
    manhattan,
    minkowski,
    pairwise,
    similarity_to_dissimilarity,
)
from ppdm.distances.mixed import MixedTable
from ppdm.exceptions import InputError, ParameterError
from tests.conftest import SHARED

EX = SHARED / "reference" / "worked_examples.json"


def _example(key: str) -> dict:
    if not EX.exists():
        pytest.skip("shared reference data not available")
    return json.loads(EX.read_text())[key]


def test_example_2_1_minkowski_family() -> None:
    e = _example("alotaibi2015_example2_1")
    assert manhattan(e["x1"], e["x2"]) == pytest.approx(e["manhattan"])
    assert euclidean(e["x1"], e["x2"]) == pytest.approx(e["euclidean"])
    assert chebyshev(e["x1"], e["x2"]) == pytest.approx(e["max"])
    assert minkowski(e["x1"], e["x2"], 3) == pytest.approx((2**3 + 2**3 + 1) ** (1 / 3))


def test_example_2_3_binary() -> None:
    e = _example("alotaibi2015_example2_3")
    assert binary_counts(e["x1"], e["x2"]) == (e["a"], e["b"], e["c"], e["d"])
    for k, key in (("smc", "simple_matching"), ("jaccard", "jaccard"), ("hamman", "hamman"), ("cosine", "cosine")):
        assert binary_similarity(e["x1"], e["x2"], k) == pytest.approx(e[key])


def test_example_2_2_mahalanobis_squared_to_mean() -> None:
    e = _example("alotaibi2015_example2_2_mahalanobis")
    X = np.asarray(e["X"], float)
    mu, S = X.mean(0), np.cov(X, rowvar=False)
    got = [mahalanobis(y, mu, S) ** 2 for y in e["Y"]]
    np.testing.assert_allclose(got, e["d_printed"], atol=0.05)


def test_pairwise_matches_scipy(rng: np.random.Generator) -> None:
    X = rng.normal(size=(57, 4))
    for ours, theirs in (("euclidean", "euclidean"), ("manhattan", "cityblock"), ("chebyshev", "chebyshev"),
                         ("cosine", "cosine")):
        np.testing.assert_allclose(pairwise(X, ours), pdist(X, theirs), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(pairwise(X, "minkowski", r=3), pdist(X, "minkowski", p=3), rtol=1e-5)
    VI = np.linalg.inv(np.cov(X, rowvar=False))
    np.testing.assert_allclose(pairwise(X, "mahalanobis"), pdist(X, "mahalanobis", VI=VI), rtol=1e-5)
    assert pairwise(X).dtype == np.float32


def test_binary_pairwise() -> None:
    X = np.array([[1, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 1, 0, 0, 1]], float)
    assert pairwise(X, "binary-smc")[0] == pytest.approx(0.3)
    assert pairwise(X, "binary-jaccard")[0] == pytest.approx(1.0)
    with pytest.raises(InputError):
        pairwise(X * 2, "binary-smc")


def test_gower_by_hand_with_missing() -> None:
    df = pd.DataFrame({"a": [1.0, 3.0, np.nan], "b": ["x", "y", "x"], "c": [0.0, 10.0, 5.0]})
    d = pairwise(MixedTable.from_frame(df), "gower", dtype=np.float64)
    # ranges: a 2, c 10. pair (0,1): s = [0, 0, 0] -> 1; pair (0,2): a missing, s = [1, 0.5] -> 0.25
    # pair (1,2): a missing, b differs, c: 1 - 5/10 -> s = [0, 0.5] -> 0.75
    np.testing.assert_allclose(d, [1.0, 0.25, 0.75])
    assert gower([1.0, "x"], [1.0, "y"]) == pytest.approx(0.5)


def test_huang_by_hand() -> None:
    assert huang([0.0, 0.0, "a"], [3.0, 4.0, "b"], weight=2.0) == pytest.approx(7.0)
    df = pd.DataFrame({"a": [0.0, np.nan], "b": ["x", "y"]})
    with pytest.raises(InputError, match="huang"):
        pairwise(MixedTable.from_frame(df), "huang")


def test_numeric_metric_refuses_categorical() -> None:
    df = pd.DataFrame({"a": [0.0, 1.0], "b": ["x", "y"]})
    with pytest.raises(InputError, match="gower"):
        pairwise(MixedTable.from_frame(df), "euclidean")
    with pytest.raises(ParameterError):
        pairwise(np.zeros((3, 2)), "nope")


def test_similarity_transforms() -> None:
    s = np.array([1.0, 0.5, 0.0])
    np.testing.assert_allclose(similarity_to_dissimilarity(s), [0, 0.5, 1])
    np.testing.assert_allclose(similarity_to_dissimilarity(s, "negative"), [-1, -0.5, 0])
    np.testing.assert_allclose(similarity_to_dissimilarity(s, "sqrt2"), [0, 1, np.sqrt(2)])
    np.testing.assert_allclose(similarity_to_dissimilarity(s, "sqrt"), [0, np.sqrt(0.5), 1])


def test_pairwise_memory_guard() -> None:
    from ppdm.exceptions import ResourceError

    with pytest.raises(ResourceError, match="landmark"):
        pairwise(np.zeros((1000, 2)), max_bytes=1000)
