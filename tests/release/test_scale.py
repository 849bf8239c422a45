"""Large tables: attacks on sampled targets against the whole population, intervals, early stopping, two stages."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from ppdm.attacks import run_attacks_named
from ppdm.attacks._linkage import linkage_rates
from ppdm.release import release, scale
from ppdm.release.risk import binomial_interval, risk_of
from ppdm.release.scale import score_at_scale
from ppdm.release.select import choose
from ppdm.release.utility import holdout_split


def _table(n: int, m: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    centres = rng.normal(0, 2.0, (3, m))
    return centres[y] + rng.normal(size=(n, m)), y.astype(str)


@pytest.mark.parametrize(("hits", "n"), [(0, 2000), (7, 2000), (130, 2000), (2000, 2000), (3, 10)])
def test_the_interval_is_clopper_pearson(hits: int, n: int) -> None:
    ci = binomtest(hits, n).proportion_ci(confidence_level=0.95, method="exact")
    assert binomial_interval(hits, n) == pytest.approx([ci.low, ci.high], abs=1e-9)


def test_sampled_targets_are_searched_against_every_record() -> None:
    X, _ = _table(1500)
    Y = X + np.random.default_rng(1).normal(0, 0.3, X.shape)
    targets = np.sort(np.random.default_rng(2).choice(1500, 200, replace=False))
    det = linkage_rates(X, Y, targets=targets)
    # independent: each target's nearest original row among all 1,500, by a dense distance matrix
    d = ((Y[targets][:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    assert det["rates"]["raw"] == pytest.approx(float((d.argmin(axis=1) == targets).mean()))
    assert det["n_targets"] == 200 and det["n_attacker_records"] == 1500
    # a pool of only the targets would be easier to link: the sampled rate must not be that one
    d_small = ((Y[targets][:, None, :] - X[targets][None, :, :]) ** 2).sum(axis=2)
    assert float((d_small.argmin(axis=1) == np.arange(200)).mean()) > det["rates"]["raw"]


def test_every_attack_reports_its_targets_and_the_risk_its_interval() -> None:
    X, _ = _table(1200)
    Y = X + np.random.default_rng(3).normal(0, 0.5, X.shape)
    targets = np.sort(np.random.default_rng(4).choice(1200, 300, replace=False))
    res = [r.to_dict() for r in run_attacks_named(X, Y, "population", n_seeds=1, targets=targets)]
    link = next(r for r in res if r["attack"] == "linkage")
    assert link["details"]["n_targets"] == 300
    risk = risk_of(res, n_rows=1200)
    lo, hi = risk["reidentification_interval"]
    assert lo <= risk["reidentification"] <= hi
    assert risk["reidentification_excess_upper"] == pytest.approx(hi - 1 / 1200)
    # every row attacked: an exact rate, no interval
    full = [r.to_dict() for r in run_attacks_named(X, Y, "population", n_seeds=1)]
    assert "reidentification_interval" not in risk_of(full, n_rows=1200)


def test_the_policy_limits_the_upper_end_of_a_sampled_rate() -> None:
    from ppdm.release.config import Policy

    base = {"method": "noise", "params": {}, "value": {"re": 0.5}, "utility": {"tstr_knn_pct": 90.0}}
    sampled = base | {"risk": {"reidentification": 0.03, "reidentification_excess": 0.03,
                               "reidentification_excess_upper": 0.062, "within_5pct": 0.0}}
    exact = base | {"utility": {"tstr_knn_pct": 80.0},
                    "risk": {"reidentification": 0.03, "reidentification_excess": 0.03, "within_5pct": 0.0}}
    best, reasons = choose([sampled, exact], Policy(objective="tstr_knn_pct"))
    assert best == 1
    assert "upper 95 % end 6.2%" in reasons[0]


def test_confirmation_stops_early_when_the_first_batch_settles_the_verdict() -> None:
    X, y = _table(3000)
    ho = holdout_split(y, seed=0)
    kw: dict = {"preprocess": "zscore", "threat": "default", "seed": 0, "key_seed": 5, "holdout": ho,
                "max_reidentification": 0.05, "categories": y[:, None].astype(object), "targets": 1000,
                "first_batch": 250}
    weak = score_at_scale(X, y, "noise", {"scale": 0.05}, **kw)
    assert weak["measured_on"]["attack_targets"] == 250 and weak["measured_on"]["early_stop"]
    assert weak["risk"]["reidentification_interval"][0] > 0.05
    # independent re-measure on every released row: the same release, all 2,400 training rows attacked
    from ppdm import registry
    from ppdm.flow.arrays import perturb_array

    tr = ho[0]
    B, _ = perturb_array(X[tr], registry.build("noise", {"scale": 0.05}, random_state=5), preprocess="zscore")
    mu, sd = X[tr].mean(axis=0), X[tr].std(axis=0, ddof=1)
    Za, Zb = (X[tr] - mu) / sd, (B - mu) / sd
    nn = np.array([((Za - b) ** 2).sum(axis=1).argmin() for b in Zb])
    exhaustive = float((nn == np.arange(len(tr))).mean())
    lo, hi = weak["risk"]["reidentification_interval"]
    assert lo - 0.02 <= exhaustive <= max(hi, weak["risk"]["reidentification"]) + 0.02


def test_an_open_verdict_attacks_every_target() -> None:
    X, y = _table(3000)
    kw: dict = {"preprocess": "zscore", "threat": "population", "seed": 0, "key_seed": 5,
                "holdout": holdout_split(y, seed=0), "targets": 900, "first_batch": 100}
    first = score_at_scale(X, y, "noise", {"scale": 0.6}, max_reidentification=1.0, **kw)
    assert first["measured_on"]["attack_targets"] == 100  # nothing is above 100 %: settled at once
    rate = first["risk"]["reidentification"]
    assert 0.0 < rate < 1.0
    # a limit right at the first batch's estimate lies inside its interval: the verdict needs every target
    again = score_at_scale(X, y, "noise", {"scale": 0.6}, max_reidentification=rate, **kw)
    assert again["measured_on"]["attack_targets"] == 900 and not again["measured_on"]["early_stop"]
    lo, hi = again["risk"]["reidentification_interval"]
    assert hi - lo < first["risk"]["reidentification_interval"][1] - first["risk"]["reidentification_interval"][0]


def test_a_large_table_is_screened_then_confirmed(tmp_path, monkeypatch) -> None:
    X, y = _table(2400, m=4, seed=7)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(4)])
    df.insert(0, "rid", np.arange(1, 2401))
    df["label"] = y
    src = tmp_path / "big.csv"
    df.to_csv(src, index=False)
    monkeypatch.setattr(scale, "SCREEN_ABOVE", 1000)
    monkeypatch.setattr(scale, "SCREEN_ROWS", 600)
    monkeypatch.setattr(scale, "ATTACK_TARGETS", 800)
    monkeypatch.setattr(scale, "FIRST_BATCH", 200)
    from ppdm.release.config import load_config

    cfg = load_config(None, {"seed": 11, "n_jobs": 1, "methods": [
        {"method": "svd", "grid": {"rank": [2]}}, {"method": "noise", "grid": {"scale": [0.25, 1.0, 2.0]}},
        {"method": "mdav", "grid": {"k": [20]}}, {"method": "copula"}]})
    res = release(src, output_dir=tmp_path / "out", id="rid", label="label", config=cfg, use_cache=False,
                  progress=False)
    rec = json.loads((tmp_path / "out" / "release.json").read_text())
    stages = [c["measured_on"]["stage"] for c in rec["candidates"]]
    assert len(stages) == 6 and stages.count("screening") >= 2 and "confirmation" in stages
    svd = next(c for c in rec["candidates"] if c["method"] == "svd")
    assert svd["measured_on"]["stage"] == "screening" and "violates the policy there" in svd["verdict"]
    chosen = next(c for c in rec["candidates"] if c["chosen"])
    assert chosen["measured_on"]["stage"] == "confirmation"
    assert chosen["measured_on"]["released_rows_measured"] < 2400
    assert "screened on a seeded sample of 600 rows" in rec["utility_note"]
    assert res.record["chosen"]["method"] == chosen["method"]
    # the screening only ever rejects: every confirmed candidate met the policy on the sample
    assert all(not c["verdict"].startswith("screened") for c in rec["candidates"] if c["chosen"])


def test_the_first_pass_stops_at_linkage_for_a_candidate_that_breaks_the_policy() -> None:
    from ppdm.release.config import Policy
    from ppdm.release.first_pass import first_pass
    from ppdm.release.full_battery import full_battery
    from ppdm.release.trial import SweepTable

    X, y = _table(1500)
    table = SweepTable(X=X, y=y, codec=None, shown=y[:, None].astype(object), folds=[holdout_split(y, seed=0)],
                       columns=[f"x{j}" for j in range(X.shape[1])], preprocess="zscore", threat="default", seed=0,
                       key_seed=5, policy=Policy())
    weak = first_pass(table, "noise", {"scale": 0.05})
    assert [a["attack"] for a in weak["attacks"]] == ["linkage"]
    assert weak["utility"] == {} and weak["risk"]["reidentification_excess"] > 0.05
    # a candidate within the limit gets the first fold's measurements; its full battery keeps every one of them
    strong = first_pass(table, "noise", {"scale": 2.0})
    assert set(strong["utility"]) == {"tstr_knn_pct", "tstr_logreg_pct"}
    assert {"singling_out", "linkability"} <= set(strong["risk"])
    full = full_battery(table, "noise", {"scale": 2.0}, strong)
    assert full["utility"]["tstr_knn_pct"] == strong["utility"]["tstr_knn_pct"]
    assert {"knn_pct", "svm_pct", "kmeans_pct", "neighbour_pct"} <= set(full["utility"])
    assert full["risk"]["reidentification"] >= strong["risk"]["reidentification"]
    first_rates = strong["attacks"][0]["details"]["rates"]
    linkage = next(a for a in full["attacks"] if a["attack"] == "linkage")
    assert first_rates.items() <= linkage["details"]["rates"].items()  # the first pass's spaces merged in
    assert len(linkage["details"]["rates"]) > len(first_rates)
    assert "within_5pct_by_reconstruction" in full["risk"]  # the values read off the linked row: full battery
    assert full["risk"]["singling_out"] == strong["risk"]["singling_out"]  # the first pass's tests are kept


def test_a_confirmation_reports_its_steps_with_the_share_done_before_each() -> None:
    X, y = _table(3000)
    seen: list[tuple[str, float]] = []
    kw: dict = {"preprocess": "zscore", "threat": "population", "seed": 0, "key_seed": 5,
                "holdout": holdout_split(y, seed=0), "targets": 900, "first_batch": 100}
    # a limit right at the first batch's estimate leaves the verdict open: both attack steps run
    rate = score_at_scale(X, y, "noise", {"scale": 0.6}, max_reidentification=1.0, **kw)["risk"]["reidentification"]
    score_at_scale(X, y, "noise", {"scale": 0.6}, max_reidentification=rate, on_step=lambda w, d: seen.append((w, d)),
                   **kw)
    names = [w for w, _ in seen]
    assert names[0] == "release" and names[-1] == "done"
    assert "attacks on 100 targets" in names and "attacks on 900 targets" in names
    shares = [d for _, d in seen]
    assert shares[0] == 0.0 and shares[-1] == 1.0 and shares == sorted(shares)


def test_only_a_candidate_run_here_alone_gets_a_step_bar() -> None:
    from ppdm.release.sweep import Cache, _score_jobs

    got: list[bool] = []

    def fake(X, y, method, params, on_step=None, **kw):  # noqa: ANN001, ANN003, ANN202
        got.append(on_step is not None)
        if on_step is not None:
            on_step("release", 0.0)
            on_step("done", 1.0)
        return {"method": method, "params": params}

    jobs = [("a", "noise", {"scale": 0.1}), ("b", "noise", {"scale": 0.2})]
    X = np.zeros((4, 2))
    out = _score_jobs(X, None, jobs, Cache(None), True, "confirming", fake, {}, lambda todo: 1, steps=True)
    assert got == [True, True] and [r["params"]["scale"] for r in out] == [0.1, 0.2]
    got.clear()
    _score_jobs(X, None, jobs, Cache(None), False, "confirming", fake, {}, lambda todo: 1, steps=True)
    _score_jobs(X, None, jobs, Cache(None), True, "screening", fake, {}, lambda todo: 1, steps=False)
    assert got == [False] * 4


def test_training_rows_first_in_place_holds_the_training_rows_and_puts_the_table_back() -> None:
    from ppdm.release.scale import training_rows_first

    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    before = X.copy()
    test = np.sort(rng.choice(50, 9, replace=False))
    train = np.setdiff1d(np.arange(50), test)
    y = np.array([f"c{i % 4}" for i in range(50)])
    shown = np.array([[f"s{i}", i % 3] for i in range(50)], dtype=object)
    y0, shown0 = y.copy(), shown.copy()
    X_tr, order, restore, (y_tr, shown_tr) = training_rows_first(X, train, test, in_place=True, beside=[y, shown])
    assert np.shares_memory(X_tr, X) and len(X_tr) == len(train)  # a view, not a copy
    assert np.shares_memory(y_tr, y) and np.shares_memory(shown_tr, shown)  # and the label's rows with it
    assert sorted(order) == list(train) and order.dtype == train.dtype
    np.testing.assert_array_equal(X_tr, before[order])
    np.testing.assert_array_equal(y_tr, y0[order])
    np.testing.assert_array_equal(shown_tr, shown0[order])
    restore()
    np.testing.assert_array_equal(X, before)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(shown, shown0)
    # not in place (or a table nobody may write): a copy in the same order, the table untouched
    swapped_order = order.copy()
    X.flags.writeable = False
    for in_place in (True, False):
        X_tr, order, restore, (y_tr,) = training_rows_first(X, train, test, in_place=in_place, beside=[y])
        assert not np.shares_memory(X_tr, X) and not np.shares_memory(y_tr, y)
        np.testing.assert_array_equal(order, swapped_order)
        np.testing.assert_array_equal(X_tr, before[order])
        np.testing.assert_array_equal(y_tr, y0[order])
        restore()
    np.testing.assert_array_equal(X, before)
    np.testing.assert_array_equal(y, y0)


def test_a_sole_user_confirmation_measures_the_same_rows_and_leaves_the_table_as_it_was() -> None:
    X, y = _table(3000)
    before = X.copy()
    kw: dict = {"preprocess": "zscore", "threat": "population", "seed": 0, "key_seed": 5,
                "holdout": holdout_split(y, seed=0), "targets": 900, "first_batch": 900, "max_reidentification": 1.0}
    copied = score_at_scale(X, y, "noise", {"scale": 0.6}, **kw)
    swapped = score_at_scale(X, y, "noise", {"scale": 0.6}, sole_user=True, **kw)
    np.testing.assert_array_equal(X, before)
    assert swapped["measured_on"] == copied["measured_on"]
    # the copy holds the rows in the swapped order: the same draws land on the same rows, the same measures
    assert swapped["utility"] == copied["utility"] and swapped["value"] == copied["value"]
    assert swapped["risk"]["reidentification"] == copied["risk"]["reidentification"]


def test_confirmations_one_at_a_time_swap_in_place_and_leave_the_design_as_read(tmp_path, monkeypatch) -> None:
    import ppdm.release as rel

    X, y = _table(2400, m=4, seed=7)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(4)])
    df.insert(0, "rid", np.arange(1, 2401))
    df["label"] = y
    src = tmp_path / "big.parquet"  # binary floats: the design read is exactly these values
    df.to_parquet(src, index=False)
    for name, value in (("SCREEN_ABOVE", 1000), ("SCREEN_ROWS", 600), ("ATTACK_TARGETS", 800),
                        ("FIRST_BATCH", 200), ("ONE_FINALIST_ABOVE", 1000)):
        monkeypatch.setattr(scale, name, value)
    swaps, seen = [], {}
    real_swap, real_write = scale.training_rows_first, rel.write_outputs

    def spy_swap(X, train, test, *, in_place, beside=()):  # type: ignore[no-untyped-def]
        swaps.append(in_place and X.flags.writeable and all(a.flags.writeable for a in beside))
        return real_swap(X, train, test, in_place=in_place, beside=beside)

    def spy_write(df_, schema, design, *a, **k):  # type: ignore[no-untyped-def]
        seen["X"], seen["y"] = design[0].copy(), np.asarray(a[0]).copy()
        return real_write(df_, schema, design, *a, **k)

    monkeypatch.setattr(scale, "training_rows_first", spy_swap)
    monkeypatch.setattr(rel, "write_outputs", spy_write)
    from ppdm.release.config import load_config

    cfg = load_config(None, {"seed": 11, "n_jobs": 2, "methods": [
        {"method": "noise", "grid": {"scale": [1.0, 2.0]}}, {"method": "copula"}]})
    release(src, output_dir=tmp_path / "out", id="rid", label="label", config=cfg, use_cache=False, progress=False)
    assert swaps and all(swaps)  # every confirmation ran here, alone, and swapped in place
    # the final release is made from the design exactly as it was read: every swap was undone
    np.testing.assert_array_equal(seen["X"], X)
    np.testing.assert_array_equal(seen["y"], np.asarray(y).astype(str))  # the label's rows were put back too


def test_confirmation_goes_on_while_a_candidate_left_could_beat_the_best_confirmed(monkeypatch) -> None:
    """A screening estimate can be far off: the first candidate to hold the policy on every row is not chosen
    while the next one's estimate is higher than its confirmed value by more than the margin."""
    import ppdm.release.halving as halving
    import ppdm.release.sweep as sweep
    from ppdm.release import load_config
    from ppdm.release.sweep import Cache, screen_and_confirm

    X, y = _table(3000)
    monkeypatch.setattr(scale, "SCREEN_ABOVE", 1000)
    monkeypatch.setattr(scale, "ONE_FINALIST_ABOVE", 1000)  # one candidate a round
    screening = {"a": 70.0, "b": 66.0, "c": 61.0}  # the sample's estimates, best first
    confirmed = {"a": 60.0, "b": 65.0, "c": 64.0}  # on every row: 'a' was flattered by its sample
    jobs = [(k, "noise", {"scale": k}) for k in screening]

    def fake_sweep(table, salted, cache, workers=None, progress=False, title=""):  # type: ignore[no-untyped-def]
        return [{"method": m, "params": p, "utility": {"knn_pct": screening[p["scale"]]},
                 "risk": {"reidentification": 0.0, "within_5pct": 0.0}} for _, m, p in salted]

    asked = []

    def fake_confirm(X, y, todo, cfg, cache, progress, seed, context, fn, source=None, n_rows=None):  # type: ignore[no-untyped-def]
        asked.extend(p["scale"] for _, _, p in todo)
        return [{"method": m, "params": p, "utility": {"knn_pct": confirmed[p["scale"]]},
                 "risk": {"reidentification": 0.0, "within_5pct": 0.0}, "measured_on": {"stage": "confirmation"}}
                for _, m, p in todo]

    monkeypatch.setattr(halving, "first_passes", fake_sweep)
    monkeypatch.setattr(sweep, "_confirm", fake_confirm)
    cfg = load_config(None, {"policy": {"objective": "knn_pct"}})
    ctx = {"categories": np.zeros((len(X), 0), dtype=object), "columns": [f"x{j}" for j in range(X.shape[1])]}
    screen_and_confirm(X, y, jobs, cfg, Cache(None), False, 0, ctx)
    # 'a' holds the policy at 60; 'b' (66 > 60 + 2) is confirmed at 65; 'c' (61 <= 65 + 2) is not
    assert asked == ["a", "b"]
