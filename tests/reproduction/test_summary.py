from __future__ import annotations

import json
from pathlib import Path

from ppdm.experiments.runner import summary_markdown

ROWS = [
    {"id": "a-held", "title": "", "held": 3, "checked": 3, "seconds": 1.5, "passed": True, "failed_cells": [],
     "error": "", "cpu_seconds": 66.0},
    {"id": "b-fails", "title": "", "held": 1, "checked": 5, "seconds": 60.0, "passed": False,
     "failed_cells": ["r1 / c|x: 1 vs 2", "r2 / c: 3 vs 4", "r3 / c: 5 vs 6", "r4 / c: 7 vs 8"], "error": ""},
    {"id": "c-crash", "title": "", "held": 0, "checked": 0, "seconds": 0.5, "passed": False, "failed_cells": [],
     "error": "RuntimeError: boom"},
    {"id": "d-info", "title": "", "held": 0, "checked": 0, "seconds": 2.0, "passed": True, "failed_cells": [],
     "error": ""},
]


def test_summary_markdown_rows_and_totals() -> None:
    md = summary_markdown(ROWS, context="Run on a test machine.")
    lines = md.splitlines()
    assert lines[0].startswith("# ") and "Run on a test machine." in md
    row = {ln.split("|")[1].strip(" `"): ln for ln in lines if ln.startswith("| `")}
    assert set(row) == {"a-held", "b-fails", "c-crash", "d-info"}
    assert "| 3/3 | 1.5 | 66.0 | held |" in row["a-held"]
    assert "| 60.0 | - |" in row["b-fails"]  # a run recorded without CPU times
    # the first three failing cells are named, a pipe inside a cell is escaped, the count is given
    assert "r1 / c\\|x: 1 vs 2" in row["b-fails"] and "r3 / c" in row["b-fails"]
    assert "r4" not in row["b-fails"] and "(4 in all)" in row["b-fails"]
    assert "**error** RuntimeError: boom" in row["c-crash"]
    assert "nothing checked" in row["d-info"]
    # 2 of 4 pass; 4 of 8 cells; 64 s = 1.1 min
    assert lines[-1] == "2 of 4 reproductions hold in full; 4 of 8 checked cells hold; 1.1 min in all " \
                        "(the sum of the times above); 1.1 min of CPU."


def test_script_writes_the_page_from_json(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "reproduce_summary", Path(__file__).parents[2] / "scripts" / "reproduce_summary.py")
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    src, out = tmp_path / "run.json", tmp_path / "summary.md"
    src.write_text(json.dumps(ROWS), encoding="utf-8")
    assert mod.main(["--from-json", str(src), "--out", str(out), "--note", "A note."]) == 0
    text = out.read_text(encoding="utf-8")
    assert "`ppdm reproduce --all --json`" in text and "A note." in text and "| `b-fails` | 1/5 |" in text


def test_reproductions_run_with_one_blas_thread(monkeypatch) -> None:
    import pytest
    from threadpoolctl import threadpool_info

    from ppdm.exceptions import ParameterError
    from ppdm.experiments import REPRODUCTIONS, run_reproduction
    from ppdm.experiments.base import Reproduction, ReproductionReport

    seen: list[int] = []

    def probe() -> ReproductionReport:
        seen.extend(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")
        return ReproductionReport("probe", "BLAS threads inside a reproduction")

    monkeypatch.setitem(REPRODUCTIONS, "probe", Reproduction("probe", "probe", probe))
    run_reproduction("probe")
    assert seen and set(seen) == {1}
    seen.clear()
    run_reproduction("probe", blas_threads=None)  # the library's own setting, whatever it is
    assert seen
    with pytest.raises(ParameterError, match="at least 1"):
        run_reproduction("probe", blas_threads=0)


def test_script_reads_json_lines(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "reproduce_summary", Path(__file__).parents[2] / "scripts" / "reproduce_summary.py")
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    src, out = tmp_path / "run.jsonl", tmp_path / "summary.md"
    src.write_text("".join(json.dumps(r) + "\n" for r in ROWS[:2]), encoding="utf-8")
    assert mod.main(["--from-json", str(src), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "| `a-held` | 3/3 |" in text and "| `b-fails` | 1/5 |" in text and "c-crash" not in text
