"""The marginal-based DP synthesisers (dp-aim, dp-mst): noise, budget, audit and anchor, checked against OpenDP
and Private-PGM themselves.

The expected noise scales are computed here with OpenDP's own constructors (its Gaussian mechanism on counts,
its noisy max, its zCDP to (epsilon, delta) conversion) from the split of the budget each recipe documents,
independently of ppdm's accounting. The audit runs a measurement on neighbouring tables many times and bounds
the privacy loss a simple distinguisher sees, with the confidence stated. The anchor is Private-PGM's own
published behaviour on its own example. Needs the ``dp`` extra.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from ppdm.mechanisms import DPAIM, DPMST
from ppdm.mechanisms.dp_columns import RANGE_EDGES, range_cells

pytest.importorskip("opendp")
pytest.importorskip("mbi")

EPS, DELTA = 2.0, 1e-6


def _table(n: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[str], list[int]]:
    """An integer column, a continuous one, a categorical one with gaps; a label tied to all three."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n).astype(float)
    income = np.exp(rng.normal(10, 0.6, n)) + 30 * age
    site = rng.integers(0, 3, n).astype(float)
    site[rng.random(n) < 0.05] = np.nan
    y = np.where((age > 45) ^ (site == 1) ^ (rng.random(n) < 0.1), "high", "low")
    return np.column_stack([age, income, site]), y, ["integer", "continuous", "categorical"], [0, 0, 3]


@pytest.fixture(scope="module")
def dp():  # type: ignore[no-untyped-def]
    from ppdm.mechanisms.dp_synthetic import opendp_prelude

    return opendp_prelude()


@pytest.fixture(scope="module")
def fitted():  # type: ignore[no-untyped-def]
    """One dp-aim release of the table, with every noisy answer OpenDP gave (recorded as it passed)."""
    from ppdm.mechanisms import dp_accounting

    answers = []
    original = dp_accounting.Budget.counts

    def recording(self, name, cells, size, rho):  # type: ignore[no-untyped-def]
        out = original(self, name, cells, size, rho)
        answers.append((name, out))
        return out

    X, y, kinds, levels = _table()
    mech = DPAIM(epsilon=EPS, delta=DELTA, kinds=kinds, levels=levels, n_bins=6, rounds=1, per_round=2,
                 random_state=0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dp_accounting.Budget, "counts", recording)
        out = mech.fit_transform(X, y)
    return mech, out, X, y, answers


def _rho(dp, epsilon: float, delta: float) -> float:  # type: ignore[no-untyped-def]
    """The zCDP budget of (epsilon, delta) by OpenDP's conversion of a Gaussian mechanism (not ppdm's)."""
    vec = dp.vector_domain(dp.atom_domain(T=float, nan=False))

    def approx(scale: float):  # type: ignore[no-untyped-def]
        return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(vec, dp.l2_distance(T=float),
                                                                                  scale)), delta)

    scale = dp.binary_search_param(approx, d_in=1.0, d_out=(epsilon, delta))
    return float(dp.m.make_gaussian(vec, dp.l2_distance(T=float), scale).map(1.0))


def _gaussian_scale(dp, rho: float) -> float:  # type: ignore[no-untyped-def]
    counts = dp.vector_domain(dp.atom_domain(T=dp.i32))
    return float(dp.binary_search_param(lambda s: dp.m.make_gaussian(counts, dp.l2_distance(T=dp.i64), s),
                                        d_in=1, d_out=rho))


def test_every_count_carries_openDPs_gaussian_calibration_for_its_share(dp, fitted) -> None:  # type: ignore[no-untyped-def]
    mech = fitted[0]
    rho = _rho(dp, EPS, DELTA)
    assert mech.rho_total_ == pytest.approx(rho, rel=1e-6)
    # the split dp-aim documents: a tenth for the two number columns' ranges, then the label's pairs with the
    # three other columns and 2 picks, each measured with the same share, each pick costing 1/9 of a measurement
    ranges = 0.1 * rho / 2
    unit = (rho - 2 * ranges) / (3 + 2 * (1 + 1 / 9))
    kinds = np.array(mech.query_kinds_)
    counts = np.flatnonzero(kinds == "gaussian counts")
    expected = [ranges, ranges] + [unit] * (len(counts) - 2)
    assert [n.startswith("range") for n in np.array(mech.query_names_)[counts]] == [True, True] + [False] * (
        len(counts) - 2)
    for k, want in zip(counts, expected, strict=True):
        assert mech.scales_[k] == pytest.approx(_gaussian_scale(dp, want), rel=1e-9)
        assert mech.sensitivities_[k] == 1.0  # one record added or removed moves one count by one


