"""The attacks' bounded-memory paths give the answers of the plain whole-table computations.

Every expected value here is computed directly with numpy on whole copies of the tables (the way the
attacks were written before they worked block by block), never with the code under test.
"""

from __future__ import annotations

import numpy as np
import pytest

from ppdm.attacks import _linkage, _pca
from ppdm.attacks._linkage import linkage_rates, nearest_in_pool
from ppdm.attacks._pca import pca_attack
from ppdm.utils.linalg import column_mean_std


def _tables(n: int = 600, m: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m)) @ rng.normal(size=(m, m)) + rng.normal(0, 5, m)
    return X, X + rng.normal(0, 0.3, size=X.shape)


def _nearest(Q: np.ndarray, P: np.ndarray) -> np.ndarray:
    d = ((Q[:, None, :] - P[None, :, :]) ** 2).sum(axis=2)
    return d.argmin(axis=1)


def test_column_mean_std_matches_numpy_on_all_rows_and_on_a_selection() -> None:
    X, _ = _tables(1000, 4)
    rows = np.sort(np.random.default_rng(1).choice(1000, 300, replace=False))
    for sel, ref in ((None, X), (rows, X[rows])):
        mean, sd = column_mean_std(X, sel, chunk_rows=64)
        np.testing.assert_allclose(mean, ref.mean(axis=0), rtol=1e-12)
        np.testing.assert_allclose(sd, ref.std(axis=0, ddof=1), rtol=1e-12)


@pytest.mark.parametrize("with_rows", [False, True])
def test_the_pool_searched_in_blocks_finds_the_plain_nearest_row(monkeypatch: pytest.MonkeyPatch,
                                                                with_rows: bool) -> None:
    X, Y = _tables(700, 3)
    rows = np.sort(np.random.default_rng(2).choice(700, 450, replace=False)) if with_rows else None
    pool = X if rows is None else X[rows]
    Q = Y[:50] * 0.5
    scale = np.array([1.0, 2.0, 0.5])
    expected = _nearest(Q, pool * scale)
    monkeypatch.setattr(_linkage, "POOL_BLOCK", 64)  # 7-11 blocks
    got = nearest_in_pool(Q, X, rows, lambda a: a * scale)
    np.testing.assert_array_equal(got, expected)


def test_linkage_rates_in_blocks_equal_the_whole_table_rates(monkeypatch: pytest.MonkeyPatch) -> None:
    X, Y = _tables(500, 4, seed=3)
    targets = np.sort(np.random.default_rng(4).choice(500, 120, replace=False))

    def z(A: np.ndarray) -> np.ndarray:
        return (A - A.mean(axis=0)) / A.std(axis=0, ddof=1)

    expected_raw = float((_nearest(Y[targets], X) == targets).mean())
    expected_std = float((_nearest(z(Y)[targets], z(X)) == targets).mean())
    cols = [0, 2]
    expected_cols = float((_nearest(z(Y[:, cols])[targets], z(X[:, cols])) == targets).mean())
    monkeypatch.setattr(_linkage, "POOL_BLOCK", 100)
    got = linkage_rates(X, Y, targets=targets, column_idx=cols)["rates"]
    assert got["raw"] == pytest.approx(expected_raw)
    assert got["standardised"] == pytest.approx(expected_std)
    assert got["known_columns"] == pytest.approx(expected_cols)
    assert expected_raw > 0.1  # the noise is small: the check compares real, non-zero rates


def test_pca_attack_on_chosen_rows_equals_those_rows_of_the_whole_estimate() -> None:
    X, Y = _tables(900, 4, seed=5)
    rotation = np.linalg.qr(np.random.default_rng(6).normal(size=(4, 4)))[0]
    Y = (X - X.mean(axis=0)) @ rotation
    sample = np.sort(np.random.default_rng(7).choice(900, 200, replace=False))
    whole, _ = pca_attack(X, Y, sample)
    out = np.array([3, 10, 11, 500, 899])
    some, det = pca_attack(X, Y, sample, out_rows=out)
    np.testing.assert_allclose(some, whole[out], rtol=1e-9, atol=1e-9)
    assert det["sample_size"] == 200


