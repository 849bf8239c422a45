from __future__ import annotations

import json

import pytest

from ppdm.experiments import REPRODUCTIONS
from ppdm.experiments.base import Reproduction, ReproductionReport
from ppdm.experiments.manifest import MANIFEST, CoverageEntry, coverage_counts, coverage_problems


def test_manifest_is_consistent_with_the_registry() -> None:
    assert coverage_problems() == []


def test_every_registered_reproduction_is_listed() -> None:
    listed = {r for e in MANIFEST for r in e.reproductions}
    assert set(REPRODUCTIONS) <= listed


def test_problems_are_found() -> None:
    bad = (
        CoverageEntry("wang2008", "Table 9.9", "nothing", "open"),
        CoverageEntry("wang2008", "Table 9.8", "unknown id", "reproduced", ("no-such-reproduction",)),
        CoverageEntry("nobody", "Fig. 1", "unknown document", "not-a-result", reason="illustration"),
    )
    problems = coverage_problems(bad, registered={"wang2008-table-2-1"})
    text = "\n".join(problems)
    assert "Table 9.9: neither a reproduction nor a reason" in text
    assert "'no-such-reproduction' is not registered" in text
    assert "unknown document" in text
    assert "'wang2008-table-2-1' is missing from the manifest" in text


def test_documents_all_present() -> None:
    counts = coverage_counts()
    for doc in ("wang2008", "alotaibi2015", "xu2006", "wang2008grc", "wang2007icdmw"):
        assert sum(counts[doc].values()) > 0
    # the dissertation alone prints 21 result tables (2.1-6.3 less the algorithm tables) plus figures
    assert sum(counts["wang2008"].values()) >= 70


def test_cli_coverage_json(cli) -> None:
    code, out, _ = cli("reproduce", "--coverage", "--json")
    assert code == 0
    d = json.loads(out)
    assert len(d["entries"]) == len(MANIFEST)
    assert all(e["reproductions"] or e["reason"] for e in d["entries"])
    code, out, _ = cli("reproduce", "--coverage")
    assert code == 0 and "Table 3.7" in out


def _failing() -> ReproductionReport:
    rep = ReproductionReport("test-failing", "a reproduction that does not hold")
    rep.add("row", "col", 1.0, 2.0, 0.1)
    rep.add("row", "ok", 1.0, 1.0, 0.1)
    return rep


def _crashing() -> ReproductionReport:
    raise RuntimeError("boom")


def test_cli_all_summary(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    import ppdm.experiments.runner as runner

    monkeypatch.setitem(REPRODUCTIONS, "test-failing", Reproduction("test-failing", "fails", _failing))
    monkeypatch.setitem(REPRODUCTIONS, "test-crashing", Reproduction("test-crashing", "crashes", _crashing,
                                                                     slow=True))
    monkeypatch.setattr(runner, "select", lambda quick: [k for k in ("wang2008-table-2-1", "test-failing",
                                                                      "test-crashing")
                                                         if not (quick and REPRODUCTIONS[k].slow)])
    code, out, _ = cli("reproduce", "--all", "--json", "--jobs", "1")  # in-process: the patched registry
    assert code == 1
    rows = {r["id"]: r for r in json.loads(out)}
    assert rows["wang2008-table-2-1"]["passed"] and rows["wang2008-table-2-1"]["held"] == 11
    assert rows["test-failing"]["held"] == 1 and rows["test-failing"]["checked"] == 2
    assert rows["test-failing"]["failed_cells"] == ["row / col: 1 vs 2"]
    assert "boom" in rows["test-crashing"]["error"]
    code, out, _ = cli("reproduce", "--all", "--quick", "-j", "1")
    assert code == 1 and "test-crashing" not in out and "row / col" in out and "1/2" in out


def test_quick_needs_all(cli) -> None:
    code, _, err = cli("reproduce", "--quick")
    assert code != 0


def test_document_pages_show_the_manifest() -> None:
    """Each document's page holds the coverage block rendered from the manifest (scripts/coverage_pages.py)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "coverage_pages", Path(__file__).parents[2] / "scripts" / "coverage_pages.py")
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    from ppdm.experiments.runner import coverage_markdown

    for doc, name in mod.PAGES.items():
        block = coverage_markdown(doc)
        assert block in (mod.DOCS / name).read_text(encoding="utf-8"), f"{name}: run scripts/coverage_pages.py"
        assert block.count("\n| ") == sum(e.document == doc for e in MANIFEST) + 1  # header + one row each
    # rewriting replaces the block and keeps the prose around it
    text = "# T\n\nintro\n\nCoverage: old\n\n| a |\n|---|\n| x |\n\n## After\n"
    out = mod.rewrite(text, "Coverage: new\n\n| b |\n|---|\n| y |")
    assert out == "# T\n\nintro\n\nCoverage: new\n\n| b |\n|---|\n| y |\n\n## After\n"