def test_every_selection_carries_openDPs_noisy_max_calibration(dp, fitted) -> None:  # type: ignore[no-untyped-def]
    mech = fitted[0]
    rho = _rho(dp, EPS, DELTA)
    unit = (rho - 0.1 * rho) / (3 + 2 * (1 + 1 / 9))
    picks = np.flatnonzero(np.array(mech.query_kinds_) == "noisy max")
    assert len(picks) == 2
    floats = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    # the workload dp-aim documents: every pair (weight 1), the label's pairs and its triples with two other
    # columns (weight 4); a candidate weighs the workload's weights times the columns it shares with each
    label = 3
    work = {p: 4.0 if label in p else 1.0 for p in itertools.combinations(range(4), 2)}
    work |= {(a, b, label): 4.0 for a, b in itertools.combinations(range(3), 2)}
    weight = {c: sum(w * len(set(c) & set(p)) for p, w in work.items())
              for r in (1, 2, 3) for c in itertools.combinations(range(4), r)}
    # the first pick runs among every candidate not yet measured (the label's pairs were, with their columns)
    measured = {(0,), (1,), (2,), (3,), (0, 3), (1, 3), (2, 3)}
    assert mech.sensitivities_[picks[0]] == max(w for c, w in weight.items() if c not in measured)
    for k in picks:
        # a pick's score is its weighted L1 error: a record moves it by at most the largest weight in the running
        assert mech.sensitivities_[k] in set(weight.values())
        want = dp.binary_search_param(
            lambda s: dp.m.make_noisy_max(floats, dp.linf_distance(T=float), dp.zero_concentrated_divergence(),
                                          scale=s), d_in=float(mech.sensitivities_[k]), d_out=unit / 9)
        assert mech.scales_[k] == pytest.approx(want, rel=1e-9)


def test_the_whole_release_spends_at_most_the_stated_epsilon(dp, fitted) -> None:  # type: ignore[no-untyped-def]
    mech = fitted[0]
    rho = _rho(dp, EPS, DELTA)
    # each measurement's loss is OpenDP's privacy map of the measurement as made; they compose by addition
    assert mech.rho_.sum() <= rho * (1 + 1e-9)
    assert mech.rho_.sum() >= rho * 0.999  # the budget is spent, not left over
    vec = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    scale = 1.0 / math.sqrt(2 * mech.rho_.sum())
    gauss = dp.m.make_gaussian(vec, dp.l2_distance(T=float), scale)
    eps = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(gauss), DELTA).map(1.0)[0]
    assert eps <= EPS * (1 + 1e-9)
    assert mech.epsilon_spent_ <= EPS and mech.guarantee()["epsilon"] == EPS


def test_the_filter_refuses_a_query_beyond_the_budget(dp) -> None:  # type: ignore[no-untyped-def]
    from ppdm.mechanisms.dp_accounting import Budget

    budget = Budget(np.zeros((10, 1)), 0.01)
    budget.counts("a", lambda t: np.zeros(len(t), dtype=int), 2, 0.006)
    with pytest.raises(Exception, match="exhausted|exceed"):
        budget.counts("b", lambda t: np.zeros(len(t), dtype=int), 2, 0.006)
    assert [q.name for q in budget.log] == ["a"]  # the refused query was never answered


def test_the_budget_left_is_what_openDPs_filter_has_not_spent(dp) -> None:  # type: ignore[no-untyped-def]
    from ppdm.mechanisms.dp_accounting import Budget

    budget = Budget(np.zeros((10, 2)), 0.05)
    for share in (0.01, 0.004, 0.02):
        budget.counts("a", lambda t: np.zeros(len(t), dtype=int), 3, share)
        assert budget.left == pytest.approx(0.05 - float(budget._queryable.privacy_loss(1)), rel=1e-12)
    budget.noisy_max("b", lambda t: [1.0, 2.0], 1.0, budget.left)  # the rest, to the last rounding error
    assert budget.spent <= 0.05 and 0.0 <= budget.left < 1e-9
    assert budget.left == pytest.approx(0.05 - budget.spent, abs=1e-15)


