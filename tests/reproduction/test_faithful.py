"""The manifest tells the truth: every entry marked reproduced names reproductions that exit 0 and show every
published value they compare against (the quick ones run here; the slow ones in `ppdm reproduce --all`, whose
recorded run the documentation build checks, and so does the last test here)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from ppdm.experiments import REPRODUCTIONS
from ppdm.experiments.base import ReproductionReport
from ppdm.experiments.faithful import contradictions, reproduced_ids, uncomputed_cells
from ppdm.experiments.manifest import CoverageEntry
from tests.reproduction._runs import claimed_run

QUICK_CLAIMED = sorted(r for r in reproduced_ids() if not REPRODUCTIONS[r].slow)
ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize("rid", QUICK_CLAIMED)
def test_quick_reproduced_entries_exit_0_and_show_every_published_value(rid: str) -> None:
    s = claimed_run(rid)
    assert not s.error, s.error
    assert s.passed, f"{rid} fails {s.failed_cells[:5]} but the manifest says reproduced: {reproduced_ids()[rid]}"
    assert not s.uncomputed, f"{rid} leaves out {s.uncomputed[:5]}"


def test_every_reproduced_entry_names_a_registered_reproduction() -> None:
    claimed = reproduced_ids()
    assert claimed and set(claimed) <= set(REPRODUCTIONS)
    # the slow ones are left to the recorded run, checked below and by the documentation build
    assert {r for r in claimed if REPRODUCTIONS[r].slow} | set(QUICK_CLAIMED) == set(claimed)


def _hook():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("reproductions_hook", ROOT / "docs" / "hooks" / "reproductions.py")
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def test_the_recorded_run_does_not_contradict_the_manifest() -> None:
    """The last `ppdm reproduce --all` run (docs/reproductions/summary.json) holds every reproduced claim."""
    assert _hook().problems() == []


def test_the_hook_fails_on_a_contradiction(tmp_path: Path) -> None:
    hook = _hook()
    run = json.loads(hook.RUN.read_text(encoding="utf-8"))
    victim = next(iter(reproduced_ids()))
    for r in run["rows"]:
        if r["id"] == victim:
            r["passed"], r["failed_cells"] = False, ["row / col: 1 vs 2"]
    bad = tmp_path / "summary.json"
    bad.write_text(json.dumps(run), encoding="utf-8")
    found = hook.problems(bad, hook.PAGE)
    assert any(victim in f and "exits 1" in f for f in found)
    assert any("not the rendering" in f for f in found)  # the page shows the recorded run, not this one


def _row(rid: str, **kw: object) -> dict[str, object]:
    return {"id": rid, "passed": True, "error": "", "failed_cells": [], "uncomputed": [], **kw}


def test_contradictions_name_each_kind_of_false_claim() -> None:
    manifest = (CoverageEntry("wang2008", "Table 1", "t", "reproduced", ("a",)),
                CoverageEntry("wang2008", "Table 2", "t", "reproduced", ("b",)),
                CoverageEntry("wang2008", "Table 3", "t", "reproduced", ("c",)),
                CoverageEntry("wang2008", "Table 4", "t", "reproduced", ("d",)),
                CoverageEntry("wang2008", "Table 5", "t", "partial", ("e",), "why"))
    rows = [_row("a"), _row("b", passed=False, failed_cells=["r / c: 1 vs 2"]), _row("c", error="boom"),
            _row("e", passed=False)]
    found = contradictions(rows, manifest)
    assert len(found) == 3
    assert "b: exits 1 (r / c: 1 vs 2), but wang2008 Table 2 say reproduced" in found
    assert any(f.startswith("c: raised boom") for f in found)
    assert any(f.startswith("d: not in the run") for f in found)
    assert contradictions([_row("a", uncomputed=["x.csv r / c = 1"])], manifest[:1])[0].startswith(
        "a: 1 published values not computed")


def test_uncomputed_cells_finds_published_values_left_out() -> None:
    from ppdm.experiments.faithful import value_cells

    cells = value_cells("wang2008_table2_1.csv")  # RE, RP, RK, CP, CK of the rank-2 and rank-1 releases
    assert len(cells) == 10
    rep = ReproductionReport("t", "t")
    first = cells[0][2]
    rep.add("row", "col", 0.0, first, 1e-3)
    missing = uncomputed_cells(rep, ["wang2008_table2_1.csv"])
    assert len(missing) == sum(1 for _, _, v in cells if v != first)  # every other value is named
    rep.add("row", "other", 0.0, 7.0, None, "info", f"printed {cells[1][2]:g}, read as 7")  # a corrected print
    assert len(uncomputed_cells(rep, ["wang2008_table2_1.csv"])) == len(missing) - sum(
        1 for _, _, v in cells if v == cells[1][2])
    assert uncomputed_cells(rep, ["alotaibi2015_text_values.csv"]) == []  # values quoted one by one


def test_a_finding_is_shown_not_checked() -> None:
    rep = ReproductionReport("t", "t")
    rep.findings[("row", "col")] = "a misprint"
    rep.add("row", "col", 1.0, 2.0, 0.1)
    rep.add("row", "other", 1.0, 2.0, 0.1)
    (finding, failing) = rep.cells
    assert finding.kind == "info" and finding.passed is None and "a misprint" in finding.note
    assert failing.passed is False and not rep.passed
