"""Small tables' work runs on one thread of every pool: a team of threads costs more than it saves there, and
far more while another process holds a core (ppdm.utils.threads)."""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_info

from ppdm.utils.threads import ONE_THREAD_CELLS, SMALL_TABLE_VALUES, openmp_threads_for, small_table_threads


def _threads(api: str) -> set[int]:
    return {p["num_threads"] for p in threadpool_info() if p["user_api"] == api}


def test_a_small_table_runs_on_one_thread_of_every_pool_and_a_large_one_as_it_was() -> None:
    import sklearn.neighbors  # noqa: F401 (its OpenMP runtime)

    before = {api: _threads(api) for api in ("blas", "openmp")}
    with small_table_threads(SMALL_TABLE_VALUES - 1):
        assert _threads("blas") == {1} and _threads("openmp") == {1}
    assert {api: _threads(api) for api in before} == before
    with small_table_threads(SMALL_TABLE_VALUES):
        assert {api: _threads(api) for api in before} == before
    with openmp_threads_for(ONE_THREAD_CELLS - 1):
        assert _threads("openmp") == {1} and _threads("blas") == before["blas"]
    with openmp_threads_for(ONE_THREAD_CELLS):
        assert _threads("openmp") == before["openmp"]


def test_a_mid_sized_neighbour_search_runs_on_one_thread_and_finds_the_same_rows(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """400 queries among 900 records go to scikit-learn's search (beyond the direct one), on one thread."""
    from ppdm.utils.neighbors import nearest_neighbors

    rng = np.random.default_rng(0)
    Q, R = rng.normal(size=(400, 12)), rng.normal(size=(900, 12))
    seen: list[set[int]] = []
    import sklearn.neighbors

    real = sklearn.neighbors.NearestNeighbors.kneighbors

    def spy(self, *a, **k):  # type: ignore[no-untyped-def]
        seen.append(_threads("openmp"))
        return real(self, *a, **k)

    monkeypatch.setattr(sklearn.neighbors.NearestNeighbors, "kneighbors", spy)
    idx = nearest_neighbors(Q, R, 3)
    assert seen == [{1}]
    d = ((Q[:, None, :] - R[None]) ** 2).sum(-1)
    assert np.array_equal(idx, np.argsort(d, axis=1, kind="stable")[:, :3])