def test_the_noise_on_the_range_histograms_has_the_calibrated_deviation(fitted) -> None:  # type: ignore[no-untyped-def]
    mech, _, X, _, answers = fitted
    ranges = [(name, noisy) for name, noisy in answers if name.startswith("range")]
    resid = []
    for (_, noisy), j in zip(ranges, (0, 1), strict=True):
        true = np.bincount(range_cells(X[:, j]), minlength=len(RANGE_EDGES) + 2)
        resid.append(noisy - true)
    resid = np.concatenate(resid)  # 2 x 260 cells
    assert np.std(resid) == pytest.approx(mech.scales_[0], rel=0.12)
    assert abs(np.mean(resid)) < 4 * mech.scales_[0] / math.sqrt(len(resid))


def test_the_release_is_the_whole_record_in_its_domain(fitted) -> None:  # type: ignore[no-untyped-def]
    mech, out, X, y, _ = fitted
    assert out.shape == X.shape
    site = out[:, 2]
    assert set(np.unique(site[~np.isnan(site)])) <= {0.0, 1.0, 2.0}
    assert np.isnan(out[:, :2]).sum() == 0  # only the column with gaps has a gap code
    ages = out[:, 0]
    assert np.all(ages == np.round(ages)) and ages.min() >= mech.lo_[0] - 0.5 and ages.max() <= mech.hi_[0] + 0.5
    assert set(mech.released_label_) <= set(y) and len(mech.released_label_) == len(y)
    g = mech.guarantee()
    assert "label" in g["unit"] and any("number of records" in p for p in g["public"])
    # the state holds the model, not the release
    header, arrays = mech.to_state()
    assert "released_label_" not in arrays and "released_label_" not in header["fitted"]


def test_mst_spends_its_budget_in_thirds(dp) -> None:  # type: ignore[no-untyped-def]
    X, y, kinds, levels = _table(300, seed=1)
    X, kinds, levels = X[:, [0, 2]], ["integer", "categorical"], [0, 3]
    mech = DPMST(epsilon=EPS, delta=DELTA, kinds=kinds, levels=levels, n_bins=5, random_state=0).fit(X, y)
    rho = _rho(dp, EPS, DELTA)
    names = np.array(mech.query_names_)
    rest = rho - mech.rho_[[n.startswith("range") for n in names]].sum()  # a tenth for the one number's range
    oneway = [n.startswith("marginal (") and n.count(",") == 1 and n.endswith(",)") for n in names]
    edges = names == "tree edge"
    assert edges.sum() == 2 and sum(oneway) == 3  # a spanning tree of three columns, the label one of them
    pairs = ~np.array(oneway) & ~edges & ~np.char.startswith(names, "range")
    for part in (mech.rho_[oneway].sum(), mech.rho_[edges].sum(), mech.rho_[pairs].sum()):
        assert part == pytest.approx(rest / 3, rel=1e-6)


