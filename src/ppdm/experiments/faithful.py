"""Does the coverage manifest tell the truth? Checks of the manifest against what its reproductions do.

An entry marked ``reproduced`` promises two things: every reproduction it names exits 0 (no checked cell
fails, nothing raises), and every published value of the reference tables those reproductions read is
computed (shown next to the print, checked or, with its reason, shown only). :func:`uncomputed_cells` finds
published values a report leaves out; :func:`contradictions` finds the entries whose status a batch run
contradicts. ``ppdm reproduce --all`` records both per reproduction, the test suite runs the quick
reproductions through them, and the documentation build fails when the last recorded run contradicts the
manifest.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ppdm.experiments.base import ReproductionReport, reference_rows

__all__ = ["KEY_COLUMNS", "INPUT_TABLES", "INPUT_COLUMNS", "value_cells", "uncomputed_cells", "reproduced_ids",
           "contradictions"]

#: columns of the reference tables that label a row or hold a parameter, a helper or a description of the
#: data (not a published result to compare with)
KEY_COLUMNS = frozenset({
    "k", "row", "dim_i", "dim_j", "eps_u", "eps_v", "parameter_value", "svm_computed", "agrees_with_class",
    "uci_class", "size", "cd_recomputed", "q_alpha_0_05_nemenyi", "n_methods", "n_datasets", "svd_rank_k",
    "subject", "cluster", "city_index", "case_id", "trials", "w_id", "tolerance", "dimension_k", "rows", "p",
    "lower_pct_exclusive", "upper_pct_inclusive", "class_number", "class_size", "n_records", "n_attributes",
    "m_records", "n_classes", "n_subjects", "number", "best_bold_in_print", "bold_p_below_0_05_in_print",
    "bold_no_advantage_in_print", "label_printed", "appendix", "statistic", "pair_ij", "rank_delta", "d",
    "x", "y", "modified_subject", "membership_change", "scheme", "test",
})
#: reference files that hold values read one by one (text values, worked examples), not whole tables
_SELECTIVE = ("_text_values.csv",)
#: reference tables that are a document's input data, not its results (the manifest lists them as not results)
INPUT_TABLES = frozenset({"alotaibi2015_table2_1.csv", "alotaibi2015_table3_1.csv", "alotaibi2015_table4_2.csv",
                          "alotaibi2015_table5_2.csv", "wang2008_table2_4.csv", "wang2008_table2_5.csv",
                          "wang2008_table2_6.csv"})
#: columns of a reference table that hold a worked example's input, not its result
INPUT_COLUMNS: dict[str, frozenset[str]] = {"alotaibi2015_table2_2.csv": frozenset({"y1", "y2"})}


def _number(text: str) -> float | None:
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def value_cells(name: str) -> list[tuple[str, str, float]]:
    """The published values of a reference table: ``(row label, column, value)`` per numeric cell.

    Key, helper and note columns (:data:`KEY_COLUMNS`, ``note``) are left out, and so are the files of
    values quoted from the text, which reproductions read one value at a time, and the tables that are a
    document's input (:data:`INPUT_TABLES`).
    """
    if name.endswith(_SELECTIVE) or name in INPUT_TABLES:
        return []
    rows = reference_rows(name, record=False)
    out = []
    for i, r in enumerate(rows):
        label = next((str(v) for k, v in r.items() if v and _number(v) is None and k != "note"), str(i + 1))
        for col, text in r.items():
            if col in KEY_COLUMNS or col in INPUT_COLUMNS.get(name, ()) or col == "note" or col.startswith("bold_"):
                continue
            if text is None:
                continue
            if col == "svm_pct" and r.get("svm_computed") == "0":
                continue  # the appendices print 0.0000 where SVMlight was not run
            v = _number(text.strip())
            if v is not None:
                out.append((label, col, v))
    return out


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def uncomputed_cells(report: ReproductionReport, files: Iterable[str]) -> list[str]:
    """Published values of ``files`` that no cell of ``report`` shows.

    A value counts as shown when a cell's ``published`` equals it, or when a cell's note quotes it as
    printed (``printed 1.1061``: a print the report corrects and says so).
    """
    shown = [c.published for c in report.cells if c.published is not None]
    notes = " ".join(c.note for c in report.cells) + " " + " ".join(report.notes)
    missing = []
    for name in files:
        for label, col, v in value_cells(name):
            if any(_close(v, s) for s in shown):
                continue
            if _quoted(f"{v:g}", notes) or _quoted(_as_printed(name, label, col), notes):
                continue
            missing.append(f"{name} {label} / {col} = {v:g}")
    return missing


def _quoted(number: str, text: str) -> bool:
    """Whether ``text`` says "printed <number>" (the whole number: 0.5 is not 0.55, nor is 0 0.5)."""
    return bool(number) and re.search(r"printed " + re.escape(number) + r"(?![\d.]\d)", text) is not None


def _as_printed(name: str, label: str, col: str) -> str:
    for i, r in enumerate(reference_rows(name, record=False)):
        if label in r.values() or label == str(i + 1):
            return str(r.get(col, "")).strip()
    return ""


def reproduced_ids(manifest: Sequence[Any] | None = None) -> dict[str, list[str]]:
    """Reproduction id -> the manifest entries marked ``reproduced`` that name it (``document label``)."""
    if manifest is None:
        from ppdm.experiments.manifest import MANIFEST

        manifest = MANIFEST
    out: dict[str, list[str]] = {}
    for e in manifest:
        if e.status == "reproduced":
            for r in e.reproductions:
                out.setdefault(r, []).append(f"{e.document} {e.label}")
    return out


def contradictions(rows: Iterable[Mapping[str, Any]], manifest: Sequence[Any] | None = None) -> list[str]:
    """Manifest entries marked ``reproduced`` whose reproductions a run contradicts.

    Parameters
    ----------
    rows : iterable of mapping
        One summary per reproduction, as ``ppdm reproduce --all --json`` prints them (``id``, ``passed``,
        ``error``, ``failed_cells``, ``uncomputed``).
    manifest : sequence of CoverageEntry, optional
        Default: :data:`ppdm.experiments.manifest.MANIFEST`.

    Returns
    -------
    list of str
        One message per contradiction: a reproduction that failed, raised, was not run, or left published
        values out, with the entries that claim it.
    """
    seen = {str(r["id"]): r for r in rows}
    problems = []
    for rid, entries in sorted(reproduced_ids(manifest).items()):
        claim = ", ".join(entries)
        r = seen.get(rid)
        if r is None:
            problems.append(f"{rid}: not in the run, but {claim} say reproduced")
        elif r.get("error"):
            problems.append(f"{rid}: raised {r['error']}, but {claim} say reproduced")
        elif not r.get("passed", False):
            cells = "; ".join(list(r.get("failed_cells") or [])[:3])
            problems.append(f"{rid}: exits 1 ({cells}), but {claim} say reproduced")
        elif r.get("uncomputed"):
            cells = "; ".join(list(r["uncomputed"])[:3])
            problems.append(f"{rid}: {len(r['uncomputed'])} published values not computed ({cells}), but {claim} "
                            "say reproduced")
    return problems
