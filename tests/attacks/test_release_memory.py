"""Memory of the tests of anonymisation on a large release: what scales with the release's rows.

The confirmation of a large table runs singling out and linkability against every released row (a million at
the scale benchmark). Each piece that reads the whole release is held here to a bound on its traced peak
(numpy's and pandas' allocations, seen by ``tracemalloc``) on a 100,000 x 10 release of distinct rows, stated
as a multiple of the release's own numbers (8 MB): the bounds sit between what the pieces measure now and
what they measured before they were made to work a column or a chunk at a time (in brackets), so that a
return of a whole-table copy or of one Python object per value fails here, in seconds.
"""

from __future__ import annotations

import importlib
import tracemalloc
from collections.abc import Callable

import numpy as np
import pytest

from ppdm.attacks._predicates import ColumnIndex
from ppdm.attacks.mixed import GowerTerms, MixedTable

singling = importlib.import_module("ppdm.attacks.singling_out")

N, M = 100_000, 10


@pytest.fixture(scope="module")
def release() -> MixedTable:
    rng = np.random.default_rng(0)
    return MixedTable(rng.normal(size=(N, M)), rng.integers(0, 3, (N, 1)), tuple(f"x{j}" for j in range(M)), ("c",))


def _peak(work: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_distinct_rows_are_found_without_a_copy_of_the_release(release: MixedTable) -> None:
    rows = release.unique_rows()
    assert len(rows) == N  # every row distinct: all of them, in order
    assert _peak(release.unique_rows) <= 1.2 * release.numbers.nbytes  # 0.7x now (2.7x as one copied frame)


def test_the_column_index_holds_its_sorted_values_and_a_32_bit_order(release: MixedTable) -> None:
    V = release.values()
    assert ColumnIndex(V).order.dtype == np.int32
    assert _peak(lambda: ColumnIndex(V)) <= 2.8 * V.nbytes  # 2.6x now (3.1x with a 64-bit order and copies)


def test_univariate_candidates_are_arrays_counted_a_chunk_at_a_time(release: MixedTable) -> None:
    V = release.values()
    index = ColumnIndex(V)
    numeric = np.arange(V.shape[1]) < M
    preds, candidates = singling.univariate_predicates(index, numeric, rng=np.random.default_rng(1), n=300)
    assert len(preds) == 300 and candidates >= N * M  # each distinct value of a number is a candidate
    peak = _peak(lambda: singling.univariate_predicates(index, numeric, rng=np.random.default_rng(1), n=300))
    assert peak <= 3 * V.nbytes  # 1.8x now (29x with a Python list for every candidate)


def test_the_gower_pool_is_scaled_into_float32_a_column_at_a_time(release: MixedTable) -> None:
    queries = release.take(np.arange(1000))

    def terms() -> GowerTerms:
        return GowerTerms(queries, release, list(range(M)), [0], ranges=np.ones(M), rng=np.random.default_rng(2))

    assert terms()._pn.dtype == np.float32
    assert _peak(terms) <= 1.25 * release.numbers.nbytes  # 0.94x now (2.9x through three float64 copies)