def _audit(dp, scale_factor: float, runs: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """ppdm's count measurement of a record's cell (dp-aim's marginals are such counts) on D, where the cell
    holds 5 records, and on D', one record more: ``runs`` times each; the distinguisher says "D'" when the noisy
    count exceeds 5.5. Returns the claimed epsilon at delta 1e-6 and the lower end of the privacy loss the
    distinguisher shows, ln((p' - delta) / p) with p' from below and p from above (Clopper-Pearson 97.5 % each:
    the bound holds with at least 95 % confidence). ``scale_factor`` < 1 shrinks the noise below OpenDP's
    calibration, a broken mechanism the audit must catch."""
    from scipy.stats import beta

    from ppdm.mechanisms.dp_accounting import Budget, approx_dp

    rho = 0.02
    D = np.zeros((40, 1))
    D[:5, 0] = 1
    hits = []
    for table in (D, np.vstack([D, [[1.0]]])):
        measurement, _, scale = Budget(table, rho).count_measurement(lambda t: t[:, 0].astype(int), 2, rho)
        if scale_factor != 1.0:
            counting = dp.t.make_user_transformation(
                dp.user_domain("audit", lambda x: True), dp.symmetric_distance(),
                dp.vector_domain(dp.atom_domain(T=dp.i64)), dp.symmetric_distance(),
                function=lambda t: t[:, 0].astype(int).tolist(), stability_map=lambda d: d,
            ) >> dp.t.then_count_by_categories(categories=[0, 1], null_category=False, MO=dp.L2Distance[dp.i64])
            measurement = counting >> dp.m.then_gaussian(scale * scale_factor)
        hits.append(sum(measurement(table)[1] > 5.5 for _ in range(runs)))
    p_lo = beta.ppf(0.025, hits[1], runs - hits[1] + 1) if hits[1] else 0.0
    q_hi = beta.ppf(0.975, hits[0] + 1, runs - hits[0]) if hits[0] < runs else 1.0
    return approx_dp(rho, 1e-6), math.log(max(p_lo - 1e-6, 1e-12) / q_hi)


def test_audit_neighbouring_tables_stay_within_the_claimed_epsilon(dp) -> None:  # type: ignore[no-untyped-def]
    eps, shown = _audit(dp, 1.0, 2000)
    assert shown <= eps, (shown, eps)
    # the same audit of a measurement with a twentieth of the calibrated noise shows more than the claim: the
    # audit can fail
    eps_bad, shown_bad = _audit(dp, 0.05, 2000)
    assert shown_bad > eps_bad, (shown_bad, eps_bad)


def test_anchor_private_pgm_recovers_consistent_marginals_on_its_own_example() -> None:
    """Private-PGM's published behaviour on its own test example (domain 2 x 3 x 4 x 5, a tree of pairs): from
    exact marginals of a distribution, mirror descent recovers them within 1e-2 (its test_estimation). Run
    through the estimation ppdm uses, with ppdm's attribute names and the number of records public."""
    from ppdm.mechanisms.dp_marginals import load_mbi

    mbi = load_mbi()
    rng = np.random.default_rng(0)
    P = rng.random((2, 3, 4, 5))
    P /= P.sum()
    axes = {0: (1, 2, 3), 1: (0, 2, 3), 2: (0, 1, 3), 3: (0, 1, 2)}
    tree = [(0, 1), (1, 2), (2, 3)]
    found = []
    for a, b in tree:
        marginal = P.sum(axis=tuple(sorted(set(axes[a]) & set(axes[b]))))
        found.append(mbi.LinearMeasurement(marginal.ravel(), (f"c{a}", f"c{b}"), 1.0))
    model = DPAIM().estimate_model(found, np.array([2, 3, 4, 5]), 1, iters=250)
    for (a, b), m in zip(tree, found, strict=True):
        got = np.asarray(model.project((f"c{a}", f"c{b}")).datavector())
        np.testing.assert_allclose(got, m.noisy_measurement, atol=1e-2)


def test_perturb_releases_the_whole_mixed_table(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    X, y, _, _ = _table(300, seed=2)
    df = pd.DataFrame({"id": np.arange(300), "age": X[:, 0].astype(int), "income": X[:, 1],
                       "site": pd.Series(X[:, 2]).map({0.0: "north", 1.0: "south", 2.0: "east"}), "y": y})
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    code, out, err = cli("perturb", src, "--method", "dp-aim", "-p", "epsilon=4", "-p", "rounds=1", "--id", "id",
                         "--label", "y", "-o", tmp_path / "r.csv", "--state", tmp_path / "r.state")
    assert code == 0, err
    rel = pd.read_csv(tmp_path / "r.csv")
    assert list(rel.columns) == list(df.columns)
    assert set(rel["site"].dropna()) <= {"north", "south", "east"} and set(rel["y"]) <= {"high", "low"}
    assert (rel["age"] == rel["age"].round()).all()
    assert "differential privacy" in out
    assert (tmp_path / "r.state").stat().st_mode & 0o077 == 0


def test_aims_size_cap_is_private_pgms_junction_tree_size_for_every_candidate() -> None:
    """The cap check (ppdm's own junction tree size, one per set of pairs a candidate adds) gives the same
    sizes and verdicts as Private-PGM's own size of the model with each candidate, on random models."""
    from mbi import Domain
    from mbi.junction_tree import hypothetical_model_size

    from ppdm.mechanisms.dp_model_size import model_size_mb
    from ppdm.mechanisms.dp_select import _within_cap

    rng = np.random.default_rng(3)
    d = 12
    sizes = rng.integers(2, 12, d)
    domain = Domain([f"c{j}" for j in range(d)], [int(s) for s in sizes])
    base = [(j, d - 1) for j in range(d - 1)] + [(0, 3, d - 1), (2, 5)]
    named = [tuple(f"c{j}" for j in cl) for cl in base]
    cands = list(itertools.combinations(range(d), 2)) + [(a, b, d - 1) for a, b in
                                                                   itertools.combinations(range(d - 1), 2)]
    exact = {c: hypothetical_model_size(domain, [*named, tuple(f"c{j}" for j in c)]) for c in cands}
    for cap in np.quantile(list(exact.values()), [0.1, 0.5, 0.9]):  # caps that split the candidates
        fits = _within_cap(sizes, base, cands, float(cap))
        assert fits == {c: exact[c] <= cap for c in cands}
        assert 0 < sum(fits.values()) < len(cands)
    # random graphs of every kind: trees, forests, dense ones with fill-in, ties of equal sizes
    for trial in range(60):
        d = int(rng.integers(2, 10))
        sizes = rng.integers(2, 4 if trial % 3 == 0 else 9, d)
        cliques = [tuple(sorted(rng.choice(d, int(rng.integers(1, min(d, 3) + 1)), replace=False).tolist()))
                   for _ in range(int(rng.integers(0, 2 * d)))]
        if trial % 4 == 1:  # a random tree
            cliques = [(int(rng.integers(0, j)), j) for j in range(1, d)]
        domain = Domain([f"c{j}" for j in range(d)], [int(s) for s in sizes])
        theirs = hypothetical_model_size(domain, [tuple(f"c{j}" for j in cl) for cl in cliques])
        assert model_size_mb(sizes, cliques) == pytest.approx(theirs, rel=1e-12), (sizes, cliques)


@pytest.mark.parametrize("star", [True, False])
def test_aims_first_model_in_closed_form_is_private_pgms_estimate(star: bool) -> None:
    """AIM's first model is computed in closed form, not estimated: its clique marginals equal Private-PGM's
    estimate from the same noisy marginals (one-way: the same least-squares fit; the star through the label:
    within a few counts), and are as close to the true marginals."""
    import warnings

    from ppdm.mechanisms.dp_marginals import flat_cells, load_mbi
    from ppdm.mechanisms.dp_select import first_tables, model_tables

    mbi = load_mbi()
    rng = np.random.default_rng(11)
    n, sizes = 2000, np.array([5, 7, 3, 16, 3])
    label = rng.integers(0, 3, n)
    codes = np.column_stack([np.clip(2 * label + rng.integers(0, 3, n), 0, 4), rng.integers(0, 7, n),
                             (label + rng.integers(0, 2, n)) % 3, np.clip(rng.poisson(2 + 3 * label), 0, 15), label])
    cliques = [(j, 4) for j in range(4)] if star else [(j,) for j in range(5)]
    true, found = [], []
    for cl in cliques:
        t = np.bincount(flat_cells(codes, cl, sizes), minlength=int(np.prod(sizes[list(cl)]))).astype(float)
        true.append(t)
        found.append(mbi.LinearMeasurement(t + rng.normal(0, 10.0, t.shape), tuple(f"c{j}" for j in cl), 10.0))
    domain = mbi.Domain([f"c{j}" for j in range(5)], [int(s) for s in sizes])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = mbi.estimation.MirrorDescent().estimate(domain, found, known_total=float(n), iters=3000)
    theirs = dict(model_tables(est)[0])
    ours = dict(first_tables(found, sizes, cliques, float(n)))
    assert list(ours) == [m.clique for m in found]
    for m, t in zip(found, true, strict=True):
        table = ours[m.clique]
        assert table.min() >= 0 and table.sum() == pytest.approx(n)
        gap, noise = np.abs(table - theirs[m.clique]).sum(), np.abs(np.asarray(m.noisy_measurement) - t).sum()
        # one-way: the same fit; the star: Private-PGM shares the label's count by a joint fit (0.03-0.26 of the
        # noise apart here), the closed form by the mean
        assert gap < (1e-4 if not star else 0.3) * noise, m.clique
    if star:  # one count of the label shared by every pair
        margins = np.array([table.sum(axis=0) for table in ours.values()])
        assert np.allclose(margins, margins[0])
    err_ours = np.mean([np.abs(ours[m.clique].ravel() - t).sum() for m, t in zip(found, true, strict=True)])
    err_theirs = np.mean([np.abs(theirs[m.clique].ravel() - t).sum() for m, t in zip(found, true, strict=True)])
    assert err_ours <= 1.05 * err_theirs


@pytest.mark.parametrize("cliques", [
    [("c0",), ("c1",), ("c2",), ("c3",), ("c0", "c1"), ("c1", "c2"), ("c2", "c3")],  # a chain
    [("c0",), ("c3",), ("c0", "c1"), ("c1", "c2"), ("c0", "c2", "c3"), ("c1", "c3")],  # a cycle: fill-in
])
def test_the_fits_estimator_ends_at_private_pgms_potentials(cliques: list[tuple[str, ...]]) -> None:
    """The fit's estimator (the uniform start written down, the potentials returned as they are) iterates to
    Private-PGM's own mirror descent's potentials from the same noisy marginals."""
    import warnings

    from ppdm.mechanisms.dp_marginals import ESTIMATION_ITERS, lean_mirror_descent, load_mbi

    mbi = load_mbi()
    rng = np.random.default_rng(5)
    n, sizes = 600, [4, 3, 5, 2]
    data = np.column_stack([rng.integers(0, s, n) for s in sizes])
    data[:, 1] = (data[:, 0] + rng.integers(0, 2, n)) % 3
    data[:, 3] = (data[:, 2] > 2) ^ (rng.random(n) < 0.2)
    domain = mbi.Domain([f"c{j}" for j in range(4)], sizes)
    found = []
    for cl in cliques:
        cols = [int(c[1:]) for c in cl]
        shape = tuple(sizes[j] for j in cols)
        counts = np.bincount(np.ravel_multi_index(tuple(data[:, j] for j in cols), shape),
                             minlength=int(np.prod(shape))).astype(float)
        found.append(mbi.LinearMeasurement(counts + rng.normal(0, 4.0, counts.size), cl, 4.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = mbi.estimation.MirrorDescent().estimate(domain, found, known_total=float(n),
                                                         iters=ESTIMATION_ITERS).potentials
        ours = lean_mirror_descent()().estimate(domain, found, known_total=float(n), iters=ESTIMATION_ITERS)
    assert ours.cliques == theirs.cliques
    for cl in ours.cliques:
        np.testing.assert_allclose(np.asarray(ours[cl].values), np.asarray(theirs[cl].values), rtol=0, atol=1e-9)


@pytest.mark.parametrize(("given", "model_mb", "expected"), [
    (None, 0.3, ["--xla_backend_optimization_level=0", "--xla_cpu_use_fusion_emitters=false"]),
    (None, None, ["--xla_backend_optimization_level=0", "--xla_cpu_use_fusion_emitters=false"]),
    (None, 1.85, ["--xla_backend_optimization_level=3", "--xla_cpu_use_fusion_emitters=true"]),
    ("--xla_cpu_use_fusion_emitters=true", 0.3,
     ["--xla_cpu_use_fusion_emitters=true", "--xla_backend_optimization_level=0"]),
])
def test_xla_flags_follow_the_first_model_unless_the_environment_sets_them(
        given: str | None, model_mb: float | None, expected: list[str]) -> None:
    """XLA's flags reach a fresh process's JAX, which accepts them (XLA stops on an unknown flag): fast compiles
    for a small model or draws alone, XLA's optimisations from OPTIMISE_FROM_MB; a flag the user set is left as
    it is, and once JAX has started a later model changes nothing."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    if given is not None:
        env["XLA_FLAGS"] = given
    code = ("import os; from ppdm.mechanisms.dp_marginals import load_mbi, choose_xla; load_mbi(); "
            f"choose_xla({model_mb!r}); import jax.numpy as jnp; assert float(jnp.arange(4.0).sum()) == 6.0; "
            "first = os.environ['XLA_FLAGS']; choose_xla(50.0); assert os.environ['XLA_FLAGS'] == first; "
            "print(first)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-400:]
    assert out.stdout.split() == expected


def test_aims_picks_of_one_round_keep_the_model_within_the_cap_together() -> None:
    """Each pick of a round fits the cap with the picks before it, not only with the model the round started from:
    on a table whose many-class label joins every pick, Private-PGM's own size of the fitted model stays within
    the cap (twelve picks checked against the round's start alone built a model several times the cap)."""
    from mbi import Domain
    from mbi.junction_tree import hypothetical_model_size

    rng = np.random.default_rng(5)
    n, d, levels = 800, 10, 12
    X = rng.integers(0, levels, size=(n, d)).astype(float)
    y = ((X[:, 0] + X[:, 1] + X[:, 2]) % 20).astype(int).astype(str)
    cap = 0.2
    m = DPAIM(epsilon=8.0, kinds=["categorical"] * d, levels=[levels] * d, max_model_size=cap, random_state=0)
    m.fit(X, y)
    domain = Domain([f"c{j}" for j in range(len(m.model_domain_))], [int(s) for s in m.model_domain_])
    size = hypothetical_model_size(domain, [tuple(f"c{j}" for j in cl) for cl in m.model_cliques_])
    assert size <= cap, size
    assert len(m.model_cliques_) > d  # the round picked marginals beyond the label's pairs


@pytest.mark.parametrize(("d", "labelled", "triples"), [(5, True, True), (6, False, True), (4, True, False)])
def test_aims_candidate_weights_are_the_workload_overlap_by_definition(d: int, labelled: bool, triples: bool) -> None:
    # AIM's weight of a candidate: the workload's weights, each times the columns it shares with the candidate
    m = DPAIM(label_weight=3.0, label_triples=triples)
    label = d - 1 if labelled else None
    work = {p: (3.0 if label in p else 1.0) for p in itertools.combinations(range(d), 2)}
    if labelled and triples:
        work |= {(a, b, label): 3.0 for a, b in itertools.combinations(range(d - 1), 2)}
    expected = {}
    for p in work:
        for r in range(1, len(p) + 1):
            for c in itertools.combinations(p, r):
                expected[c] = sum(w * len(set(c) & set(q)) for q, w in work.items())
    got = m.workload_weights(d, labelled)
    assert got == expected
    assert list(got) == sorted(expected, key=lambda c: (len(c), c))


def test_model_size_matches_private_pgms_on_wider_sparse_models() -> None:
    """Wider models, as AIM's rounds build them (a star through the label, a few pairs and triples on top, with
    fill-in): ppdm's size equals Private-PGM's own."""
    from mbi import Domain
    from mbi.junction_tree import hypothetical_model_size

    from ppdm.mechanisms.dp_model_size import model_size_mb

    rng = np.random.default_rng(11)
    for _ in range(25):
        d = int(rng.integers(10, 26))
        sizes = rng.integers(2, 6, d)
        cliques = [(j, d - 1) for j in range(d - 1)] if rng.random() < 0.5 else []
        cliques += [tuple(sorted(rng.choice(d, int(rng.integers(2, 4)), replace=False).tolist()))
                    for _ in range(int(rng.integers(1, d)))]
        domain = Domain([f"c{j}" for j in range(d)], [int(s) for s in sizes])
        theirs = hypothetical_model_size(domain, [tuple(f"c{j}" for j in cl) for cl in cliques])
        assert model_size_mb(sizes, cliques) == pytest.approx(theirs, rel=1e-12), (sizes, cliques)


def test_aims_model_errors_are_each_tables_own() -> None:
    """The selection's L1 errors are computed once per table and never carried over to another table."""
    from ppdm.mechanisms.dp_select import _ModelErrors

    sizes = np.array([3, 4, 2])
    cliques = [(0,), (0, 1), (1, 2), (0, 1, 2)]
    model = {c: np.full(int(np.prod(sizes[list(c)])), 2.0) for c in cliques}
    errors = _ModelErrors(lambda t: t.astype(np.int64), model, sizes)
    rng = np.random.default_rng(0)
    for _ in range(3):
        t = np.column_stack([rng.integers(0, s, 40) for s in sizes]).astype(float)
        for ask in (cliques[:2], cliques, cliques[::-1]):
            got = errors(t, ask)
            want = [float(np.abs(np.bincount(np.ravel_multi_index(tuple(t[:, j].astype(int) for j in c),
                                                                  tuple(sizes[list(c)])),
                                             minlength=int(np.prod(sizes[list(c)]))) - 2.0).sum()) for c in ask]
            assert got == want
