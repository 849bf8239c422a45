"""What the pages show, computed from the schema and the record only (names, counts and measures; never a
value of the table, a key or the state)."""

from __future__ import annotations

from typing import Any

__all__ = ["type_reason", "policy_limits", "frontier_points", "RISK_TESTS", "candidate_view", "family_of"]

#: the risk tests the frontier plots utility against: the record's key, its words
RISK_TESTS = (("reidentification", "re-identification"), ("within_5pct", "values within 5 % beyond the control"),
              ("singling_out", "singling out beyond the control"), ("linkability", "linkability beyond the control"),
              ("membership_outliers", "membership advantage on outliers"))

_TYPE_REASONS = {
    "continuous": "every value reads as a number, some with a fractional part",
    "integer": "every value reads as a whole number",
    "categorical": "text (or few values) that is not free text: a category per distinct value",
    "boolean": "only true and false",
    "date": "at least 95 % of the values read as dates",
    "text": "free text: at least 50 values and more than half of them distinct",
}


def type_reason(info: Any) -> str:
    """Why ppdm inferred the column's type, in words (the rules of :mod:`ppdm.data.columns`)."""
    return _TYPE_REASONS.get(info.type, "")


#: the policy's limits the page edits: the field, its words, the test it limits
POLICY_LIMITS = (
    ("max_reidentification", "Re-identification beyond chance",
     "the share of released rows an attacker links to their own record, beyond what guessing gets"),
    ("max_within_5pct", "Values disclosed within 5 % beyond the control",
     "the share of a person's values read within +-5 % off the row found for them, beyond the same for people "
     "not in the release"),
    ("max_singling_out", "Singling out beyond the control",
     "predicates built from the release that isolate one person in it, beyond those that isolate one outside it"),
    ("max_linkability", "Linkability beyond the control",
     "two disjoint sets of a person's columns from two sources linked through one released row"),
    ("max_membership_outliers", "Membership advantage on the most outlying records",
     "telling whether an unusual record was in the table (synthetic records and group centroids)"),
    ("max_attribute_inference", "Attribute inference of sensitive columns beyond the control",
     "inferring a sensitive column for people in the release, beyond people not in it"),
)


def policy_limits(cfg: Any) -> list[dict[str, Any]]:
    """Each limit of the policy with its words and its number in per cent."""
    pol = cfg.policy
    return [{"key": k, "name": name, "words": words, "percent": round(100 * float(getattr(pol, k)), 2)}
            for k, name, words in POLICY_LIMITS]


def family_of(method: str) -> str:
    """A candidate's mechanism family: its numeric mechanism (``mdav+pram`` is microaggregation's family)."""
    from ppdm.release.candidates import split_method

    return split_method(method)[0]


def _formal(c: dict[str, Any]) -> bool:
    """Whether the candidate carries a formal guarantee (differential privacy), as the record states it."""
    return bool(c.get("guarantee")) or c["method"].startswith("dp-")


def _risk_value(c: dict[str, Any], key: str) -> float | None:
    v = c["risk"].get(key)
    if isinstance(v, dict):
        v = v.get("risk")
    return None if v is None else round(100 * float(v), 3)


def frontier_points(record: dict[str, Any]) -> list[dict[str, Any]]:
    """One point per scored candidate: its utility, each risk test (per cent), family, guarantee, verdict."""
    from ppdm.release.override import candidate_name

    obj = _objective(record)
    choice = record.get("choice") or {}
    points = []
    for i, c in enumerate(record["candidates"]):
        if obj not in c.get("utility", {}):
            continue
        name = candidate_name(c)
        point = {"index": i, "name": name, "family": family_of(c["method"]),
                 "guarantee": "differential privacy" if _formal(c) else "none (measured only)",
                 "utility": round(float(c["utility"][obj]), 3), "stage": c.get("stage", "full battery"),
                 "verdict": c.get("verdict", ""), "pareto": bool(c.get("pareto")),
                 "mark": ("released" if c.get("chosen") else
                          "policy's choice" if choice.get("policy") == name and choice.get("by") == "steward"
                          else "candidate")}
        for key, _ in RISK_TESTS:
            point[key] = _risk_value(c, key)
        points.append(point)
    return points


def _objective(record: dict[str, Any]) -> str:
    """The utility the policy maximised (``tstr`` resolved to the measure the candidates carry)."""
    obj = record["policy"]["objective"]
    if obj != "tstr":
        return obj
    utilities = record["chosen"].get("utility", {})
    return "tstr_logreg_pct" if record.get("whole_table") and "tstr_logreg_pct" in utilities else "tstr_knn_pct"


def objective_of(record: dict[str, Any]) -> str:
    return _objective(record)


def candidate_view(record: dict[str, Any], i: int, policy: Any) -> dict[str, Any]:
    """A candidate's page: its measures, attacks, per-column fidelity (the released one's) and what it leaves
    unprotected, and whether the steward can choose it."""
    from ppdm.release.override import candidate_name, choosable

    c = record["candidates"][i]
    attacks = []
    for a in c.get("attacks", []):
        base = a.get("baseline_no_release") or {}
        attacks.append({"attack": a.get("attack"), "measure": a.get("success_measure", ""),
                        "success": a.get("success"), "no_release": base.get("success"),
                        "excess": a.get("excess"), "reid": a.get("reidentification_rate"),
                        "ci": a.get("ci")})
    fidelity = None
    if c.get("chosen") and record.get("fidelity"):
        re = record.get("per_column_re") or {}
        fidelity = [{"column": col, "measure": m.get("measure"), "value": m.get("value"), "re": re.get(col)}
                    for col, m in record["fidelity"].get("marginal", {}).items()]
    return {"index": i, "name": candidate_name(c), "c": c, "attacks": attacks, "fidelity": fidelity,
            "unprotected": unprotected(c, record), "refused": choosable(c, policy), "objective": _objective(record),
            "tests": [(words, _risk_value(c, key)) for key, words in RISK_TESTS]}


def unprotected(c: dict[str, Any], record: dict[str, Any]) -> list[str]:
    """What the candidate does not protect, as measured: the attacks that still work, the columns released
    unchanged, and the lack of a formal guarantee."""
    r, n = c["risk"], max(int(record["input"]["n_rows"]), 1)
    out = []
    if r.get("reidentification", 0) > 2.0 / n:
        out.append(f"{r['reidentification']:.1%} of the records are re-identified by "
                   f"{r.get('reidentification_attack') or 'linkage'} (chance {1 / n:.2%}).")
    if r.get("within_5pct", 0) > 0:
        out.append(f"{r['within_5pct']:.1%} of a person's values are read within +-5 % beyond the control "
                   f"({r.get('within_5pct_attack', 'the strongest reconstruction')}).")
    if "within_5pct_aligned" in r:
        out.append(f"An attacker who already knew each person's released row would read "
                   f"{r['within_5pct_aligned']:.1%} of their values within +-5 %.")
    for key, words in RISK_TESTS[2:]:
        v = _risk_value(c, key)
        if v is not None and v > 0:
            out.append(f"{words}: {v:.1f} %.")
    kept = [x for x in (record["input"].get("label"), *record["input"].get("passthrough", [])) if x]
    if kept:
        out.append("Released unchanged: " + ", ".join(kept) + " (its values are the original's).")
    if _formal(c):
        out.append(f"Its formal guarantee: {c['guarantee']}" if isinstance(c.get("guarantee"), str) else
                   "Its formal guarantee covers the mechanism only; see the record for what it does not cover.")
    else:
        out.append("No formal guarantee: the protection is what the attacks above measured, against this threat.")
    return out
