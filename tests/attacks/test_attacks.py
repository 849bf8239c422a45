"""Sanity properties of the attacks on planted data (each can fail if the attack is wrong)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ppdm.attacks import (
    gauss_newton_locate,
    ica_attack,
    interval_disclosure,
    known_io_attack,
    linkage_rates,
    pca_attack,
    run_attacks,
    spectral_filter,
)
from ppdm.exceptions import InputError, ParameterError
from ppdm.utils.neighbors import nearest_neighbors


def _rotation(m: int, rng: np.random.Generator) -> np.ndarray:
    return np.linalg.qr(rng.normal(size=(m, m)))[0]


def _data(n: int, m: int, rng: np.random.Generator) -> np.ndarray:
    return rng.normal(size=(n, m)) @ rng.normal(size=(m, m)) + rng.uniform(5, 50, size=m)


def test_rotation_recovered_from_m_pairs(rng: np.random.Generator) -> None:
    X = _data(300, 8, rng)
    Y = X @ _rotation(8, rng)
    known = np.arange(8)  # exactly m pairs: the linear map
    X_hat, det = known_io_attack(X, Y, known)
    assert det["method"] == "linear"
    assert np.max(np.abs(X_hat - X)) < 1e-6 * np.abs(X).max()
    assert det["key_recovery_rmse"] < 1e-6


def test_affine_map_recovered_from_m_plus_one_pairs(rng: np.random.Generator) -> None:
    X = _data(300, 6, rng)
    Y = X @ _rotation(6, rng) + rng.normal(size=6) * 10
    X_hat, det = known_io_attack(X, Y, np.arange(7))
    assert det["method"] == "affine" and np.max(np.abs(X_hat - X)) < 1e-6


def test_orthonormal_projection_key_recovered(rng: np.random.Generator) -> None:
    X = _data(300, 10, rng)
    P = _rotation(10, rng)[:, :4]  # 10 -> 4 orthonormal projection
    Y = X @ P
    _, det = known_io_attack(X, Y, np.arange(10))
    assert det["key_recovery_rmse"] < 1e-6


def test_fewer_pairs_need_the_marginals(rng: np.random.Generator) -> None:
    X = np.round(rng.gamma(2.0, 10.0, size=(800, 8)) @ np.abs(rng.normal(size=(8, 8))))
    Y = X @ _rotation(8, rng)
    known = np.arange(5)  # fewer pairs than columns: the pairs alone leave 3 directions open
    only_pairs, d0 = known_io_attack(X, Y, known, marginals=False)
    with_marg, d1 = known_io_attack(X, Y, known, marginals=True)
    assert d0["method"] == "procrustes" and d1["method"] == "procrustes+marginals"
    assert np.sqrt(np.mean((only_pairs - X) ** 2)) > 1e-3
    assert np.sqrt(np.mean((with_marg - X) ** 2)) < 1e-6 * np.abs(X).max()


def test_small_noise_links_almost_everyone(rng: np.random.Generator) -> None:
    X = _data(500, 6, rng)
    Y = X + rng.normal(scale=0.01 * X.std(axis=0), size=X.shape)
    rates = linkage_rates(X, Y)["rates"]
    assert rates["raw"] > 0.97 and rates["standardised"] > 0.97


def test_independent_data_links_at_chance(rng: np.random.Generator) -> None:
    n = 2000
    X, Y = rng.normal(size=(n, 5)), rng.normal(size=(n, 5))
    res = run_attacks(X, Y, "population", attacks=["linkage"])[0]
    assert res.reidentification_rate < 5.0 / n
    assert res.baseline_no_release["reidentification_rate"] == pytest.approx(1 / n)


def test_projected_linkage_defeats_low_rank_release(rng: np.random.Generator) -> None:
    X = _data(400, 12, rng)
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    Y = (U[:, :3] * s[:3]) @ Vt[:3]
    det = linkage_rates(X, Y)
    assert det["rates"]["projected"] == 1.0 and det["projected_rank"] == 3


def test_distance_attack_locates_points_under_rotation(rng: np.random.Generator) -> None:
    X = _data(200, 5, rng)
    Y = X @ _rotation(5, rng)
    res = run_attacks(X, Y, "known-io:6", attacks=["distance"])[0]
    assert res.details["rho"] < 1e-6 and res.within_5pct > 0.99


def test_gauss_newton_exact_distances() -> None:
    R = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 3.0]])
    x = np.array([1.0, 1.0])
    est, _ = gauss_newton_locate(R, np.linalg.norm(R - x, axis=1), np.zeros(2) + 0.1, tol=1e-14)
    np.testing.assert_allclose(est, x, atol=1e-9)


def test_pca_attack_beats_no_release_on_rotation(rng: np.random.Generator) -> None:
    # distinct variances so the eigenvectors are identifiable; skewed so the KS sign test can work
    X = rng.exponential(size=(3000, 4)) * np.array([8.0, 4.0, 2.0, 1.0])
    Y = X @ _rotation(4, rng)
    X_hat, det = pca_attack(X, Y, np.arange(1500))
    err = np.sqrt(np.mean((X_hat[1500:] - X[1500:]) ** 2))
    base = np.sqrt(np.mean((np.median(X, axis=0) - X[1500:]) ** 2))
    assert err < 0.2 * base
    # a rotation keeps the eigenvalues (small scale distortion) but turns the eigenvectors
    assert det["eigenvalue_md"] < 0.1 * np.var(X, axis=0).sum()
    assert det["eigenvector_md_rad"] > 0.1


def test_spectral_filter_removes_noise(rng: np.random.Generator) -> None:
    S = rng.normal(size=(2000, 2)) @ rng.normal(size=(2, 20)) * 3
    Y = S + rng.normal(size=S.shape)
    X_hat, det = spectral_filter(Y)
    assert 2 <= det["components_kept"] <= 3
    assert np.mean((X_hat - S) ** 2) < 0.3 * np.mean((Y - S) ** 2)


def test_ica_unmixes_independent_columns(rng: np.random.Generator) -> None:
    X = np.column_stack([rng.uniform(0, 10, 3000), rng.exponential(2.0, 3000), rng.laplace(5, 1, 3000)])
    Y = X @ rng.normal(size=(3, 3))
    X_hat, _ = ica_attack(X, Y, np.random.default_rng(0))
    for j in range(3):
        assert abs(np.corrcoef(X_hat[:, j], X[:, j])[0, 1]) > 0.95


def test_ica_on_a_low_rank_or_constant_release_unmixes_only_its_rank(rng: np.random.Generator) -> None:
    X = rng.normal(size=(2000, 6)) * [1, 2, 3, 4, 5, 6] + 10
    low = (X - X.mean(0)) @ np.linalg.svd(X - X.mean(0), full_matrices=False)[2][:2].T @ \
        np.linalg.svd(X - X.mean(0), full_matrices=False)[2][:2] + X.mean(0)
    X_hat, det = ica_attack(X, low, np.random.default_rng(0))
    assert det["components"] == 2 and np.isfinite(X_hat).all()
    # every row released as the column means (up to rounding): nothing to unmix, the median guess
    flat = np.broadcast_to(X.mean(0), X.shape) + 1e-15 * rng.normal(size=X.shape)
    X_hat, det = ica_attack(X, flat, np.random.default_rng(0))
    assert det["components"] == 0 and np.array_equal(X_hat, np.broadcast_to(np.median(X, axis=0), X.shape))
    results = run_attacks(X, flat, "default", random_state=0)  # the whole battery runs on it
    assert all(np.isfinite(r.success) for r in results)


def test_interval_disclosure_bounds(rng: np.random.Generator) -> None:
    X = _data(300, 4, rng)
    assert interval_disclosure(X, X)["sd_interval_share"] == 1.0
    far = interval_disclosure(X, X + 10 * X.std(axis=0))
    assert far["sd_interval_share"] == 0.0


def test_run_attacks_results_are_json_and_reproducible(rng: np.random.Generator) -> None:
    X = _data(150, 5, rng)
    Y = X @ _rotation(5, rng) + rng.normal(scale=0.05, size=X.shape)
    a = [r.to_dict() for r in run_attacks(X, Y, "default", random_state=3)]
    b = [r.to_dict() for r in run_attacks(X, Y, "default", random_state=3)]
    assert json.dumps(a) == json.dumps(b)
    names = [r["attack"] for r in a]
    assert names[:5] == ["known_io", "distance", "pca", "mmse", "linkage"]
    for r in a:
        assert {"attack", "threat", "rmse", "within_5pct", "reidentification_rate", "baseline_no_release",
                "baseline_original", "ci"} <= set(r)
    kio = a[0]
    assert kio["ci"] is not None and kio["n_seeds"] == 3 and kio["ci"][0] <= kio["success"] <= kio["ci"][1]
    link = next(r for r in a if r["attack"] == "linkage")
    assert link["rmse"] is None and link["ci"] is None


def test_run_attacks_rejects_bad_requests(rng: np.random.Generator) -> None:
    X = _data(50, 3, rng)
    with pytest.raises(ParameterError):
        run_attacks(X, X, "outsider", attacks=["linkage"])
    with pytest.raises(ParameterError):
        run_attacks(X, X, attacks=["nope"])
    with pytest.raises(InputError):
        run_attacks(X, X[:40])


def test_nearest_neighbors_matches_brute_force(rng: np.random.Generator) -> None:
    from scipy.spatial.distance import cdist

    A, B = rng.normal(size=(300, 4)), rng.normal(size=(200, 4))
    idx, dist = nearest_neighbors(A, B, 3, block_bytes=8 * 200 * 7, return_distance=True)
    D = cdist(A, B)
    np.testing.assert_array_equal(idx, np.argsort(D, axis=1)[:, :3])
    np.testing.assert_allclose(dist, np.sort(D, axis=1)[:, :3], atol=1e-9)
    own = nearest_neighbors(B, B, 2, exclude_self=True)
    assert not (own == np.arange(200)[:, None]).any()


def test_nearest_neighbor_distances_recomputed_in_blocks_of_queries(rng: np.random.Generator) -> None:
    """Many queries' distances are recomputed a block at a time: every block, the last one shorter, gives
    the brute-force distances."""
    from scipy.spatial.distance import cdist

    from ppdm.utils import neighbors

    A, B = rng.normal(size=(1_000, 5)), rng.normal(size=(400, 5))
    cells = neighbors.DISTANCE_CELLS
    try:
        neighbors.DISTANCE_CELLS = 7 * 4 * 5  # blocks of 7 queries x 4 neighbours x 5 columns
        idx, dist = nearest_neighbors(A, B, 4, return_distance=True)
    finally:
        neighbors.DISTANCE_CELLS = cells
    D = cdist(A, B)
    np.testing.assert_array_equal(idx, np.argsort(D, axis=1)[:, :4])
    np.testing.assert_allclose(dist, np.sort(D, axis=1)[:, :4], atol=1e-9)


def test_reconstruction_scores_counted_a_block_of_rows_at_a_time(rng: np.random.Generator,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Scores over a whole table are counted a block of rows at a time (the last block shorter): the same
    shares as the one-shot formulas, and the same errors to rounding."""
    from ppdm.attacks import _result

    X = np.round(rng.normal(size=(1_003, 4)), 1)  # zeros and ties: exact hits count
    X_hat = X + rng.normal(scale=0.05, size=X.shape)
    X_hat[::7] = X[::7]
    med = np.median(X, axis=0)
    tol = 0.05 * np.abs(X) + 1e-12 * (np.abs(X) + 1)
    within = float((np.abs(X_hat - X) <= tol).mean())
    missed = np.abs(med - X) > tol
    beyond = float((np.abs(X_hat - X) <= tol)[missed].mean())
    base_within = float((np.abs(med - X) <= tol).mean())
    monkeypatch.setattr(_result, "ROW_CHUNK", 100)
    assert _result.within_pct(X_hat, X) == within
    assert _result.beyond_baseline(X_hat, X) == beyond
    np.testing.assert_allclose(_result.rmse(X_hat, X), np.sqrt(np.mean((X_hat - X) ** 2)), rtol=1e-12)
    rows = np.sort(rng.choice(1_003, size=450, replace=False))
    base = _result.no_release_scores(X, rows)
    assert base["within_5pct"] == float((np.abs(med - X[rows]) <= tol[rows]).mean())
    np.testing.assert_allclose(base["rmse"], np.sqrt(np.mean((med - X[rows]) ** 2)), rtol=1e-12)
    assert base_within == _result.no_release_scores(X, np.arange(1_003))["within_5pct"]


