from __future__ import annotations

import numpy as np
import pytest

from ppdm import registry
from ppdm.exceptions import InputError, ParameterError
from ppdm.mechanisms.nmf import NMF, NonnegativeShift
from ppdm.mechanisms.nmf_solvers import SOLVERS, factorize, hoyer_sparseness, nmf_init, nnls_rows


def _exact(rng: np.random.Generator, n: int = 60, m: int = 12, k: int = 3) -> np.ndarray:
    return rng.uniform(size=(n, k)) @ rng.uniform(size=(k, m))


@pytest.mark.parametrize("solver", ["hals", "pg", "mu"])
def test_solvers_recover_an_exact_nonnegative_factorisation(solver: str, rng: np.random.Generator) -> None:
    A = _exact(rng)
    r = factorize(A, 3, solver=solver, tol=1e-7, max_iter=20000, random_state=1)
    assert r.H.min() >= 0 and r.W.min() >= 0
    assert r.objective / np.linalg.norm(A) < 5e-3
    assert r.objective == pytest.approx(np.linalg.norm(A - r.H @ r.W), rel=1e-6, abs=1e-8)
    assert r.objective < r.initial_objective


def test_als_decreases_objective(rng: np.random.Generator) -> None:
    A = _exact(rng)
    r = factorize(A, 3, solver="als", max_iter=200, random_state=1)
    assert r.objective < 0.1 * r.initial_objective


def test_lin_pg_on_wbc_reaches_published_objective() -> None:
    from ppdm import datasets

    A = datasets.load("wbc").drop(columns="class").to_numpy(float)
    H0, W0 = nmf_init(A, 7, "random", np.random.default_rng(0))
    r = factorize(A, 7, solver="pg", H0=H0, W0=W0, tol=1e-4, max_iter=50000)
    assert abs(r.objective - 41.4) < 0.3  # Table 4.6
    hals = factorize(A, 7, solver="hals", H0=H0, W0=W0, tol=1e-4)
    assert hals.objective <= r.objective + 0.05  # the default solver reaches the same objective


def test_shared_init_is_seeded_uniform(rng: np.random.Generator) -> None:
    A = _exact(rng)
    H1, W1 = nmf_init(A, 3, "random", np.random.default_rng(5))
    H2, W2 = nmf_init(A, 3, "random", np.random.default_rng(5))
    np.testing.assert_array_equal(H1, H2)
    assert 0 <= H1.min() and H1.max() <= 1 and W1.shape == (3, 12)
    Hn, Wn = nmf_init(A, 3, "nndsvd")
    assert Hn.min() > 0 and Wn.min() > 0
    # NNDSVD starts close: its first product is far better than a random start
    assert np.linalg.norm(A - Hn @ Wn) < np.linalg.norm(A - H1 @ W1)


def test_hoyer_sparseness_hand_values() -> None:
    assert hoyer_sparseness(np.array([0.0, 0.0, 3.0, 0.0])) == pytest.approx(1.0)
    assert hoyer_sparseness(np.array([2.0, 2.0, 2.0, 2.0])) == pytest.approx(0.0)
    # n = 4, ||x||_1 = 3, ||x||_2 = sqrt(5): (2 - 3/sqrt(5)) / (2 - 1)
    assert hoyer_sparseness(np.array([1.0, 2.0, 0.0, 0.0])) == pytest.approx(2 - 3 / np.sqrt(5))


def test_truncation_keeps_leading_components(rng: np.random.Generator) -> None:
    A = _exact(rng, k=4) + 0.01
    m = NMF(4, keep=2, random_state=0)
    B = m.fit_transform(A)
    H, W = m.factors_, m.components_
    np.testing.assert_allclose(B, H[:, :2] @ W[:2], rtol=1e-12)
    energy = np.linalg.norm(H, axis=0) * np.linalg.norm(W, axis=1)
    assert np.all(np.diff(energy) <= 1e-12)  # sorted strongest first
    full = NMF(4, random_state=0).fit_transform(A)
    assert np.linalg.norm(A - full) < np.linalg.norm(A - B)