def test_pca_attack_in_standardised_units_equals_attacking_standardised_copies(
        monkeypatch: pytest.MonkeyPatch) -> None:
    X, Y = _tables(800, 3, seed=8)
    loc, scale = X.mean(axis=0), X.std(axis=0, ddof=1)
    sample = np.arange(800)
    Z_hat, _ = pca_attack((X - loc) / scale, (Y - loc) / scale, sample)
    monkeypatch.setattr(_pca, "_BLOCK", 128)  # moments and estimates over several blocks
    X_hat, _ = pca_attack(X, Y, sample, loc=loc, scale=scale)
    np.testing.assert_allclose(X_hat, Z_hat * scale + loc, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("attack", ["spectral_filter", "low_rank_denoise", "ica", "mmse"])
def test_estimate_only_attacks_on_chosen_rows_equal_those_rows_of_the_whole_estimate(attack: str) -> None:
    from ppdm.attacks import _filtering as f

    X, _ = _tables(800, 4, seed=9)
    Y = X + np.random.default_rng(10).laplace(0, 0.5, size=X.shape)
    out = np.array([0, 7, 8, 400, 799])

    def run(rows: np.ndarray | None) -> np.ndarray:
        rng = np.random.default_rng(11)
        if attack == "ica":
            return f.ica_attack(X, Y, rng, out_rows=rows)[0]
        if attack == "mmse":
            return f.wiener_reconstruction(X, Y, out_rows=rows)[0]
        return getattr(f, attack)(Y, out_rows=rows)[0]

    whole, some = run(None), run(out)
    assert whole.shape == X.shape and some.shape == (len(out), X.shape[1])
    np.testing.assert_allclose(some, whole[out], rtol=1e-9, atol=1e-9)


def test_wiener_estimate_equals_the_textbook_formula() -> None:
    from ppdm.attacks._filtering import wiener_reconstruction

    X, _ = _tables(500, 3, seed=12)
    Y = X + np.random.default_rng(13).normal(0, 1.0, size=X.shape)
    mu, sd = X.mean(axis=0), X.std(axis=0, ddof=1)
    Sa = np.cov((X - mu) / sd, rowvar=False)
    Sy = np.cov((Y - mu) / sd, rowvar=False)
    expected = ((Y - Y.mean(axis=0)) / sd) @ (Sa @ np.linalg.inv(Sy)).T * sd + mu
    np.testing.assert_allclose(wiener_reconstruction(X, Y)[0], expected, rtol=1e-8, atol=1e-8)


def test_known_io_on_chosen_rows_equals_those_rows_and_keeps_the_key_recovery_figure() -> None:
    from ppdm.attacks._known_io import known_io_attack

    X, _ = _tables(700, 4, seed=14)
    A = np.random.default_rng(15).normal(size=(4, 4))
    Y = X @ A + 0.01 * np.random.default_rng(16).normal(size=X.shape)
    known = np.arange(0, 700, 100)  # 7 pairs >= m + 1: the affine fit
    whole, det_whole = known_io_attack(X, Y, known)
    out = np.array([1, 2, 350, 699])
    some, det = known_io_attack(X, Y, known, out_rows=out)
    np.testing.assert_allclose(some, whole[out], rtol=1e-10, atol=1e-10)
    F = np.linalg.lstsq(np.column_stack([X[known], np.ones(7)]), Y[known], rcond=None)[0]
    expected = np.sqrt(np.mean((X @ F[:-1] + F[-1] - Y) ** 2))
    assert det["key_recovery_rmse"] == pytest.approx(expected, rel=1e-9)
    assert det_whole["method"] == det["method"] == "affine"


def test_interval_disclosure_a_column_at_a_time_equals_the_whole_table_count() -> None:
    from ppdm.attacks._linkage import interval_disclosure

    X, Y = _tables(400, 3, seed=17)
    rows = np.sort(np.random.default_rng(18).choice(400, 150, replace=False))
    n = len(X)
    Xs = np.sort(X, axis=0)
    sd = X.std(axis=0, ddof=1)
    rank, dev = [], []
    for p in range(1, 11):
        h = max(1, int(round(p / 100 * n)))
        pos = np.column_stack([np.searchsorted(Xs[:, j], Y[rows, j]) for j in range(3)])
        lo = np.take_along_axis(Xs, np.clip(pos - h, 0, n - 1), axis=0)
        hi = np.take_along_axis(Xs, np.clip(pos + h, 0, n - 1), axis=0)
        rank.append(((X[rows] >= lo) & (X[rows] <= hi)).mean())
        dev.append((np.abs(X[rows] - Y[rows]) <= p / 100 * sd).mean())
    got = interval_disclosure(X, Y, rows=rows)
    assert got["rank_interval_share"] == pytest.approx(np.mean(rank))
    assert got["sd_interval_share"] == pytest.approx(np.mean(dev))
    assert 0.05 < got["rank_interval_share"] < 1.0


def test_the_wiener_map_of_two_parts_equals_the_map_of_their_union() -> None:
    from ppdm.attacks._filtering import wiener_map

    X, _ = _tables(600, 3, seed=19)
    Y = X + np.random.default_rng(20).normal(0, 0.8, size=X.shape)
    whole, det = wiener_map(np.vstack([X[:450], X[450:]]), Y)
    parts, det_parts = wiener_map((X[:450], X[450:]), Y)
    np.testing.assert_allclose(parts(Y[:50]), whole(Y[:50]), rtol=1e-9, atol=1e-9)
    assert det_parts["gain_trace"] == pytest.approx(det["gain_trace"], rel=1e-9)


def test_a_microaggregated_releases_repeated_rows_are_searched_once_with_the_same_neighbours() -> None:
    from ppdm.utils import neighbors

    rng = np.random.default_rng(7)
    groups = rng.normal(size=(150, 5))
    Q = np.repeat(groups, 20, axis=0)[rng.permutation(3000)]  # 150 rows, each released 20 times
    R = rng.normal(size=(800, 5))
    assert len(Q) >= neighbors.DEDUP_ROWS
    idx, dist = neighbors.nearest_neighbors(Q, R, 3, return_distance=True)
    d2 = ((Q[:, None, :] - R[None, :, :]) ** 2).sum(axis=2)
    np.testing.assert_array_equal(idx, np.argsort(d2, axis=1)[:, :3])
    np.testing.assert_allclose(dist, np.sqrt(np.take_along_axis(d2, idx, axis=1)), rtol=1e-12)
    # rows that are all distinct take the direct search and find the same neighbours
    np.testing.assert_array_equal(neighbors.nearest_neighbors(groups, R, 3), np.argsort(
        ((groups[:, None, :] - R[None, :, :]) ** 2).sum(axis=2), axis=1)[:, :3])
