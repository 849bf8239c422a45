"""Singling out and linkability near their limits: measured on every fold's release, the mean decides."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from ppdm.release import criteria
from ppdm.release.config import Policy, ReleaseConfig
from ppdm.release.criteria import near_limit, pooled_reading
from ppdm.release.halving import open_on_every_fold


def _reading(risk: float, low: float, high: float) -> dict[str, Any]:
    return {"risk": max(risk, 0.0), "risk_raw": risk, "interval": [low, high]}


def test_a_reading_is_near_its_limit_when_the_limit_is_within_its_interval() -> None:
    assert near_limit(_reading(0.062, 0.02, 0.10), 0.05)
    assert near_limit(_reading(0.03, 0.0, 0.05), 0.05)  # the end counts
    assert not near_limit(_reading(0.12, 0.08, 0.16), 0.05)
    assert not near_limit(_reading(0.01, 0.0, 0.04), 0.05)
    assert not near_limit(None, 0.05) and not near_limit(_reading(0.05, 0.0, 0.1), None)


def test_the_pooled_reading_is_the_folds_mean_with_its_narrower_interval() -> None:
    # three folds, each with a half-width of 4 points around its excess (the first two floored at 0 below)
    folds = [_reading(0.06, 0.02, 0.10), _reading(0.04, 0.0, 0.08), _reading(-0.02, 0.0, 0.02)]
    pooled = pooled_reading(folds)
    assert pooled["risk_raw"] == pytest.approx(0.08 / 3)
    assert pooled["risk"] == pytest.approx(0.08 / 3)
    # each fold's error 0.04 / 1.96; the mean's half-width 1.96 * sqrt(3 * (0.04 / 1.96)^2) / 3 = 0.04 / sqrt(3)
    half = 0.04 / np.sqrt(3)
    assert pooled["interval"] == pytest.approx([0.08 / 3 - half, 0.08 / 3 + half])
    # a mean below zero is floored, as one fold's excess is
    low = pooled_reading([_reading(-0.02, 0.0, 0.02), _reading(-0.01, 0.0, 0.03)])
    assert low["risk"] == 0.0 and low["risk_raw"] == pytest.approx(-0.015) and low["interval"][0] == 0.0


def test_which_tests_are_measured_again() -> None:
    policy = Policy()  # 5 % for both
    near, far, low = _reading(0.062, 0.02, 0.10), _reading(0.2, 0.15, 0.25), _reading(0.0, 0.0, 0.01)
    assert criteria.tests_to_repeat({"singling_out": near, "linkability": low}, policy) == {"singling_out"}
    # the first fold left the linkability out because its singling out broke the limit: it is measured too
    assert criteria.tests_to_repeat({"singling_out": near}, policy) == {"singling_out", "linkability"}
    assert criteria.tests_to_repeat({"singling_out": low, "linkability": near}, policy) == {"linkability"}
    assert criteria.tests_to_repeat({"singling_out": far}, policy) == set()
    assert criteria.tests_to_repeat({"singling_out": low, "linkability": low}, policy) == set()


def _first_pass(method: str, singling_out: dict[str, Any], reid: float = 0.01) -> dict[str, Any]:
    tests = {"singling_out": singling_out, "linkability": _reading(0.0, 0.0, 0.01)}
    risk = {"reidentification": reid, "reidentification_excess": reid, "within_5pct": 0.0, **tests}
    return {"method": method, "params": {}, "risk": risk, "utility": {"x": 80.0}, "held_out": {"tests": tests}}


def test_only_a_candidate_that_breaks_a_test_within_its_interval_goes_on() -> None:
    table = SimpleNamespace(policy=Policy(), folds=[(None, None)] * 5)
    near, far = _reading(0.062, 0.02, 0.10), _reading(0.2, 0.15, 0.25)
    assert open_on_every_fold(_first_pass("mdav", near), table)  # type: ignore[arg-type]
    assert not open_on_every_fold(_first_pass("mdav", far), table)  # type: ignore[arg-type]
    # re-identified beyond the limit as well: that limit is read on every row already, and settles it
    assert not open_on_every_fold(_first_pass("mdav", near, reid=0.2), table)  # type: ignore[arg-type]
    # a synthesiser's every fold would be one more fit of its model: its first fold decides
    assert not open_on_every_fold(_first_pass("dp-aim", near), table)  # type: ignore[arg-type]
    one_fold = SimpleNamespace(policy=Policy(), folds=[(None, None)])
    assert not open_on_every_fold(_first_pass("mdav", near), one_fold)  # type: ignore[arg-type]


def test_a_sweep_reads_singling_out_near_its_limit_on_every_fold(tmp_path: Path) -> None:
    """On 700 German credit records, microaggregated candidates single out a few per cent of the people on the
    first fold: those the first fold cannot tell from the 5 % limit are measured on all five folds' releases,
    and the policy reads the mean (every fold's reading stays in the record)."""
    from ppdm import datasets
    from ppdm.release import release
    from ppdm.release.select import policy_violations

    df = datasets.load("german").sample(700, random_state=41).reset_index(drop=True)
    label = df.columns[-1]
    grid = [{"method": "mdav", "grid": {"k": [10, 20, 30, 50], "min_count": [30, 60], "min_support": [1, 5]}}]
    cfg = ReleaseConfig.model_validate({"methods": grid, "n_jobs": 2})  # 16 candidates: both cores
    res = release(df, output_dir=tmp_path / "out", config=cfg, label=label, cache_dir=tmp_path / "cache",
                  progress=False)
    policy = Policy()
    pooled = [c for c in res.record["candidates"] if "folds" in (c["risk"].get("singling_out") or {})]
    assert pooled, "no candidate was measured on every fold"
    for c in pooled:
        so = c["risk"]["singling_out"]
        first = so["folds"]["first_fold"]
        # the first fold could not tell it from the limit; all five folds were read, and the policy reads the mean
        assert first["interval"][0] <= policy.max_singling_out <= first["interval"][1]
        assert so["folds"]["n"] == 5 and len(so["folds"]["risks"]) == 5
        family = so["readings"][so["family"]]
        assert so["risk"] == family["risk"] == pytest.approx(max(family["risk_raw"], 0.0))
        broken = "singling out beyond the control" in "; ".join(policy_violations(c, policy))
        assert broken == (so["risk"] > policy.max_singling_out)
        # a mean that breaks the limit ends the candidate before the rest of the battery, and its verdict says so
        if broken:
            assert c["stage"] == "first pass" and "mean of every fold's release" in c["verdict"]
        elif not policy_violations(c, policy):
            assert c["stage"] == "full battery"


def test_the_summary_says_when_a_test_is_the_mean_of_the_folds() -> None:
    from ppdm.release.summary import _tests_line

    so = {"risk": 0.031, "family": "multivariate", "equal_size": {"risk": 0.0},
          "folds": {"n": 5, "risks": [0.062, 0.02, 0.03, 0.01, 0.03], "first_fold": {"risk": 0.062}}}
    line = _tests_line({"singling_out": so, "linkability": {"risk": 0.0}})
    assert line is not None and "singling out 3.1%" in line
    assert "the mean of 5 folds' releases, the first fold 6.2%" in line
    assert "folds" not in (_tests_line({"singling_out": {k: v for k, v in so.items() if k != "folds"}}) or "")


def test_candidates_near_a_limit_get_their_full_battery_after_those_that_hold() -> None:
    """The queue of full batteries: the front, then the others that hold the policy by first-pass utility, then
    those that broke a limit only within its interval on the first fold (most break it on the mean too), even
    the most useful of them."""
    from ppdm.release.halving import StagedRun

    def first(util: float, so: dict[str, Any]) -> dict[str, Any]:
        c = _first_pass("mdav", so)
        c["utility"] = {"x": util}
        c["risk"]["reidentification"] = c["risk"]["reidentification_excess"] = 0.01
        return c

    ok, near, far = _reading(0.01, 0.0, 0.03), _reading(0.062, 0.02, 0.10), _reading(0.2, 0.15, 0.25)
    jobs = [(str(i), "mdav", {"k": i}) for i in range(4)]
    table = SimpleNamespace(policy=Policy(), objective="x", y=None, folds=[(None, None)] * 5)
    bar = SimpleNamespace(advance=lambda n: None, expect=lambda n: None, expect_first=lambda n: None)
    run = StagedRun(table, jobs, SimpleNamespace(get=lambda k: None, put=lambda k, v: None),  # type: ignore[arg-type]
                    bar, [], False, {})
    run.first = [first(91.0, near), first(90.0, ok), first(85.0, ok), first(95.0, far)]
    run._open_queue()
    assert 3 not in run.queue  # far beyond the limit: settled by its first pass
    assert run.queue[-1] == 0 and set(run.queue[:-1]) == {1, 2}
