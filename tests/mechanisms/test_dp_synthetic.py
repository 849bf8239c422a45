"""The DP copula: its noise is OpenDP's calibration for the stated (epsilon, delta), its loss is within it.

The expected scales are computed here with OpenDP's own constructors (the Gaussian mechanism on a vector
under the L2 distance, the private quantile, the zCDP to (epsilon, delta) conversion), independently of
the mechanism's composition. Every test but the first needs the ``dp`` extra.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdm.exceptions import MissingDependencyError, PrivacyWarning
from ppdm.mechanisms import DPGaussianCopula
from ppdm.mechanisms.dp_synthetic import BUDGET_SHARES, FIXED_POINT_SLACK, nearest_correlation


def _data(n: int = 300, m: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.standard_normal((n, m)) @ rng.normal(0, 0.7, (m, m)) + y[:, None]
    return (X - X.mean(0)) / X.std(0), np.array(["a", "b", "c"])[y]


def test_without_opendp_the_error_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch, cli, table) -> None:
    from tests.conftest import one_line_error

    monkeypatch.setitem(sys.modules, "opendp", None)
    monkeypatch.setitem(sys.modules, "opendp.prelude", None)
    X, y = _data(40)
    with pytest.raises(MissingDependencyError, match=r"pip install 'ppdm\[dp\]'") as e:
        DPGaussianCopula(random_state=0).fit(X, y)
    assert "\n" not in str(e.value)
    line = one_line_error(*cli("perturb", table, "--method", "dp-copula", "--id", "pid", "--label", "diagnosis",
                               "-o", table.parent / "out.csv"))
    assert "pip install 'ppdm[dp]'" in line
    # the default sweep leaves it out and says why; a config that names it is refused in one line
    from ppdm.release.config import default_methods, skipped_defaults

    assert "dp-copula" not in default_methods() and "ppdm[dp]" in skipped_defaults()["dp-copula"]
    cfg = table.parent / "dp.yaml"
    cfg.write_text("methods:\n  - method: dp-copula\n")
    line = one_line_error(*cli("release", table, "--id", "pid", "--label", "diagnosis", "--config", cfg,
                               "-o", table.parent / "rel"))
    assert "pip install 'ppdm[dp]'" in line


@pytest.fixture(scope="module")
def dp():  # type: ignore[no-untyped-def]
    pytest.importorskip("opendp")
    from ppdm.mechanisms.dp_synthetic import opendp_prelude

    return opendp_prelude()


@pytest.fixture(scope="module")
def fitted(dp) -> tuple[DPGaussianCopula, np.ndarray, np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    X, y = _data()
    mech = DPGaussianCopula(epsilon=2.0, delta=1e-6, bounds=3.0, n_bins=8, random_state=0)
    out = mech.fit_transform(X, y)
    return mech, out, X, y


def _approx_epsilon(dp, rho: float, delta: float) -> float:  # type: ignore[no-untyped-def]
    """epsilon at delta of a rho-zCDP mechanism, by OpenDP's conversion (a Gaussian with loss rho at d_in 1)."""
    gauss = dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
                               1.0 / math.sqrt(2.0 * rho))
    return float(dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(gauss), delta).map(1.0)[0])


def test_the_budget_is_openDPs_conversion_of_epsilon_delta(dp, fitted) -> None:  # type: ignore[no-untyped-def]
    mech = fitted[0]
    assert _approx_epsilon(dp, mech.rho_total_, 1e-6) == pytest.approx(2.0, rel=1e-6)
    assert _approx_epsilon(dp, mech.rho_total_, 1e-6) <= 2.0 * (1 + 1e-12)  # rho -> scale -> rho rounds
    assert _approx_epsilon(dp, mech.rho_total_ * 1.001, 1e-6) > 2.0  # the largest budget, not a timid one
    assert mech.epsilon_spent_ <= 2.0 and mech.delta_spent_ <= 1e-6


