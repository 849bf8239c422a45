"""Pareto front of risk vs utility, and the policy that picks the release."""

from __future__ import annotations

from typing import Any

from ppdm.exceptions import ParameterError

__all__ = ["risk_score", "pareto_front", "choose"]


def risk_score(c: dict[str, Any]) -> float:
    """One risk number per candidate: the worst of re-identification and value disclosure."""
    return max(c["risk"]["reidentification"], c["risk"]["within_5pct"])


def pareto_front(cands: list[dict[str, Any]], objective: str) -> list[int]:
    """Indices of candidates no other candidate beats on both lower risk and higher utility."""
    front = []
    for i, a in enumerate(cands):
        ra, ua = risk_score(a), a["utility"][objective]
        dominated = any(
            (risk_score(b) <= ra and b["utility"][objective] >= ua)
            and (risk_score(b) < ra or b["utility"][objective] > ua)
            for j, b in enumerate(cands)
            if j != i
        )
        if not dominated:
            front.append(i)
    return front


def _label(c: dict[str, Any]) -> str:
    p = ", ".join(f"{k}={v}" for k, v in c["params"].items())
    return f"{c['method']}({p})" if p else c["method"]


def choose(cands: list[dict[str, Any]], policy: Any) -> tuple[int, list[str]]:
    """Index of the chosen candidate and, for each candidate, why it was chosen or lost.

    Feasible candidates meet both risk limits; among them the highest utility wins (ties: lower risk,
    then lower RE). Raises :class:`ParameterError` naming the binding constraint and the closest
    candidate when nobody is feasible.
    """
    obj, r_max, v_max = policy.objective, policy.max_reidentification, policy.max_within_5pct
    reasons: list[str] = []
    feasible = []
    for i, c in enumerate(cands):
        why = []
        if c["risk"]["reidentification"] > r_max:
            why.append(f"re-identification {c['risk']['reidentification']:.1%} > {r_max:.1%}")
        if c["risk"]["within_5pct"] > v_max:
            why.append(f"{c['risk']['within_5pct']:.1%} of values disclosed within 5 % > {v_max:.1%}")
        reasons.append("; ".join(why))
        if not why:
            feasible.append(i)
    if not feasible:
        closest = min(range(len(cands)), key=lambda i: (
            max(cands[i]["risk"]["reidentification"] - r_max, 0) + max(cands[i]["risk"]["within_5pct"] - v_max, 0)))
        c = cands[closest]
        binding = "re-identification" if c["risk"]["reidentification"] > r_max else "values within 5 %"
        raise ParameterError(
            f"no candidate satisfies the policy (binding: {binding}); closest is {_label(c)} with "
            f"re-identification {c['risk']['reidentification']:.1%} and {c['risk']['within_5pct']:.1%} of values "
            "within 5 %; relax policy.max_reidentification / max_within_5pct or add stronger mechanisms"
        )
    best = max(feasible, key=lambda i: (cands[i]["utility"][obj], -risk_score(cands[i]), -cands[i]["value"]["re"]))
    for i in range(len(cands)):
        if i == best:
            reasons[i] = (f"chosen: highest {obj} ({cands[i]['utility'][obj]:.2f}) among {len(feasible)} "
                          "that meet the policy")
        elif not reasons[i]:
            reasons[i] = (f"meets the policy but lower {obj} ({cands[i]['utility'][obj]:.2f} vs "
                          f"{cands[best]['utility'][obj]:.2f})")
        else:
            reasons[i] = "violates the policy: " + reasons[i]
    return best, reasons
