"""The staged sweep: the choice of the first pass plus the full battery for the candidates that can still be
chosen equals the choice of the full battery on every candidate; an epsilon ladder's ends settle its middle."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ppdm.release import release
from ppdm.release.config import Policy, ReleaseConfig
from ppdm.release.halving import first_passes
from ppdm.release.ladder import epsilon_ladders, ladder_rungs
from ppdm.release.select import meets_policy, policy_load

GRID: list[dict[str, Any]] = [
    {"method": "mdav", "grid": {"k": [20, 50]}},
    {"method": "noise", "grid": {"scale": [2.0, 3.0]}},
    {"method": "copula"},
]


def _choices(df: Any, label: str, tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    # (re-identification up to 20 %: several candidates of each table hold the policy, so the stages choose)
    cfg = ReleaseConfig.model_validate({"methods": GRID, "n_jobs": 1, "policy": {"max_reidentification": 0.2}})
    records = {}
    # the full battery on every candidate first; the staged run then reads the same measurements back from the
    # cache (a stage's result is cached per candidate and stage), so only the staging differs between the two
    for full in (True, False):
        res = release(df, output_dir=tmp_path / f"full-{full}", config=cfg, label=label,
                      cache_dir=tmp_path / "cache", progress=False, full_battery=full)
        records[full] = res.record
    return records[False], records[True]


@pytest.mark.parametrize("name", ["wdbc", "adult"])
def test_the_staged_choice_is_the_full_batterys(name: str, tmp_path: Path) -> None:
    from ppdm import datasets

    df = datasets.load(name)
    label = "class" if "class" in df.columns else df.columns[-1]
    if len(df) > 1000:  # the bundled census sample: a seeded part of it keeps the test to seconds
        df = df.sample(1000, random_state=3).reset_index(drop=True)
    staged, full = _choices(df, label, tmp_path)
    assert staged["chosen"]["candidate"] == full["chosen"]["candidate"]
    # the one-standard-error rule, read off the record: no candidate that holds the policy and is as useful as
    # the most useful (its paired difference within one standard error) is further inside the policy
    policy = Policy(objective=staged["policy"]["objective"], max_reidentification=0.2)
    chosen = next(c for c in staged["candidates"] if c["chosen"])
    alike = [c for c in staged["candidates"] if "utility_vs_best" in c and meets_policy(c, policy)
             and c["utility_vs_best"]["difference"] + c["utility_vs_best"]["se"] >= 0]
    assert chosen in alike and min(policy_load(c, policy) for c in alike) == policy_load(chosen, policy)
    assert not any("hits" in k for c in staged["candidates"] for k in c)
    stages = {c["stage"] for c in staged["candidates"]}
    # the staged run measured some candidates by their first pass only, and says why each stopped there
    assert "first pass" in stages and all(c["verdict"] for c in staged["candidates"])
    assert {c["stage"] for c in full["candidates"] if "violates" not in c["verdict"]} == {"full battery"}
    # the original's utility was measured by the sweep's worker, the same for both runs
    assert "original utility (on a worker)" in staged["timings"]
    assert staged["original_utility"] == full["original_utility"] and staged["original_utility"]["majority_pct"] > 0


def _first(eps: float, holds: bool) -> dict[str, Any]:
    """A first pass as the sweep records it: re-identified (breaks the policy) or not."""
    risk = {"reidentification": 0.01 if holds else 0.5, "reidentification_excess": 0.0 if holds else 0.49,
            "within_5pct": 0.0}
    return {"method": "dp-aim", "params": {"epsilon": eps, "delta": 1e-9}, "risk": risk, "utility": {"x": 1.0}}


def _near(eps: float) -> dict[str, Any]:
    """A first pass that breaks the policy only just: re-identified 2 points beyond the 5 % limit."""
    risk = {"reidentification": 0.08, "reidentification_excess": 0.07, "within_5pct": 0.0}
    return {"method": "dp-aim", "params": {"epsilon": eps, "delta": 1e-9}, "risk": risk, "utility": {"x": 1.0}}


def test_a_top_near_the_policy_is_followed_by_the_rung_below_it() -> None:
    jobs = [("a", "dp-aim", {"epsilon": e, "delta": 1e-9}) for e in (4.0, 2.0, 1.0, 0.5)]
    ladder, policy = [0, 1, 2, 3], Policy()
    first: list[dict[str, Any]] = [{} for _ in jobs]
    first[0] = _near(4.0)
    assert ladder_rungs(ladder, first, policy) == [1]  # not the bottom
    first[1] = _near(2.0)
    assert ladder_rungs(ladder, first, policy) == [2]
    first[2] = _first(1.0, True)
    assert ladder_rungs(ladder, first, policy) == []  # epsilon 1 holds: epsilon 0.5 is no more useful
    first[2] = _first(1.0, False)
    assert ladder_rungs(ladder, first, policy) == [3]  # the bottom last
    first[3] = _first(0.5, False)
    assert ladder_rungs(ladder, first, policy) == []
    first = [{} for _ in jobs]
    first[0] = _first(4.0, False)  # far beyond the limit (re-identified 50 %)
    assert ladder_rungs(ladder, first, policy) == [3]


def test_an_epsilon_ladder_is_climbed_down_from_its_top() -> None:
    jobs = [("a", "dp-aim", {"epsilon": e, "delta": 1e-9}) for e in (1.0, 4.0, 0.5, 2.0)]
    jobs += [("b", "mdav", {"k": 20}), ("c", "noise", {"epsilon": 1.0})]  # not formal synthesisers: no ladder
    ladders = epsilon_ladders(jobs)
    assert ladders == [[1, 3, 0, 2]]  # largest epsilon first
    policy = Policy()
    ladder = ladders[0]

    def rungs(top: bool | None, bottom: bool | None = None) -> list[int]:
        first: list[dict[str, Any]] = [{} for _ in jobs]
        if top is not None:
            first[ladder[0]] = _first(4.0, top)
        if bottom is not None:
            first[ladder[-1]] = _first(0.5, bottom)
        return ladder_rungs(ladder, first, policy)

    assert rungs(top=None) == [1]  # nothing measured: the top first
    assert rungs(top=True) == []  # epsilon 4 holds: smaller ones are no more useful, the bottom is not measured
    assert rungs(top=False) == [2]  # epsilon 4 breaks it: the bottom next
    assert rungs(top=False, bottom=False) == []  # epsilon 0.5 breaks it too: larger ones break it too
    # in between, a middle rung may be the most useful that holds: the largest first, one at a time
    assert rungs(top=False, bottom=True) == [3]
    first = [{} for _ in jobs]
    first[ladder[0]], first[ladder[-1]] = _first(4.0, False), _first(0.5, True)
    first[3] = _first(2.0, True)
    assert ladder_rungs(ladder, first, policy) == []  # epsilon 2 holds: epsilon 1 is no more useful
    first[3] = _first(2.0, False)
    assert ladder_rungs(ladder, first, policy) == [0]  # epsilon 2 breaks it: epsilon 1 next
    first[0] = _first(1.0, False)
    assert ladder_rungs(ladder, first, policy) == []  # every rung measured
    first = [{} for _ in jobs]
    first[ladder[0]] = {"method": "dp-aim", "params": {"epsilon": 4.0}, "failed": "out of memory"}
    assert ladder_rungs(ladder, first, policy) == [2]  # a rung that failed settles nothing
    first[ladder[-1]] = _first(0.5, False)
    assert ladder_rungs(ladder, first, policy) == [3]


class _Measured:
    """A sweep cache that holds every first pass already (what each rung measured), and counts the asks."""

    def __init__(self, jobs: list[tuple[str, str, dict[str, Any]]], holds: dict[float, bool | str]) -> None:
        import hashlib

        self.hits = {hashlib.sha256(f"first:{key}".encode()).hexdigest():
                     _near(p["epsilon"]) if holds[p["epsilon"]] == "near" else _first(p["epsilon"], holds[p["epsilon"]])
                     for key, _, p in jobs}
        self.asked: list[float] = []

    def get(self, key: str) -> dict[str, Any] | None:
        self.asked.append(self.hits[key]["params"]["epsilon"])
        return self.hits[key]

    def put(self, key: str, value: dict[str, Any]) -> None:
        raise AssertionError("every result was in the cache")


@pytest.mark.parametrize(("holds", "measured", "why"), [
    ({4.0: False, 2.0: True, 1.0: True, 0.5: True}, [4.0, 0.5, 2.0], {1.0: "epsilon 2 of the same mechanism holds"}),
    ({4.0: False, 2.0: False, 1.0: True, 0.5: True}, [4.0, 0.5, 2.0, 1.0], {}),
    ({4.0: False, 2.0: False, 1.0: False, 0.5: False}, [4.0, 0.5],
     {2.0: "epsilon 0.5 of the same mechanism breaks", 1.0: "epsilon 0.5 of the same mechanism breaks"}),
    ({4.0: True, 2.0: True, 1.0: True, 0.5: True}, [4.0],
     dict.fromkeys((2.0, 1.0, 0.5), "epsilon 4 of the same mechanism holds")),
    # the top near the policy: climbed down one rung at a time
    ({4.0: "near", 2.0: "near", 1.0: True, 0.5: True}, [4.0, 2.0, 1.0], {0.5: "epsilon 1 of the same mechanism holds"}),
    ({4.0: "near", 2.0: False, 1.0: False, 0.5: False}, [4.0, 2.0, 1.0, 0.5], {}),
])
def test_a_ladder_measures_only_the_rungs_it_needs_and_says_why_of_the_others(
        holds: dict[float, bool | str], measured: list[float], why: dict[float, str]) -> None:
    from types import SimpleNamespace

    jobs = [(f"eps{e}", "dp-aim", {"epsilon": e, "delta": 1e-9}) for e in (4.0, 2.0, 1.0, 0.5)]
    cache = _Measured(jobs, holds)
    table = SimpleNamespace(policy=Policy(), objective="x", y=None, folds=None)
    out = first_passes(table, jobs, cache, workers=1, progress=False, title="ladder")  # type: ignore[arg-type]
    assert cache.asked == measured  # one rung at a time, in this order
    assert [c["params"]["epsilon"] for c in out if "not_measured" not in c] == sorted(measured, reverse=True)
    for c in out:
        if "not_measured" in c:
            assert c["not_measured"].startswith(why[c["params"]["epsilon"]]), c
    assert {c["params"]["epsilon"] for c in out if "not_measured" in c} == set(why)


def test_a_ladder_needs_two_rungs_of_one_mechanism() -> None:
    jobs = [("a", "dp-aim", {"epsilon": 1.0, "delta": 1e-9}), ("b", "dp-copula", {"epsilon": 4.0, "delta": 1e-9}),
            ("c", "dp-aim", {"epsilon": 2.0, "delta": 1e-6})]
    assert epsilon_ladders(jobs) == []  # two deltas, two mechanisms: no two rungs of one recipe
    jobs.append(("d", "dp-copula", {"epsilon": 1.0, "delta": 1e-9}))
    assert epsilon_ladders(jobs) == [[1, 3]]  # dp-copula at 4 and 1: a ladder of two, the larger first
    policy = Policy()
    first: list[dict[str, Any]] = [{} for _ in jobs]
    assert ladder_rungs([1, 3], first, policy) == [1]
    first[1] = _first(4.0, True)
    assert ladder_rungs([1, 3], first, policy) == []  # epsilon 4 holds: epsilon 1 is not fitted
    first[1] = _first(4.0, False)
    assert ladder_rungs([1, 3], first, policy) == [3]
    first[3] = _first(1.0, True)
    assert ladder_rungs([1, 3], first, policy) == []


def test_a_rung_below_one_that_could_not_be_chosen_is_left_out() -> None:
    """Once a candidate holding the policy is measured fully, a rung of an epsilon ladder is not fitted when a
    larger epsilon of its ladder could not beat it (the rule that stops a candidate after its first pass): a
    smaller epsilon is no more useful in expectation. Before a full battery ends, the rung runs as before."""
    from types import SimpleNamespace

    from ppdm.release.halving import StagedRun

    jobs = [(f"eps{e}", "dp-aim", {"epsilon": e, "delta": 1e-9}) for e in (4.0, 2.0, 1.0, 0.5)]
    jobs.append(("m", "mdav", {"k": 20}))
    table = SimpleNamespace(policy=Policy(), objective="x", y=None, folds=None)
    bar = SimpleNamespace(advance=lambda n: None, expect=lambda n: None, expect_first=lambda n: None)
    run = StagedRun(table, jobs, SimpleNamespace(get=lambda k: None, put=lambda k, v: None),  # type: ignore[arg-type]
                    bar, epsilon_ladders(jobs), False)
    top, bottom = _first(4.0, False) | {"utility": {"x": 50.0}}, _first(0.5, True) | {"utility": {"x": 40.0}}
    run.first[0], run.first[3] = top, bottom
    run.waiting.clear()
    run.opened.append(1)  # epsilon 2, opened by the ends
    assert run.pick()[0] == ("first", 1)  # type: ignore[index]  # no candidate measured fully yet: it runs
    run.opened.append(2)
    run.results[4] = {"method": "mdav", "params": {"k": 20}, "utility": {"x": 80.0}, "first_utility": {"x": 80.0},
                      "risk": _first(1.0, True)["risk"]}
    run.best = 4
    task = run.pick()  # epsilon 1 left out: epsilon 4 (50) could not beat mdav (80); a full battery is next
    assert task is not None and task[0] == ("full", 3) and not run.opened
    assert run.outclassed[2].startswith("epsilon 4 of the same mechanism could not be chosen")
    run.first[0] = top | {"utility": {"x": 79.0}}  # within the margin of the best: epsilon 1 could still win
    run.outclassed.clear()
    run.opened.append(2)
    assert run.pick()[0] == ("first", 2)  # type: ignore[index]


def _run_with_a_ladder(top_utility: float) -> tuple[Any, list[tuple[str, str, dict[str, Any]]]]:
    from types import SimpleNamespace

    from ppdm.release.halving import StagedRun

    jobs = [(f"eps{e}", "dp-aim", {"epsilon": e, "delta": 1e-9}) for e in (4.0, 2.0, 1.0, 0.5)]
    jobs += [("m", "mdav", {"k": 20}), ("n", "noise", {"scale": 3.0})]
    table = SimpleNamespace(policy=Policy(), objective="x", y=None, folds=None)
    bar = SimpleNamespace(advance=lambda n: None, expect=lambda n: None, expect_first=lambda n: None)
    run = StagedRun(table, jobs, SimpleNamespace(get=lambda k: None, put=lambda k, v: None),  # type: ignore[arg-type]
                    bar, epsilon_ladders(jobs), False)
    # the ladder's top first, then the candidates that publish group centroids, then the rest
    assert [run.pick()[0] for _ in range(2)] == [("first", 0), ("first", 4)]  # type: ignore[index]
    mdav = {"method": "mdav", "params": {"k": 20}, "risk": _first(1.0, True)["risk"], "utility": {"x": 80.0}}
    run.done(("first", 4), (4, mdav))
    assert run.pick()[0] == ("first", 5)  # type: ignore[index]
    run.done(("first", 0), (0, _first(4.0, False) | {"utility": {"x": top_utility}}))  # the top breaks the policy
    if run.deferred:  # outclassed by mdav's first pass: the smallest epsilon waits
        assert run.deferred == [3] and run.pick() is None
    run.done(("first", 5), (5, {**mdav, "method": "noise", "params": {"scale": 3.0}, "utility": {"x": 30.0}}))
    return run, jobs


def test_an_outclassed_rung_waits_for_the_best_measured_fully() -> None:
    """The top of a ladder breaks the policy and could not beat a candidate that holds it after its first pass:
    the smallest epsilon waits while the full batteries run, and the best measured fully leaves it out."""
    run, _ = _run_with_a_ladder(50.0)
    assert [run.pick()[0] for _ in range(2)] == [("full", 4), ("full", 5)]  # type: ignore[index]
    assert run.deferred == [3]
    mdav_full = {"method": "mdav", "params": {"k": 20}, "risk": _first(1.0, True)["risk"], "utility": {"x": 80.0},
                 "first_utility": {"x": 80.0}}
    run.done(("full", 4), (4, mdav_full))
    assert run.pick() is None  # epsilon 0.5 left out; the noise's full battery still runs
    assert run.outclassed[3].startswith("epsilon 4 of the same mechanism could not be chosen")


def test_a_rung_not_outclassed_runs_next() -> None:
    run, _ = _run_with_a_ladder(79.0)  # within the margin of the best first pass: epsilon 0.5 could still win
    assert not run.deferred
    assert run.pick()[0] == ("first", 3)  # type: ignore[index]  # ahead of the full batteries


def test_a_rung_kept_back_runs_when_the_best_breaks_the_policy() -> None:
    """When the candidate that outclassed the rung breaks the policy in its full battery, nothing decides: the rung
    kept back is fitted once nothing else is left."""
    run, _ = _run_with_a_ladder(50.0)
    assert [run.pick()[0] for _ in range(2)] == [("full", 4), ("full", 5)]  # type: ignore[index]
    broke = {"method": "mdav", "params": {"k": 20}, "risk": _first(1.0, False)["risk"], "utility": {"x": 80.0}}
    run.done(("full", 4), (4, broke))
    assert run.pick() is None  # the noise's full battery runs: the rung still waits
    run.done(("full", 5), (5, {**broke, "method": "noise", "params": {"scale": 3.0}, "utility": {"x": 30.0}}))
    assert run.best is None and run.pick()[0] == ("first", 3)  # type: ignore[index]


def test_a_worker_with_nothing_else_fits_the_next_middle_rung() -> None:
    """Between a top that breaks the policy and a bottom that holds it, the middle rungs are needed one after
    another; a worker that would idle fits the next one beside the one being fitted."""
    from types import SimpleNamespace

    from ppdm.release.halving import StagedRun

    jobs = [(f"eps{e}", "dp-aim", {"epsilon": e, "delta": 1e-9}) for e in (4.0, 2.0, 1.0, 0.5)]
    table = SimpleNamespace(policy=Policy(), objective="x", y=None, folds=None)
    bar = SimpleNamespace(advance=lambda n: None, expect=lambda n: None, expect_first=lambda n: None)
    run = StagedRun(table, jobs, SimpleNamespace(get=lambda k: None, put=lambda k, v: None),  # type: ignore[arg-type]
                    bar, epsilon_ladders(jobs), False)
    assert run.pick()[0] == ("first", 0) and run.pick() is None  # type: ignore[index]  # nothing to spare yet
    run.done(("first", 0), (0, _first(4.0, False)))
    assert run.pick()[0] == ("first", 3)  # type: ignore[index]  # the bottom, the ladder's order
    assert run.pick() is None  # the bottom decides whether any middle rung is needed
    run.done(("first", 3), (3, _first(0.5, True)))
    # two workers: epsilon 2 and the bottom's full battery (other work goes before a spare rung)
    assert [run.pick()[0] for _ in range(2)] == [("first", 1), ("full", 3)]  # type: ignore[index]
    run.done(("full", 3), (3, _first(0.5, True) | {"stage": "full battery"}))
    assert run.pick()[0] == ("first", 2)  # type: ignore[index]  # a worker free: epsilon 1 beside epsilon 2
    assert run.pick() is None
    run.done(("first", 1), (1, _first(2.0, True)))  # epsilon 2 holds: epsilon 1 was not needed after all
    run.done(("first", 2), (2, _first(1.0, True)))
    assert all(run.pick()[0][0] == "full" for _ in range(2))  # type: ignore[index]  # no rung left to fit


def test_no_middle_rung_is_spared_once_a_larger_one_holds() -> None:
    from types import SimpleNamespace

    from ppdm.release.halving import StagedRun

    jobs = [(f"eps{e}", "dp-aim", {"epsilon": e, "delta": 1e-9}) for e in (8.0, 4.0, 2.0, 1.0, 0.5)]
    table = SimpleNamespace(policy=Policy(), objective="x", y=None, folds=None)
    bar = SimpleNamespace(advance=lambda n: None, expect=lambda n: None, expect_first=lambda n: None)
    run = StagedRun(table, jobs, SimpleNamespace(get=lambda k: None, put=lambda k, v: None),  # type: ignore[arg-type]
                    bar, epsilon_ladders(jobs), False)
    run.pick()
    run.done(("first", 0), (0, _first(8.0, False)))
    run.pick()
    run.done(("first", 4), (4, _first(0.5, True)))
    assert [run.pick()[0] for _ in range(2)] == [("first", 1), ("full", 4)]  # type: ignore[index]
    run.done(("full", 4), (4, _first(0.5, True) | {"stage": "full battery"}))
    assert run.pick()[0] == ("first", 2)  # type: ignore[index]
    run.done(("first", 1), (1, _first(4.0, True)))  # epsilon 4 holds: 2 (running) and 1 are settled
    assert run.pick()[0] == ("full", 1)  # type: ignore[index]  # epsilon 4's full battery, no rung
    assert run.pick() is None


def test_a_worker_with_nothing_else_measures_the_original_once() -> None:
    from types import SimpleNamespace

    from ppdm.release.halving import YARDSTICK, StagedRun

    jobs = [("m", "mdav", {"k": 20}), ("n", "noise", {"scale": 3.0})]
    table = SimpleNamespace(policy=Policy(), objective="x", y=None, folds=None)
    bar = SimpleNamespace(advance=lambda n: None, expect=lambda n: None, expect_first=lambda n: None)
    yardstick: dict[str, Any] = {}
    run = StagedRun(table, jobs, SimpleNamespace(get=lambda k: None, put=lambda k, v: None),  # type: ignore[arg-type]
                    bar, [], False, yardstick)
    assert [run.pick()[0] for _ in range(2)] == [("first", 0), ("first", 1)]  # type: ignore[index]
    task = run.pick()  # the candidates' work waits on their first passes: a third worker measures the original
    assert task is not None and task[0] == YARDSTICK and run.pick() is None  # once
    run.done(YARDSTICK, {"utility": {"x": 90.0}, "seconds": 0.5})  # type: ignore[arg-type]
    assert yardstick == {"utility": {"x": 90.0}, "seconds": 0.5} and run.running == 2


def test_a_release_that_breaks_the_singling_out_limit_is_not_looked_up_for_linkability() -> None:
    """The first pass's linkability is skipped only when the singling out (the same figures either way)
    already breaks the policy's limit."""
    from ppdm.attacks import encode_tables
    from ppdm.release.criteria import anonymisation_of

    rng = np.random.default_rng(3)
    members = rng.normal(size=(300, 4)).round(3)
    control = rng.normal(size=(300, 4)).round(3)
    cats = [rng.choice(["a", "b", "c"], size=(300, 1)).astype(object) for _ in range(2)]
    # the release copies its members: every predicate built from it singles them out
    views = encode_tables([members, members, control], [cats[0], cats[0], cats[1]], ["w", "x", "y", "z"], ["k"])
    full = anonymisation_of(views, seed=0, label=None, control="audited")
    assert full["singling_out"]["risk"] > 0.05 and "linkability" in full
    strict = anonymisation_of(views, seed=0, label=None, control="audited", singling_out_limit=0.05)
    assert "linkability" not in strict
    assert strict["singling_out"]["risk"] == full["singling_out"]["risk"]
    loose = anonymisation_of(views, seed=0, label=None, control="audited", singling_out_limit=1.0)
    assert loose["linkability"]["risk"] == full["linkability"]["risk"]


