"""Row sets by mask: the same answers as numpy's sorting set operations, without their temporaries."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.utils.rows import rows_among, rows_except


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 300), st.data())
def test_row_sets_match_numpy_set_operations(n: int, data: st.DataObject) -> None:
    rows = np.array(data.draw(st.lists(st.integers(0, n - 1), max_size=2 * n)), dtype=np.int64)
    within = np.array(data.draw(st.lists(st.integers(0, n - 1), max_size=2 * n)), dtype=np.int64)
    assert np.array_equal(rows_except(n, rows), np.setdiff1d(np.arange(n), rows))
    assert np.array_equal(rows_among(rows, within, n), np.intersect1d(rows, within))


def test_row_sets_of_a_million_rows_cost_a_mask_not_a_sort() -> None:
    import tracemalloc

    n = 1_000_000
    rng = np.random.default_rng(0)
    known = np.sort(rng.choice(n, 21, replace=False))
    targets = np.sort(rng.choice(n, 10_000, replace=False))
    tracemalloc.start()
    try:
        attacked = rows_except(n, known)
        kept = rows_among(targets, attacked, n)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(attacked) == n - 21 and np.array_equal(kept, np.setdiff1d(targets, known))
    # the answer (8 MB) and two masks (1 MB each); np.setdiff1d and np.intersect1d took 36 MB here
    assert peak < 12e6, peak / 1e6