def test_noise_scales_equal_openDPs_calibration(dp, fitted) -> None:  # type: ignore[no-untyped-def]
    mech, _, X, _ = fitted
    m = X.shape[1]
    pairs = m * (m - 1) // 2
    # the sensitivities: a changed record moves one count in each column's histogram (in and out of a bin),
    # and changes the off-diagonal sums of products of its clipped score vector (norm^2 <= m) by sqrt(2) m;
    # those are measured in fixed point, each rounded sum moving by at most one more
    assert mech.query_names_ == ["histograms", "correlation sums"]
    unit = mech.units_[1]
    assert mech.units_[0] == 1.0 and unit == round(unit) and unit >= 1
    assert math.sqrt(pairs) <= FIXED_POINT_SLACK * unit * math.sqrt(2) * m  # the rounding's share is small
    np.testing.assert_allclose(mech.sensitivities_, [math.sqrt(2 * m), unit * math.sqrt(2) * m + math.sqrt(pairs)])
    shares = np.array([BUDGET_SHARES["marginals"], BUDGET_SHARES["correlation"]])
    np.testing.assert_allclose(mech.rho_, mech.rho_total_ * shares / shares.sum(), rtol=1e-12)
    ints = dp.vector_domain(dp.atom_domain(T=dp.i64))
    floats = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    l2 = dp.l2_distance(T=float)
    for sens, rho, got in zip(mech.sensitivities_, mech.rho_, mech.scales_, strict=True):
        expected = dp.binary_search_param(lambda s: dp.m.make_gaussian(ints, l2, s), d_in=float(sens), d_out=rho)
        assert got == pytest.approx(expected, rel=1e-9)
        # the scale spends the query's share and no more
        assert dp.m.make_gaussian(ints, l2, got).map(float(sens)) <= rho
    # in the sums' own terms, the fixed point adds at most the slack to the noise of a Gaussian on floats
    on_floats = dp.binary_search_param(lambda s: dp.m.make_gaussian(floats, l2, s), d_in=math.sqrt(2) * m,
                                       d_out=mech.rho_[1])
    assert on_floats <= mech.scales_[1] / unit <= on_floats * (1 + FIXED_POINT_SLACK) * (1 + 1e-9)
    # the total: every measurement's loss (OpenDP's maps) composes within the stated guarantee
    spent = sum(dp.m.make_gaussian(ints, l2, s).map(float(d)) for d, s in zip(mech.sensitivities_, mech.scales_,
                                                                            strict=True))
    assert spent <= mech.rho_total_ * (1 + 1e-12)
    assert _approx_epsilon(dp, spent, 1e-6) <= 2.0 * (1 + 1e-12)


def test_a_one_column_table_is_released(dp) -> None:  # type: ignore[no-untyped-def]
    # no pair of columns: the sums of products are an empty query, which still gets a scale
    X, y = _data(120, 1)
    mech = DPGaussianCopula(epsilon=1.0, bounds=3.0, random_state=0)
    out = mech.fit_transform(X, y)
    assert out.shape == X.shape and np.isfinite(out).all()
    assert mech.units_[1] == 1.0 and mech.sensitivities_[1] == pytest.approx(math.sqrt(2))


def test_the_fixed_points_rounding_stays_within_its_share_of_the_sensitivity(fitted) -> None:  # type: ignore[no-untyped-def]
    # two neighbours' real sums differ by at most sqrt(2) m in L2; rounded in the mechanism's unit, they must
    # stay within the sensitivity it states to OpenDP
    mech, _, X, _ = fitted
    m = X.shape[1]
    pairs, s = m * (m - 1) // 2, math.sqrt(2) * m
    unit, stated = mech.units_[1], mech.sensitivities_[1]
    rng = np.random.default_rng(3)
    for _ in range(200):
        a = rng.normal(0, 50, pairs)
        step = rng.normal(0, 1, pairs)
        b = a + step / np.linalg.norm(step) * s * rng.uniform(0, 1)
        moved = np.linalg.norm(np.rint(a * unit) - np.rint(b * unit))
        assert moved <= stated


def test_the_histograms_carry_noise_of_that_scale(fitted) -> None:  # type: ignore[no-untyped-def]
    mech, _, X, y = fitted
    strata = np.unique(y, return_inverse=True)[1]
    lo, hi = mech.bounds_[:, 0], mech.bounds_[:, 1]
    nb = mech.hist_.shape[2]
    idx = np.clip(((np.clip(X, lo, hi) - lo) / (hi - lo) * nb).astype(int), 0, nb - 1)
    true = np.zeros_like(mech.hist_)
    for j in range(X.shape[1]):
        np.add.at(true[:, j, :], (strata, idx[:, j]), 1.0)
    resid = (mech.hist_ - true).ravel()
    assert np.std(resid) == pytest.approx(mech.scales_[0], rel=0.25)  # 120 cells


def test_release_shape_bounds_and_classes(fitted) -> None:  # type: ignore[no-untyped-def]
    mech, out, X, y = fitted
    assert out.shape == X.shape and np.isfinite(out).all()
    assert (out >= mech.bounds_[:, 0] - 1e-12).all() and (out <= mech.bounds_[:, 1] + 1e-12).all()
    np.testing.assert_array_equal(mech.strata_, np.unique(y, return_inverse=True)[1])
    for c in range(3):  # the noisy correlations became valid correlation matrices
        C = mech.corr_[c]
        np.testing.assert_allclose(np.diag(C), 1.0)
        assert np.linalg.eigvalsh(C).min() > -1e-9