def test_the_front_is_measured_fully_first_and_its_costliest_first() -> None:
    """The front's full batteries run whatever the others show: the costliest (by its first pass's seconds)
    first, so that the sweep does not end on one long battery; the rest follow, most useful first."""
    from types import SimpleNamespace

    from ppdm.release.halving import StagedRun

    def first(util: float, risk: float, seconds: float) -> dict[str, Any]:
        return {"method": "m", "params": {}, "utility": {"x": util}, "seconds": seconds,
                "risk": {"reidentification": risk, "reidentification_excess": 0.0, "within_5pct": 0.0}}

    jobs = [(str(i), "noise", {"scale": float(i)}) for i in range(4)]
    table = SimpleNamespace(policy=Policy(), objective="x", y=None, folds=None)
    bar = SimpleNamespace(advance=lambda n: None, expect=lambda n: None, expect_first=lambda n: None)
    run = StagedRun(table, jobs, SimpleNamespace(get=lambda k: None, put=lambda k, v: None),  # type: ignore[arg-type]
                    bar, [], False, {})
    # 0: the most useful (on the front); 1: a little less useful and riskier (not on the front);
    # 2: the least useful and the least risky, its first pass the slowest (on the front); 3: dominated by 0
    run.first = [first(90.0, 0.03, 0.2), first(89.0, 0.04, 0.3), first(60.0, 0.0, 1.0), first(80.0, 0.04, 2.0)]
    run._open_queue()
    assert run.front == {0, 2}
    assert run.queue == [2, 0, 1, 3]
