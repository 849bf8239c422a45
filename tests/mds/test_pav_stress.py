from __future__ import annotations

import numpy as np
import pytest

from ppdm.mds.pav import MonotoneFit, pav
from ppdm.mds.stress import PairBlocks, distances, gradient, kruskal_stress, raw_stress_terms
from tests.distances.test_distances import _example


def test_table_3_5_pav_exact() -> None:
    e = _example("alotaibi2015_table3_5_pav")
    np.testing.assert_array_equal(pav(e["d_in_delta_order"]), e["final"])
    fit = MonotoneFit(np.asarray(e["rank_delta"], float))
    np.testing.assert_array_equal(fit(np.asarray(e["d_in_delta_order"], float)), e["final"])


def test_table_3_8_pav_in_delta_order() -> None:
    # pairs (1,2),(1,3),(1,4),(1,5): delta15 < delta12 < delta13 < delta14 (spec erratum: not 2.88)
    fit = MonotoneFit(np.array([2.16, 2.66, 3.19, 0.62]))
    np.testing.assert_allclose(fit(np.array([3.13, 3.54, 3.41, 1.43])), [3.13, 3.475, 3.475, 1.43])


def test_ties_primary_and_secondary() -> None:
    delta = np.array([1.0, 1.0, 2.0])
    d = np.array([3.0, 1.0, 2.0])
    # primary: the tie imposes no order, so (1, 3, 2) sorted within the tie -> [1, 3] then 2 -> pool 3 and 2
    np.testing.assert_allclose(MonotoneFit(delta, "primary")(d), [2.5, 1.0, 2.5])
    # secondary: tied deltas share one disparity: mean 2 then 2 -> [2, 2, 2]
    np.testing.assert_allclose(MonotoneFit(delta, "secondary")(d), [2.0, 2.0, 2.0])


def test_pav_matches_compiled(rng: np.random.Generator) -> None:
    y = rng.normal(size=500)
    from ppdm.mds.pav import _isotonic

    np.testing.assert_allclose(pav(y), _isotonic(y))
    assert np.all(np.diff(pav(y)) >= -1e-12)


def test_gradient_matches_finite_differences(rng: np.random.Generator) -> None:
    n, p = 9, 2
    Y = rng.normal(size=(n, p))
    B = PairBlocks(n, block_elements=10)  # several blocks
    M = n * (n - 1) // 2
    dhat = np.abs(rng.normal(size=M)) + 0.5

    def S(Z: np.ndarray) -> float:
        d = distances(Z, B, np.empty(M))
        return kruskal_stress(d, dhat)

    d = distances(Y, B, np.empty(M))
    s, t = raw_stress_terms(d, dhat)
    g = gradient(Y, dhat, B, s, t)
    num = np.zeros_like(Y)
    h = 1e-6
    for i in range(n):
        for a in range(p):
            E = np.zeros_like(Y)
            E[i, a] = h
            num[i, a] = (S(Y + E) - S(Y - E)) / (2 * h)
    np.testing.assert_allclose(g, num, rtol=1e-4, atol=1e-7)


def test_distances_blocks_match_scipy(rng: np.random.Generator) -> None:
    from scipy.spatial.distance import pdist

    Y = rng.normal(size=(40, 3))
    np.testing.assert_allclose(distances(Y, PairBlocks(40, 50), np.empty(780)), pdist(Y), atol=1e-9)


def test_kruskal_stress_zero_and_value() -> None:
    assert kruskal_stress(np.array([1.0, 2.0]), np.array([1.0, 2.0])) == 0
    assert kruskal_stress(np.array([3.0, 4.0]), np.array([3.0, 3.0])) == pytest.approx(np.sqrt(1 / 25))


@pytest.mark.parametrize("ties", ["primary", "secondary"])
def test_sorted_layout_equals_condensed(rng: np.random.Generator, ties: str) -> None:
    # rounded data: many tied dissimilarities, so both tie approaches are exercised across chunks
    from ppdm.distances.pairwise import pairwise, prepare
    from ppdm.mds.pairs import CondensedPairs, SortedPairs

    X = np.round(rng.normal(size=(60, 3)), 1)
    Y = rng.normal(size=(60, 2))
    full = CondensedPairs(pairwise(prepare(X), dtype=np.float32), 60, ties)
    lean = SortedPairs(prepare(X), 60, ties, chunk=97)  # chunks far smaller than the 1770 pairs
    assert sum(tied for *_, tied in lean.segments) > 10
    S1, s1, t1 = full.evaluate(Y)
    full.accept()
    S2, s2, t2 = lean.evaluate(Y)
    assert S2 == pytest.approx(S1, rel=1e-10) and t2 == pytest.approx(t1, rel=1e-12)
    np.testing.assert_allclose(lean.gradient(Y, s2, t2), full.gradient(Y, s1, t1), rtol=1e-8, atol=1e-12)
    # disparities pair by pair: the sorted layout's (i, j) against the condensed position of that pair
    i, j = lean.pairs(0, lean.M)
    from ppdm.distances.pairwise import condensed_index

    np.testing.assert_allclose(lean.buf, full.dhat[condensed_index(i, j, 60)], atol=1e-12)


def test_sorted_layout_memory_is_12_bytes_a_pair() -> None:
    from ppdm.distances.pairwise import prepare
    from ppdm.mds.pairs import SortedPairs

    lean = SortedPairs(prepare(np.random.default_rng(0).normal(size=(3000, 3))), 3000)
    assert lean.buf.dtype == np.float32
    assert (lean.key.nbytes + lean.buf.nbytes) / lean.M == 12