def test_measured_bounds_use_openDPs_quantile_calibration(dp) -> None:  # type: ignore[no-untyped-def]
    X, y = _data(200, 3)
    mech = DPGaussianCopula(epsilon=4.0, n_bins=8, random_state=1).fit(X, y)
    assert mech.bounds_source_.startswith("measured")
    assert len(mech.query_names_) == 2 * 3 + 2 and np.isnan(mech.sensitivities_[:6]).all()
    cand = [float(c) for c in np.linspace(-10.0, 10.0, 201)]
    # a changed record is a symmetric distance of 2 for a column's quantile
    for alpha, got in ((0.01, mech.scales_[0]), (0.99, mech.scales_[1])):
        def make(s: float, alpha: float = alpha):  # type: ignore[no-untyped-def]
            return dp.m.make_private_quantile(dp.vector_domain(dp.atom_domain(T=float, nan=False)),
                                              dp.symmetric_distance(), dp.zero_concentrated_divergence(),
                                              candidates=cand, alpha=alpha, scale=s)
        assert got == pytest.approx(dp.binary_search_param(make, d_in=2, d_out=mech.rho_[0]), rel=1e-9)
    assert (mech.bounds_[:, 0] < mech.bounds_[:, 1]).all()
    assert mech.rho_.sum() <= mech.rho_total_ * (1 + 1e-12)


def test_bounds_from_the_data_are_declared_outside_the_guarantee(dp) -> None:  # type: ignore[no-untyped-def]
    X, y = _data(100, 3)
    mech = DPGaussianCopula(bounds="data", n_bins=4, random_state=0).fit(X, y)
    np.testing.assert_array_equal(mech.bounds_, np.column_stack([X.min(0), X.max(0)]))
    assert any("bounds" in s for s in mech.guarantee()["not_covered"])


def test_nearest_correlation_repairs_an_indefinite_matrix() -> None:
    C = np.array([[1.0, 0.9, -0.9], [0.9, 1.0, 0.9], [-0.9, 0.9, 1.0]])
    assert np.linalg.eigvalsh(C).min() < 0
    R = nearest_correlation(C)
    np.testing.assert_allclose(np.diag(R), 1.0)
    assert np.linalg.eigvalsh(R).min() >= -1e-12
    np.testing.assert_allclose(nearest_correlation(np.eye(3)), np.eye(3))


def test_the_release_record_and_report_state_the_guarantee(dp, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from ppdm.release import load_config, release

    X, y = _data(120, 4)
    df = pd.DataFrame(X * 3 + 10, columns=[f"x{j}" for j in range(4)])
    df.insert(0, "pid", range(len(df)))
    df["class"] = y
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    cfg = tmp_path / "c.yaml"
    cfg.write_text("methods:\n  - method: dp-copula\n    grid: {epsilon: [3.0], bounds: [4.0], n_bins: [8]}\n"
                   "threat: population\npolicy: {objective: knn_pct, max_reidentification: 1.0, max_singling_out: 1.0, "
                   "max_linkability: 1.0, max_membership_outliers: 1.0, "
                   "max_within_5pct: 1.0}\nn_jobs: 1\n")
    res = release(src, output_dir=tmp_path / "out", config=load_config(cfg, None), id="pid", label="class",
                  use_cache=False, progress=False)
    g = res.record["guarantee"]
    assert (g["epsilon"], g["delta"]) == (3.0, 1e-6) and g["epsilon_spent"] <= 3.0
    assert any("zscore" in s for s in g["not_covered"])
    assert set(pd.read_csv(tmp_path / "out" / "release.csv")["class"]) <= set(y)
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Formal privacy guarantee" in html and "epsilon" in html
    assert any(s.startswith("Formal guarantee: (3, 1e-06)") for s in res.record["summary"])
    assert not any("does not repeat" in s for s in res.record["summary"])  # a secret key: nothing to repeat
    cfg.write_text(cfg.read_text() + "seed: 3\n")
    with pytest.warns(PrivacyWarning):  # a known seed is warned about
        seeded = release(src, output_dir=tmp_path / "seeded", config=load_config(cfg, None), id="pid",
                         label="class", use_cache=False, progress=False)
    assert any(s.startswith("The seed does not repeat the formal guarantee's noise") for s in seeded.record["summary"])


def test_a_known_seed_does_not_replay_the_release(dp, fitted) -> None:  # type: ignore[no-untyped-def]
    from ppdm.attacks._seed import candidate_seeds, seed_search

    _, out, X, y = fitted
    # the seed drives only the draws from the noisy measurements; OpenDP's noise is not drawn from it
    res = seed_search(X, out, "dp-copula", {"epsilon": 2.0, "bounds": 3.0, "n_bins": 8}, "none",
                      candidate_seeds(1000), y=y)
    assert res["found"] is False and res["seeds_tried"] == 0
