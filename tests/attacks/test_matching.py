"""One-to-one matching of released rows to records: the sparse graph against the exact dense assignment."""

from __future__ import annotations

import time

import numpy as np
from scipy.optimize import linear_sum_assignment

from ppdm.attacks._matching import one_to_one, sparse_matching


def _noisy(n: int, m: int, scale: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, m))
    return A, A + rng.normal(scale=scale, size=(n, m))


def test_the_sparse_matching_links_as_many_rows_as_the_exact_one() -> None:
    A, B = _noisy(1500, 6, 0.6, 1)
    # the exact assignment on the full cost matrix, computed here with SciPy directly
    cost = ((B[:, None, :] - A[None, :, :]) ** 2).sum(-1)
    r, c = linear_sum_assignment(cost)
    exact = float(np.mean(c[np.argsort(r)] == np.arange(len(A))))
    matched, info = sparse_matching(B[np.random.default_rng(2).permutation(len(B))], A, np.random.default_rng(3))
    perm = np.random.default_rng(2).permutation(len(B))
    sparse = float(np.mean(matched == perm))
    assert info["solver"] == "sparse" and 0.1 < exact < 0.9
    assert abs(sparse - exact) <= 0.01, (sparse, exact)


def test_no_record_is_taken_twice() -> None:
    A, B = _noisy(1200, 4, 0.3, 4)
    pick, info = one_to_one(B, A, np.random.default_rng(5))
    taken = pick[pick >= 0]
    assert info["solver"] == "sparse" and len(np.unique(taken)) == len(taken)


def test_thousands_of_identical_rows_stay_within_the_edge_budget() -> None:
    # a sparsified SVD can release most rows as the same (all-zero) row: one point with thousands of copies
    A, B = _noisy(5000, 8, 0.2, 6)
    B[:4800] = 0.0
    t0 = time.perf_counter()
    matched, info = sparse_matching(B, A, np.random.default_rng(7))
    assert time.perf_counter() - t0 < 20  # 128 s before the copies' edges were bounded
    taken = matched[matched >= 0]
    assert len(np.unique(taken)) == len(taken)
    # the 200 distinct rows are matched (most to their own record), the copies beyond the budget are not
    assert np.mean(matched[4800:] == np.arange(4800, 5000)) > 0.5
    assert info["unmatched"] > 0.5


def test_rows_left_over_are_matched_to_the_records_left_free() -> None:
    # with one neighbour beyond its copies, each of the first three rows reaches records 0 and 1 only: the
    # first round links two of them (the cheapest pair: 0.1 to 0 and 0.3 to 1) and leaves 0.2 on its fallback
    # node; the second round links it to the nearest record still free (2)
    A = np.array([[0.0], [1.0], [2.0], [3.0]])
    B = np.array([[0.1], [0.2], [0.3], [3.0]])
    matched, info = sparse_matching(B, A, np.random.default_rng(0), k=1)
    assert matched.tolist() == [0, 2, 1, 3]
    assert info["rounds"] == 2 and info["unmatched"] == 0.0
