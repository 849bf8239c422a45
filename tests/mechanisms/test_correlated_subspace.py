"""Correlated noise with Kim's correction, and the private subspace releases (SVD + noise, SVD + MDAV)."""

from __future__ import annotations

import numpy as np
import pytest

from ppdm.exceptions import PrivacyWarning
from ppdm.mechanisms import CorrelatedNoise, SVDMicroaggregation, SVDNoise, ThinSVD


def _skewed_table(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    E = rng.exponential(size=(n, 4))
    return E @ np.array([[1.0, 0.5, 0, 0], [0, 2.0, 1.0, 0], [0, 0, 3.0, -1.0], [0.2, 0, 0, 0.5]]) + [10, -5, 100, 0]


def test_correlated_noise_keeps_means_and_covariances_within_sampling_error() -> None:
    n, d = 20_000, 1.0
    X = _skewed_table(n)
    mech = CorrelatedNoise(scale=d, random_state=7)
    Z = mech.fit_transform(X)
    c = 1 / np.sqrt(1 + d)
    S, Sz = np.cov(X, rowvar=False), np.cov(Z, rowvar=False)
    sd = np.sqrt(np.diag(S))
    # Cov(Z) - S = c^2 [(S_e - d S) + C_xe + C_ex] with e ~ N(0, d S) given X: the Wishart part has variance
    # d^2 (S_jj S_ll + S_jl^2) / (n - 1) per entry, the cross part 2 d (S_jj S_ll + S_jl^2) / (n - 1)
    se_cov = c**2 * np.sqrt((d**2 + 2 * d) * (np.outer(sd, sd) ** 2 + S**2) / (n - 1))
    assert (np.abs(Sz - S) <= 5 * se_cov).all(), np.abs(Sz - S) / se_cov
    # the mean moves by c times the noise's mean, which has standard error sqrt(d S_jj / n)
    assert (np.abs(Z.mean(0) - X.mean(0)) <= 5 * c * np.sqrt(d) * sd / np.sqrt(n)).all()
    # each value is perturbed: corr(Z_j, X_j) = Cov(c X_j, X_j) / S_jj = c (standard error ~ (1 - c^2) / sqrt(n))
    for j in range(4):
        assert abs(np.corrcoef(Z[:, j], X[:, j])[0, 1] - c) <= 5 * (1 - c**2) / np.sqrt(n)
    # the tolerance discriminates: without Kim's correction the covariance is (1 + d) S, far outside it
    raw = np.cov(X + mech.noise(n), rowvar=False)
    assert (np.abs(raw - S) > 5 * se_cov).any()


def test_correlated_noise_is_shaped_like_the_data_and_drawn_from_the_key() -> None:
    X = _skewed_table(5000, seed=1)
    m = CorrelatedNoise(scale=0.5, random_state=3).fit(X)
    e = m.noise(5000)
    # noise correlations follow the data's (not independent columns)
    np.testing.assert_allclose(np.corrcoef(e, rowvar=False), np.corrcoef(X, rowvar=False), atol=0.08)
    np.testing.assert_allclose(m.shrink_, 1 / np.sqrt(1.5))
    np.testing.assert_array_equal(m.transform(X), CorrelatedNoise(scale=0.5, random_state=3).fit_transform(X))
    assert not np.allclose(m.transform(X), CorrelatedNoise(scale=0.5, random_state=4).fit_transform(X))
    with pytest.warns(PrivacyWarning):
        np.testing.assert_allclose(CorrelatedNoise(scale=0.0).fit_transform(X), X)


def test_svd_noise_lies_in_the_subspace_with_the_stated_spread() -> None:
    rng = np.random.default_rng(2)
    n = 4000
    X = rng.normal(size=(n, 3)) @ rng.normal(size=(3, 6)) * [1, 2, 3, 4, 5, 6] + rng.normal(scale=0.1, size=(n, 6))
    B = SVDNoise(rank=2, scale=0.5, random_state=0).fit_transform(X)
    # the subspace from LAPACK directly (not from the mechanism)
    _, s, Vt = np.linalg.svd(X, full_matrices=False)
    V = Vt[:2].T
    assert np.linalg.matrix_rank(B, tol=1e-8 * np.abs(B).max()) == 2
    np.testing.assert_allclose(B - B @ V @ V.T, 0, atol=1e-9 * np.abs(B).max())  # nothing outside span(V_k)
    noise = (B - X @ V @ V.T) @ V  # the noise on each subspace coordinate
    # sd of component j's noise = scale * s_j / sqrt(n); the sample sd's relative standard error is 1/sqrt(2n)
    np.testing.assert_allclose(noise.std(0), 0.5 * s[:2] / np.sqrt(n), rtol=5 / np.sqrt(2 * n))
    assert abs(np.corrcoef(noise.T)[0, 1]) < 5 / np.sqrt(n)  # independent components
    with pytest.warns(PrivacyWarning):  # no noise: the plain rank-k release
        np.testing.assert_allclose(SVDNoise(rank=2, scale=0.0).fit_transform(X), ThinSVD(2).fit_transform(X),
                                   atol=1e-9 * np.abs(X).max())


def test_svd_mdav_by_hand() -> None:
    # columns x and y are orthogonal (sum x*y = 0) and x carries far more energy, so the rank-1 subspace is
    # the x axis; MDAV (k = 3) on x groups {-12, -11, -10} and {10, 11, 12}: released as (-11, 0, 0), (11, 0, 0)
    X = np.array([[-12, 0.1, 0], [-11, -0.2, 0], [-10, 0.1, 0], [10, 0.1, 0], [11, -0.2, 0], [12, 0.1, 0]])
    out = SVDMicroaggregation(rank=1, k=3).fit_transform(X)
    np.testing.assert_allclose(out, [[-11, 0, 0]] * 3 + [[11, 0, 0]] * 3, atol=1e-12)


def test_svd_mdav_groups_share_rows_within_classes_and_stay_in_the_subspace() -> None:
    rng = np.random.default_rng(4)
    X = rng.normal(size=(600, 8)) @ rng.normal(size=(8, 8))
    y = rng.integers(0, 2, 600)
    m = SVDMicroaggregation(rank=3, k=5)
    B = m.fit_transform(X, y)
    assert np.linalg.matrix_rank(B, tol=1e-8 * np.abs(B).max()) <= 3
    rows, counts = np.unique(np.round(B, 10), axis=0, return_counts=True)
    assert counts.min() >= 5 and counts.max() <= 9  # every released row shared by k..2k-1 records
    for g in range(m.n_groups_):
        assert len(set(y[m.groups_ == g])) == 1
    # a group's row is the projection of its records' mean onto the subspace
    _, _, Vt = np.linalg.svd(X, full_matrices=False)
    P = Vt[:3].T @ Vt[:3]
    g0 = m.groups_ == 0
    np.testing.assert_allclose(B[g0][0], X[g0].mean(0) @ P, atol=1e-9)
