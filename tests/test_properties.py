"""Property-based tests (hypothesis) of the mechanisms and metrics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.spatial.distance import pdist

from ppdm.mechanisms import AdditiveNoise, RandomProjection, RandomRotation, SparsifiedSVD, ThinSVD
from ppdm.metrics import corr_maintain, dist_maintain, value_metrics

settings.register_profile("ci", derandomize=True, database=None, max_examples=40, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci")


@st.composite
def matrices(draw, min_rows: int = 3, max_rows: int = 25, min_cols: int = 2, max_cols: int = 7):  # type: ignore[no-untyped-def]
    n = draw(st.integers(min_rows, max_rows))
    m = draw(st.integers(min_cols, max_cols))
    X = draw(arrays(np.float64, (n, m), elements=st.floats(-1e3, 1e3, allow_nan=False, width=64)))
    # bounded away from degenerate scaling: add a little seeded jitter so rank is generic
    return X + np.random.default_rng(n * 31 + m).normal(scale=1e-3, size=X.shape)


@given(matrices(), st.data())
@pytest.mark.filterwarnings("ignore::ppdm.exceptions.PrivacyWarning")
def test_svd_shapes_finiteness_and_error_monotone(X: np.ndarray, data: st.DataObject) -> None:
    top = min(X.shape)
    if top < 3:
        return
    errs = []
    for k in range(1, top):
        out = ThinSVD(k, solver="exact").fit_transform(X)
        assert out.shape == X.shape and np.isfinite(out).all()
        errs.append(np.linalg.norm(X - out))
    # distortion never grows with the rank (Eckart-Young), up to rounding
    assert all(b <= a + 1e-9 * (1 + a) for a, b in zip(errs, errs[1:], strict=False))


@given(matrices(min_cols=2))
def test_distance_preserving_mechanisms(X: np.ndarray) -> None:
    for mech in (RandomRotation(random_state=1), RandomProjection("arpo", random_state=1)):
        Y = mech.fit_transform(X)
        np.testing.assert_allclose(pdist(Y), pdist(X), rtol=1e-8, atol=1e-8 * (1 + np.abs(X).max()))


@given(matrices(), st.integers(0, 2**32 - 1))
def test_determinism_under_a_seed(X: np.ndarray, seed: int) -> None:
    for make in (lambda: AdditiveNoise(0.5, random_state=seed), lambda: RandomRotation(random_state=seed)):
        np.testing.assert_array_equal(make().fit_transform(X), make().fit_transform(X))


@given(matrices(min_rows=5), st.floats(0.0, 0.99))
def test_sparsified_svd_is_finite(X: np.ndarray, eps: float) -> None:
    k = min(X.shape) - 1
    out = SparsifiedSVD(k, eps_u=eps, eps_v=eps, solver="exact").fit_transform(X)
    assert out.shape == X.shape and np.isfinite(out).all()


@given(matrices(), matrices())
def test_metric_ranges(X: np.ndarray, Y: np.ndarray) -> None:
    Y = Y[: X.shape[0], : X.shape[1]]
    if Y.shape != X.shape:
        return
    m = value_metrics(X, Y)
    n = X.shape[0]
    assert m["re"] >= 0 and 0 <= m["rk"] <= 1 and 0 <= m["ck"] <= 1
    assert 0 <= m["rp"] <= n - 1 and 0 <= m["cp"] <= X.shape[1] - 1
    assert 0 <= dist_maintain(X, Y) <= 100
    same = value_metrics(X, X)
    assert same["re"] == 0 and same["rk"] == 1 and same["ck"] == 1 and same["rp"] == 0
    assert dist_maintain(X, X) == 100 and corr_maintain(X, X) == 100


@given(matrices(min_rows=10, max_rows=30), st.integers(0, 1000))
def test_re_grows_with_noise_scale(X: np.ndarray, seed: int) -> None:
    if np.linalg.norm(X) == 0:
        return
    # the same seed gives the same standardised draw, so RE is proportional to the scale
    res = [value_metrics(X, AdditiveNoise(s, random_state=seed).fit_transform(X))["re"] for s in (0.1, 1.0, 10.0)]
    assert res[0] < res[1] < res[2]
