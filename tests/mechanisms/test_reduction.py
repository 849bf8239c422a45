from __future__ import annotations

import numpy as np
import pytest
from scipy.fft import dct
from scipy.spatial.distance import pdist

from ppdm import registry
from ppdm.exceptions import ParameterError
from ppdm.mechanisms.reduction import (
    ClassicalMDS,
    DCTReduction,
    LiuRandomProjection,
    PCAProjection,
    ThresholdSVD,
)


def test_liu_projection_scaling_and_orthonormal(rng: np.random.Generator) -> None:
    X = rng.normal(size=(200, 8))
    m = LiuRandomProjection(6, sigma=2.0, random_state=0).fit(X)
    assert m.transform(X).shape == (200, 6)
    # E[R^T R] / (p sigma^2) = I  ->  squared distances kept on average
    ratio = (pdist(m.transform(X)) ** 2).mean() / (pdist(X) ** 2).mean()
    assert 0.5 < ratio < 1.5
    q = LiuRandomProjection(8, orthonormal=True, random_state=0).fit(X)
    np.testing.assert_allclose(pdist(q.transform(X)), pdist(X), rtol=1e-9)


def test_pca_and_classical_mds_agree_up_to_sign(rng: np.random.Generator) -> None:
    X = rng.normal(size=(100, 5)) @ rng.normal(size=(5, 5))
    Xc = X - X.mean(0)
    a = PCAProjection(3).fit(Xc).transform(Xc)
    b = ClassicalMDS(3).fit_transform(X)
    np.testing.assert_allclose(np.abs(a), np.abs(b), atol=1e-8)
    assert PCAProjection(2, sample_fraction=0.3, random_state=0).fit(X).components_.shape == (5, 2)
    with pytest.raises(ParameterError):
        PCAProjection(2, sample_fraction=0).fit(X)


def test_threshold_svd_outputs(rng: np.random.Generator) -> None:
    X = rng.normal(size=(50, 6))
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    np.testing.assert_allclose(np.abs(ThresholdSVD(3, tau=0.0).fit_transform(X)), np.abs(U[:, :3] * s[:3]))
    rec = ThresholdSVD(6, tau=0.0, output="reconstruction").fit_transform(X)
    np.testing.assert_allclose(rec, X, atol=1e-10)
    big = ThresholdSVD(3, tau=0.2).fit(X)
    assert np.all((big.V_ == 0) | (np.abs(big.V_) >= 0.2))


def test_dct_energy_selection(rng: np.random.Generator) -> None:
    X = rng.normal(size=(80, 7))
    m = DCTReduction(7).fit(X)
    np.testing.assert_allclose(pdist(m.transform(X)), pdist(X), rtol=1e-9)  # Parseval at p = n
    F = dct(X, type=2, norm="ortho", axis=1)
    e = (F**2).mean(0)
    m3 = DCTReduction(3).fit(X)
    assert set(m3.order_) == set(np.argsort(-e)[:3])
    perm = DCTReduction(3, permute=True, random_state=1).fit(X)
    assert sorted(perm.order_) == sorted(m3.order_)


@pytest.mark.parametrize("name", ["rp-liu", "pca", "svd-tau", "dct", "cmds", "nmds"])
def test_registry_entries_build(name: str, rng: np.random.Generator) -> None:
    e = registry.get(name)
    m = registry.build(name, e.test_params, random_state=0)
    Y = m.fit_transform(rng.normal(size=(30, 4)))
    assert Y.shape == (30, 2)
