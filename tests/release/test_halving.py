"""The staged sweep: the choice of the first pass plus the full battery for the candidates that can still be
chosen equals the choice of the full battery on every candidate; an epsilon ladder's ends settle its middle."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ppdm.release import release
from ppdm.release.config import Policy, ReleaseConfig
from ppdm.release.halving import epsilon_ladders, ladder_rungs

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
    stages = {c["stage"] for c in staged["candidates"]}
    # the staged run measured some candidates by their first pass only, and says why each stopped there
    assert "first pass" in stages and all(c["verdict"] for c in staged["candidates"])
    assert {c["stage"] for c in full["candidates"] if "violates" not in c["verdict"]} == {"full battery"}


def _first(eps: float, holds: bool) -> dict[str, Any]:
    """A first pass as the sweep records it: re-identified (breaks the policy) or not."""
    risk = {"reidentification": 0.01 if holds else 0.5, "reidentification_excess": 0.0 if holds else 0.49,
            "within_5pct": 0.0}
    return {"method": "dp-aim", "params": {"epsilon": eps, "delta": 1e-9}, "risk": risk, "utility": {"x": 1.0}}


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
    assert rungs(top=False, bottom=True) == [3, 0]  # in between, a middle rung may be the most useful that holds
    first = [{} for _ in jobs]
    first[ladder[0]] = {"method": "dp-aim", "params": {"epsilon": 4.0}, "failed": "out of memory"}
    assert ladder_rungs(ladder, first, policy) == [2]  # a rung that failed settles nothing
    first[ladder[-1]] = _first(0.5, False)
    assert ladder_rungs(ladder, first, policy) == [3, 0]


def test_a_ladder_needs_three_rungs_of_one_mechanism() -> None:
    jobs = [("a", "dp-aim", {"epsilon": 1.0, "delta": 1e-9}), ("b", "dp-aim", {"epsilon": 4.0, "delta": 1e-9}),
            ("c", "dp-aim", {"epsilon": 2.0, "delta": 1e-6})]
    assert epsilon_ladders(jobs) == []  # two deltas: two ladders of fewer than three rungs
