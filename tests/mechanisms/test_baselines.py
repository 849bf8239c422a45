from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import pdist

from ppdm.exceptions import ParameterError, PrivacyWarning, ResourceError
from ppdm.mechanisms import AdditiveNoise, MultiplicativeNoise, RandomProjection, RandomRotation


def test_noise_statistics(rng: np.random.Generator) -> None:
    X = np.zeros((4000, 5))
    E = AdditiveNoise(2.0, distribution="uniform", random_state=1).fit_transform(X)
    assert E.min() >= 0 and E.max() <= 2.0
    assert E.mean() == pytest.approx(1.0, abs=0.03)  # U[0, 2]: mean 1, sd 0.577 / sqrt(20000)
    S = AdditiveNoise(2.0, distribution="uniform", symmetric=True, random_state=1).fit_transform(X)
    assert S.min() >= -2 and S.mean() == pytest.approx(0.0, abs=0.03)
    G = AdditiveNoise(3.0, random_state=1).fit_transform(X)
    assert G.std() == pytest.approx(3.0, rel=0.02)
    M = MultiplicativeNoise(0.1, random_state=1).fit_transform(np.full((4000, 5), 10.0))
    assert M.mean() == pytest.approx(10.0, abs=0.05) and M.std() == pytest.approx(1.0, rel=0.03)


def test_noise_is_seeded_and_warns_at_zero(rng: np.random.Generator) -> None:
    X = rng.normal(size=(10, 3))
    a = AdditiveNoise(1.0, random_state=5).fit_transform(X)
    b = AdditiveNoise(1.0, random_state=5).fit_transform(X)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, AdditiveNoise(1.0, random_state=6).fit_transform(X))
    with pytest.warns(PrivacyWarning):
        AdditiveNoise(0.0).fit(X)


def test_orthonormal_projections_keep_distances_and_gram(rng: np.random.Generator) -> None:
    X = rng.normal(size=(40, 6))
    arpo = RandomProjection("arpo", sigma=3.0, random_state=0).fit_transform(X)
    np.testing.assert_allclose(pdist(arpo), pdist(X), rtol=1e-10)
    rpoa = RandomProjection("rpoa", random_state=0).fit_transform(X)
    np.testing.assert_allclose(rpoa.T @ rpoa, X.T @ X, rtol=1e-9, atol=1e-9)
    rot = RandomRotation(random_state=0).fit(X)
    np.testing.assert_allclose(pdist(rot.transform(X)), pdist(X), rtol=1e-10)
    np.testing.assert_allclose(rot.transform(X) @ rot.rotation_.T, X, atol=1e-12)
    arp = RandomProjection("arp", sigma=2.0, random_state=0).fit(X)
    assert arp.projection_.std() == pytest.approx(2.0, rel=0.25)


def test_arpo_is_the_rotation_from_the_same_key(rng: np.random.Generator) -> None:
    # why the default sweep tries `rotation` and not `projection(kind=arpo)` as well (release/config.py)
    X = rng.normal(size=(50, 7))
    for key in (0, 11):
        arpo = RandomProjection("arpo", sigma=2.5, random_state=key).fit_transform(X)
        np.testing.assert_allclose(arpo, RandomRotation(random_state=key).fit_transform(X), rtol=1e-12, atol=1e-12)
    one, other = (RandomRotation(random_state=k).fit_transform(X) for k in (0, 1))
    assert not np.allclose(one, other)


def test_left_projection_limits(rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch) -> None:
    X = rng.normal(size=(20, 3))
    m = RandomProjection("rpa", random_state=0).fit(X)
    with pytest.raises(ParameterError, match="mixes records"):
        m.transform(X[:5])
    monkeypatch.setenv("PPDM_MEMORY_LIMIT", "1G")  # the 20000 x 20000 key needs 6 GiB, whatever the machine has
    with pytest.raises(ResourceError, match="arpo"):
        RandomProjection("rpoa").fit(np.zeros((20000, 2)))


@pytest.mark.parametrize("kw", [{}, {"distribution": "uniform", "symmetric": True}])
def test_additive_noise_added_in_place_is_the_same_stream_and_only_on_a_table_given_up(kw: dict) -> None:
    """perturb_array gives the mechanism its own z-scored copy: the noise is added there, drawn a block at a
    time, equal to one draw of the whole table; a caller's table is never written."""
    from ppdm.flow.arrays import perturb_array
    from ppdm.mechanisms import noise as noise_module
    from ppdm.mechanisms.noise import AdditiveNoise

    X = np.random.default_rng(3).normal(size=(2 * noise_module._NOISE_BLOCK + 17, 3))
    whole = AdditiveNoise(scale=0.7, random_state=5, **kw).fit_transform(X)  # X + one draw of the table
    given = X.copy()
    out = AdditiveNoise(scale=0.7, random_state=5, **kw).fit_transform(given, overwrite_input=True)
    assert out is given
    np.testing.assert_array_equal(out, whole)
    before = X.copy()
    B, _ = perturb_array(X, AdditiveNoise(scale=0.7, random_state=5, **kw), preprocess="zscore")
    np.testing.assert_array_equal(X, before)
    assert not np.shares_memory(B, X)
