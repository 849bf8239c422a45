from __future__ import annotations

import warnings

import numpy as np
import pytest

from ppdm.exceptions import ParameterError, PrivacyWarning
from ppdm.mechanisms import SparsifiedSVD, StructuralPartition, ThinSVD
from ppdm.mechanisms.sparsified import column_thresholds, sparsify
from ppdm.pipeline import perturb_array
from ppdm.utils.linalg import thin_svd


def _reference(X: np.ndarray, k: int) -> np.ndarray:
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    return (U[:, :k] * s[:k]) @ Vt[:k]


@pytest.mark.parametrize("solver", ["exact", "gram", "lanczos", "randomized"])
@pytest.mark.parametrize("shape", [(200, 12), (12, 200)])
def test_solvers_agree_with_lapack(solver: str, shape: tuple[int, int], rng: np.random.Generator) -> None:
    X = rng.normal(size=shape) @ np.diag(np.linspace(3, 0.1, shape[1])) if shape[0] > shape[1] else \
        np.diag(np.linspace(3, 0.1, shape[0])) @ rng.normal(size=shape)
    out = ThinSVD(4, solver=solver, random_state=0).fit_transform(X)
    np.testing.assert_allclose(out, _reference(X, 4), atol=1e-8 * np.abs(X).max())


def test_eckart_young_error_and_projection_of_new_rows(rng: np.random.Generator) -> None:
    X = rng.normal(size=(50, 8))
    m = ThinSVD(3).fit(X)
    s = np.linalg.svd(X, compute_uv=False)
    err = np.linalg.norm(X - m.transform(X))
    assert err == pytest.approx(np.sqrt((s[3:] ** 2).sum()), rel=1e-10)
    # new rows are projected on the fitted subspace: released twice, they do not move
    new = rng.normal(size=(5, 8))
    once = m.transform(new)
    np.testing.assert_allclose(m.transform(once), once, atol=1e-12)


@pytest.mark.parametrize("rank", [0, -1, 8, 9])
def test_rank_out_of_range(rank: int, rng: np.random.Generator) -> None:
    with pytest.raises(ParameterError, match="rank"):
        ThinSVD(rank).fit(rng.normal(size=(20, 8)))


def test_identity_release_warns(rng: np.random.Generator) -> None:
    X = rng.normal(size=(30, 2)) @ rng.normal(size=(2, 6))
    with pytest.warns(PrivacyWarning, match="equals the input"):
        ThinSVD(2).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ThinSVD(1).fit(X)


def test_thresholds_by_hand() -> None:
    U = np.array([[0.5, -0.01], [0.03, 0.2], [-0.1, 0.02]])
    np.testing.assert_allclose(column_thresholds(U, 0.05, "sts", 1.0), [0.05, 0.05])
    cts = column_thresholds(U, 0.5, "cts", 1.0)
    np.testing.assert_allclose(cts, [0.5 * 0.63 / 3, 0.5 * 0.23 / 3])
    ets = column_thresholds(U, 0.5, "ets", 0.5)
    np.testing.assert_allclose(ets, cts * np.exp([0.25, 1.0]))
    np.testing.assert_array_equal(sparsify(U, np.array([0.05, 0.05])), [[0.5, 0], [0, 0.2], [-0.1, 0]])


def test_sparsified_svd_zero_threshold_is_thin_svd(rng: np.random.Generator) -> None:
    X = rng.normal(size=(40, 7))
    a = SparsifiedSVD(3, eps_u=0.0, eps_v=0.0).fit_transform(X)
    np.testing.assert_allclose(a, _reference(X, 3), atol=1e-10)
    m = SparsifiedSVD(3, strategy="cts", eps_u=0.3, eps_v=0.3).fit(X)
    np.testing.assert_allclose(m.transform(X), m.fit_transform(X), atol=1e-10)


@pytest.mark.parametrize("bad", [-0.1, 1.0, 2.0])
def test_threshold_range(bad: float, rng: np.random.Generator) -> None:
    with pytest.raises(ParameterError, match="eps_u must be in"):
        SparsifiedSVD(2, eps_u=bad).fit(rng.normal(size=(20, 5)))


def test_partition_distorts_only_the_block(rng: np.random.Generator) -> None:
    X = rng.normal(size=(30, 6))
    for scheme, rows, cols in (("rows", 10, None), ("columns", None, [1, 4]), ("both", [0, 5, 9], 3)):
        m = StructuralPartition(ThinSVD(1), scheme=scheme, rows=rows, columns=cols)
        out = m.fit_transform(X)
        mask = np.zeros_like(X, dtype=bool)
        mask[np.ix_(m.rows_, m.columns_)] = True
        np.testing.assert_array_equal(out[~mask], X[~mask])
        assert np.abs(out[mask] - X[mask]).max() > 1e-6
        np.testing.assert_allclose(out[np.ix_(m.rows_, m.columns_)], _reference(X[np.ix_(m.rows_, m.columns_)], 1))
    with pytest.raises(ParameterError, match="needs the row block"):
        StructuralPartition(ThinSVD(1), scheme="rows").fit(X)


def test_fused_release_equals_two_step(rng: np.random.Generator) -> None:
    X = rng.normal(size=(3000, 10)) * np.arange(1, 11) + 50
    for pre in ("none", "zscore", "range"):
        fused, sc = perturb_array(X, ThinSVD(3, solver="gram"), preprocess=pre)
        Z = sc.transform(X)
        two = sc.inverse_transform(_reference(Z, 3))
        np.testing.assert_allclose(fused, two, atol=1e-8 * np.abs(X).max())


def test_gram_route_matches_lapack_on_large_tall_matrix(rng: np.random.Generator) -> None:
    X = rng.normal(size=(150_000, 30))  # above the LAPACK size cut-off
    _, s1, V1, used = thin_svd(X, 5, solver="auto")
    assert used == "gram"
    _, s2, V2 = np.linalg.svd(X, full_matrices=False)
    np.testing.assert_allclose(s1, s2[:5], rtol=1e-10)
    np.testing.assert_allclose(np.abs(V1 @ V2[:5].T), np.eye(5), atol=1e-8)