def test_negative_input_shift_has_exact_inverse(rng: np.random.Generator) -> None:
    X = rng.normal(size=(40, 5))
    sh = NonnegativeShift().fit(X)
    Z = sh.transform(X)
    assert Z.min() == 0 and Z.max() == 1
    np.testing.assert_allclose(sh.inverse_transform(Z), X, atol=1e-12)
    m = NMF(5, random_state=0, tol=1e-8, max_iter=3000)  # K = m: the release is (nearly) the table itself
    B = m.fit_transform(X)
    assert m.shifted_ and np.abs(B - X).max() < 0.05 * np.abs(X).max()
    with pytest.raises(InputError, match="negative"):
        NMF(2, shift=False).fit(X)


def test_bad_parameters_and_rows(rng: np.random.Generator) -> None:
    A = _exact(rng)
    for K in (0, 13):
        with pytest.raises(ParameterError, match="components"):
            NMF(K).fit(A)
    with pytest.raises(ParameterError, match="keep"):
        NMF(3, keep=4).fit(A)
    with pytest.raises(ParameterError, match="solver"):
        NMF(3, solver="magic").fit(A)
    Z = A.copy()
    Z[7] = 0
    with pytest.raises(InputError, match="all zeros"):
        NMF(3).fit(Z)


def test_seeded_secret_state_and_new_rows(rng: np.random.Generator) -> None:
    A = _exact(rng) + 0.01
    a = NMF(3, random_state=4).fit_transform(A)
    np.testing.assert_array_equal(a, NMF(3, random_state=4).fit_transform(A))
    assert not np.array_equal(a, NMF(3, random_state=5).fit_transform(A))
    m = NMF(3, random_state=4).fit(A)
    assert set(NMF._secret) == {"factors_", "components_"}
    header, arrays = m.to_state()
    assert {"factors_", "components_"} <= set(arrays)
    back = NMF.from_state(header, arrays)
    np.testing.assert_allclose(back.transform(A[:5]), m.transform(A[:5]))
    # new rows get their nonnegative factor vectors against W: the fitted rows come back close to the fit
    np.testing.assert_allclose(m.transform(A[:5]), a[:5], atol=1e-3 * np.abs(A).max())


def test_nnls_rows_matches_scipy(rng: np.random.Generator) -> None:
    from scipy.optimize import nnls

    W = rng.uniform(size=(3, 8))
    Z = rng.uniform(size=(4, 8))
    H = nnls_rows(Z, W, n_sweeps=2000)
    for i in range(4):
        h, _ = nnls(W.T, Z[i])
        np.testing.assert_allclose(H[i], h, atol=1e-6)


def test_sparsified_nmf_zeroes_small_factor_entries(rng: np.random.Generator) -> None:
    A = _exact(rng) + 0.01
    m = NMF(3, sparsify="sts", eps_h=0.2, eps_w=0.1, random_state=0).fit(A)
    assert (m.factors_ == 0).sum() > 0
    assert np.all((m.factors_ == 0) | (m.factors_ >= 0.2))
    assert np.all((m.components_ == 0) | (m.components_ >= 0.1))
    for s in ("cts", "ets"):
        NMF(3, sparsify=s, eps_h=0.5, random_state=0).fit_transform(A)


def test_penalties_shrink_factors(rng: np.random.Generator) -> None:
    A = _exact(rng)
    plain = factorize(A, 3, random_state=0)
    l1 = factorize(A, 3, l1=5.0, random_state=0)
    assert (l1.H == 0).mean() + (l1.W == 0).mean() > (plain.H == 0).mean() + (plain.W == 0).mean()


def test_registry_and_solvers_listed() -> None:
    m = registry.build("nmf", {"components": 2, "keep": 1}, random_state=0)
    assert isinstance(m, NMF) and m.keep == 1
    assert SOLVERS[0] == "hals"
