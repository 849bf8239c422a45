"""Pareto front of risk vs utility, and the policy that picks the release."""

from __future__ import annotations

from typing import Any

from ppdm.exceptions import ParameterError

__all__ = ["risk_score", "pareto_front", "choose", "meets_policy", "passthrough_uniqueness"]


def risk_score(c: dict[str, Any]) -> float:
    """One risk number per candidate: the worst of re-identification and value disclosure beyond the baseline."""
    if "failed" in c:
        return float("inf")
    return max(c["risk"]["reidentification"], c["risk"]["within_5pct"])


def _reid(c: dict[str, Any]) -> float:
    """Re-identification beyond its control (chance), which the policy limits.

    Measured on a sample of targets (a large table), the upper end of its 95 % interval counts.
    """
    r = c["risk"]
    return float(r.get("reidentification_excess_upper", r.get("reidentification_excess", r["reidentification"])))


def _inference(c: dict[str, Any]) -> tuple[float, str | None]:
    """The worst attribute inference beyond its control over the sensitive columns, and that column."""
    worst, column = 0.0, None
    for name, v in (c["risk"].get("sensitive") or {}).items():
        excess = float(v.get("attribute_inference", {}).get("excess", 0.0))
        if excess > worst:
            worst, column = excess, name
    return worst, column


def meets_policy(c: dict[str, Any], policy: Any) -> bool:
    """Every risk limit holds (re-identification beyond chance, values within 5 % beyond the control,
    attribute inference of the sensitive columns beyond the control)."""
    return "failed" not in c and _reid(c) <= policy.max_reidentification and \
        c["risk"]["within_5pct"] <= policy.max_within_5pct and _inference(c)[0] <= policy.max_attribute_inference


def _screened_only(c: dict[str, Any]) -> bool:
    return (c.get("measured_on") or {}).get("stage") == "screening"


def _utility(c: dict[str, Any], objective: str) -> float:
    return float("-inf") if "failed" in c else float(c["utility"].get(objective, float("-inf")))


def pareto_front(cands: list[dict[str, Any]], objective: str) -> list[int]:
    """Indices of candidates no other candidate beats on both lower risk and higher utility."""
    front = []
    for i, a in enumerate(cands):
        if "failed" in a or objective not in a["utility"]:  # failed, or rejected before utility was measured
            continue
        ra, ua = risk_score(a), _utility(a, objective)
        dominated = any(
            (risk_score(b) <= ra and _utility(b, objective) >= ua)
            and (risk_score(b) < ra or _utility(b, objective) > ua)
            for j, b in enumerate(cands)
            if j != i
        )
        if not dominated:
            front.append(i)
    return front


def _label(c: dict[str, Any]) -> str:
    from ppdm.release.candidates import describe

    return describe(c["method"], c["params"]).removesuffix("()")


