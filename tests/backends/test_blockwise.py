"""Numpy pieces of the partitioned backend: mergeable statistics and the chunked noise stream (no dask)."""

from __future__ import annotations

import numpy as np
import pytest

from ppdm.backends._blockwise import NOISE_CHUNK_ROWS, ColumnStats, noise_rows, scaled_gram, scaler_from_stats
from ppdm.data.preprocess import PREPROCESSING, Scaler


def _merged(X: np.ndarray, cuts: list[int]) -> ColumnStats:
    pieces = np.split(X, cuts)
    st = ColumnStats.of(pieces[0])
    for p in pieces[1:]:
        st = st.merge(ColumnStats.of(p))
    return st


def test_merged_statistics_match_direct_computation(rng: np.random.Generator) -> None:
    X = rng.normal(size=(500, 4)) * [1, 10, 100, 0.1] + [5, -3, 1e3, 0]
    st = _merged(X, [1, 7, 7, 250, 499])  # includes an empty and one-row pieces
    C = X - X.mean(axis=0)
    assert st.n == 500
    np.testing.assert_allclose(st.mean, X.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(st.m2, C.T @ C, rtol=1e-10, atol=1e-8)
    np.testing.assert_array_equal(st.lo, X.min(axis=0))
    np.testing.assert_array_equal(st.hi, X.max(axis=0))


@pytest.mark.parametrize("method", PREPROCESSING)
def test_scaler_from_stats_equals_fitted_scaler(rng: np.random.Generator, method: str) -> None:
    X = rng.normal(size=(300, 3)) * [2, 0, 5] + [1, 4, -9]  # middle column constant
    got = scaler_from_stats(method, _merged(X, [100, 200]))
    ref = Scaler(method).fit(X)
    np.testing.assert_allclose(got.offset_, ref.offset_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.scale_, ref.scale_, rtol=1e-12)
    Z = ref.transform(X)
    np.testing.assert_allclose(scaled_gram(_merged(X, [50]), ref.offset_, ref.scale_), Z.T @ Z, rtol=1e-10,
                               atol=1e-9)


def test_non_finite_cells_are_counted_per_column() -> None:
    X = np.array([[1.0, np.nan], [2.0, 3.0], [np.inf, 1.0]])
    st = ColumnStats.of(X[:2]).merge(ColumnStats.of(X[2:]))
    assert st.bad.tolist() == [1, 1]


def _normal(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    return rng.normal(size=shape)


def test_noise_stream_does_not_depend_on_the_cuts() -> None:
    R, m, n = NOISE_CHUNK_ROWS, 3, 2 * NOISE_CHUNK_ROWS + 123
    whole = noise_rows(7, 0, n, m, _normal)
    for cuts in ([5], [R - 1, R + 1], [R, 2 * R], [17, R + 40_000, 2 * R + 100]):
        bounds = [0, *cuts, n]
        pieces = [noise_rows(7, a, b, m, _normal) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        np.testing.assert_array_equal(np.vstack(pieces), whole)


def test_noise_stream_definition() -> None:
    """Chunk c is drawn from SeedSequence(seed, spawn_key=(c,)), row-major (the documented contract)."""
    R = NOISE_CHUNK_ROWS
    got = noise_rows(11, R - 2, R + 3, 2, _normal)
    c0 = np.random.default_rng(np.random.SeedSequence(11).spawn(2)[0]).normal(size=(R, 2))
    c1 = np.random.default_rng(np.random.SeedSequence(11).spawn(2)[1]).normal(size=(3, 2))
    np.testing.assert_array_equal(got, np.vstack([c0[-2:], c1]))
    assert not np.array_equal(noise_rows(12, 0, 4, 2, _normal), noise_rows(11, 0, 4, 2, _normal))


def test_what_travels_to_workers_prints_no_key_material() -> None:
    """dask logs the arguments of a failed task; the release object and hidden keys show no numbers."""
    from ppdm.backends._blockwise import Hidden, PartitionRelease
    from ppdm.data.schema import Schema
    from ppdm.mechanisms import RandomRotation

    rot = RandomRotation(random_state=123).fit(np.zeros((2, 3)))
    rel = PartitionRelease(Schema(("a", "b", "c"), ("a", "b", "c")), Scaler("none").fit(np.eye(3)), "original",
                           mechanism=rot, operator=(rot.rotation_, np.zeros(3)), noise_seed=987654321)
    text = repr(rel) + repr(Hidden(rot.rotation_)) + str([rel])
    assert "987654321" not in text and "123" not in text
    assert f"{rot.rotation_[0, 0]:.4f}"[:5] not in text
