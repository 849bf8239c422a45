from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import pdist
from scipy.stats import rankdata, spearmanr

from ppdm.exceptions import InputError, ParameterError, PrivacyWarning
from ppdm.mechanisms.nmds import NonMetricMDS
from tests.distances.test_distances import _example


def _z(X: np.ndarray) -> np.ndarray:
    sd = X.std(0, ddof=1)
    sd[sd == 0] = 1
    return (X - X.mean(0)) / sd


def test_worked_example_sec_3_3_5() -> None:
    e = _example("alotaibi2015_sec3_3_5_nmds_example")
    Z = _z(np.asarray(e["X"], float))
    np.testing.assert_allclose(Z, e["X_zscored_printed"], atol=0.006)
    m = NonMetricMDS(3, n_init=3, random_state=0, leak_check=False)
    Y = m.fit_transform(Z)
    assert m.stress_ < 1e-3
    assert m.fallback_  # the classical start is exact here, so a random start is used
    np.testing.assert_array_equal(rankdata(pdist(Y)), rankdata(pdist(Z)))


def test_released_distances_keep_order(rng: np.random.Generator) -> None:
    X = rng.normal(size=(120, 6)) @ rng.normal(size=(6, 6))
    Z = _z(X)
    m = NonMetricMDS(3, random_state=1, leak_check=False)
    Y = m.fit_transform(Z)
    assert Y.shape == (120, 3)
    assert spearmanr(pdist(Z), pdist(Y)).statistic > 0.9
    assert m.stress_trace_[0] >= m.stress_ and m.stress_ < 0.2
    sh = m.shepard()
    assert sh["delta"].shape == sh["distance"].shape == sh["disparity"].shape
    assert list(m.get_feature_names_out()) == ["d1", "d2", "d3"]


def test_same_seed_same_release(rng: np.random.Generator) -> None:
    Z = _z(rng.normal(size=(40, 4)))
    a = NonMetricMDS(2, random_state=3, init="random", leak_check=False).fit_transform(Z)
    b = NonMetricMDS(2, random_state=3, init="random", leak_check=False).fit_transform(Z)
    np.testing.assert_array_equal(a, b)


def test_linear_leak_warns_and_strict_refuses(rng: np.random.Generator) -> None:
    Z = _z(rng.normal(size=(60, 3)) @ rng.normal(size=(3, 4)) + 0.01 * rng.normal(size=(60, 4)))
    with pytest.warns(PrivacyWarning, match="linear"):
        NonMetricMDS(3, random_state=0).fit(Z)
    with pytest.raises(ParameterError, match="linear"):
        NonMetricMDS(3, random_state=0, strict=True).fit(Z)


def test_low_dimension_is_not_linear(rng: np.random.Generator) -> None:
    # a curved 1-D manifold in 3-D mapped to p = 1: the release is monotone but far from linear
    t = np.sort(rng.uniform(0, 3 * np.pi, 150))
    Z = _z(np.c_[np.cos(t) * t, np.sin(t) * t, t])
    m = NonMetricMDS(1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        m.fit(Z)
    assert m.linear_leak_["r2_input_from_release"] < 0.99


def test_mixed_frame_with_gower() -> None:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=50), "c": rng.choice(list("abc"), 50), "y": rng.normal(size=50)})
    df.loc[3, "x"] = np.nan
    m = NonMetricMDS(2, dissimilarity="gower", random_state=0, leak_check=False)
    Y = m.fit_transform(df)
    assert Y.shape == (50, 2) and np.isfinite(Y).all()
    with pytest.raises(InputError, match="gower"):
        NonMetricMDS(2).fit(df)


def test_landmark_mode_and_new_records(rng: np.random.Generator) -> None:
    Z = _z(rng.normal(size=(600, 4)))
    m = NonMetricMDS(3, landmarks=150, random_state=0, leak_check=False)
    Y = m.fit_transform(Z)
    assert Y.shape == (600, 3)
    assert spearmanr(pdist(Z[:300]), pdist(Y[:300])).statistic > 0.9
    Ynew = m.transform(Z[:20] + 1e-9)
    np.testing.assert_allclose(Ynew, m.transform(Z[:20] + 1e-9))
    assert np.abs(Ynew - Y[:20]).max() < 0.2 * np.abs(Y).max()


def test_bad_parameters(rng: np.random.Generator) -> None:
    Z = rng.normal(size=(20, 3))
    with pytest.raises(ParameterError):
        NonMetricMDS(20).fit(Z)
    with pytest.raises(ParameterError):
        NonMetricMDS(2, ties="tertiary").fit(Z)
    with pytest.raises(ParameterError):
        NonMetricMDS("many").fit(Z)


def test_dims_auto_and_elbow() -> None:
    from ppdm.mds.dims import elbow, kruskal_quality

    assert elbow([1, 2, 3, 4, 5], [0.4, 0.1, 0.08, 0.07, 0.06]) == 2
    assert [kruskal_quality(s) for s in (0, 0.02, 0.04, 0.08, 0.15, 0.3)] == [
        "perfect", "excellent", "good", "fair", "fair-poor", "poor"]


def test_memory_guard_names_the_landmark_mode(rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch) -> None:
    from ppdm.exceptions import ResourceError

    monkeypatch.setenv("PPDM_MEMORY_LIMIT", "1M")
    Z = _z(rng.normal(size=(600, 3)))  # 179,700 pairs: ~2.2 MB even in the 12-byte layout
    for layout in ("condensed", "sorted"):
        with pytest.raises(ResourceError, match="--landmarks"):
            NonMetricMDS(2, pair_layout=layout, leak_check=False).fit(Z)


def test_sorted_layout_gives_the_condensed_release(rng: np.random.Generator) -> None:
    Z = _z(np.round(rng.normal(size=(150, 4)), 1))  # with tied dissimilarities
    a = NonMetricMDS(2, pair_layout="condensed", random_state=0, leak_check=False)
    b = NonMetricMDS(2, pair_layout="sorted", random_state=0, leak_check=False)
    np.testing.assert_allclose(b.fit_transform(Z), a.fit_transform(Z), atol=1e-6)
    assert b.stress_ == pytest.approx(a.stress_, rel=1e-9) and b.n_iter_ == a.n_iter_
    np.testing.assert_allclose(b.transfer_dhat_, a.transfer_dhat_, rtol=1e-9)


def test_monotone_table_matches_interp(rng: np.random.Generator) -> None:
    from ppdm.mds.landmark import MonotoneTable

    x = np.sort(rng.uniform(0, 5, 300))
    y = np.maximum.accumulate(rng.normal(size=300)) + x
    d = rng.uniform(-1, 6, size=(50, 40))
    np.testing.assert_allclose(MonotoneTable(x, y)(d), np.interp(d, x, y), atol=1e-3)
    np.testing.assert_allclose(MonotoneTable(x, y)(np.array([-3.0, 9.0])), [y[0], y[-1]])