def choose(cands: list[dict[str, Any]], policy: Any, *, shown: Any = (), categories: Any = None,
           uniqueness: dict[str, Any] | None = None) -> tuple[int, list[str]]:
    """Index of the chosen candidate and, for each candidate, why it was chosen or lost.

    Feasible candidates meet both risk limits; among them the highest utility wins (ties: lower risk,
    then lower RE). Failed candidates keep their one-line reason. Raises :class:`ParameterError` naming the
    binding constraint and the closest candidate when nobody is feasible, and the passed-through columns
    when they alone single out more records than the policy allows (``uniqueness``: that of the shown
    columns, measured where the table is, when ``categories`` is not here).
    """
    obj, r_max, v_max = policy.objective, policy.max_reidentification, policy.max_within_5pct
    reasons: list[str] = []
    feasible = []
    for i, c in enumerate(cands):
        if "failed" in c:
            reasons.append(f"failed: {c['failed']}")
            continue
        why = []
        if _reid(c) > r_max:
            upper = " (upper 95 % end" if "reidentification_excess_upper" in c["risk"] else " (beyond chance"
            why.append(f"re-identification {c['risk']['reidentification']:.1%}{upper} {_reid(c):.1%}) > "
                       f"{r_max:.1%}")
        if c["risk"]["within_5pct"] > v_max:
            why.append(f"{c['risk']['within_5pct']:.1%} of values disclosed within 5 % beyond the control > "
                       f"{v_max:.1%}")
        inferred, column = _inference(c)
        if inferred > policy.max_attribute_inference:
            why.append(f"'{column}' inferred for {inferred:.1%} more people in the release than outside it > "
                       f"{policy.max_attribute_inference:.1%}")
        reasons.append("; ".join(why))
        if not why and not _screened_only(c):
            feasible.append(i)
    if not feasible:
        ok = [i for i, c in enumerate(cands) if "failed" not in c]
        if not ok:
            raise ParameterError(f"every candidate failed; the first: {_label(cands[0])}: {cands[0]['failed']}")
        _check_passthrough(shown, categories, r_max, uniqueness)
        a_max = policy.max_attribute_inference
        closest = min(ok, key=lambda i: (
            max(_reid(cands[i]) - r_max, 0) + max(cands[i]["risk"]["within_5pct"] - v_max, 0)
            + max(_inference(cands[i])[0] - a_max, 0)))
        c = cands[closest]
        binding = "re-identification" if _reid(c) > r_max else (
            "values within 5 %" if c["risk"]["within_5pct"] > v_max else "attribute inference")
        inferred = (f" and '{_inference(c)[1]}' inferred for {_inference(c)[0]:.1%} more people in the release"
                    if _inference(c)[1] else "")
        raise ParameterError(
            f"no candidate satisfies the policy (binding: {binding}); closest is {_label(c)} with "
            f"re-identification {c['risk']['reidentification']:.1%} and {c['risk']['within_5pct']:.1%} of values "
            f"within 5 %{inferred}; relax policy.max_reidentification / max_within_5pct / "
            "max_attribute_inference or add stronger mechanisms"
        )
    best = max(feasible, key=lambda i: (_utility(cands[i], obj), -risk_score(cands[i]), -cands[i]["value"]["re"]))
    for i in range(len(cands)):
        if "failed" in cands[i]:
            continue
        if i == best:
            reasons[i] = (f"chosen: highest {obj} ({_utility(cands[i], obj):.2f}) among {len(feasible)} "
                          "that meet the policy")
        elif _screened_only(cands[i]):
            rows = cands[i]["measured_on"].get("rows")
            reasons[i] = (f"screened on a sample of {rows:,} rows: " + (
                f"violates the policy there: {reasons[i]}"
                + (" (linkage alone settled it: the other attacks and the utility were not measured)"
                   if cands[i].get("screened_out") else "") if reasons[i] else
                f"meets the policy there ({obj} {_utility(cands[i], obj):.2f} on the sample); not confirmed, "
                "a candidate ahead of it held the policy on every row"))
        elif not reasons[i]:
            reasons[i] = (f"meets the policy but lower {obj} ({_utility(cands[i], obj):.2f} vs "
                          f"{_utility(cands[best], obj):.2f})")
        else:
            reasons[i] = "violates the policy: " + reasons[i]
    return best, reasons


def passthrough_uniqueness(categories: Any) -> dict[str, Any] | None:
    """How far the columns shown unchanged single out records on their own (None: no such columns)."""
    if categories is None or categories.shape[1] == 0:
        return None
    from ppdm.attacks._population import combination_codes, uniqueness

    codes, _ = combination_codes(categories, categories[:1])
    return uniqueness(codes)


def _check_passthrough(shown: Any, categories: Any, r_max: float, u: dict[str, Any] | None = None) -> None:
    """Columns that reach the release unchanged and single out records defeat any numeric mechanism."""
    if len(shown) == 0:
        return
    u = u if u is not None else passthrough_uniqueness(categories)
    if u is None:
        return
    if u["unique_share"] > r_max:
        names = ", ".join(repr(c) for c in list(shown)[:8])
        raise ParameterError(
            f"the columns that pass through unchanged ({names}) single out {u['unique_share']:.1%} of the records "
            f"(k-anonymity {u['k_anonymity']}), above the policy's {r_max:.1%}; no numeric mechanism can fix that: "
            "leave them out with --drop or --columns (the label: leave out --label), or recode them first")
