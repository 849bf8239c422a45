"""Property-based tests (hypothesis) of the newer mechanisms and metrics: NMF, NMDS, the reduction
baselines, the information metrics and the attacks' scores. Tiny matrices, few examples."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from ppdm import registry
from ppdm.attacks import run_attacks_named
from ppdm.mechanisms.nmds import NonMetricMDS
from ppdm.mechanisms.nmf import NMF
from ppdm.metrics.information import (
    entropy,
    entropy_distortion,
    mutual_information,
    mutual_information_vector,
    side_effect_rate,
)

settings.register_profile("robust-ci", derandomize=True, database=None, max_examples=12, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("robust-ci")

pytestmark = pytest.mark.filterwarnings("ignore::ppdm.exceptions.PrivacyWarning")


@st.composite
def matrices(draw, min_rows: int = 4, max_rows: int = 12, min_cols: int = 2, max_cols: int = 5,  # type: ignore[no-untyped-def]
             low: float = -100.0, high: float = 100.0):
    n = draw(st.integers(min_rows, max_rows))
    m = draw(st.integers(min_cols, max_cols))
    X = draw(arrays(np.float64, (n, m), elements=st.floats(low, high, allow_nan=False, width=64)))
    # seeded jitter keeps the rank generic (no all-equal columns)
    jitter = np.abs(np.random.default_rng(n * 31 + m).normal(scale=1e-2, size=X.shape))
    return X + jitter


@given(matrices(low=0.0), st.integers(0, 2**31 - 1), st.sampled_from(["hals", "mu", "pg"]))
def test_nmf_nonnegative_deterministic_and_descends(X: np.ndarray, seed: int, solver: str) -> None:
    K = int(np.random.default_rng(seed).integers(1, min(X.shape) + 1))
    make = lambda: NMF(components=K, solver=solver, max_iter=60, random_state=seed)  # noqa: E731
    est = make()
    B = est.fit_transform(X)
    assert B.shape == X.shape and np.isfinite(B).all()
    assert (B >= 0).all() and not est.shifted_
    assert (est.factors_ >= 0).all() and (est.components_ >= 0).all()
    assert est.objective_ <= est.initial_objective_ * (1 + 1e-9) + 1e-12
    assert np.array_equal(make().fit_transform(X), B)


@given(matrices(min_rows=4, max_rows=9, min_cols=2, max_cols=4), st.integers(0, 1000))
def test_nmds_finite_shape_deterministic(X: np.ndarray, seed: int) -> None:
    p = max(1, X.shape[1] - 1)
    make = lambda: NonMetricMDS(p, max_iter=40, leak_check=False, random_state=seed)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Y = make().fit_transform(X)
        Y2 = make().fit_transform(X)
    assert Y.shape == (X.shape[0], p) and np.isfinite(Y).all()
    assert np.array_equal(Y, Y2)


@given(matrices(), st.integers(0, 1000), st.sampled_from(["pca", "dct", "rp-liu", "svd-tau", "cmds"]))
def test_reduction_baselines_shapes_and_finiteness(X: np.ndarray, seed: int, name: str) -> None:
    p = int(np.random.default_rng(seed).integers(1, X.shape[1] + 1))
    est = registry.build(name, {"n_components": p}, random_state=seed)
    Y = est.fit_transform(X)
    assert Y.shape == (X.shape[0], p) and np.isfinite(Y).all()
    again = registry.build(name, {"n_components": p}, random_state=seed).fit_transform(X)
    assert np.array_equal(Y, again)


@given(matrices(low=-20, high=20), matrices(low=-20, high=20))
def test_information_metric_ranges(X: np.ndarray, Y: np.ndarray) -> None:
    n, m = min(len(X), len(Y)), min(X.shape[1], Y.shape[1])
    A, B = X[:n, :m], Y[:n, :m]
    for j in range(m):
        hx, hy = entropy(A[:, j]), entropy(B[:, j])
        assert 0 <= hx <= np.log2(n) + 1e-9 and 0 <= hy <= np.log2(n) + 1e-9
        mi = mutual_information(A[:, j], B[:, j])
        # 0 <= I(X;Y) <= min(H(X), H(Y)); I(X;X) = H(X)
        assert -1e-9 <= mi <= min(hx, hy) + 1e-9
        assert mutual_information(A[:, j], A[:, j]) == pytest.approx(hx, abs=1e-9)
    M = mutual_information_vector(A, B)
    assert M.shape == (m,) and np.isfinite(M).all()
    ed = entropy_distortion(A, B)
    assert np.isnan(ed) or ed >= 0
    assert entropy_distortion(A, A) in (0.0,) or np.isnan(entropy_distortion(A, A))


@given(st.lists(st.integers(0, 3), min_size=1, max_size=30), st.integers(0, 1000))
def test_side_effect_rate_range(labels: list[int], seed: int) -> None:
    before = np.array(labels)
    after = np.random.default_rng(seed).permutation(before)
    r = side_effect_rate(before, after)
    assert 0.0 <= r <= 1.0
    assert side_effect_rate(before, before) == 0.0
    assert side_effect_rate(before, before + 1) == 1.0


@settings(max_examples=6)
@given(matrices(min_rows=8, max_rows=14, min_cols=2, max_cols=4, low=1.0, high=50.0), st.integers(0, 1000),
       st.floats(0.0, 2.0))
def test_attack_scores_are_rates(X: np.ndarray, seed: int, scale: float) -> None:
    B = X + np.random.default_rng(seed).normal(scale=scale * X.std(), size=X.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = run_attacks_named(X, B, "population+known-io:3", random_state=seed, n_seeds=1)
    assert res
    seen = set()
    for r in res:
        for key in ("within_5pct", "reidentification_rate"):
            v = getattr(r, key)
            if v is not None and np.isfinite(v):
                seen.add(key)
                assert 0.0 <= v <= 1.0, (r.attack, key, v)
    assert seen == {"within_5pct", "reidentification_rate"}
    # the release equal to the original: re-identification is certain
    exact = run_attacks_named(X, X.copy(), "population", random_state=seed, n_seeds=1, attacks=["linkage"])
    assert exact[0].reidentification_rate == 1.0