def test_the_attacks_gauss_newton_stops_each_target_when_it_stalls() -> None:
    """With ``stall``, each target stops once its objective stops falling: on exact distances it lands where the
    published loop does; on distances a release did not preserve it stops long before ``max_iter`` with an
    objective no worse than its start."""
    from ppdm.attacks import gauss_newton_locate
    from ppdm.attacks._distance import STALL

    rng = np.random.default_rng(11)
    m = 20
    R = rng.normal(size=(m + 1, m))
    truth = rng.normal(size=(40, m))
    d = np.linalg.norm(truth[:, None, :] - R[None], axis=2)
    x0 = truth + rng.normal(scale=0.05, size=truth.shape)  # near the truth: Gauss-Newton's basin
    published, _ = gauss_newton_locate(R, d, x0, tol=1e-10, max_iter=50)
    stalled, _ = gauss_newton_locate(R, d, x0, tol=1e-10, max_iter=50, stall=STALL)
    np.testing.assert_allclose(stalled, truth, atol=1e-6)
    np.testing.assert_allclose(published, truth, atol=1e-6)
    noisy = d * np.exp(rng.normal(scale=0.3, size=d.shape))  # not distances of any point

    def objective(x: np.ndarray) -> np.ndarray:
        return ((np.linalg.norm(x[:, None, :] - R[None], axis=2) - noisy) ** 2).sum(axis=1)

    x_n, iters = gauss_newton_locate(R, noisy, x0, tol=1e-12, max_iter=200, stall=STALL)
    assert iters < 200 and (objective(x_n) <= objective(x0) + 1e-9).all()


def test_the_ica_attack_reads_a_release_of_two_distinct_rows() -> None:
    """A sparsified SVD can release two distinct rows, one of them once (optdigits: 2,000 rows, 64 columns):
    scikit-learn's whitening signs its components by the first column's loading, exactly 0 there, and its fit
    raised on the NaN components that followed. Constant columns are now left out of the unmixing (and were
    its components not finite, the whitened principal components would stand for the sources)."""
    from ppdm.attacks._filtering import ica_attack

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 8))
    rows = np.vstack([rng.normal(size=8), rng.normal(size=8)])
    rows[:, 0] = 0.0  # a constant first column (a blank pixel): scikit-learn's whitening signs by it, zeroing it
    Y = rows[(np.arange(2000) > 0).astype(int)]
    X_hat, details = ica_attack(X, Y, np.random.default_rng(1))
    assert details["components"] == 1 and np.isfinite(X_hat).all() and X_hat.shape == X.shape

